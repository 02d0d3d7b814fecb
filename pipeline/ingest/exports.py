"""The validated feeds' files in the warehouse: valid rows, quarantine and month fingerprints.

A feed stored by month (`MONTHLY_FEEDS`: games) has one file per month with valid rows,
`validated/<feed>/YYYY-MM.parquet`; an export rewrites only the months validation queued (those
the changed groups left and those they entered) and the months whose file is missing, and
deletes the files of months left without rows.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import duckdb
import numpy as np
import pyarrow as pa

from pipeline.core.feed_spec import EVENT_RESULTS, GAMES, Feed
from pipeline.core.months import Month
from pipeline.core.progress import Progress, ProgressLines, report_if_slow
from pipeline.ingest.deliveries import export_done, export_due, pending_months
from pipeline.ingest.fingerprints import (
    fingerprints_path,
    month_fingerprints,
    write_month_fingerprints,
)
from pipeline.ingest.validation import QUARANTINE_TABLE
from pipeline.warehouse.sql import quote_ident
from pipeline.warehouse.store import MONTHLY_FEEDS, Warehouse, atomic_write_parquet

# Rows fetched from DuckDB at a time while month files are written: a month is held whole, the
# history never is.
EXPORT_BATCH_ROWS = 1 << 18
WRITES_AHEAD = 4
EPOCH = dt.date(1970, 1, 1)

# The validated feed after which each rated feed kind is complete: its month fingerprints are written then.
FINGERPRINTED = {GAMES.name: "games", EVENT_RESULTS.name: "events"}


def feed_files(warehouse: Warehouse, feed: Feed) -> list:
    """The warehouse files written from a validated feed."""
    files = [warehouse.quarantine(feed.name)]
    if feed.name not in MONTHLY_FEEDS:
        files.append(warehouse.validated(feed.name))
    if feed.name in FINGERPRINTED:
        files.append(fingerprints_path(warehouse, FINGERPRINTED[feed.name]))
    return files


def export_feed(
    con: duckdb.DuckDBPyConnection,
    warehouse: Warehouse,
    feed: Feed,
    months: list[Month] | None = None,
    progress: Progress | None = None,
) -> None:
    """Write the valid rows (of `months`, for a feed stored by month) and the feed's quarantine
    to the warehouse as Parquet, in a canonical order (every column breaks ties), so that the same
    rows give the same bytes. `progress` hears of the months written as it goes, when that takes long."""
    columns = ", ".join(quote_ident(c) for c in feed.column_names)
    order = ", ".join(quote_ident(k) for k in feed.key)
    if feed.name in MONTHLY_FEEDS:
        write_months(con, warehouse, feed, months or [], progress)
    else:
        write_nullable(
            warehouse.validated(feed.name),
            con.sql(f"SELECT {columns} FROM {quote_ident(feed.name)} ORDER BY {order}").to_arrow_table(),
        )
    entries = con.sql(
        f"""SELECT * FROM {QUARANTINE_TABLE} WHERE feed = ?
        ORDER BY source_file, source_line NULLS FIRST, reason, record_key, detail""",
        params=[feed.name],
    ).to_arrow_table()
    write_nullable(warehouse.quarantine(feed.name), entries)


def write_nullable(path, table: pa.Table) -> None:
    """Parquet with every column nullable, from one chunk. Through Arrow: DuckDB's COPY marks a
    column required when its table's statistics see no null, so a file's schema would follow rows
    that are not in it (the working copy's invalid rows, and rows deleted before); and one chunk,
    so that the bytes do not follow how DuckDB's threads batched the rows."""
    nullable = pa.schema([field.with_nullable(True) for field in table.schema])
    atomic_write_parquet(path, table.cast(nullable).combine_chunks())


def publish_validated(
    con: duckdb.DuckDBPyConnection, warehouse: Warehouse, feed: Feed, progress: Progress | None = None
) -> bool:
    """Write the feed's files if its rows changed since they were written (or one is missing);
    returns whether it did. A run with nothing new leaves them untouched. `progress` hears of a
    write that took long."""
    started = time.perf_counter()
    monthly = feed.name in MONTHLY_FEEDS
    every_month, missing = months_to_mend(warehouse, feed) if monthly else (False, [])
    if not (every_month or missing or export_due(con, feed, feed_files(warehouse, feed))):
        return False
    months = None
    if monthly:
        present = months_with_rows(con, feed)
        if every_month:
            months = present
        else:
            on_disk = set(warehouse.validated_months(feed.name))
            months = sorted(
                {
                    *(Month.of(d) for d in pending_months(con, feed)),
                    *(on_disk - set(present)),
                    *(set(present) - on_disk),
                }
            )
    export_feed(con, warehouse, feed, months, progress)
    if feed.name in FINGERPRINTED:
        kind = FINGERPRINTED[feed.name]
        # Only the months rewritten, when the rest of the file can be kept.
        write_month_fingerprints(con, warehouse, kind, months if monthly and not every_month else None)
    export_done(con, feed)
    report_if_slow(progress, started, f"{feed.name}: validated files written")
    return True


def months_to_mend(warehouse: Warehouse, feed: Feed) -> tuple[bool, list[Month]]:
    """For a feed stored by month: whether every month must be written (no fingerprints to know
    the months by), else the months the fingerprints list without a file."""
    if not fingerprints_path(warehouse, feed.name).exists():
        return True, []
    on_disk = set(warehouse.validated_months(feed.name))
    return False, sorted(set(month_fingerprints(warehouse, feed.name)) - on_disk)


def months_with_rows(con: duckdb.DuckDBPyConnection, feed: Feed) -> list[Month]:
    date = quote_ident(MONTHLY_FEEDS[feed.name])
    rows = con.execute(
        f"SELECT DISTINCT date_trunc('month', {date}) FROM {quote_ident(feed.name)} WHERE {date} IS NOT NULL ORDER BY 1"
    ).fetchall()
    return [Month.of(d) for (d,) in rows]


def write_months(
    con: duckdb.DuckDBPyConnection,
    warehouse: Warehouse,
    feed: Feed,
    months: list[Month],
    progress: Progress | None = None,
) -> None:
    """Write the file of each month given from the feed's valid rows (by date, then key), and delete the
    file of each given month that has none. Through Arrow, one month at a time, with every column
    nullable and in one chunk: the same rows give the same bytes whichever run writes them."""
    if not months:
        return
    date = quote_ident(MONTHLY_FEEDS[feed.name])
    columns = ", ".join(quote_ident(c) for c in feed.column_names)
    # By date, then key: the order the ratings process the rows in (for games: finishing day, game,
    # power), so that they read a year of months without sorting it again.
    order = ", ".join([date, *(quote_ident(k) for k in feed.key)])
    con.execute("CREATE OR REPLACE TEMP TABLE _export_months (month DATE)")
    con.executemany("INSERT INTO _export_months VALUES (?)", [[m.first_day] for m in months])
    written: set[Month] = set()
    held: list[pa.RecordBatch] = []
    current: Month | None = None
    # Months are compressed and written on two threads while DuckDB reads on (Parquet's writer
    # releases the GIL). At most WRITES_AHEAD months wait, so memory stays a few months.
    writing: deque[Future] = deque()
    lines = ProgressLines(progress)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="export") as writer:

        def flush() -> None:
            if current is not None and held:
                table = pa.Table.from_batches(held).drop_columns(["_month"]).combine_chunks()
                writing.append(
                    writer.submit(atomic_write_parquet, warehouse.validated_month(feed.name, current), table)
                )
                written.add(current)
                while len(writing) > WRITES_AHEAD:
                    writing.popleft().result()

        # A year of months per query: one sort of every month at once outgrows DuckDB's memory on
        # large sites and goes to disk; the range lets DuckDB skip the other years' row groups.
        for year in sorted({m.year for m in months}):
            chosen = [m for m in months if m.year == year]
            reader = con.sql(
                f"""SELECT {columns}, CAST(date_trunc('month', {date}) AS DATE) AS _month FROM {quote_ident(feed.name)}
                WHERE {date} BETWEEN ? AND ? AND date_trunc('month', {date}) IN (SELECT month FROM _export_months)
                ORDER BY _month, {order}""",
                params=[min(chosen).first_day, max(chosen).last_day],
            ).to_arrow_reader(EXPORT_BATCH_ROWS)
            for batch in reader:
                if batch.num_rows == 0:
                    continue
                days = (
                    batch.column(batch.schema.get_field_index("_month")).cast(pa.int32()).to_numpy(zero_copy_only=False)
                )
                starts = [0, *(np.flatnonzero(np.diff(days)) + 1).tolist()]
                for lo, hi in zip(starts, [*starts[1:], len(days)]):
                    month = Month.of(EPOCH + dt.timedelta(days=int(days[lo])))
                    if month != current:
                        flush()
                        held, current = [], month
                    held.append(batch.slice(lo, hi - lo))
            # Months through the year, those with rows and those left empty (deleted at the end) alike.
            lines.tell(
                f"{feed.name}: validated files: read through {year} "
                f"({sum(m.year <= year for m in months)}/{len(months)} months)"
            )
        flush()
        while writing:
            writing.popleft().result()
    for month in months:
        if month not in written:
            warehouse.validated_month(feed.name, month).unlink(missing_ok=True)
    con.execute("DROP TABLE _export_months")
