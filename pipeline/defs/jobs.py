"""Jobs: one for ingest and validation, one per rating system (a self-dependent asset runs alone)."""
from __future__ import annotations

from dataclasses import dataclass

from dagster import AssetKey, AssetSelection, PartitionsDefinition, define_asset_job
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

from pipeline.defs.tags import ingest_run_tags, rankings_asset_name, rating_run_tags
from pipeline.systems.registry import SYSTEM_NAMES

INGEST_JOB = "ingest"
INGEST_GROUPS = ("feeds", "validated")


def rating_job_name(system: str) -> str:
    return f"{system}_job"


@dataclass(frozen=True)
class Jobs:
    """The code location's jobs."""

    ingest: UnresolvedAssetJobDefinition
    rating: dict[str, UnresolvedAssetJobDefinition]

    def all(self) -> list[UnresolvedAssetJobDefinition]:
        return [self.ingest, *self.rating.values()]


def build_jobs(warehouse_location: str, partitions: dict[str, PartitionsDefinition]) -> Jobs:
    """The ingest job and one range job per system, tagged with the warehouse they write."""
    ingest = define_asset_job(
        INGEST_JOB, selection=AssetSelection.groups(*INGEST_GROUPS),
        description="Stage every raw delivery and validate the four feeds.",
        tags=ingest_run_tags(warehouse_location),
    )
    rating = {
        system: define_asset_job(
            rating_job_name(system), selection=AssetSelection.assets(AssetKey(rankings_asset_name(system))),
            partitions_def=partitions[system],
            description=f"Compute {system} snapshots for a range of months (one run, oldest month first).",
            tags=rating_run_tags(system, warehouse_location),
        )
        for system in SYSTEM_NAMES
    }
    return Jobs(ingest, rating)
