"""Validated feed assets: each feed's Pandera model run inside DuckDB; failures to quarantine."""

from dagster import (
    AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetExecutionContext, AssetKey, AssetsDefinition,
    MaterializeResult, MetadataValue, asset,
)

from assets.raw_feeds import raw_asset_name
from assets.metadata import column_schema
from pipeline.core.feed_spec import EVENT_RESULTS, EVENTS, FEEDS, GAMES, Feed
from pipeline.defs.resources import DiprankResource
from pipeline.ingest.exports import publish_validated
from pipeline.ingest.validation import FEED_MODELS, catch_up, ensure_report_tables, validate_and_count

GROUP = "validated"

BALANCED = "rows_balance"
NOTHING_QUARANTINED = "nothing_quarantined"

# Raw and validated feeds each validated asset reads (beyond its own raw feed).
EXTRA_UPSTREAM = {
    EVENTS.name: [raw_asset_name(EVENT_RESULTS)],
    EVENT_RESULTS.name: [EVENTS.name],
}


def build_validated_asset(feed: Feed) -> AssetsDefinition:
    """The validated table of one feed."""
    model = FEED_MODELS[feed.name]

    @asset(
        name=feed.name,
        group_name=GROUP,
        deps=[raw_asset_name(feed), *EXTRA_UPSTREAM.get(feed.name, [])],
        kinds={"duckdb", "pandera", "parquet"},
        owners=["team:diprank"],
        tags={"layer": "validated"},
        description=(model.__doc__ or "").strip()
        + f" Rows breaking a rule go to the quarantine table and `quarantine/{feed.name}.parquet`"
        + (" (a game is quarantined whole)." if feed is GAMES else "."),
        metadata={"dagster/column_schema": column_schema(model)},
        check_specs=[
            AssetCheckSpec(BALANCED, asset=AssetKey(feed.name),
                           description="Rows in = valid + quarantined + replaced."),
            AssetCheckSpec(NOTHING_QUARANTINED, asset=AssetKey(feed.name),
                           description="No row or file of the feed was quarantined (a warning, not a failure)."),
        ],
    )
    def _validated(context: AssetExecutionContext, diprank: DiprankResource) -> MaterializeResult:
        warehouse = diprank.warehouse
        with diprank.changing_feeds(), diprank.duckdb() as con:
            ensure_report_tables(con)
            catch_up(con, feed, warehouse)
            counts = validate_and_count(con, feed)
            publish_validated(con, warehouse, feed)
        if counts.quarantined or counts.files_rejected:
            context.log.warning(
                f"{feed.name}: {counts.quarantined} row(s) quarantined, {counts.files_rejected} file(s) rejected: "
                + ", ".join(f"{r} ×{n}" for r, n in counts.reasons.items())
            )
        return MaterializeResult(
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
                AssetCheckResult(check_name=BALANCED, passed=counts.balanced,
                                 metadata={"rows_in": counts.rows_in, "valid": counts.valid,
                                           "quarantined": counts.quarantined, "replaced": counts.replaced}),
                AssetCheckResult(check_name=NOTHING_QUARANTINED,
                                 passed=counts.quarantined == 0 and counts.files_rejected == 0,
                                 severity=AssetCheckSeverity.WARN,
                                 metadata={"reasons": MetadataValue.json(counts.reasons)}),
            ],
        )

    return _validated


validated_feed_assets = [build_validated_asset(feed) for feed in FEEDS.values()]
