"""The code location loads, every asset is grouped and described, and `dagster` accepts it."""

import subprocess
import sys

import pytest
from dagster import AssetKey, Definitions, MonthlyPartitionsDefinition

import pipeline.definitions
from pipeline.definitions import build_definitions
from pipeline.settings import Settings, SettingsError
from pipeline.systems.registry import SYSTEM_NAMES
from tests.support import REPO, environment


@pytest.fixture(scope="module")
def defs(tmp_path_factory):
    """The code location on an empty warehouse of its own."""
    return build_definitions(Settings.from_env({}, warehouse_dir=str(tmp_path_factory.mktemp("w"))))


def asset_specs(defs):
    return {spec.key: spec for spec in defs.resolve_all_asset_specs()}


def test_definitions_load_from_the_environment_when_the_code_location_loads(tmp_path):
    """Importing the module builds nothing; loading resolves the settings of that moment."""
    with environment(DIPRANK_WAREHOUSE_DIR=str(tmp_path / "w"), DIPRANK_START_MONTH="2001-07"):
        loaded = pipeline.definitions.defs()
    Definitions.validate_loadable(loaded)
    assert not isinstance(pipeline.definitions.defs, Definitions)
    resource = loaded.resources["diprank"]
    assert resource.warehouse_dir == str(tmp_path / "w")
    partitions = loaded.resolve_assets_def(AssetKey("club_rankings")).partitions_def
    assert partitions.get_first_partition_key() == "2001-07-01"


def test_assets_grouped_and_described(defs):
    specs = asset_specs(defs)
    groups = {key.to_user_string(): spec.group_name for key, spec in specs.items()}
    for feed in ("games", "events", "event_results", "players"):
        assert groups[f"raw_{feed}"] == "feeds"
        assert groups[feed] == "validated"
    for system in SYSTEM_NAMES:
        assert groups[f"{system}_rankings"] == system
    assert all(spec.description for spec in specs.values())


def test_rating_assets_are_monthly_and_self_dependent(defs):
    specs = asset_specs(defs)
    for system in SYSTEM_NAMES:
        spec = specs[AssetKey(f"{system}_rankings")]
        assert isinstance(spec.partitions_def, MonthlyPartitionsDefinition)
        assert spec.partitions_def.get_first_partition_key() == "1990-01-01"
        assert AssetKey(f"{system}_rankings") in {dep.asset_key for dep in spec.deps}
        assert "dagster/column_schema" in spec.metadata


def test_dagster_cli_validates_the_workspace():
    dagster = REPO / ".venv" / "bin" / "dagster"
    command = [str(dagster)] if dagster.exists() else [sys.executable, "-m", "dagster"]
    done = subprocess.run(
        [*command, "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("instance_file", ["pipeline/defs/dagster.yaml", "deploy/production/dagster.yaml"])
def test_every_instance_file_limits_the_writers_pools_to_one(instance_file):
    """The shipped instance files give every pool a limit of one step at a time."""
    import yaml

    instance = yaml.safe_load((REPO / instance_file).read_text())
    assert instance["concurrency"]["pools"]["default_limit"] == 1


def test_every_asset_that_writes_is_in_its_writers_pool(defs):
    """Ingest's assets share one pool, each system's asset has its own, and so does the quality table."""
    from pipeline.defs.tags import FEEDS_POOL, QUALITY_ASSET, QUALITY_POOL, system_pool

    graph = defs.resolve_asset_graph()
    pools = {
        key.to_user_string(): graph.get(key).pools
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable
    }
    for name, asset_pools in pools.items():
        system = name[: -len("_rankings")] if name.endswith("_rankings") else None
        expected = (
            system_pool(system) if system in SYSTEM_NAMES else QUALITY_POOL if name == QUALITY_ASSET else FEEDS_POOL
        )
        assert asset_pools == {expected}, name


def test_the_shipped_instance_file_goes_into_an_empty_home_and_a_users_own_stays(tmp_path):
    from dagster import DagsterInstance

    from pipeline.defs.instance import SHIPPED_INSTANCE, prepare_local_instance

    empty = prepare_local_instance(tmp_path / "new")
    assert (empty / "dagster.yaml").read_bytes() == SHIPPED_INSTANCE.read_bytes()
    with DagsterInstance.from_config(str(empty)) as instance:
        assert instance.event_log_storage.supports_global_concurrency_limits
        assert instance.get_concurrency_config().pool_config.default_pool_limit == 1
    own = tmp_path / "own"
    own.mkdir()
    (own / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    prepare_local_instance(own)
    assert (own / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"


def test_executor_comes_from_the_settings():
    from pipeline.defs.executors import ExecutorNotAvailable, executor_for

    assert executor_for(Settings.from_env({})).name == "in_process"
    assert executor_for(Settings.from_env({"DIPRANK_EXECUTOR": "multiprocess"})).name == "multiprocess"
    assert build_definitions(Settings.from_env({"DIPRANK_EXECUTOR": "multiprocess"})).executor.name == "multiprocess"
    with pytest.raises(SettingsError, match="choose one of"):
        Settings.from_env({"DIPRANK_EXECUTOR": "threads"})
    try:
        import dagster_celery  # noqa: F401  (the production extra)
    except ImportError:
        with pytest.raises(ExecutorNotAvailable, match="production extra"):
            executor_for(Settings.from_env({"DIPRANK_EXECUTOR": "celery"}))
        return
    with pytest.raises(ExecutorNotAvailable, match="DIPRANK_CELERY_BROKER"):
        executor_for(Settings.from_env({"DIPRANK_EXECUTOR": "celery"}))
    celery = executor_for(
        Settings.from_env(
            {
                "DIPRANK_EXECUTOR": "celery",
                "DIPRANK_CELERY_BROKER": "redis://127.0.0.1:1/0",
                "DIPRANK_CELERY_BACKEND": "redis://127.0.0.1:1/1",
            }
        )
    )
    assert celery.name == "celery"


def test_settings_are_resolved_once_with_their_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert (settings.raw_dir, settings.warehouse_dir) == (str(tmp_path / "data/raw"), str(tmp_path / "data/warehouse"))
    assert settings.dagster_home == str(tmp_path / "data/warehouse/.dagster")
    remote = Settings.from_env({"DIPRANK_WAREHOUSE_DIR": "s3://b/p/", "DIPRANK_LOCAL_DIR": "loc"})
    assert remote.warehouse_dir == "s3://b/p" and remote.dagster_home == str(tmp_path / "loc/s3_b_p/.dagster")
    assert Settings.from_env({"DIPRANK_EAGLE_VARIANTS": "standard, gunboat"}).eagle_variants == ("standard", "gunboat")
    overridden = Settings.from_env({"DIPRANK_WAREHOUSE_DIR": "elsewhere"}, warehouse_dir="w")
    assert overridden.warehouse_dir == str(tmp_path / "w")
    # What a process started for a run resolves from the settings' environment is the same settings.
    assert Settings.from_env(remote.environment()) == remote
    for bad in (
        {"DIPRANK_START_MONTH": "1990"},
        {"DIPRANK_DIP_POUCH_CUTOFF_YEAR": "x"},
        {"DIPRANK_EAGLE_POSITIONS": "sideways"},
        {"DIPRANK_EAGLE_VARIANTS": " , "},
        {"DIPRANK_PARTITIONS_END": "tomorrow"},
    ):
        with pytest.raises(SettingsError, match=next(iter(bad))):
            Settings.from_env(bad)


def test_no_module_reads_the_environment_at_import():
    """Settings are read in pipeline/settings.py alone; the kernels' cache folder is chosen in
    pipeline/systems/kernel_cache.py before numba (which reads it) is imported."""
    readers = subprocess.run(
        ["git", "grep", "-lE", r"os\.environ|os\.getenv", "--", "pipeline", "assets"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert set(readers) <= {"pipeline/settings.py", "pipeline/systems/kernel_cache.py"}, readers


def test_ingest_job_removes_months_outside_the_ranges(defs):
    ingest = defs.resolve_job_def("ingest")
    assert AssetKey("rating_ranges") in ingest.asset_layer.executable_asset_keys
    assert AssetKey("club_rankings") not in ingest.asset_layer.executable_asset_keys
