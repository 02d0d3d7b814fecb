"""One factory builds the monthly asset of every rating system."""

import statistics
from collections.abc import Mapping

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
from assets.progress import progress_lines
from pipeline.core.months import Month
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import rankings_asset_name, system_pool
from pipeline.rating.checks import CHECK_DESCRIPTIONS, no_outcomes
from pipeline.rating.runner import NothingToRate, run_system
from pipeline.systems.registry import SYSTEM_NAMES, build_system, config_key, system_class
from pipeline.warehouse.views import refresh_views

FEED_DEPS = {"games": ["games", "players", "lists"], "events": ["events", "event_results", "players", "lists"]}
PREVIEW_COLUMNS = ["rank", "player_id", "player_name", "rating", "rank_change"]


def build_rating_asset(system_name: str, partitions_def: PartitionsDefinition) -> AssetsDefinition:
    """A monthly-partitioned asset that depends on its own previous month and backfills in one run."""
    cls = system_class(system_name)
    key = AssetKey(rankings_asset_name(system_name))

    @asset(
        key=key,
        group_name=system_name,
        partitions_def=partitions_def,
        backfill_policy=BackfillPolicy.single_run(),
        pool=system_pool(system_name),
        deps=[
            AssetDep(key, partition_mapping=TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)),
            *FEED_DEPS[cls.feed],
        ],
        kinds={"python", "parquet"},
        owners=["team:diprank"],
        tags={"layer": "ratings", "system": system_name},
        description=(
            f"{cls.title}: the monthly ranking snapshot `rankings/{system_name}/year=YYYY/month=MM/rankings.parquet` "
            f"and its history rows `history/{system_name}/...`"
            + (", plus " + ", ".join(f"`{e}/{system_name}/...`" for e in cls.extras) if cls.extras else "")
            + ". Each month starts from the previous month's state; a backfill runs as one run, oldest month first."
        ),
        metadata={"dagster/column_schema": column_schema(cls.rankings_model)},
        check_specs=[AssetCheckSpec(name, asset=key, description=text) for name, text in CHECK_DESCRIPTIONS.items()],
    )
    def _rankings(context: AssetExecutionContext, diprank: DiprankResource) -> MaterializeResult:
        window = context.partition_key_range
        first, last = Month.parse(window.start), Month.parse(window.end)
        settings = diprank.settings()
        system = build_system(system_name, settings)

        progress = progress_lines(context)
        with diprank.rating(system_name, log=progress):
            try:
                result = run_system(
                    system,
                    diprank.warehouse,
                    first,
                    last,
                    config_key=config_key(system_name, settings),
                    progress=progress,
                )
            except NothingToRate as empty:
                context.log.warning(str(empty))
                result = None
            outcomes = result.checks if result and result.checks else no_outcomes("no months written")
            with diprank.duckdb() as con:
                refresh_views(con, diprank.warehouse, systems=[system_name])
        return MaterializeResult(
            metadata=rating_metadata(result) if result else {"months_written": 0},
            check_results=[
                AssetCheckResult(
                    check_name=o.name,
                    passed=o.passed,
                    metadata={"failures": o.failures, "examples": MetadataValue.json(o.examples)},
                )
                for o in outcomes
            ],
        )

    return _rankings


def rating_metadata(result) -> dict:
    """Row counts, a markdown preview of the top 10 and numeric facts the UI charts across runs."""
    table = result.last_table
    metadata = {
        "months_written": len(result.months),
        "first_month": str(result.months[0]) if result.months else "",
        "last_month": str(result.months[-1]) if result.months else "",
        "history_rows": result.history_rows,
        "seconds": round(result.seconds, 3),
    }
    if result.replayed_from is not None:
        metadata["replayed_from"] = str(result.replayed_from)
    if table is not None:
        ratings = table.column("rating").to_pylist()
        metadata.update(
            {
                "dagster/row_count": table.num_rows,
                "players_listed": table.num_rows,
                "top_rating": float(max(ratings)) if ratings else 0.0,
                "mean_rating": float(statistics.fmean(ratings)) if ratings else 0.0,
                "preview": MetadataValue.md(markdown_table(table, PREVIEW_COLUMNS)),
            }
        )
    return metadata


def build_rating_assets(partitions: Mapping[str, PartitionsDefinition]) -> list[AssetsDefinition]:
    """The monthly asset of every registered system, with its partitions."""
    return [build_rating_asset(name, partitions[name]) for name in SYSTEM_NAMES]
