"""The code location loads, every asset is grouped and described, and `dagster` accepts it."""
import subprocess
import sys

from dagster import AssetKey, Definitions

from pipeline.definitions import defs
from pipeline.systems.registry import SYSTEM_NAMES
from tests.support import REPO


def asset_specs():
    return {spec.key: spec for spec in defs.resolve_all_asset_specs()}


def test_definitions_load():
    Definitions.validate_loadable(defs)


def test_assets_grouped_and_described():
    specs = asset_specs()
    groups = {key.to_user_string(): spec.group_name for key, spec in specs.items()}
    for feed in ("games", "events", "event_results", "players"):
        assert groups[f"raw_{feed}"] == "feeds"
        assert groups[feed] == "validated"
    for system in SYSTEM_NAMES:
        assert groups[f"{system}_rankings"] == system
    assert all(spec.description for spec in specs.values())


def test_rating_assets_are_monthly_and_self_dependent():
    specs = asset_specs()
    for system in SYSTEM_NAMES:
        spec = specs[AssetKey(f"{system}_rankings")]
        assert spec.partitions_def is not None
        assert AssetKey(f"{system}_rankings") in {dep.asset_key for dep in spec.deps}
        assert "dagster/column_schema" in spec.metadata


def test_dagster_cli_validates_the_workspace():
    dagster = REPO / ".venv" / "bin" / "dagster"
    command = [str(dagster)] if dagster.exists() else [sys.executable, "-m", "dagster"]
    done = subprocess.run([*command, "definitions", "validate", "-w", "workspace.yaml"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_production_instance_limits_every_writer_tag():
    """Each writer tag of the jobs has a one-run-per-warehouse limit in the production instance."""
    import yaml

    from pipeline.defs.executors import WRITER_TAGS

    instance = yaml.safe_load((REPO / "deploy" / "production" / "dagster.yaml").read_text())
    limits = instance["run_coordinator"]["config"]["tag_concurrency_limits"]
    per_warehouse = {l["key"] for l in limits if l["limit"] == 1 and l["value"] == {"applyLimitPerUniqueValue": True}}
    assert set(WRITER_TAGS) <= per_warehouse
    assert instance["storage"]["postgres"]["postgres_url"] == {"env": "DIPRANK_POSTGRES_URL"}


def test_jobs_carry_their_writer_tags():
    from pipeline.defs.executors import FEEDS_WRITER_TAG, WRITER_TAGS, system_writer_tag

    ingest = defs.resolve_job_def("ingest")
    assert set(WRITER_TAGS) <= set(ingest.tags)
    for system in SYSTEM_NAMES:
        tags = defs.resolve_job_def(f"{system}_job").tags
        assert system_writer_tag(system) in tags and FEEDS_WRITER_TAG not in tags


def test_executor_comes_from_the_environment():
    import pytest

    from pipeline.defs.executors import ExecutorNotAvailable, executor_from_env

    assert executor_from_env({}).name == "in_process"
    assert executor_from_env({"DIPRANK_EXECUTOR": "multiprocess"}).name == "multiprocess"
    with pytest.raises(ExecutorNotAvailable, match="choose one of"):
        executor_from_env({"DIPRANK_EXECUTOR": "threads"})
    try:
        import dagster_celery  # noqa: F401  (the production extra)
    except ImportError:
        with pytest.raises(ExecutorNotAvailable, match="production extra"):
            executor_from_env({"DIPRANK_EXECUTOR": "celery"})
        return
    with pytest.raises(ExecutorNotAvailable, match="DIPRANK_CELERY_BROKER"):
        executor_from_env({"DIPRANK_EXECUTOR": "celery"})
    celery = executor_from_env({"DIPRANK_EXECUTOR": "celery", "DIPRANK_CELERY_BROKER": "redis://127.0.0.1:1/0",
                                "DIPRANK_CELERY_BACKEND": "redis://127.0.0.1:1/1"})
    assert celery.name == "celery"
