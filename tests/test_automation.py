"""The monthly schedule and the sensors produce the runs a user expects."""

import datetime as dt
import json

from dagster import (
    DagsterInstance,
    RunRequest,
    SkipReason,
    build_run_status_sensor_context,
    build_schedule_context,
    build_sensor_context,
    materialize,
)

from pipeline.core.months import Month
from pipeline.definitions import build_definitions
from pipeline.defs.partitions import PartitionBounds
from pipeline.defs.resources import DiprankResource
from pipeline.defs.sensors import rating_requests
from pipeline.defs.tags import RANGE_END, RANGE_START, THROUGH_TAG
from pipeline.settings import Settings
from pipeline.synthetic.generator import synthetic_games
from pipeline.warehouse.store import Warehouse
from tests.support import run_cli, write_csv


def definitions_for(raw, warehouse):
    """The code location for a raw folder and a warehouse, and its resource."""
    # No settle time: the tests write a delivery and ingest it at once.
    settings = Settings.from_env({}, raw_dir=str(raw), warehouse_dir=str(warehouse), settle_seconds=0)
    return build_definitions(settings), DiprankResource.from_settings(settings)


def test_schedule_asks_for_the_month_just_ended(tmp_path):
    defs, _ = definitions_for(tmp_path / "raw", tmp_path / "w")
    monthly_tables = defs.resolve_schedule_def("monthly_tables")
    context = build_schedule_context(scheduled_execution_time=dt.datetime(2024, 3, 2, 6, 0))
    request = monthly_tables(context)
    assert isinstance(request, RunRequest)
    assert request.tags[THROUGH_TAG] == "2024-02" and request.run_key == "monthly-2024-02"
    january = monthly_tables(build_schedule_context(scheduled_execution_time=dt.datetime(2024, 1, 2, 6)))
    assert january.tags[THROUGH_TAG] == "2023-12"


def test_file_sensor_fires_on_new_or_changed_files(tmp_path):
    raw = tmp_path / "raw"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(1, 2, 10, dt.date(2020, 1, 1), dt.date(2020, 1, 9))))
    defs, diprank = definitions_for(raw, tmp_path / "w")
    new_raw_files = defs.resolve_sensor_def("new_raw_files")

    def tick(cursor):
        context = build_sensor_context(cursor=cursor, resources={"diprank": diprank})
        return new_raw_files(context), context.cursor

    # A file is asked for once the folder has looked the same at two ticks: a copy in progress changes it.
    settling, cursor = tick(None)
    assert isinstance(settling, SkipReason) and "stay the same" in settling.skip_message
    first, cursor = tick(cursor)
    assert isinstance(first, RunRequest)
    unchanged, cursor = tick(cursor)
    assert isinstance(unchanged, SkipReason) and "no new" in unchanged.skip_message
    write_csv(raw / "games" / "b.csv", list(synthetic_games(2, 1, 10, dt.date(2020, 2, 1), dt.date(2020, 2, 2))))
    settling, cursor = tick(cursor)
    assert isinstance(settling, SkipReason)
    with (raw / "games" / "b.csv").open("a") as growing:
        growing.write("\n")
    still, cursor = tick(cursor)
    assert isinstance(still, SkipReason), "a file that changed since the last tick is not asked for"
    again, cursor = tick(cursor)
    assert isinstance(again, RunRequest) and again.run_key != first.run_key
    # The cursor of an earlier version (the bare signature asked for) still reads.
    earlier, _ = tick(json.loads(cursor)["asked"])
    assert isinstance(earlier, SkipReason) and "no new" in earlier.skip_message
    defs, missing = definitions_for(tmp_path / "missing", tmp_path / "w")
    skipped = defs.resolve_sensor_def("new_raw_files")(build_sensor_context(resources={"diprank": missing}))
    assert isinstance(skipped, SkipReason) and "does not exist" in skipped.skip_message


def test_ratings_follow_ingest_from_the_first_stale_month(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(3, 60, 15, dt.date(2020, 1, 1), dt.date(2020, 6, 30))))
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    late = list(synthetic_games(4, 1, 15, dt.date(2020, 3, 15), dt.date(2020, 3, 15)))
    for row in late:
        row["game_id"] = "late"
    write_csv(raw / "games" / "b.csv", late)
    from assets.ingest import ingest_feeds

    defs, diprank = definitions_for(raw, warehouse)
    instance = DagsterInstance.ephemeral()
    ingest = materialize(
        [ingest_feeds], instance=instance, resources={"diprank": diprank}, tags={THROUGH_TAG: "2020-08"}
    )
    assert ingest.success
    requests, problems = rating_requests(Warehouse(warehouse), diprank.settings(), None, "k")
    assert problems == []
    # Partitions loaded when club's data started later than it does now: club waits for a reload.
    late_start, problems = rating_requests(
        Warehouse(warehouse), diprank.settings(), None, "k", PartitionBounds({"club": Month(2020, 4)})
    )
    assert {r.job_name for r in late_start} == {"eagle_job", "diwz_job", "ghost_job"}
    assert len(problems) == 1 and "club" in problems[0] and "reload the code location" in problems[0]
    assert {r.job_name for r in requests} == {"club_job", "eagle_job", "diwz_job", "ghost_job"}
    assert all((r.tags[RANGE_START], r.tags[RANGE_END]) == ("2020-03-01", "2020-06-01") for r in requests)
    # The run-status sensor itself, with the code location's resource: the schedule's month
    # reaches past the data.
    success = next(e for e in ingest.all_events if e.event_type_value == "PIPELINE_SUCCESS")
    context = build_run_status_sensor_context(
        sensor_name="rate_after_ingest",
        dagster_event=success,
        dagster_instance=instance,
        dagster_run=ingest.dagster_run,
        resources={"diprank": diprank},
    )
    sensed = defs.resolve_sensor_def("rate_after_ingest")(context)
    assert {(r.job_name, r.tags[RANGE_START], r.tags[RANGE_END]) for r in sensed} == {
        (f"{s}_job", "2020-03-01", "2020-08-01") for s in ("club", "eagle", "diwz", "ghost")
    }
    # Partitions that end at the data (DIPRANK_PARTITIONS_END=data), loaded before the data
    # reached June: every system waits for a reload. Loaded with June, the schedule's later month
    # asks through June, the last partition.
    early_end, problems = rating_requests(
        Warehouse(warehouse), diprank.settings(), None, "k", PartitionBounds({}, Month(2020, 5))
    )
    assert early_end == [] and len(problems) == 4
    assert all("reaches 2020-06, after the last partition 2020-05" in problem for problem in problems)
    at_end, problems = rating_requests(
        Warehouse(warehouse), diprank.settings(), Month(2020, 8), "k", PartitionBounds({}, Month(2020, 6))
    )
    assert problems == [] and {(r.tags[RANGE_START], r.tags[RANGE_END]) for r in at_end} == {
        ("2020-03-01", "2020-06-01")
    }


def test_partitions_end_at_the_current_month_or_at_the_data(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(3, 20, 15, dt.date(2020, 1, 1), dt.date(2020, 6, 30))))
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err

    def last_keys(env):
        defs = build_definitions(Settings.from_env(env, raw_dir=str(raw), warehouse_dir=str(warehouse)))
        return {
            name: defs.resolve_assets_def(name).partitions_def.get_last_partition_key()
            for name in ("club_rankings", "dip_pouch_rankings", "rating_quality")
        }

    this_month = dt.date.today().replace(day=1).isoformat()
    assert last_keys({}) == dict.fromkeys(("club_rankings", "dip_pouch_rankings", "rating_quality"), this_month)
    # At the data: the last month with data in any feed, for every system (dip_pouch has none).
    at_data = last_keys({"DIPRANK_PARTITIONS_END": "data"})
    assert at_data == dict.fromkeys(("club_rankings", "dip_pouch_rankings", "rating_quality"), "2020-06-01")
