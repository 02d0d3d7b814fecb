"""Incremental ingest: which delivery files were read, their staged rows in the warehouse, and the
DuckDB working copy kept in step with them.

The warehouse holds the record of ingest, so that any worker sees it without a shared volume:

- `ingest/<feed>/manifest.json`: every delivery file of the feed's folder (path, size, content
  hash, file id, rows, file-level problems, skipped columns), sorted by path; one per feed, so
  that the ingest steps of the feeds never write the same file;
- `ingest/<feed>/<file id>.parquet`: the typed rows staged from one file (the id is a hash of
  the path and the content, so both files are a function of the raw folder alone).

A file whose path, size and hash are in the manifest is not read again. The DuckDB file is a
working copy: `ingest_files` lists the files whose rows `typed_<feed>` holds; whatever differs
from the manifest (files added, removed or changed, or a working copy missing or older than the
warehouse) is loaded or dropped, and the groups of rows it touched (a game, an event, a player)
are queued in `pending_groups`/`pending_files` for validation to take up. Validation flags the
rows it finds valid (`_valid`); `<feed>` is the view of them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from pipeline.core.feed_spec import EVENT_RESULTS, EVENTS, FEEDS, GAMES, LISTS, PLAYERS, SOURCE_FILE, SOURCE_LINE, Feed
from pipeline.core.progress import Progress, ProgressLines, report_if_slow
from pipeline.ingest.staging import (
    EARLIER_VERSION_KEPT,
    STILL_BEING_WRITTEN,
    FileProblem,
    SkippedEntry,
    StageReport,
    create_staged,
    delivery_files,
    stage_file,
    staged_table,
    survey_feed,
)
from pipeline.warehouse.sql import quote_ident
from pipeline.warehouse.store import MONTHLY_FEEDS, Warehouse, atomic_write_bytes, export_parquet, file_location

HASH_CHUNK = 1 << 20

# The column whose value makes a group of rows that validation judges together: a game is valid
# only as a whole, an event is judged with its results (and they with it).
GROUP_COLUMN = {
    GAMES.name: "game_id",
    EVENTS.name: "event_id",
    EVENT_RESULTS.name: "event_id",
    PLAYERS.name: "player_id",
    LISTS.name: "system",
}
# Feeds whose rules read each other's rows of a group: a change in one re-validates both.
LINKED_FEEDS = {EVENTS.name: (EVENT_RESULTS.name,), EVENT_RESULTS.name: (EVENTS.name,)}

FILES_TABLE = "ingest_files"
# The column of `typed_<feed>` that validation sets on the rows it found valid; `<feed>` is the
# view of those rows. Set in place, a flag costs next to nothing, where a table of the valid rows
# would be a second copy of every row.
VALID_FLAG = "_valid"
PENDING_GROUPS = "pending_groups"
PENDING_FILES = "pending_files"
PENDING_EXPORTS = "pending_exports"
# Months of a feed stored by month whose valid rows may have changed since its files were written:
# those the queued groups held before validation and those they hold after it.
PENDING_MONTHS = "pending_months"


@dataclass(frozen=True)
class DeliveryRecord:
    """One delivery file as ingested: what it was (path, size, hash) and what staging found."""

    path: str
    size: int
    digest: str | None  # None: the file could not be read to hash it
    file_id: str
    rows: int  # rows delivered, broken JSON lines included
    staged: int  # rows staged (stored in the file's Parquet)
    problems: tuple[tuple[str, str, int | None], ...] = ()  # (reason, detail, line)
    skipped: tuple[str, ...] = ()  # why parts of the file (columns, keys) are not read

    def file_problems(self, feed: str) -> list[FileProblem]:
        return [FileProblem(feed, self.path, reason, detail, line) for reason, detail, line in self.problems]

    def skipped_entries(self, feed: str) -> list[SkippedEntry]:
        return [SkippedEntry(feed, self.path, reason) for reason in self.skipped]


@dataclass
class IngestReport(StageReport):
    """What ingesting one feed found, and what it had to do."""

    parsed: list[str] = field(default_factory=list)  # files read (parsed) in this run
    changed: bool = False  # the working copy's rows of the feed changed


def content_digest(path: Path) -> tuple[int, str | None]:
    """The file's size and the BLAKE2b hash of its bytes (None when it cannot be read)."""
    digest = hashlib.blake2b(digest_size=32)
    try:
        with path.open("rb") as handle:
            size = 0
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError:
        return 0, None
    return size, digest.hexdigest()


def file_state(path: Path) -> tuple[int, int] | None:
    """The file's size and modification time (ns), to tell whether it changed; None when it cannot be examined."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def seconds_to_settle(state: tuple[int, int], seconds: float) -> float:
    """How long until a file of this state has gone `seconds` unchanged (0: it has). A modification
    time ahead of the clock counts from then: a clock ahead of this one is no proof the writer is done."""
    age = (time.time_ns() - state[1]) / 1e9
    return seconds - age if abs(age) < seconds else 0.0


def delivery_file_states(raw_dir: Path) -> list[tuple[Path, tuple[int, int] | None]]:
    """Every delivery file of every feed with its `file_state`."""
    return [(path, file_state(path)) for feed in FEEDS.values() for path in delivery_files(raw_dir, feed)]


def seconds_until_settled(raw_dir: Path, settle_seconds: float) -> float:
    """How long until no delivery file of the raw folder has changed within `settle_seconds` (0: now)."""
    if not settle_seconds or not raw_dir.is_dir():
        return 0.0
    return max(
        (seconds_to_settle(state, settle_seconds) for _, state in delivery_file_states(raw_dir) if state),
        default=0.0,
    )


def file_id(source: str, digest: str | None) -> str:
    """A file's id: its path and content, so that a file changed in place is a new file."""
    return hashlib.blake2b(f"{source}\n{digest}".encode(), digest_size=16).hexdigest()


def manifest_path(warehouse: Warehouse, feed: str):
    return warehouse.root / "ingest" / feed / "manifest.json"


def staged_rows_path(warehouse: Warehouse, feed: str, identifier: str):
    return warehouse.root / "ingest" / feed / f"{identifier}.parquet"


def load_ingest_manifest(warehouse: Warehouse, feed: str) -> dict[str, DeliveryRecord]:
    """Path -> record of the feed's files the warehouse's ingest state holds."""
    path = manifest_path(warehouse, feed)
    if not path.exists():
        return {}
    data = json.loads(path.read_bytes())
    return {
        r["path"]: DeliveryRecord(**{**r, "problems": tuple(map(tuple, r["problems"])), "skipped": tuple(r["skipped"])})
        for r in data["files"]
    }


def save_ingest_manifest(warehouse: Warehouse, feed: str, records: list[DeliveryRecord]) -> None:
    """Written whole, sorted, after the staged rows it points to: same raw folder, same bytes."""
    path = manifest_path(warehouse, feed)
    if not records:
        path.unlink(missing_ok=True)  # as in a run that never saw a file of the feed
        return
    files = [asdict(r) for r in sorted(records, key=lambda r: r.path)]
    text = json.dumps(
        {"files": files},
        sort_keys=True,
        indent=1,
        ensure_ascii=False,
    )
    atomic_write_bytes(path, text.encode("utf-8") + b"\n")


def remove_unlisted_rows(warehouse: Warehouse, feed: str, records: list[DeliveryRecord]) -> None:
    """Delete staged-row files no record points to (removed or changed files, or a crash's leftovers)."""
    folder = warehouse.root / "ingest" / feed
    if not folder.exists():
        return
    wanted = {f"{r.file_id}.parquet" for r in records}
    for path in folder.glob("*.parquet"):
        if path.name not in wanted:
            path.unlink()


def ensure_ingest_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the working copy's record of held files and pending work if missing."""
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {FILES_TABLE} (feed VARCHAR, path VARCHAR, file_id VARCHAR, number BIGINT)"
    )
    con.execute(f"CREATE TABLE IF NOT EXISTS {PENDING_GROUPS} (feed VARCHAR, grp VARCHAR)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {PENDING_FILES} (feed VARCHAR, path VARCHAR)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {PENDING_EXPORTS} (feed VARCHAR)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {PENDING_MONTHS} (feed VARCHAR, month DATE)")


def typed_columns(feed: Feed) -> str:
    """The columns a file's staged rows keep, in the order of `typed_<feed>`."""
    return ", ".join(
        [*(quote_ident(c) for c in feed.column_names), "_cast_errors", "_too_long", SOURCE_FILE, SOURCE_LINE]
    )


def _create_typed(con, feed: Feed) -> None:
    """An empty `typed_<feed>` and valid table, and no quarantined rows: a working copy holding no file."""
    staged = staged_table(feed)
    create_staged(con, feed)
    con.execute(
        f"""CREATE OR REPLACE TABLE typed_{feed.name} AS
        SELECT CAST(0 AS BIGINT) AS _row_id, {typed_columns(feed)}, CAST(0 AS BIGINT) AS _delivery,
               false AS _duplicate_in_file, false AS _replaced, false AS {VALID_FLAG}
        FROM {staged} WHERE false"""
    )
    drop_valid_rows(con, feed)
    con.execute(f"CREATE VIEW {quote_ident(feed.name)} AS {valid_rows_sql(feed)}")
    con.execute(f"DROP TABLE {staged}")
    con.execute("DELETE FROM quarantine WHERE feed = ? AND record_key IS NOT NULL", [feed.name])


def valid_rows_sql(feed: Feed) -> str:
    """The feed's valid rows, as `<feed>` shows them: the rows of the working copy validation
    last found valid (feed columns and lineage)."""
    columns = ", ".join(quote_ident(c) for c in feed.column_names)
    return f"SELECT {columns}, {SOURCE_FILE}, {SOURCE_LINE} FROM typed_{feed.name} WHERE {VALID_FLAG}"


def _stored_view(con, name: str) -> bool:
    """Whether the database file (not this connection's temporary objects) holds a view `name`."""
    ((found,),) = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND NOT temporary AND schema_name = 'main'", [name]
    ).fetchall()
    return found > 0


def drop_valid_rows(con, feed: Feed) -> None:
    """Drop `<feed>`, the view of the valid rows."""
    if _stored_view(con, feed.name):
        con.execute(f"DROP VIEW {quote_ident(feed.name)}")


def _held_files(con, feed: Feed) -> dict[str, int]:
    """File id -> number of the files whose rows the working copy holds; prepares an empty working
    copy of the feed (and the table new files' rows arrive in) when it holds none."""
    ensure_ingest_tables(con)
    held = dict(con.execute(f"SELECT file_id, number FROM {FILES_TABLE} WHERE feed = ?", [feed.name]).fetchall())
    if not held:
        _create_typed(con, feed)
    return held


def arrived_table(feed: Feed, identifier: str) -> str:
    """The temporary table holding the rows a file staged in this run, until the working copy takes them."""
    return f"arrived_{feed.name}_{identifier}"


def ingest_deliveries(
    con: duckdb.DuckDBPyConnection,
    raw_dir: Path,
    feed: Feed,
    warehouse: Warehouse | None,
    progress: Progress | None = None,
    settle_seconds: float = 0.0,
) -> IngestReport:
    """Bring `typed_<feed>` in step with the raw folder, reading only files not ingested before.

    With a warehouse, new files' staged rows and the manifest are written there (rows first);
    without one (tests), every file is read and nothing is stored. `progress` hears of long work:
    the files staged so far (at most a line per PROGRESS_SECONDS) and a slow working-copy update.

    A file still being written is not taken: one modified less than `settle_seconds` ago, or
    whose size or modification time changed while it was read. It is listed as skipped, the
    version of it ingested before (if any) stays, and the next run reads it.
    """
    held = _held_files(con, feed)
    files, skipped = survey_feed(raw_dir, feed)
    known = load_ingest_manifest(warehouse, feed.name) if warehouse else {}
    report = IngestReport(feed.name)
    records: list[DeliveryRecord] = []
    staged_rows = 0
    lines = ProgressLines(progress)

    def rows_still_held(record: DeliveryRecord) -> bool:
        return (
            record.file_id in held
            or record.staged == 0
            or (warehouse is not None and staged_rows_path(warehouse, feed.name, record.file_id).exists())
        )

    def still_being_written(source: str, old: DeliveryRecord | None) -> None:
        if old is not None and rows_still_held(old):
            records.append(old)
            skipped.append(SkippedEntry(feed.name, source, EARLIER_VERSION_KEPT.format(settle=settle_seconds)))
        else:
            skipped.append(SkippedEntry(feed.name, source, STILL_BEING_WRITTEN.format(settle=settle_seconds)))

    for position, path in enumerate(files, start=1):
        source = path.relative_to(raw_dir).as_posix()
        old = known.get(source)
        before = file_state(path)
        if before is not None and seconds_to_settle(before, settle_seconds):
            still_being_written(source, old)
            continue
        size, digest = content_digest(path)
        if old is not None and digest is not None and (old.size, old.digest) == (size, digest) and rows_still_held(old):
            records.append(old)
            continue
        record = _stage_delivery(con, feed, path, source, size, digest, warehouse)
        if file_state(path) != before:
            # Its rows are dropped here; the Parquet staged from it is listed nowhere, and goes below.
            con.execute(f"DROP TABLE IF EXISTS {arrived_table(feed, record.file_id)}")
            still_being_written(source, old)
            continue
        records.append(record)
        report.parsed.append(source)
        staged_rows += records[-1].staged
        lines.tell(
            f"{feed.name}: staged {source} ({position}/{len(files)} files; "
            f"{len(report.parsed)} read, {staged_rows:,} rows)"
        )
    if warehouse is not None:
        if records != list(known.values()):
            save_ingest_manifest(warehouse, feed.name, records)
        # Every run, after the manifest: rows of files gone, and those a crash left unlisted.
        remove_unlisted_rows(warehouse, feed.name, records)
    started = time.perf_counter()
    report.changed = sync_working_copy(con, feed, records, warehouse, progress)
    report_if_slow(
        progress,
        started,
        f"{feed.name}: working copy brought in step with {len(records)} file(s), {staged_rows:,} new rows",
    )
    for record in records:
        con.execute(f"DROP TABLE IF EXISTS {arrived_table(feed, record.file_id)}")
    report.files = [r.path for r in records]
    report.rows_in = sum(r.rows for r in records)
    report.problems = [p for r in records for p in r.file_problems(feed.name)]
    report.skipped = sorted(
        [*skipped, *(e for r in records for e in r.skipped_entries(feed.name))], key=lambda s: (s.path, s.reason)
    )
    return report


def _stage_delivery(
    con, feed: Feed, path: Path, source: str, size: int, digest: str | None, warehouse: Warehouse | None
) -> DeliveryRecord:
    """Read one file; keep its rows for the working copy and, with a warehouse, store them there."""
    identifier = file_id(source, digest)
    if digest is None:
        staged = StageReport(
            feed.name, problems=[FileProblem(feed.name, source, "unreadable_file", "the file cannot be read")]
        )
        count = 0
    else:
        staged = stage_file(con, feed, path, source)
        count = con.execute(f"SELECT count(*) FROM {staged_table(feed)}").fetchall()[0][0]
    if count and warehouse is not None:
        # Without ORDER BY: the staged table holds the file's rows in line order already (one
        # insert in file order, which DuckDB preserves), and sorting them again is a third of the copy.
        export_parquet(
            con,
            warehouse,
            f"SELECT {typed_columns(feed)} FROM {staged_table(feed)}",
            staged_rows_path(warehouse, feed.name, identifier),
        )
    if count and (warehouse is None or warehouse.remote):
        # Renamed, not copied: the file's rows wait in their own table for the working copy.
        con.execute(f"DROP TABLE IF EXISTS {arrived_table(feed, identifier)}")
        con.execute(f"ALTER TABLE {staged_table(feed)} RENAME TO {arrived_table(feed, identifier)}")
    else:
        # In a local warehouse the working copy reads the rows back from the file just written,
        # as fast as from memory: held in memory until every file is staged, a large delivery's
        # rows outgrow DuckDB's memory and are spilled to disk and back (a delivery of many files).
        con.execute(f"DROP TABLE IF EXISTS {staged_table(feed)}")
    return DeliveryRecord(
        path=source,
        size=size,
        digest=digest,
        file_id=identifier,
        rows=staged.rows_in,
        staged=count,
        problems=tuple((p.reason, p.detail, p.source_line) for p in staged.problems),
        skipped=tuple(e.reason for e in staged.skipped),
    )


# Rows, files and groups of the files numbered in a list (parameter: the numbers).
OF_FILES = "list_contains(CAST(? AS BIGINT[]), {column})"


def sync_working_copy(
    con: duckdb.DuckDBPyConnection,
    feed: Feed,
    records: list[DeliveryRecord],
    warehouse: Warehouse | None,
    progress: Progress | None = None,
) -> bool:
    """Drop the rows of files no longer delivered, load those of new files, queue the groups they
    touch for validation; returns whether anything changed. One transaction: a crash leaves the
    working copy as it was, and the next run finds the same difference. `progress` hears of the
    files loaded as it goes, when that takes long."""
    typed = f"typed_{feed.name}"
    held = dict(con.execute(f"SELECT file_id, number FROM {FILES_TABLE} WHERE feed = ?", [feed.name]).fetchall())
    wanted = {r.file_id for r in records}
    gone = [number for identifier, number in held.items() if identifier not in wanted]
    new = [r for r in records if r.file_id not in held]
    if not gone and not new:
        return False
    con.begin()
    try:
        _queue(con, feed, gone)
        if gone:  # the months the valid rows of gone files held, while the view still shows them
            _queue_months(con, feed)
        con.execute(f"DELETE FROM {typed} WHERE {OF_FILES.format(column='_delivery')}", [gone])
        con.execute(
            f"DELETE FROM {FILES_TABLE} WHERE feed = ? AND {OF_FILES.format(column='number')}", [feed.name, gone]
        )
        ((number,),) = con.execute(
            f"SELECT coalesce(max(number), -1) FROM {FILES_TABLE} WHERE feed = ?", [feed.name]
        ).fetchall()
        added = []
        lines, loaded = ProgressLines(progress), 0
        for record in new:
            number += 1
            added.append(number)
            con.execute(
                f"INSERT INTO {FILES_TABLE} VALUES (?, ?, ?, ?)", [feed.name, record.path, record.file_id, number]
            )
            if record.staged:
                source, parameters = _staged_rows(con, feed, record, warehouse)
                # Row ids: the file's number and the line, unique in the working copy.
                con.execute(
                    f"INSERT INTO {typed} SELECT (CAST(? AS BIGINT) << 32) + {SOURCE_LINE}, "
                    f"{typed_columns(feed)}, ?, false, false, false FROM {source}",
                    [number, number, *parameters],
                )
                loaded += record.staged
                lines.tell(f"{feed.name}: working copy: loaded {len(added)}/{len(new)} new file(s), {loaded:,} rows")
        _queue(con, feed, added)
        _queue_months(con, feed)
        lines.tell(
            f"{feed.name}: working copy: {len(new)} new and {len(gone)} removed file(s) queued; "
            "marking keys delivered more than once"
        )
        _mark_repeated_keys(con, feed)
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return True


def _staged_rows(con, feed: Feed, record: DeliveryRecord, warehouse: Warehouse | None) -> tuple[str, list]:
    """Where a new file's staged rows are read from (SQL and parameters): the rows this run just
    staged, when they are held in memory (no warehouse, or a remote one), else the file's Parquet
    in the warehouse."""
    table = arrived_table(feed, record.file_id)
    ((arrived,),) = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [table]
    ).fetchall()
    if arrived:
        return table, []
    if warehouse is None:
        raise RuntimeError(f"{feed.name}: the rows of {record.path} were staged in no warehouse and are not in memory")
    return "read_parquet(?)", [file_location(staged_rows_path(warehouse, feed.name, record.file_id))]


def _queue(con, feed: Feed, numbers: list[int]) -> None:
    """Queue for validation the files numbered and the groups their rows belong to (for the feed
    and the feeds linked to it)."""
    group = quote_ident(GROUP_COLUMN[feed.name])
    for name in (feed.name, *LINKED_FEEDS.get(feed.name, ())):
        con.execute(
            f"""INSERT INTO {PENDING_GROUPS} SELECT DISTINCT ?, {group} FROM typed_{feed.name}
                    WHERE {OF_FILES.format(column="_delivery")} AND {group} IS NOT NULL""",
            [name, numbers],
        )
    con.execute(
        f"INSERT INTO {PENDING_FILES} SELECT ?, path FROM {FILES_TABLE} "
        f"WHERE feed = ? AND {OF_FILES.format(column='number')}",
        [feed.name, feed.name, numbers],
    )


def _mark_repeated_keys(con, feed: Feed) -> None:
    """Set `_replaced` (a later file carries the key) and `_duplicate_in_file` on the rows of the
    queued groups. A key with a missing part is never repeated (as in a join on the key).

    Only keys that occur more than once are looked at, and only rows whose flags change are
    written: a first ingest of millions of rows, nearly all of them single, updates next to none.
    The keys that may occur more than once are found by a hash of the key, grouping one integer
    instead of the key's text; a key that only shares its hash with
    another is alone in its window partitions, so it is flagged as neither. The rows in scope are
    read twice, once for the hashes and once for the few rows with a repeated one, rather than
    kept with their keys' text between the two.
    """
    typed, group = f"typed_{feed.name}", quote_ident(GROUP_COLUMN[feed.name])
    key = ", ".join(quote_ident(k) for k in feed.key)
    complete = " AND ".join(f"{quote_ident(k)} IS NOT NULL" for k in feed.key)
    scoped = f"{group} IN (SELECT grp FROM {PENDING_GROUPS} WHERE feed = ?)"
    keyed_in_scope = f"{scoped} AND {complete}"  # read twice below, each time with the feed as its parameter
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE _repeated AS
        WITH repeated AS (SELECT hash({key}) AS _key_hash FROM {typed} WHERE {keyed_in_scope}
                          GROUP BY 1 HAVING count(*) > 1)
        SELECT _row_id, duplicate, replaced FROM (
            SELECT _row_id,
                   count(*) OVER (PARTITION BY {key}, {SOURCE_FILE}) > 1 AS duplicate,
                   {SOURCE_FILE} < max({SOURCE_FILE}) OVER (PARTITION BY {key}) AS replaced
            FROM {typed} WHERE {keyed_in_scope} AND hash({key}) IN (SELECT _key_hash FROM repeated))
        WHERE duplicate OR replaced""",
        [feed.name, feed.name],
    )
    con.execute(
        f"""UPDATE {typed} SET _duplicate_in_file = false, _replaced = false
        WHERE {scoped} AND (_duplicate_in_file OR _replaced) AND _row_id NOT IN (SELECT _row_id FROM _repeated)""",
        [feed.name],
    )
    con.execute(
        f"""UPDATE {typed} t SET _duplicate_in_file = r.duplicate, _replaced = r.replaced FROM _repeated r
        WHERE t._row_id = r._row_id AND (t._duplicate_in_file <> r.duplicate OR t._replaced <> r.replaced)"""
    )
    con.execute("DROP TABLE _repeated")


def _queue_months(con, feed: Feed) -> None:
    """For a feed stored by month: queue the months whose valid rows the queued groups hold now
    (before validation replaces them), so that a game corrected into another month empties the old one."""
    if feed.name not in MONTHLY_FEEDS:
        return
    date, group = quote_ident(MONTHLY_FEEDS[feed.name]), quote_ident(GROUP_COLUMN[feed.name])
    con.execute(
        f"""INSERT INTO {PENDING_MONTHS} SELECT DISTINCT ?, date_trunc('month', {date}) FROM {quote_ident(feed.name)}
                WHERE {group} IN (SELECT grp FROM {PENDING_GROUPS} WHERE feed = ?) AND {date} IS NOT NULL""",
        [feed.name, feed.name],
    )


def pending_months(con: duckdb.DuckDBPyConnection, feed: Feed) -> list:
    """First days of the months queued for a feed stored by month, oldest first."""
    return [
        m
        for (m,) in con.execute(
            f"SELECT DISTINCT month FROM {PENDING_MONTHS} WHERE feed = ? ORDER BY 1", [feed.name]
        ).fetchall()
    ]


def queue_export(con: duckdb.DuckDBPyConnection, feed: Feed) -> None:
    """Record that the feed's validated rows changed, then clear the validation queue it took up."""
    _queue_months(con, feed)  # the months the validated groups hold now; first: the groups go next
    con.execute(f"INSERT INTO {PENDING_EXPORTS} VALUES (?)", [feed.name])
    con.execute(f"DELETE FROM {PENDING_GROUPS} WHERE feed = ?", [feed.name])
    con.execute(f"DELETE FROM {PENDING_FILES} WHERE feed = ?", [feed.name])


def export_due(con: duckdb.DuckDBPyConnection, feed: Feed, paths: list) -> bool:
    """Whether the feed's warehouse files must be written: its rows changed since they were, or one is missing."""
    queued = con.execute(f"SELECT count(*) FROM {PENDING_EXPORTS} WHERE feed = ?", [feed.name]).fetchall()[0][0]
    return queued > 0 or not all(path.exists() for path in paths)


def export_done(con: duckdb.DuckDBPyConnection, feed: Feed) -> None:
    """The feed's warehouse files match the working copy (called after they were written)."""
    con.execute(f"DELETE FROM {PENDING_EXPORTS} WHERE feed = ?", [feed.name])
    con.execute(f"DELETE FROM {PENDING_MONTHS} WHERE feed = ?", [feed.name])
