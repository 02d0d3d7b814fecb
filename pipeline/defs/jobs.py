"""Jobs: one for ingest and validation, one per rating system (a self-dependent asset runs alone)."""
from __future__ import annotations

from dagster import AssetKey, AssetSelection, define_asset_job

from pipeline.defs.executors import executor_from_env, ingest_run_tags, rating_run_tags
from pipeline.defs.partitions import monthly_partitions
from pipeline.systems.registry import SYSTEM_NAMES

INGEST_JOB = "ingest"

ingest_job = define_asset_job(
    INGEST_JOB, selection=AssetSelection.groups("feeds", "validated"),
    description="Stage every raw delivery and validate the four feeds.",
    tags=ingest_run_tags(),
    executor_def=executor_from_env(),
)


def rating_job_name(system: str) -> str:
    return f"{system}_job"


rating_jobs = {
    system: define_asset_job(
        rating_job_name(system), selection=AssetSelection.assets(AssetKey(f"{system}_rankings")),
        partitions_def=monthly_partitions,
        description=f"Compute {system} snapshots for a range of months (one run, oldest month first).",
        tags=rating_run_tags(system),
        executor_def=executor_from_env(),
    )
    for system in SYSTEM_NAMES
}
