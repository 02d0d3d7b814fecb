"""Raw feed assets: every delivery in the raw folder staged into DuckDB, typed, with corrections."""

import duckdb
from dagster import AssetExecutionContext, AssetKey, AssetSpec, MaterializeResult, MetadataValue

from assets.metadata import column_schema
from assets.progress import progress_lines
from pipeline.core.feed_spec import Feed
from pipeline.defs.resources import DiprankResource
from pipeline.ingest.validation import FEED_MODELS, ingest_feed

GROUP = "feeds"


def raw_asset_name(feed: Feed) -> str:
    return f"raw_{feed.name}"


def raw_feed_spec(feed: Feed) -> AssetSpec:
    """The staging asset of one feed folder."""
    return AssetSpec(
        key=AssetKey(raw_asset_name(feed)),
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


LISTED_IN_LOG = 10


def first_of(entries: list[str]) -> str:
    """The first entries, and how many more there are."""
    shown = "; ".join(entries[:LISTED_IN_LOG])
    return shown + (f"; and {len(entries) - LISTED_IN_LOG} more" if len(entries) > LISTED_IN_LOG else "")


def staged_feed(
    context: AssetExecutionContext, con: duckdb.DuckDBPyConnection, diprank: DiprankResource, feed: Feed
) -> MaterializeResult:
    """Stage the feed's new and changed deliveries; its materialization, with what was read and replaced."""
    settings = diprank.settings()
    report = ingest_feed(
        con, settings.raw_path, feed, diprank.warehouse, progress_lines(context), settings.settle_seconds
    )
    corrections = con.execute(
        "SELECT record_key, replaced_file, replaced_line, by_file, by_line, changed "
        "FROM corrections WHERE feed = ? ORDER BY record_key",
        [feed.name],
    ).fetchall()
    context.log.info(
        f"{feed.name}: read {len(report.parsed)} of {len(report.files)} file(s)"
        + (f": {', '.join(report.parsed)}" if report.parsed else "")
        + "; the others are unchanged since they were ingested"
    )
    # A few lines per feed, each naming its first entries: every line is an event in Dagster's log,
    # and a correction can touch thousands of keys (all of them are in the corrections table).
    if report.problems:
        context.log.warning(
            f"{feed.name}: {len(report.problems)} problem(s): "
            + first_of(
                [
                    f"{p.reason} in {p.source_file}" + (f":{p.source_line}" if p.source_line else "") + f" ({p.detail})"
                    for p in report.problems
                ]
            )
        )
    if report.skipped:
        context.log.info(
            f"{feed.name}: {len(report.skipped)} entries of the folder not read: "
            + first_of([f"{e.path} ({e.reason})" for e in report.skipped])
        )
    if corrections:
        context.log.info(
            f"{feed.name}: {len(corrections)} key(s) replaced by a later delivery: "
            + first_of(
                [
                    f"{key} {'corrected' if changed else 're-delivered unchanged'} ({old_file}:{old_line} → {new_file}:{new_line})"
                    for key, old_file, old_line, new_file, new_line, changed in corrections
                ]
            )
        )
    return MaterializeResult(
        asset_key=AssetKey(raw_asset_name(feed)),
        metadata={
            "files": len(report.files),
            "files_read": len(report.parsed),
            "rows_in": report.rows_in,
            "replaced_rows": len(corrections),
            "files_rejected": len({p.source_file for p in report.problems if p.source_line is None}),
            "problems": MetadataValue.md(
                "\n".join(f"- `{p.source_file}` {p.reason}: {p.detail}" for p in report.problems) or "none"
            ),
            "skipped": MetadataValue.md("\n".join(f"- `{e.path}` {e.reason}" for e in report.skipped) or "none"),
        },
    )
