"""A delivery still being written is never read: not by ingest, not asked for by the sensor."""

import datetime as dt
import os
import time
from collections import Counter

import duckdb
import pyarrow.parquet as pq
from dagster import DagsterInstance, RunRequest, SkipReason, build_sensor_context

from pipeline import orchestrate
from pipeline.core.feed_spec import FEEDS
from pipeline.definitions import build_definitions
from pipeline.defs.resources import DiprankResource
from pipeline.ingest import deliveries
from pipeline.ingest.deliveries import seconds_until_settled
from pipeline.ingest.staging import EARLIER_VERSION_KEPT, STILL_BEING_WRITTEN
from pipeline.ingest.validation import ingest_feed
from pipeline.rating.planning import plan_all
from pipeline.settings import Settings
from pipeline.synthetic.generator import synthetic_games
from pipeline.warehouse.store import Warehouse
from tests.support import environment, run_cli, write_csv

SETTLE = 5.0


def settled(path, seconds: float = 60.0) -> None:
    """Date the file's last change `seconds` back: a copy that finished that long ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def games_in_halves(tmp_path):
    """A games CSV of ten games, and its text cut at a row boundary inside the fourth game."""
    rows = list(synthetic_games(11, 10, 20, dt.date(2020, 1, 3), dt.date(2020, 1, 28)))
    whole = write_csv(tmp_path / "whole.csv", rows).read_text()
    lines = whole.splitlines(keepends=True)
    players = Counter(row["game_id"] for row in rows)
    order = [row["game_id"] for row in rows]
    fourth = list(dict.fromkeys(order))[3]
    start = order.index(fourth)
    assert order[start : start + players[fourth]] == [fourth] * players[fourth]
    cut = 1 + start + players[fourth] // 2  # the header, the first three games, half the fourth
    return rows, "".join(lines[:cut]), "".join(lines[cut:])


def rated_players_per_game(warehouse) -> dict[str, Counter]:
    """Per system (and category, for a system of several tables), the players each game of any
    history snapshot names."""
    found: dict[str, Counter] = {}
    for path in sorted((warehouse / "history").rglob("history.parquet")):
        table = pq.read_table(path)
        lists = table.column("category").to_pylist() if "category" in table.column_names else [None] * table.num_rows
        for system, listed, source in zip(
            table.column("system").to_pylist(), lists, table.column("source_id").to_pylist()
        ):
            found.setdefault(system if listed is None else f"{system}/{listed}", Counter())[source] += 1
    return found


def test_a_file_copied_in_two_halves_is_rated_only_whole(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    rows, first_half, second_half = games_in_halves(tmp_path)
    delivery = raw / "games" / "2020-01.csv"
    delivery.parent.mkdir(parents=True)
    delivery.write_text(first_half)
    settings = Settings.from_env(
        {}, raw_dir=str(raw), warehouse_dir=str(warehouse), settle_seconds=SETTLE, systems_at_once=1
    )
    sensor = build_definitions(settings).resolve_sensor_def("new_raw_files")
    resource = DiprankResource.from_settings(settings)

    def tick(cursor):
        context = build_sensor_context(cursor=cursor, resources={"diprank": resource})
        return sensor(context), context.cursor

    looked, cursor = tick(None)
    assert isinstance(looked, SkipReason), "a folder seen changing is not ingested at that tick"
    # An ingest and the systems' runs start anyway (the schedule, a person in the UI) while the copy is paused.
    instance = DagsterInstance.ephemeral()
    outcome = orchestrate.ingest(settings, 10, instance)
    assert not outcome.failure
    assert [(e.path, e.reason) for e in outcome.skipped] == [
        ("games/2020-01.csv", STILL_BEING_WRITTEN.format(settle=SETTLE))
    ]
    plans = [plan for plan in plan_all(Warehouse(warehouse), settings) if plan.first is not None]
    for run in orchestrate.rate_systems(plans, settings, instance):
        assert not run.failure, run.failure
    assert rated_players_per_game(warehouse) == {}
    # The copy completes; the sensor asks once the folder has stayed the same for a tick.
    with delivery.open("a") as copy:
        copy.write(second_half)
    settled(delivery)
    changed, cursor = tick(cursor)
    assert isinstance(changed, SkipReason)
    asked, cursor = tick(cursor)
    assert isinstance(asked, RunRequest)
    with environment(DIPRANK_SETTLE_SECONDS=str(SETTLE)):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    players = Counter(row["game_id"] for row in rows)
    rated = rated_players_per_game(warehouse)
    assert set(rated) >= {"club", "eagle", "diwz", "ghost/overall"}
    for system, games in rated.items():
        assert games == {game: players[game] for game in games}, f"{system} rated a game without all its players"
    assert rated["club"] == players


def test_a_file_changed_while_read_is_skipped_and_its_earlier_version_stays(tmp_path, monkeypatch):
    raw, warehouse = tmp_path / "raw", Warehouse(tmp_path / "w")
    rows = list(synthetic_games(12, 3, 10, dt.date(2020, 1, 3), dt.date(2020, 1, 20)))
    delivery = write_csv(raw / "games" / "a.csv", rows)
    settled(delivery)
    con = duckdb.connect()
    first = ingest_feed(con, raw, FEEDS["games"], warehouse, settle_seconds=SETTLE)
    assert first.parsed == ["games/a.csv"] and first.skipped == []
    earlier = con.execute("SELECT count(*) FROM typed_games").fetchall()[0][0]
    assert earlier == len(rows)

    # A writer appends a game while ingest reads the file.
    more = list(synthetic_games(13, 1, 10, dt.date(2020, 1, 21), dt.date(2020, 1, 21)))
    stage_file = deliveries.stage_file

    def stage_while_written(*args):
        staged = stage_file(*args)
        with delivery.open("a") as growing:
            growing.write(write_csv(tmp_path / "more.csv", more).read_text().split("\n", 1)[1])
        settled(delivery, 30.0)
        return staged

    write_csv(delivery, rows[:-1])  # the delivery is being rewritten
    settled(delivery)
    monkeypatch.setattr(deliveries, "stage_file", stage_while_written)
    during = ingest_feed(con, raw, FEEDS["games"], warehouse, settle_seconds=SETTLE)
    assert during.parsed == []
    assert [(e.path, e.reason) for e in during.skipped] == [("games/a.csv", EARLIER_VERSION_KEPT.format(settle=SETTLE))]
    assert con.execute("SELECT count(*) FROM typed_games").fetchall()[0][0] == earlier
    assert len(list((warehouse.root / "ingest" / "games").glob("*.parquet"))) == 1, "the partial read is not kept"
    monkeypatch.undo()

    # The next run, the file settled, reads it whole.
    after = ingest_feed(con, raw, FEEDS["games"], warehouse, settle_seconds=SETTLE)
    assert after.parsed == ["games/a.csv"] and after.skipped == []
    assert con.execute("SELECT count(*) FROM typed_games").fetchall()[0][0] == len(rows) - 1 + len(more)


def test_a_file_written_within_the_settle_time_waits(tmp_path):
    raw = tmp_path / "raw"
    delivery = write_csv(
        raw / "games" / "a.csv", list(synthetic_games(14, 1, 7, dt.date(2020, 1, 3), dt.date(2020, 1, 3)))
    )
    young = ingest_feed(duckdb.connect(), raw, FEEDS["games"], settle_seconds=SETTLE)
    assert young.files == [] and [e.reason for e in young.skipped] == [STILL_BEING_WRITTEN.format(settle=SETTLE)]
    assert 0 < seconds_until_settled(raw, SETTLE) <= SETTLE
    assert seconds_until_settled(raw, 0) == 0
    settled(delivery)
    assert seconds_until_settled(raw, SETTLE) == 0
    old = ingest_feed(duckdb.connect(), raw, FEEDS["games"], settle_seconds=SETTLE)
    assert old.files == ["games/a.csv"] and old.skipped == []


def test_the_command_line_waits_for_files_just_written(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(15, 4, 10, dt.date(2020, 1, 3), dt.date(2020, 1, 20))))
    with environment(DIPRANK_SETTLE_SECONDS="2"):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse))
    assert code == 0, out + err
    assert "may still be written" in out + err
    assert "still being written" not in out + err
