"""The monthly quality table (SPEC §3.5): how well each system's previous table predicted the month."""

import time
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetDep,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    BackfillPolicy,
    MaterializeResult,
    MetadataValue,
    PartitionsDefinition,
    TimeWindowPartitionMapping,
    asset,
)

from assets.metadata import column_schema, markdown_table
from pipeline.core.months import Month, month_range
from pipeline.defs.partition_status import forget_partitions
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import QUALITY_ASSET, QUALITY_POOL, rankings_asset_name
from pipeline.rating.quality import score_months, system_months
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.store import Warehouse, read_parquet
from pipeline.warehouse.views import QUALITY_VIEW, refresh_views
from schemas.quality import Quality

PREVIEW_COLUMNS = ["system", "games", "pairs", "pairwise_accuracy", "trailing_accuracy", "common_accuracy"]
# Every table holds the Quality model (accuracies in [0, 1], concordant <= pairs, trailing >= month)
# before it is written: the writer refuses one that breaks it, and the run fails naming the rule.
MONTHS_CHECK = "one_row_per_system_in_range"


def build_quality_asset(partitions_def: PartitionsDefinition) -> AssetsDefinition:
    """The quality asset: month M reads each system's months M−1 (its table before) and M (its results)."""
    key = AssetKey(QUALITY_ASSET)

    @asset(
        key=key,
        group_name="quality",
        partitions_def=partitions_def,
        backfill_policy=BackfillPolicy.single_run(),
        pool=QUALITY_POOL,
        deps=[
            AssetDep(
                AssetKey(rankings_asset_name(system)),
                partition_mapping=TimeWindowPartitionMapping(
                    start_offset=-1, end_offset=0, allow_nonexistent_upstream_partitions=True
                ),
            )
            for system in SYSTEM_NAMES
        ],
        kinds={"python", "parquet"},
        owners=["team:diprank"],
        tags={"layer": "quality"},
        description=(
            "How well each system's table of the month before ordered the players of the month's games "
            "and events (pairwise accuracy), over the month and the trailing 12 months, and for club, "
            "eagle and diwz on the games all three rated: `quality/year=YYYY/month=MM/quality.parquet`. "
            "A range runs as one run, scored in one pass."
        ),
        metadata={"dagster/column_schema": column_schema(Quality)},
        check_specs=[
            AssetCheckSpec(
                MONTHS_CHECK,
                asset=key,
                description="Every month of the range that a system has a snapshot of has a table, with one row per such system.",
            ),
        ],
    )
    def rating_quality(context: AssetExecutionContext, diprank: DiprankResource) -> MaterializeResult:
        window = context.partition_key_range
        first, last = Month.parse(window.start), Month.parse(window.end)
        warehouse = diprank.warehouse
        started = time.perf_counter()
        with diprank.scoring(log=context.log.info):
            run = score_months(warehouse, first, last)
            # Months a range left are removed by ingest; Dagster shows exactly the months on disk.
            on_disk = {m.partition_key for m in warehouse.quality_months()}
            forget_partitions(
                context.instance, key, sorted(context.instance.get_materialized_partitions(key) - on_disk)
            )
            with diprank.duckdb() as con:
                refresh_views(con, warehouse, systems=[QUALITY_VIEW])
            misplaced = tables_out_of_range(warehouse, first, last)
        context.log.info(f"quality: scored {len(run.months)} month(s), {run.rows} row(s)")
        metadata: dict = {
            "months_written": len(run.months),
            "rows": run.rows,
            "seconds": round(time.perf_counter() - started, 3),
        }
        if run.months:
            last_table = run.tables[run.months[-1]]
            metadata.update(
                {
                    "first_month": str(run.months[0]),
                    "last_month": str(run.months[-1]),
                    "dagster/row_count": last_table.num_rows,
                    "preview": MetadataValue.md(markdown_table(last_table, PREVIEW_COLUMNS)),
                }
            )
        return MaterializeResult(
            metadata=metadata,
            check_results=[
                AssetCheckResult(
                    check_name=MONTHS_CHECK,
                    passed=not misplaced,
                    metadata={"failures": len(misplaced), "examples": MetadataValue.json(misplaced[:5])},
                ),
            ],
        )

    return rating_quality


def tables_out_of_range(warehouse: Warehouse, first: Month, last: Month) -> list[str]:
    """Months from `first` to `last` whose table on disk is missing or does not list exactly the
    systems that have a snapshot of the month."""
    months = system_months(warehouse)
    on_disk = set(warehouse.quality_months())
    written = [month for month in month_range(first, last) if month in on_disk]
    listed: dict[Month, list[str]] = {}
    with warehouse.readable([warehouse.quality(month) for month in written]) as locations:
        for month, location in zip(written, locations):
            listed[month] = read_parquet(Path(location), columns=["system"]).column("system").to_pylist()
    wrong = []
    for month in month_range(first, last):
        expected = [name for name in sorted(SYSTEM_NAMES) if month in months[name]]
        if listed.get(month, []) != expected:
            wrong.append(f"{month}: {listed.get(month) or 'no table'}, expected {expected}")
    return wrong
