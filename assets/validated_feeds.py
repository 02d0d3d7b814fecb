"""Validated feed assets: each feed's Pandera model run inside DuckDB; failures to quarantine."""

import duckdb
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
)

from assets.metadata import column_schema
from assets.progress import progress_lines
from assets.raw_feeds import raw_asset_name
from pipeline.core.feed_spec import EVENT_RESULTS, EVENTS, GAMES, Feed
from pipeline.defs.resources import DiprankResource
from pipeline.ingest.exports import publish_validated
from pipeline.ingest.validation import FEED_MODELS, validate_and_count

GROUP = "validated"

BALANCED = "rows_balance"
NOTHING_QUARANTINED = "nothing_quarantined"

# Raw and validated feeds each validated asset reads (beyond its own raw feed).
EXTRA_UPSTREAM = {
    EVENTS.name: [raw_asset_name(EVENT_RESULTS)],
    EVENT_RESULTS.name: [EVENTS.name],
}


def validated_feed_spec(feed: Feed) -> AssetSpec:
    """The validated table of one feed."""
    model = FEED_MODELS[feed.name]
    return AssetSpec(
        key=AssetKey(feed.name),
        group_name=GROUP,
        deps=[raw_asset_name(feed), *EXTRA_UPSTREAM.get(feed.name, [])],
        kinds={"duckdb", "pandera", "parquet"},
        owners=["team:diprank"],
        tags={"layer": "validated"},
        description=(model.__doc__ or "").strip()
        + f" Rows breaking a rule go to the quarantine table and `quarantine/{feed.name}.parquet`"
        + (" (a game is quarantined whole)." if feed is GAMES else "."),
        metadata={"dagster/column_schema": column_schema(model)},
    )


def validated_feed_checks(feed: Feed) -> list[AssetCheckSpec]:
    """The checks of one validated feed."""
    key = AssetKey(feed.name)
    return [
        AssetCheckSpec(BALANCED, asset=key, description="Rows in = valid + quarantined + replaced."),
        AssetCheckSpec(
            NOTHING_QUARANTINED,
            asset=key,
            description="No row or file of the feed was quarantined (a warning, not a failure).",
        ),
    ]


def validated_feed(
    context: AssetExecutionContext, con: duckdb.DuckDBPyConnection, diprank: DiprankResource, feed: Feed
) -> MaterializeResult:
    """Validate the staged feed and publish its validated files; its materialization and check results."""
    progress = progress_lines(context)
    counts = validate_and_count(con, feed, progress, diprank.settings().validation_day)
    publish_validated(con, diprank.warehouse, feed, progress)
    if counts.quarantined or counts.files_rejected:
        context.log.warning(
            f"{feed.name}: {counts.quarantined} row(s) quarantined, {counts.files_rejected} file(s) rejected: "
            + ", ".join(f"{r} ×{n}" for r, n in counts.reasons.items())
        )
    key = AssetKey(feed.name)
    return MaterializeResult(
        asset_key=key,
        metadata={
            "rows_in": counts.rows_in,
            "valid": counts.valid,
            "quarantined": counts.quarantined,
            "replaced": counts.replaced,
            "files_rejected": counts.files_rejected,
            "balanced": counts.balanced,
            "dagster/row_count": counts.valid,
            "quarantine_reasons": MetadataValue.json(counts.reasons),
        },
        check_results=[
            AssetCheckResult(
                asset_key=key,
                check_name=BALANCED,
                passed=counts.balanced,
                metadata={
                    "rows_in": counts.rows_in,
                    "valid": counts.valid,
                    "quarantined": counts.quarantined,
                    "replaced": counts.replaced,
                },
            ),
            AssetCheckResult(
                asset_key=key,
                check_name=NOTHING_QUARANTINED,
                passed=counts.quarantined == 0 and counts.files_rejected == 0,
                severity=AssetCheckSeverity.WARN,
                metadata={"reasons": MetadataValue.json(counts.reasons)},
            ),
        ],
    )
