"""The systems' month ranges after ingest: outputs of months that left a range are removed."""

import duckdb
from dagster import AssetExecutionContext, AssetKey, AssetSpec, MaterializeResult, MetadataValue

from pipeline.core.feed_spec import FEEDS
from pipeline.core.months import month_range
from pipeline.defs.partition_status import forget_partitions
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import QUALITY_ASSET, WAREHOUSE_REBUILT, rankings_asset_name
from pipeline.rating.quality import quality_months_outside, remove_quality_months
from pipeline.rating.ranges import months_outside, remove_months, system_ranges
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.views import refresh_views

RANGES_ASSET = "rating_ranges"

RANGES_SPEC = AssetSpec(
    key=AssetKey(RANGES_ASSET),
    group_name="validated",
    deps=[AssetKey(name) for name in FEEDS],
    kinds={"python", "parquet"},
    owners=["team:diprank"],
    tags={"layer": "validated"},
    description=(
        "Each system's range of months from the validated feeds: from the first month with data in "
        "its own feed to the latest month with data in any feed. A month that left a system's range "
        "(its games moved or corrected away) loses its snapshot, history, awards, checkpoint and "
        "manifest entry (and a month no system's range holds loses its quality table), so the "
        "warehouse equals a run from scratch on the same raw folder; Dagster "
        "then shows as materialized exactly the months whose snapshot is on disk."
    ),
)


def rating_ranges(
    context: AssetExecutionContext,
    con: duckdb.DuckDBPyConnection,
    diprank: DiprankResource,
    rebuilt: str | None = None,
) -> MaterializeResult:
    """Remove the outputs of months outside each system's range (the caller holds the warehouse
    alone: no system reads or writes meanwhile); the ranges' materialization, which carries
    `rebuilt`, the message of a warehouse of another format whose outputs this run writes again."""
    warehouse = diprank.warehouse
    classes = {name: system_class(name) for name in SYSTEM_NAMES}
    lines, removed_total = [], 0
    ranges = system_ranges(warehouse, {name: cls.feed for name, cls in classes.items()})
    for name, cls in classes.items():
        outside = months_outside(warehouse, name, cls.extras, ranges[name])
        remove_months(warehouse, name, cls.extras, outside)
        if outside:
            context.log.info(f"{name}: removed {len(outside)} month(s) outside its range: {outside[0]} … {outside[-1]}")
        # Compared with the disk rather than with what was just removed, so that a removal a
        # crash interrupted, or a snapshot deleted by hand, is mended too.
        key = AssetKey(rankings_asset_name(name))
        on_disk = {m.partition_key for m in warehouse.written_months("rankings", name)}
        forget_partitions(context.instance, key, sorted(context.instance.get_materialized_partitions(key) - on_disk))
        removed_total += len(outside)
        covered = ranges[name]
        lines.append(
            f"| {name} | {covered[0] if covered else '–'} | {covered[1] if covered else '–'} | {len(outside)} |"
        )
    covered_any = {m for covered in ranges.values() if covered for m in month_range(*covered)}
    quality_outside = quality_months_outside(warehouse, covered_any)
    remove_quality_months(warehouse, quality_outside)
    if quality_outside:
        context.log.info(f"quality: removed {len(quality_outside)} month(s) no system's range holds")
    quality_key = AssetKey(QUALITY_ASSET)
    on_disk = {m.partition_key for m in warehouse.quality_months()}
    forget_partitions(
        context.instance, quality_key, sorted(context.instance.get_materialized_partitions(quality_key) - on_disk)
    )
    refresh_views(con, warehouse)
    return MaterializeResult(
        asset_key=AssetKey(RANGES_ASSET),
        metadata={
            **({WAREHOUSE_REBUILT: MetadataValue.text(rebuilt)} if rebuilt else {}),
            "months_removed": removed_total,
            "ranges": MetadataValue.md(
                "| system | first month | last month | months removed |\n|---|---|---|---|\n" + "\n".join(lines)
            ),
        },
    )
