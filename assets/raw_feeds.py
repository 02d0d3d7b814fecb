"""Raw feed assets: every delivery in the raw folder staged into DuckDB, typed, with corrections."""

from dagster import AssetExecutionContext, AssetsDefinition, MaterializeResult, MetadataValue, asset

from pipeline.core.feed_spec import FEEDS, Feed
from pipeline.defs.resources import DiprankResource
from assets.metadata import column_schema
from pipeline.ingest.validation import FEED_MODELS, ingest_feed

GROUP = "feeds"


def raw_asset_name(feed: Feed) -> str:
    return f"raw_{feed.name}"


def build_raw_feed_asset(feed: Feed) -> AssetsDefinition:
    """The staging asset of one feed folder."""

    @asset(
        name=raw_asset_name(feed),
        group_name=GROUP,
        kinds={"duckdb", "csv", "parquet"},
        owners=["team:diprank"],
        tags={"layer": "raw"},
        metadata={"dagster/column_schema": column_schema(FEED_MODELS[feed.name])},
        description=(
            f"Every delivery under `<raw>/{feed.name}/` (CSV, Parquet, JSON Lines) in lexicographic order, "
            "typed, with source file and line; a file is read by DuckDB once (new or changed in place), "
            "its staged rows kept in the warehouse under `ingest/`. Later deliveries of a key replace "
            "earlier ones; unreadable files are quarantined whole; what the folder holds but is not read "
            "(links that cannot be followed, named pipes, repeated or unknown columns) is listed as skipped."
        ),
    )
    def _raw(context: AssetExecutionContext, diprank: DiprankResource) -> MaterializeResult:
        with diprank.changing_feeds(), diprank.duckdb() as con:
            report = ingest_feed(con, diprank.settings().raw_path, feed, diprank.warehouse)
            corrections = con.execute(
                "SELECT record_key, replaced_file, replaced_line, by_file, by_line, changed "
                "FROM corrections WHERE feed = ? ORDER BY record_key", [feed.name]
            ).fetchall()
        context.log.info(f"{feed.name}: read {len(report.parsed)} of {len(report.files)} file(s)"
                         + (f": {', '.join(report.parsed)}" if report.parsed else "")
                         + "; the others are unchanged since they were ingested")
        for problem in report.problems:
            where = f"{problem.source_file}:{problem.source_line}" if problem.source_line else problem.source_file
            context.log.warning(f"{feed.name}: {problem.reason} in {where}: {problem.detail}")
        for entry in report.skipped:
            context.log.info(f"{feed.name}: skipped {entry.path}: {entry.reason}")
        for key, old_file, old_line, new_file, new_line, changed in corrections:
            verb = "corrected" if changed else "re-delivered unchanged"
            context.log.info(f"{feed.name} {key} {verb}: {old_file}:{old_line} replaced by {new_file}:{new_line}")
        return MaterializeResult(
            metadata={
                "files": len(report.files),
                "files_read": len(report.parsed),
                "rows_in": report.rows_in,
                "replaced_rows": len(corrections),
                "files_rejected": len({p.source_file for p in report.problems if p.source_line is None}),
                "problems": MetadataValue.md(
                    "\n".join(f"- `{p.source_file}` {p.reason}: {p.detail}" for p in report.problems) or "none"
                ),
                "skipped": MetadataValue.md(
                    "\n".join(f"- `{e.path}` {e.reason}" for e in report.skipped) or "none"
                ),
            }
        )

    return _raw


raw_feed_assets = [build_raw_feed_asset(feed) for feed in FEEDS.values()]
