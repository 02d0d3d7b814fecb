"""The concurrency pools that keep the writers of one warehouse apart, and the tags diprank's runs carry.

Every asset that writes is in a pool, and the instance file (pipeline/defs/dagster.yaml,
deploy/production/dagster.yaml) limits every pool to one step at a time, however its run started:
ingest (which replaces the validated feeds every system reads) in one pool, each rating system in
a pool of its own, so the systems run side by side and never twice at once. The warehouse's file
locks (pipeline/warehouse/locks.py) hold the same rules underneath.
"""

from __future__ import annotations

from pipeline.systems.registry import SYSTEM_NAMES

FEEDS_POOL = "diprank_feeds"
QUALITY_POOL = "diprank_quality"
QUALITY_ASSET = "rating_quality"
WAREHOUSE_TAG = "diprank/warehouse"  # the warehouse a job's runs write, in its canonical spelling
COMMAND_LINE_TAG = "diprank/command_line"  # on the runs `diprank run` executes in its own process
THROUGH_TAG = "diprank/through"  # the last month the ratings after an ingest must reach
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
RANKINGS_SUFFIX = "_rankings"
INGEST_STEP = "ingest_feeds"  # the one step of ingest (assets/ingest.py)
# Metadata of the ranges' materialization when ingest rebuilt a warehouse of another format.
WAREHOUSE_REBUILT = "warehouse_rebuilt"


def system_pool(system: str) -> str:
    return f"diprank_{system}"


WRITER_POOLS = (FEEDS_POOL, *(system_pool(s) for s in SYSTEM_NAMES), QUALITY_POOL)


def range_tags(first_partition: str, last_partition: str) -> dict[str, str]:
    """The tags that make a run of a partitioned job cover a range of months in one run."""
    return {RANGE_START: first_partition, RANGE_END: last_partition}


def rankings_asset_name(system: str) -> str:
    return f"{system}{RANKINGS_SUFFIX}"


def writing_system(asset_name: str) -> str | None:
    """The system whose outputs an asset writes, or None for an asset of ingest."""
    system = asset_name[: -len(RANKINGS_SUFFIX)] if asset_name.endswith(RANKINGS_SUFFIX) else None
    return system if system in SYSTEM_NAMES else None
