"""The Dagster code location of diprank, built when the code location loads.

`defs` resolves the settings once (from the environment of the process that loads the code
location) and builds everything from them: the resource, the partitions, the jobs, the
schedule, the sensors and the executor. Importing this module builds nothing.
"""

from __future__ import annotations

from functools import lru_cache

from dagster import Definitions, JobDefinition, definitions

from assets.ingest import ingest_feeds
from assets.quality import build_quality_asset
from assets.ratings import build_rating_assets
from pipeline.defs.executors import executor_for
from pipeline.defs.jobs import build_jobs
from pipeline.defs.partitions import PartitionBounds, partition_bounds, quality_partitions, rating_partitions
from pipeline.defs.resources import DiprankResource
from pipeline.defs.schedules import build_schedules
from pipeline.defs.sensors import build_sensors
from pipeline.settings import Settings


def build_definitions(settings: Settings, bounds: PartitionBounds | None = None) -> Definitions:
    """Every definition of the code location, for these settings; the partitions run within
    `bounds` (default: as the warehouse's data stands now)."""
    bounds = bounds or partition_bounds(settings)
    partitions = rating_partitions(bounds)
    scored = quality_partitions(bounds)
    jobs = build_jobs(settings.warehouse_dir, partitions, scored)
    return Definitions(
        assets=[ingest_feeds, *build_rating_assets(partitions), build_quality_asset(scored)],
        resources={"diprank": DiprankResource.from_settings(settings)},
        jobs=jobs.all(),
        schedules=build_schedules(jobs.ingest),
        sensors=build_sensors(jobs, bounds),
        executor=executor_for(settings),
    )


@lru_cache(maxsize=4)
def _definitions_for(environment: tuple[tuple[str, str], ...], bounds: tuple[tuple[str, str], ...]) -> Definitions:
    return build_definitions(Settings.from_env(dict(environment)), PartitionBounds.from_arguments(dict(bounds)))


@definitions
def defs() -> Definitions:
    """The code location as `dagster dev` and `dagster-webserver` load it: settings from the environment."""
    return build_definitions(Settings.from_env())


def job_definition(name: str, settings_environment: dict[str, str], bounds: dict[str, str]) -> JobDefinition:
    """A job by name, for the settings given as environment variables and the partitions' bounds
    (`PartitionBounds.as_arguments`): the target of `diprank run`'s reconstructable runs, so every
    process of a run (steps, workers) builds the same job as the command."""
    return _definitions_for(tuple(sorted(settings_environment.items())), tuple(sorted(bounds.items()))).resolve_job_def(
        name
    )
