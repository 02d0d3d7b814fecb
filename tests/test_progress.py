"""Long ingest work is told as it goes: to the caller's progress function and to the run's log."""

import duckdb
from dagster import DagsterInstance, materialize

from pipeline.core import progress
from pipeline.core.feed_spec import FEEDS
from pipeline.ingest.validation import ingest_feed
from pipeline.settings import Settings
from tests.support import make_raw, write_csv
from tests.test_validation import GOOD_EVENT, GOOD_GAME, GOOD_RESULTS


def two_game_files(raw):
    write_csv(raw / "games" / "a.csv", GOOD_GAME)
    write_csv(raw / "games" / "b.csv", [dict(row, game_id="ok2") for row in GOOD_GAME])
    return raw


def test_a_quick_ingest_tells_nothing(tmp_path):
    lines = []
    ingest_feed(duckdb.connect(), two_game_files(tmp_path / "raw"), FEEDS["games"], progress=lines.append)
    assert lines == []


def test_every_file_staged_and_the_working_copy_are_told_when_slow(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_SECONDS", 0.0)  # every piece of work counts as slow
    lines = []
    ingest_feed(duckdb.connect(), two_game_files(tmp_path / "raw"), FEEDS["games"], progress=lines.append)
    assert lines[:5] == [
        "games: staged games/a.csv (1/2 files; 1 read, 3 rows)",
        "games: staged games/b.csv (2/2 files; 2 read, 6 rows)",
        "games: working copy: loaded 1/2 new file(s), 3 rows",
        "games: working copy: loaded 2/2 new file(s), 6 rows",
        "games: working copy: 2 new and 0 removed file(s) queued; marking keys delivered more than once",
    ]
    assert lines[5].startswith("games: working copy brought in step with 2 file(s), 6 new rows in ")
    assert len(lines) == 6


def test_the_ingest_step_logs_its_long_work_in_the_run(tmp_path, monkeypatch):
    """Asset layer: the lines reach Dagster's run log, validation and the written files included."""
    from assets.ingest import ingest_feeds
    from pipeline.defs.resources import DiprankResource

    monkeypatch.setattr(progress, "PROGRESS_SECONDS", 0.0)
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME, events=[GOOD_EVENT], event_results=GOOD_RESULTS)
    settings = Settings.from_env({}, raw_dir=str(raw), warehouse_dir=str(tmp_path / "w"), settle_seconds=0)
    instance = DagsterInstance.ephemeral()
    result = materialize(
        [ingest_feeds], resources={"diprank": DiprankResource.from_settings(settings)}, instance=instance
    )
    assert result.success
    messages = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert any(m.startswith("games: staged games/games.csv (1/1 files; 1 read, 3 rows)") for m in messages)
    assert any(m.startswith("games: working copy brought in step with 1 file(s), 3 new rows in ") for m in messages)
    assert "games: validation rules checked, 0 row(s) failing; setting the valid rows" in messages
    assert any(m.startswith("games: validated 3 rows, 3 valid in ") for m in messages)
    assert any(m.startswith("games: validated files: read through ") and m.endswith(" (1/1 months)") for m in messages)
    assert any(m.startswith("games: validated files written in ") for m in messages)


def test_the_months_read_count_the_months_a_delivery_empties(tmp_path, monkeypatch):
    """A queued month left without rows counts toward the months read, so the count ends at n/n."""
    import datetime as dt

    import pyarrow as pa

    from pipeline.core.months import Month
    from pipeline.ingest.exports import write_months
    from pipeline.warehouse.store import Warehouse

    monkeypatch.setattr(progress, "PROGRESS_SECONDS", 0.0)
    feed = FEEDS["games"]
    rows = [dict(row, finished_on=dt.date(2020, 3, 1), rated=True) for row in GOOD_GAME]
    games = pa.Table.from_pylist(
        [{name: row.get(name) for name in feed.column_names} for row in rows], schema=feed.arrow_schema
    )
    con = duckdb.connect()
    con.register("delivered", games)
    con.execute("CREATE TABLE games AS SELECT * FROM delivered")
    warehouse = Warehouse(tmp_path / "w")
    emptied = warehouse.validated_month("games", Month(2020, 5))
    emptied.parent.mkdir(parents=True, exist_ok=True)
    emptied.write_bytes(b"rows that a correction moved away")
    lines = []
    write_months(con, warehouse, feed, [Month(2020, 3), Month(2020, 5)], lines.append)
    assert lines == ["games: validated files: read through 2020 (2/2 months)"]
    assert warehouse.validated_month("games", Month(2020, 3)).exists() and not emptied.exists()
