"""The raw folder is the truth: after any run the warehouse equals a run from scratch on the same raw
folder (files, bytes, view rows) and Dagster shows as materialized exactly the months on disk."""

import datetime as dt
from pathlib import Path

import duckdb
from dagster import AssetKey

from pipeline.defs.tags import QUALITY_ASSET, rankings_asset_name
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.store import Warehouse
from tests.support import dagster_instance_at, environment, run_cli, write_csv

STATE_FILES = ("*.parquet", "*.json")


def run(raw: Path, warehouse: Path) -> str:
    """`diprank run` with the warehouse's own Dagster instance; returns its output."""
    with environment(DAGSTER_HOME=str(warehouse / ".dagster")):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    return out


def warehouse_files(root: Path) -> dict[str, bytes]:
    """Every output, feed, fingerprint, checkpoint and manifest file by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for pattern in STATE_FILES
        for p in root.rglob(pattern)
        if ".dagster" not in p.parts
    }


def view_rows(root: Path) -> dict[str, list]:
    con = duckdb.connect(str(root / "diprank.duckdb"), read_only=True)
    try:
        views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
        return {v: sorted(map(repr, con.execute(f'SELECT * FROM "{v}"').fetchall())) for v in sorted(views)}
    finally:
        con.close()


QUALITY = "quality"  # the quality table's entry beside the systems'


def asset_key_of(name: str) -> AssetKey:
    """The asset of a system's snapshots, or of the quality tables."""
    return AssetKey(QUALITY_ASSET if name == QUALITY else rankings_asset_name(name))


def materialized_months(root: Path) -> dict[str, set[str]]:
    """The months Dagster shows as materialized, per system and for the quality tables."""
    with dagster_instance_at(root / ".dagster") as instance:
        return {name: instance.get_materialized_partitions(asset_key_of(name)) for name in (*SYSTEM_NAMES, QUALITY)}


def months_on_disk(root: Path) -> dict[str, set[str]]:
    """The months whose snapshot (per system) or quality table is on disk."""
    warehouse = Warehouse(root)
    on_disk = {s: {m.partition_key for m in warehouse.written_months("rankings", s)} for s in SYSTEM_NAMES}
    return {**on_disk, QUALITY: {m.partition_key for m in warehouse.quality_months()}}


def assert_equals_a_run_from_scratch(raw: Path, warehouse: Path, scratch: Path) -> None:
    run(raw, scratch)
    mine, theirs = warehouse_files(warehouse), warehouse_files(scratch)
    assert sorted(mine) == sorted(theirs)
    assert [p for p in mine if mine[p] != theirs[p]] == []
    assert view_rows(warehouse) == view_rows(scratch)
    assert materialized_months(warehouse) == months_on_disk(warehouse)


def one_game(day: dt.date, game_id: str = "late") -> list[dict]:
    rows = list(synthetic_games(11, 1, 20, day, day))
    return [dict(r, game_id=game_id) for r in rows]


def test_months_that_leave_the_range_are_removed(tmp_path):
    """A game delivered for March 2021 (the data ends in 2020), then corrected to June 2020: the
    2021 months of every system go, on disk and in Dagster."""
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(7, 60, 20, dt.date(2020, 1, 1), dt.date(2020, 8, 31))))
    run(raw, warehouse)
    write_csv(raw / "games" / "b.csv", one_game(dt.date(2021, 3, 10)))
    run(raw, warehouse)
    assert "2021-03-01" in materialized_months(warehouse)["club"]
    write_csv(raw / "games" / "b.csv", one_game(dt.date(2020, 6, 10)))
    out = run(raw, warehouse)
    assert "club       2020-06 … 2020-08" in out
    assert not list((warehouse / "rankings" / "club").glob("year=2021"))
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch")


def test_a_first_month_moved_later_and_a_last_month_removed(tmp_path):
    """The earliest games corrected into a later month and the last month's file removed."""
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", one_game(dt.date(2019, 11, 5), "first"))
    write_csv(raw / "games" / "b.csv", list(synthetic_games(8, 40, 15, dt.date(2020, 1, 1), dt.date(2020, 5, 31))))
    write_csv(raw / "games" / "c.csv", one_game(dt.date(2020, 9, 2), "last"))
    run(raw, warehouse)
    write_csv(raw / "games" / "a.csv", one_game(dt.date(2020, 2, 5), "first"))
    (raw / "games" / "c.csv").unlink()
    run(raw, warehouse)
    assert min(Warehouse(warehouse).written_months("rankings", "eagle")).partition_key == "2020-01-01"
    assert max(Warehouse(warehouse).written_months("rankings", "eagle")).partition_key == "2020-05-01"
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch")


def test_a_run_that_ends_earlier_leaves_the_checkpoints_of_a_run_from_scratch(tmp_path):
    """A checkpoint of an earlier run's last month (no December) is superseded by a longer run's."""
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(9, 40, 15, dt.date(2020, 1, 1), dt.date(2020, 4, 30))))
    run(raw, warehouse)
    assert (warehouse / "state" / "club" / "2020-04.json").exists()
    write_csv(raw / "games" / "b.csv", list(synthetic_games(10, 20, 15, dt.date(2020, 5, 1), dt.date(2020, 7, 31))))
    run(raw, warehouse)
    assert not (warehouse / "state" / "club" / "2020-04.json").exists()
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch")


def test_no_missing_partition_before_the_last_materialized_month(tmp_path):
    """The code location as the UI loads it after a run: each system's partitions start at its
    first month with data, and every partition up to the last materialized one is materialized."""
    from pipeline.definitions import build_definitions
    from pipeline.settings import Settings
    from tests.test_validation import GOOD_EVENT, GOOD_RESULTS

    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(12, 40, 15, dt.date(2019, 10, 1), dt.date(2020, 3, 31))))
    write_csv(raw / "events" / "e.csv", [GOOD_EVENT])
    write_csv(raw / "event_results" / "r.csv", GOOD_RESULTS)
    run(raw, warehouse)
    with environment(DIPRANK_WAREHOUSE_DIR=str(warehouse), DIPRANK_START_MONTH="1990-01"):
        defs = build_definitions(Settings.from_env())
    shown = materialized_months(warehouse)
    for system in SYSTEM_NAMES:
        partitions = defs.resolve_assets_def(f"{system}_rankings").partitions_def
        written = Warehouse(warehouse).written_months("rankings", system)
        assert partitions.get_first_partition_key() == written[0].partition_key, system
        keys = partitions.get_partition_keys()
        up_to_last = keys[: keys.index(written[-1].partition_key) + 1]
        assert [k for k in up_to_last if k not in shown[system]] == [], system


def test_a_range_run_of_the_command_records_each_month(tmp_path):
    """`diprank run` records each month a system's range run plans and writes (so the UI can mark a
    running or failed range's months)."""
    from dagster import DagsterEventType

    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(5, 40, 15, dt.date(2020, 1, 1), dt.date(2020, 6, 30))))
    run(raw, warehouse)
    months = {f"2020-{m:02d}-01" for m in range(1, 7)}
    with dagster_instance_at(warehouse / ".dagster") as instance:
        club = [r for r in instance.get_runs() if r.job_name == "club_job"]
        assert len(club) == 1
        planned = instance.get_records_for_run(
            club[0].run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        ).records
        assert sorted(r.event_log_entry.dagster_event.partition for r in planned) == sorted(months)
        assert instance.get_materialized_partitions(AssetKey("club_rankings")) == months
