"""Jobs: one for ingest and validation, one per rating system (a self-dependent asset runs alone)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dagster import AssetKey, AssetSelection, PartitionsDefinition, define_asset_job

from pipeline.defs.tags import QUALITY_ASSET, WAREHOUSE_TAG, rankings_asset_name
from pipeline.systems.registry import SYSTEM_NAMES

INGEST_JOB = "ingest"
QUALITY_JOB = "quality_job"
INGEST_GROUPS = ("feeds", "validated")
# What define_asset_job returns: a job resolved when the Definitions are (its class is not public).
AssetJob = Any


def rating_job_name(system: str) -> str:
    return f"{system}_job"


@dataclass(frozen=True)
class Jobs:
    """The code location's jobs."""

    ingest: AssetJob
    rating: dict[str, AssetJob]
    quality: AssetJob

    def all(self) -> list[AssetJob]:
        return [self.ingest, *self.rating.values(), self.quality]


def build_jobs(
    warehouse_location: str, partitions: Mapping[str, PartitionsDefinition], quality_partitions: PartitionsDefinition
) -> Jobs:
    """The ingest job, one range job per system and the quality job, tagged with the warehouse they write."""
    tags = {WAREHOUSE_TAG: warehouse_location}
    ingest = define_asset_job(
        INGEST_JOB,
        selection=AssetSelection.groups(*INGEST_GROUPS),
        description="Stage every raw delivery and validate the four feeds.",
        tags=tags,
    )
    rating = {
        system: define_asset_job(
            rating_job_name(system),
            selection=AssetSelection.assets(AssetKey(rankings_asset_name(system))),
            partitions_def=partitions[system],
            description=f"Compute {system} snapshots for a range of months (one run, oldest month first).",
            tags=tags,
        )
        for system in SYSTEM_NAMES
    }
    quality = define_asset_job(
        QUALITY_JOB,
        selection=AssetSelection.assets(AssetKey(QUALITY_ASSET)),
        partitions_def=quality_partitions,
        description="Score every system's predictions for a range of months (one run, one pass).",
        tags=tags,
    )
    return Jobs(ingest, rating, quality)
