"""The local instance's event log (pipeline/defs/event_log.py) records what Dagster's own SQLite
event log records, while writing a range run's events as batches; and the local instance's
dagster.yaml (pipeline/defs/instance.py) names it."""
import os
import re
from pathlib import Path

import pytest
import yaml
from dagster import (
    AssetCheckKey, AssetCheckResult, AssetCheckSpec, AssetKey, BackfillPolicy, DagsterEventType, DagsterInstance,
    MaterializeResult, MonthlyPartitionsDefinition, asset, materialize,
)

from dagster._core.definitions.data_version import DATA_VERSION_TAG

from pipeline.cli.main import batched_event_writes
from pipeline.defs import event_log
from pipeline.defs.event_log import BatchingSqliteEventLogStorage
from pipeline.defs.instance import (
    EARLIER_INSTANCE, EVENT_BATCH_SIZE, EVENT_BATCH_SIZE_VARIABLE, INSTANCE_FILE, MARKER, local_instance,
    prepare_local_instance,
)

REPO = Path(__file__).resolve().parents[1]
MONTHS = MonthlyPartitionsDefinition("2020-01-01", end_date="2022-01-01")  # 24 partitions
KEY = AssetKey("months")
CHECK = AssetCheckKey(KEY, "sane")
DAGSTERS_OWN = "telemetry:\n  enabled: false\n"  # no event_log_storage: Dagster's SqliteEventLogStorage


def months_asset(fail: bool):
    @asset(key=KEY, partitions_def=MONTHS, backfill_policy=BackfillPolicy.single_run(),
           check_specs=[AssetCheckSpec("sane", asset=KEY)])
    def months(context) -> MaterializeResult:
        if fail:
            raise RuntimeError("failed on purpose")
        return MaterializeResult(metadata={"months": len(context.partition_keys)},
                                 check_results=[AssetCheckResult(check_name="sane", passed=True)])
    return months


def range_run(instance: DagsterInstance, first: str, last: str, fail: bool = False) -> str:
    result = materialize([months_asset(fail)], instance=instance, raise_on_error=False,
                         tags={"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last})
    assert result.success is not fail
    return result.run_id


def recorded(instance: DagsterInstance, run_ids: list[str]) -> dict:
    """What the UI and Dagster's partition status read, without ids and times."""
    storage = instance.event_log_storage
    record = instance.get_asset_records([KEY])[0].asset_entry
    return {
        "run_events": [[(e.dagster_event_type, e.dagster_event.partition if e.is_dagster_event else None)
                        for e in instance.all_logs(run_id) if e.is_dagster_event] for run_id in run_ids],
        "materialized": sorted(instance.get_materialized_partitions(KEY)),
        "index_materializations": [r.partition_key for r in instance.fetch_materializations(KEY, limit=1000).records],
        "planned_not_done": sorted(storage.get_latest_asset_partition_materialization_attempts_without_materializations(KEY)),
        # A data version is a hash that includes the run's id: its key, not its value.
        "tags": sorted(sorted((k, "…" if k == DATA_VERSION_TAG else v) for k, v in tags.items())
                       for tags in instance.get_event_tags_for_asset(KEY)),
        "checks": sorted((r.status.value, r.partition or "") for r in storage.get_asset_check_execution_history(CHECK, limit=1000)),
        "last_run": run_ids.index(record.last_run_id),
        "last_materialized": record.last_materialization_record.event_log_entry.dagster_event.partition,
    }


def history(home: Path, instance_text: str | None) -> tuple[dict, DagsterInstance]:
    """A successful range run, an overlapping failed one and a later successful one, on an instance at `home`."""
    if instance_text is None:
        prepare_local_instance(home)
    else:
        home.mkdir(parents=True)
        (home / INSTANCE_FILE).write_text(instance_text)
    with DagsterInstance.from_config(str(home)) as instance:
        runs = [range_run(instance, "2020-01-01", "2021-06-01"),
                range_run(instance, "2021-01-01", "2021-12-01", fail=True),
                range_run(instance, "2021-09-01", "2021-10-01")]
        return recorded(instance, runs), instance


def test_batches_record_what_dagsters_own_event_log_records(tmp_path, monkeypatch):
    monkeypatch.setenv(EVENT_BATCH_SIZE_VARIABLE, str(EVENT_BATCH_SIZE))
    batches = []
    store = BatchingSqliteEventLogStorage.store_event_batch
    monkeypatch.setattr(BatchingSqliteEventLogStorage, "store_event_batch",
                        lambda self, events: (batches.append(len(events)), store(self, events))[1])
    ours, instance = history(tmp_path / "ours", None)
    assert isinstance(instance.event_log_storage, BatchingSqliteEventLogStorage)
    dagsters, instance = history(tmp_path / "dagster", DAGSTERS_OWN)
    assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"
    assert ours == dagsters
    # The 18 planned months of the first run (and its check's plan) went in one batch, then its 18 materializations.
    assert batches[:2] == [19, 18], batches
    # The failed run's months, less those the last run wrote: what the UI marks as failed.
    assert ours["planned_not_done"] == [f"2021-{m:02d}-01" for m in (1, 2, 3, 4, 5, 6, 7, 8, 11, 12)]
    assert ours["materialized"][-1] == "2021-10-01" and len(ours["materialized"]) == 20


def test_a_range_run_without_batches_records_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv(EVENT_BATCH_SIZE_VARIABLE, str(EVENT_BATCH_SIZE))
    batched, _ = history(tmp_path / "batched", None)
    monkeypatch.delenv(EVENT_BATCH_SIZE_VARIABLE)
    one_by_one, _ = history(tmp_path / "one_by_one", None)
    assert batched == one_by_one


def test_engines_past_the_limit_are_disposed(tmp_path, monkeypatch):
    monkeypatch.setattr(event_log, "ENGINES_KEPT", 2)
    prepare_local_instance(tmp_path)
    with DagsterInstance.from_config(str(tmp_path)) as instance:
        runs = [range_run(instance, "2020-01-01", "2020-03-01") for _ in range(3)]
        assert len(instance.event_log_storage._engines) <= 2
        assert [len(instance.all_logs(run)) > 0 for run in runs] == [True] * 3


def test_the_command_batches_its_runs_events_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv(EVENT_BATCH_SIZE_VARIABLE, raising=False)
    with batched_event_writes():
        assert os.environ[EVENT_BATCH_SIZE_VARIABLE] == str(EVENT_BATCH_SIZE)
    assert EVENT_BATCH_SIZE_VARIABLE not in os.environ
    monkeypatch.setenv(EVENT_BATCH_SIZE_VARIABLE, "0")
    with batched_event_writes():
        assert os.environ[EVENT_BATCH_SIZE_VARIABLE] == "0"


def test_make_ui_batches_as_the_command_does():
    makefile = (REPO / "Makefile").read_text()
    assert re.search(rf"^ui: export {EVENT_BATCH_SIZE_VARIABLE} \?= {EVENT_BATCH_SIZE}$", makefile, re.M)


@pytest.mark.parametrize("existing", [None, EARLIER_INSTANCE,
                                      MARKER + "\nrun_coordinator:\n  module: pipeline.defs.coordinator\n"
                                      "  class: WriterTagsRunCoordinator\ntelemetry:\n  enabled: false\n",
                                      "elsewhere"])
def test_a_file_diprank_wrote_is_brought_up_to_date(tmp_path, existing):
    home = tmp_path / "home"
    if existing == "elsewhere":  # a home that was moved: its file names the old place
        prepare_local_instance(tmp_path / "old")
        home.mkdir()
        (home / INSTANCE_FILE).write_text((tmp_path / "old" / INSTANCE_FILE).read_text())
    elif existing is not None:
        home.mkdir()
        (home / INSTANCE_FILE).write_text(existing)
    prepare_local_instance(home)
    text = (home / INSTANCE_FILE).read_text()
    assert text == local_instance(home)
    config = yaml.safe_load(text)
    assert config["event_log_storage"]["config"]["base_dir"] == str(home.resolve() / "history" / "runs")
    assert config["event_log_storage"]["class"] == BatchingSqliteEventLogStorage.__name__


def test_a_users_own_file_is_left_alone(tmp_path):
    (tmp_path / INSTANCE_FILE).write_text(DAGSTERS_OWN + "# mine\n")
    prepare_local_instance(tmp_path)
    assert (tmp_path / INSTANCE_FILE).read_text() == DAGSTERS_OWN + "# mine\n"


def schema_of(database: Path) -> tuple[list, list]:
    """The tables, indexes and their SQL, and the migration revision stamped, of a SQLite file."""
    import sqlite3
    with sqlite3.connect(database) as con:
        return (sorted(con.execute("SELECT type, name, sql FROM sqlite_master").fetchall()),
                con.execute("SELECT version_num FROM alembic_version").fetchall())


def test_a_runs_database_is_one_dagster_initialised(tmp_path):
    """A run's new database is copied from one made by Dagster's own initialisation; a file already
    there is left to Dagster's check."""
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
    from dagster._core.storage.sql import create_engine

    prepare_local_instance(tmp_path / "home")
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        run_id = range_run(instance, "2020-01-01", "2020-03-01")
        storage = instance.event_log_storage
        copied = Path(storage.path_for_shard(run_id))
        assert storage._run_database is not None  # made once, then copied
        assert [e.dagster_event_type for e in instance.all_logs(run_id) if e.is_dagster_event][0] is not None
        assert not storage._new_run_database(run_id)  # exists: not overwritten
    own = SqliteEventLogStorage(str(tmp_path / "dagster"))
    engine = create_engine(own.conn_string_for_shard("run"))
    own._initdb(engine)
    engine.dispose()
    assert schema_of(copied) == schema_of(Path(own.path_for_shard("run")))
    assert copied.stat().st_mode == Path(own.path_for_shard("run")).stat().st_mode
    assert not list(copied.parent.glob(".*.tmp"))  # nothing left aside
