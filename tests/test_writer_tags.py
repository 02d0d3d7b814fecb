"""Every run that writes carries its writer tags, with one value per warehouse however it was spelled
or launched: `diprank run`, the jobs the schedule and sensors launch, a backfill from the UI."""
import datetime as dt
import logging

import pytest
from dagster import DagsterInstance
from dagster._daemon.backfill import execute_backfill_iteration
from dagster_graphql.client.query import LAUNCH_PARTITION_BACKFILL_MUTATION
from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

from pipeline.definitions import build_definitions
from pipeline.defs.tags import FEEDS_WRITER_TAG, WRITER_TAGS, system_writer_tag
from pipeline.settings import Settings, canonical_location
from pipeline.synthetic.generator import synthetic_games
from tests.support import environment, run_cli, write_csv


@pytest.mark.parametrize("spellings", [
    ("wh", "./wh", "wh/", "sub/../wh", "{tmp}/wh", "{tmp}//wh/"),
    ("s3://bucket/prefix", "S3://bucket/prefix/", "s3://bucket//prefix"),
])
def test_one_warehouse_has_one_canonical_location(tmp_path, monkeypatch, spellings):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    locations = {Settings.from_env({}, warehouse_dir=s.format(tmp=tmp_path)).warehouse_dir for s in spellings}
    assert len(locations) == 1, locations
    assert locations.pop() in {str(tmp_path / "wh"), "s3://bucket/prefix"}


def test_jobs_of_the_code_location_carry_the_canonical_location(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative = build_definitions(Settings.from_env({}, warehouse_dir="wh"))
    absolute = build_definitions(Settings.from_env({}, warehouse_dir=str(tmp_path / "wh") + "/"))
    for defs in (relative, absolute):
        ingest = defs.resolve_job_def("ingest")
        assert ingest.tags == {tag: str(tmp_path / "wh") for tag in WRITER_TAGS}
        for system in ("dip_pouch", "club", "eagle", "diwz"):
            assert defs.resolve_job_def(f"{system}_job").tags == {system_writer_tag(system): str(tmp_path / "wh")}
    # The schedule and the file sensor launch the ingest job; rate_after_ingest the rating jobs.
    assert relative.resolve_schedule_def("monthly_tables").job_name == "ingest"
    assert relative.resolve_sensor_def("new_raw_files").job_name == "ingest"
    assert {job.name for job in relative.resolve_sensor_def("rate_after_ingest").jobs} == {
        f"{s}_job" for s in ("dip_pouch", "club", "eagle", "diwz")}


def _runs_by_kind(instance: DagsterInstance) -> dict[str, list]:
    runs: dict[str, list] = {}
    for run in instance.get_runs():
        kind = "backfill" if "dagster/backfill" in run.tags else run.job_name
        runs.setdefault(kind, []).append(run)
    return runs


def test_cli_runs_and_a_ui_backfill_carry_one_tag_value(tmp_path, monkeypatch):
    """`diprank run --warehouse wh` from the folder, then a backfill of club months launched the way
    the UI's Materialize dialog does (GraphQL launchPartitionBackfill) against a code location whose
    warehouse is spelled absolute: every run has its writer tags, all with one value."""
    monkeypatch.chdir(tmp_path)
    write_csv(tmp_path / "raw" / "games" / "a.csv",
              list(synthetic_games(5, 40, 12, dt.date(2020, 1, 1), dt.date(2020, 3, 31))))
    home = tmp_path / "home"
    with environment(DAGSTER_HOME=str(home)):
        code, out, err = run_cli("run", "--raw", "raw", "--warehouse", "wh", "--systems", "club", "--quiet")
    assert code == 0, out + err
    expected = canonical_location(tmp_path / "wh")

    workspace = tmp_path / "workspace.yaml"
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: pipeline.definitions\n"
        f"      working_directory: {tmp_path}\n      location_name: diprank\n")
    with DagsterInstance.from_config(str(home)) as instance, \
            environment(DIPRANK_RAW_DIR=str(tmp_path / "raw"), DIPRANK_WAREHOUSE_DIR=str(tmp_path) + "//wh/",
                        DAGSTER_HOME=str(home)), \
            define_out_of_process_context(str(workspace), None, instance) as context:
        launched = execute_dagster_graphql(context, LAUNCH_PARTITION_BACKFILL_MUTATION, variables={
            "backfillParams": {"assetSelection": [{"path": ["club_rankings"]}],
                               "partitionNames": ["2020-01-01", "2020-02-01", "2020-03-01"]}})
        assert launched.data["launchPartitionBackfill"]["__typename"] == "LaunchBackfillSuccess", launched.data
        list(execute_backfill_iteration(context.process_context, logging.getLogger("backfill")))
        runs = _runs_by_kind(instance)

    assert set(runs) == {"ingest", "club_job", "backfill"}, runs
    (ingest,), (club,), (backfill,) = runs["ingest"], runs["club_job"], runs["backfill"]
    # The UI's backfill runs Dagster's implicit asset job; the coordinator gave it club's writer tag.
    assert backfill.job_name != "club_job"
    assert {k: v for k, v in ingest.tags.items() if k.startswith("diprank/writes-")} == \
        {tag: expected for tag in WRITER_TAGS}
    for run in (club, backfill):
        assert {k: v for k, v in run.tags.items() if k.startswith("diprank/writes-")} == \
            {system_writer_tag("club"): expected}
    assert FEEDS_WRITER_TAG not in backfill.tags
