"""The validated feeds' files in the warehouse: valid rows, quarantine and month fingerprints."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from pipeline.core.feed_spec import EVENT_RESULTS, GAMES, Feed
from pipeline.ingest.deliveries import export_done, export_due
from pipeline.ingest.fingerprints import fingerprints_path, write_month_fingerprints
from pipeline.ingest.validation import QUARANTINE_TABLE
from pipeline.warehouse.sql import quote_ident
from pipeline.warehouse.store import Warehouse, atomic_write_parquet, export_parquet

# The validated feed after which each rated feed kind is complete: its month fingerprints are written then.
FINGERPRINTED = {GAMES.name: "games", EVENT_RESULTS.name: "events"}


def feed_files(warehouse: Warehouse, feed: Feed) -> list:
    """The warehouse files written from a validated feed."""
    files = [warehouse.validated(feed.name), warehouse.quarantine(feed.name)]
    if feed.name in FINGERPRINTED:
        files.append(fingerprints_path(warehouse, FINGERPRINTED[feed.name]))
    return files


def export_feed(con: duckdb.DuckDBPyConnection, warehouse: Warehouse, feed: Feed) -> None:
    """Write the valid rows and the feed's quarantine to the warehouse as Parquet, in a canonical
    order (every column breaks ties), so that the same rows give the same bytes."""
    columns = ", ".join(quote_ident(c) for c in feed.column_names)
    order = ", ".join(quote_ident(k) for k in feed.key)
    export_parquet(con, warehouse, f"SELECT {columns} FROM {feed.name} ORDER BY {order}", warehouse.validated(feed.name))
    # Through Arrow with every column nullable: DuckDB's COPY marks a column required when its
    # table's statistics see no null, so the file's schema would change with its rows (and with
    # rows deleted before). Quarantines are small.
    entries = con.sql(
        f"""SELECT * FROM {QUARANTINE_TABLE} WHERE feed = ?
        ORDER BY source_file, source_line NULLS FIRST, reason, record_key, detail""", params=[feed.name]).to_arrow_table()
    nullable = pa.schema([field.with_nullable(True) for field in entries.schema])
    atomic_write_parquet(warehouse.quarantine(feed.name), entries.cast(nullable))


def publish_validated(con: duckdb.DuckDBPyConnection, warehouse: Warehouse, feed: Feed) -> bool:
    """Write the feed's files if its rows changed since they were written (or one is missing);
    returns whether it did. A run with nothing new leaves them untouched."""
    if not export_due(con, feed, feed_files(warehouse, feed)):
        return False
    export_feed(con, warehouse, feed)
    if feed.name in FINGERPRINTED:
        write_month_fingerprints(con, warehouse, FINGERPRINTED[feed.name])
    export_done(con, feed)
    return True
