"""Ingest as one step: stage every feed, validate every feed, then the systems' month ranges.

One step, not one per asset: every part of it holds the warehouse alone and writes the one DuckDB
file, so separate steps could never run side by side, and each would pay for its own step events,
lock and DuckDB open (most of a small run's time). The assets and their checks stay apart in the
catalog, each with its own materialization and metadata.
"""

from typing import Iterator

from dagster import AssetExecutionContext, MaterializeResult, multi_asset

from assets.ranges import RANGES_SPEC, rating_ranges
from assets.raw_feeds import raw_feed_spec, staged_feed
from assets.validated_feeds import validated_feed, validated_feed_checks, validated_feed_spec
from pipeline.core.feed_spec import FEEDS
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import FEEDS_POOL, INGEST_STEP
from pipeline.ingest.validation import VALIDATION_ORDER
from pipeline.ingest.warehouse_format import rebuild_if_other_format
from pipeline.warehouse.locks import warehouse_lock


@multi_asset(
    name=INGEST_STEP,
    specs=[
        *(raw_feed_spec(feed) for feed in FEEDS.values()),
        *(validated_feed_spec(feed) for feed in VALIDATION_ORDER),
        RANGES_SPEC,
    ],
    check_specs=[check for feed in VALIDATION_ORDER for check in validated_feed_checks(feed)],
    can_subset=False,
    pool=FEEDS_POOL,
    description="Stage every raw delivery, validate the feeds in DuckDB, and bring the systems' month ranges up to date.",
)
def ingest_feeds(context: AssetExecutionContext, diprank: DiprankResource) -> Iterator[MaterializeResult]:
    with diprank.changing_feeds():
        with warehouse_lock(diprank.warehouse.duckdb_lock_path):  # the DuckDB file may go: no reader in it
            rebuilt = rebuild_if_other_format(diprank.warehouse)
        if rebuilt:
            context.log.warning(rebuilt)
        with diprank.duckdb() as con:
            for feed in FEEDS.values():
                yield staged_feed(context, con, diprank, feed)
            for feed in VALIDATION_ORDER:  # a feed after those its rules read
                yield validated_feed(context, con, diprank, feed)
            yield rating_ranges(context, con, diprank, rebuilt)
