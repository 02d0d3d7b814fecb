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
