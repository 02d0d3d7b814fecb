"""Run tags that keep the writers of one warehouse apart, and the other tags diprank's runs carry.

The queued run coordinator's tag_concurrency_limits (deploy/production/dagster.yaml) allow one run
per value of each writer tag, the value being the warehouse location in its canonical spelling
(`Settings.warehouse_dir`): ingest carries all five tags, a rating system only its own.
"""
from __future__ import annotations

from pipeline.systems.registry import SYSTEM_NAMES

FEEDS_WRITER_TAG = "diprank/writes-feeds"
WRITER_TAG_PREFIX = "diprank/writes-"
THROUGH_TAG = "diprank/through"  # the last month the ratings after an ingest must reach
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
RANKINGS_SUFFIX = "_rankings"


def system_writer_tag(system: str) -> str:
    return f"{WRITER_TAG_PREFIX}{system}"


WRITER_TAGS = (FEEDS_WRITER_TAG, *(system_writer_tag(s) for s in SYSTEM_NAMES))


def ingest_run_tags(warehouse_location: str) -> dict[str, str]:
    """Ingest replaces the validated feeds every system reads: it excludes every other writer."""
    return {tag: warehouse_location for tag in WRITER_TAGS}


def rating_run_tags(system: str, warehouse_location: str) -> dict[str, str]:
    """A system writes only its own outputs: systems run side by side, never twice at once."""
    return {system_writer_tag(system): warehouse_location}


def range_tags(first_partition: str, last_partition: str) -> dict[str, str]:
    """The tags that make a run of a partitioned job cover a range of months in one run."""
    return {RANGE_START: first_partition, RANGE_END: last_partition}


def rankings_asset_name(system: str) -> str:
    return f"{system}{RANKINGS_SUFFIX}"


def writing_system(asset_name: str) -> str | None:
    """The system whose outputs an asset writes, or None for an asset of ingest."""
    system = asset_name[: -len(RANKINGS_SUFFIX)] if asset_name.endswith(RANKINGS_SUFFIX) else None
    return system if system in SYSTEM_NAMES else None
