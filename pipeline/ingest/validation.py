"""Validate a staged feed with its Pandera model inside DuckDB; split valid rows from quarantine."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipeline.core.feed_spec import (
    EVENT_RESULTS,
    EVENTS,
    GAMES,
    LISTS,
    PLAYERS,
    RECENT_POINT_PATTERN,
    Feed,
    recent_points_sql,
)
from pipeline.core.progress import Progress, ProgressLines, report_if_slow
from pipeline.ingest.deliveries import (
    GROUP_COLUMN,
    PENDING_FILES,
    PENDING_GROUPS,
    VALID_FLAG,
    ingest_deliveries,
    queue_export,
)
from pipeline.ingest.staging import FileProblem, SkippedEntry, outside_feed_folders, typed_table
from pipeline.warehouse.sql import quote_ident
from pipeline.warehouse.store import Warehouse
from schemas.engine import NOT_NULLABLE, rule_failures
from schemas.event_results import EventResultsFeed
from schemas.events import EventsFeed
from schemas.feed_common import BAD_TYPE, dates_checked_against
from schemas.games import GAME_REJECTED, GamesFeed
from schemas.lists import ListsFeed
from schemas.players import PlayersFeed

FEED_MODELS = {
    GAMES.name: GamesFeed,
    EVENTS.name: EventsFeed,
    EVENT_RESULTS.name: EventResultsFeed,
    PLAYERS.name: PlayersFeed,
    LISTS.name: ListsFeed,
}

QUARANTINE_TABLE = "quarantine"
CORRECTIONS_TABLE = "corrections"
SKIPPED_TABLE = "raw_skipped"  # what the raw folder holds but a run does not read


@dataclass
class FeedCounts:
    """Rows in = valid + quarantined + replaced, per feed; whole files rejected are counted apart."""

    feed: str
    rows_in: int = 0
    valid: int = 0
    quarantined: int = 0
    replaced: int = 0
    files: int = 0
    files_rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def balanced(self) -> bool:
        return self.rows_in == self.valid + self.quarantined + self.replaced


def ensure_report_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the quarantine and corrections tables if missing."""
    con.execute(
        f"""CREATE TABLE IF NOT EXISTS {QUARANTINE_TABLE} (
            feed VARCHAR, reason VARCHAR, detail VARCHAR, source_file VARCHAR,
            source_line BIGINT, record_key VARCHAR)"""
    )
    con.execute(
        f"""CREATE TABLE IF NOT EXISTS {CORRECTIONS_TABLE} (
            feed VARCHAR, record_key VARCHAR, replaced_file VARCHAR, replaced_line BIGINT,
            by_file VARCHAR, by_line BIGINT, changed BOOLEAN)"""
    )
    con.execute(f"CREATE TABLE IF NOT EXISTS {SKIPPED_TABLE} (feed VARCHAR, path VARCHAR, reason VARCHAR)")


def _key_sql(feed: Feed, alias: str = "") -> str:
    prefix = f"{alias}." if alias else ""
    parts = ", ".join(f"coalesce(CAST({prefix}{quote_ident(k)} AS VARCHAR), '∅')" for k in feed.key)
    return f"concat_ws('/', {parts})"


def record_file_problems(con, feed: Feed, problems: list[FileProblem]) -> None:
    """Quarantine whole unreadable files and single unreadable lines."""
    con.execute(f"DELETE FROM {QUARANTINE_TABLE} WHERE feed = ? AND record_key IS NULL", [feed.name])
    for p in problems:
        con.execute(
            f"INSERT INTO {QUARANTINE_TABLE} VALUES (?, ?, ?, ?, ?, NULL)",
            [feed.name, p.reason, p.detail, p.source_file, p.source_line],
        )


def record_skipped(con, feed: Feed, entries: list[SkippedEntry], outside: list[SkippedEntry]) -> None:
    """Replace the feed's skipped entries, and those outside the feed folders (feed NULL): every
    feed's ingest records the latter afresh, so they are current whichever feeds were ingested."""
    con.execute(f"DELETE FROM {SKIPPED_TABLE} WHERE feed = ? OR feed IS NULL", [feed.name])
    rows = [[e.feed, e.path, e.reason] for e in [*outside, *entries]]
    if rows:
        con.executemany(f"INSERT INTO {SKIPPED_TABLE} VALUES (?, ?, ?)", rows)


def record_corrections(con, feed: Feed) -> int:
    """Record each row replaced by a later delivery of the same key; returns how many."""
    typed = typed_table(feed)
    key_cols = [quote_ident(k) for k in feed.key]
    value_cols = [quote_ident(c) for c in feed.column_names if c not in feed.key]
    join = " AND ".join(f"old.{k} = new.{k}" for k in key_cols)
    changed = " OR ".join(f"old.{c} IS DISTINCT FROM new.{c}" for c in value_cols) or "false"
    con.execute(f"DELETE FROM {CORRECTIONS_TABLE} WHERE feed = ?", [feed.name])
    con.execute(
        f"""INSERT INTO {CORRECTIONS_TABLE}
        SELECT ?, {_key_sql(feed, "old")}, old._source_file, old._source_line,
               new._source_file, new._source_line, {changed}
        FROM {typed} old
        JOIN (SELECT * FROM {typed} WHERE NOT _replaced AND NOT _duplicate_in_file) new ON {join}
        WHERE old._replaced
        ORDER BY old._row_id""",
        [feed.name],
    )
    return con.execute(f"SELECT count(*) FROM {typed} WHERE _replaced").fetchall()[0][0]


def in_scope(feed: Feed, alias: str = "") -> str:
    """SQL: the row belongs to a group, or a file, queued for validation (see `scope_tables`)."""
    prefix = f"{alias}." if alias else ""
    return (
        f"({prefix}{quote_ident(GROUP_COLUMN[feed.name])} IN (SELECT grp FROM _scope) "
        f"OR {prefix}_source_file IN (SELECT path FROM _scope_files))"
    )


def scope_tables(con: duckdb.DuckDBPyConnection, feed: Feed) -> bool:
    """Fill `_scope` and `_scope_files` with the feed's queued groups and files; False if none."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _scope AS SELECT DISTINCT grp FROM {PENDING_GROUPS} WHERE feed = ?", [feed.name]
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _scope_files AS SELECT DISTINCT path FROM {PENDING_FILES} WHERE feed = ?",
        [feed.name],
    )
    return (
        con.execute("SELECT (SELECT count(*) FROM _scope) + (SELECT count(*) FROM _scope_files)").fetchall()[0][0] > 0
    )


# What the game rules need of each game in scope: one row per game, made before the candidates.
GAME_FACTS = "_game_facts"


# A person on two powers is found exactly only by comparing a game's ids, an aggregate of lists
# per game and most of the cost of the games' facts. The ids of a game (holders and originals) are
# surely distinct when their hashes set as many bits of a 64-bit mask as there are ids: masks
# from three parts of the hash settle all but a few percent of the games, and only those (and
# multi-site games, whose holders may repeat) have their ids compared.
ID_MASK_SHIFTS = (0, 6, 12)


def _id_mask(hashed: str, shift: int) -> str:
    """SQL: the bits that the hashes in column `hashed` (null for a missing id) set, one per id."""
    return f"coalesce(bit_or(CAST(1 AS UBIGINT) << CAST(({hashed} >> {shift}) % 64 AS INTEGER)), CAST(0 AS UBIGINT))"


def game_facts_sql() -> str:
    """Per game in scope: its powers, solos, draws and centres, whether the fields every row
    repeats agree, and whether its ids are not surely distinct (`_ids_unsettled`);
    `_player_conflict` is false here and set by `player_conflicts_sql`."""
    surely_distinct = " OR ".join(
        f"bit_count({_id_mask('_holder_hash', shift)} | {_id_mask('_original_hash', shift)}) "
        f"= count(player_id) + count(original_player_id)"
        for shift in ID_MASK_SHIFTS
    )
    return f"""
        SELECT game_id,
               count(*) AS _powers,
               count(*) FILTER (WHERE result = 'solo') AS _solos,
               count(*) FILTER (WHERE result = 'draw') AS _draws,
               CAST(sum(coalesce(centres, 0)) AS BIGINT) AS _centre_total,
               coalesce(min(variant) = max(variant) AND min(supply_centres) = max(supply_centres)
                        AND min(finished_on) = max(finished_on)
                        AND min(CAST(rated AS INTEGER)) = max(CAST(rated AS INTEGER))
                        AND min(CAST(multi_site AS INTEGER)) = max(CAST(multi_site AS INTEGER))
                        AND min(scoring) = max(scoring) AND min(press) = max(press)
                        AND min(CAST(live AS INTEGER)) = max(CAST(live AS INTEGER)), true) AS _fields_agree,
               NOT ({surely_distinct}) AS _ids_unsettled,
               false AS _player_conflict
        FROM (SELECT *, CASE WHEN player_id IS NOT NULL THEN hash(player_id) END AS _holder_hash,
                     CASE WHEN original_player_id IS NOT NULL THEN hash(original_player_id) END AS _original_hash
              FROM ({scoped_rows_sql(GAMES)}) WHERE game_id IS NOT NULL)
        GROUP BY game_id"""


def player_conflicts_sql() -> str:
    """The games in scope whose ids the facts left unsettled and that have a person on two
    powers, as holder or original; in a multi-site game one player may hold several powers, but
    an original player still holds no other (SPEC §2). Counted within the game's own aggregate
    (list_distinct drops nulls): a second grouping by game and person cost twice this."""
    return f"""
        SELECT game_id FROM ({scoped_rows_sql(GAMES)})
        WHERE game_id IN (SELECT game_id FROM {GAME_FACTS} WHERE _ids_unsettled)
        GROUP BY game_id
        HAVING CASE WHEN coalesce(bool_and(multi_site), false)
                    THEN count(original_player_id) > len(list_distinct(list(original_player_id)))
                         OR len(list_intersect(list(player_id), list(original_player_id))) > 0
                    ELSE count(player_id) + count(original_player_id)
                         > len(list_distinct(list_concat(list(player_id), list(original_player_id))))
               END"""


def create_candidates(con: duckdb.DuckDBPyConnection, feed: Feed, name: str) -> None:
    """The rows to validate as the view `name` (candidates_sql). A view, not a table: the rules
    and the insert of the valid rows read only the columns they need, and no copy of every row
    is held. Only the games' facts, one row per game, are a table."""
    if feed is GAMES:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {GAME_FACTS} AS {game_facts_sql()}")
        # Statements of their own: DuckDB runs the two faster than one query with the facts as a
        # common table.
        con.execute(f"UPDATE {GAME_FACTS} SET _player_conflict = true WHERE game_id IN ({player_conflicts_sql()})")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {candidates_sql(feed)}")


def drop_candidates(con: duckdb.DuckDBPyConnection, name: str) -> None:
    con.execute(f"DROP VIEW IF EXISTS {name}")
    con.execute(f"DROP TABLE IF EXISTS {GAME_FACTS}")


def scoped_rows_sql(feed: Feed) -> str:
    """The feed's rows in scope: the latest delivery of each key of the queued groups and files."""
    return f"SELECT * FROM {typed_table(feed)} WHERE NOT _replaced AND {in_scope(feed)}"


def candidates_sql(feed: Feed) -> str:
    """The rows to validate: the rows in scope (scoped_rows_sql), plus cross-feed facts the rules need."""
    typed = typed_table(feed)
    if feed is EVENTS:
        results = typed_table(EVENT_RESULTS)
        return f"""
            SELECT e.*, coalesce(r.n, 0) AS _result_count
            FROM {typed} e
            LEFT JOIN (SELECT event_id, count(*) AS n FROM {results}
                       WHERE NOT _replaced AND event_id IN (SELECT grp FROM _scope) GROUP BY 1) r
              ON r.event_id = e.event_id
            WHERE NOT e._replaced AND {in_scope(feed, "e")}"""
    if feed is EVENT_RESULTS:
        return f"""
            SELECT r.*,
                CASE WHEN v.event_id IS NOT NULL THEN 'valid'
                     WHEN c.event_id IS NOT NULL THEN 'rejected' ELSE 'unknown' END AS _event_status,
                v.num_players AS _event_num_players
            FROM {typed} r
            LEFT JOIN {EVENTS.name} v ON v.event_id = r.event_id
            LEFT JOIN (SELECT DISTINCT event_id FROM {typed_table(EVENTS)}
                       WHERE NOT _replaced AND event_id IN (SELECT grp FROM _scope)) c
              ON c.event_id = r.event_id
            WHERE NOT r._replaced AND {in_scope(feed, "r")}"""
    if feed is GAMES:
        return f"""
            WITH t AS ({scoped_rows_sql(feed)})
            SELECT t.*, f._powers, f._solos, f._draws, f._centre_total, f._fields_agree,
                   coalesce(f._player_conflict, false) AS _player_conflict
            FROM t LEFT JOIN {GAME_FACTS} f USING (game_id)"""
    if feed is LISTS:
        points = recent_points_sql("t.recent_points")
        return f"""
            WITH t AS ({scoped_rows_sql(feed)}),
            systems AS (SELECT system, count(DISTINCT as_of) AS n FROM t WHERE system IS NOT NULL GROUP BY 1)
            SELECT t.*, s.n AS _as_of_count,
                   t.as_of = last_day(t.as_of) AS _as_of_month_end,
                   month(t.as_of) = 12 AND day(t.as_of) = 31 AS _as_of_december,
                   CAST(len({points}) AS BIGINT) AS _recent_count,
                   NOT list_bool_and(list_transform({points}, lambda x: regexp_full_match(x, '{RECENT_POINT_PATTERN}')))
                       AS _recent_malformed
            FROM t LEFT JOIN systems s USING (system)"""
    return scoped_rows_sql(feed)


def failing_rows(con: duckdb.DuckDBPyConnection, feed: Feed, candidates: str) -> dict[int, list[str]]:
    """Row id -> failed rule names, from the feed's Pandera model run in DuckDB (one query)."""
    failures: dict[int, list[str]] = {}
    for (row_id,), rules in rule_failures(con, FEED_MODELS[feed.name], candidates, ["_row_id"]):
        broken = [rule for rule in rules if rule.startswith(NOT_NULLABLE)]
        if broken:
            # A lineage column without a value is a defect of ingest, not of the data.
            raise RuntimeError(f"{feed.name}: row {row_id} fails {', '.join(broken)}")
        failures[int(row_id)] = rules
    return failures


def validate_feed(
    con: duckdb.DuckDBPyConnection, feed: Feed, progress: Progress | None = None, today: dt.date | None = None
) -> dict[int, list[str]]:
    """Validate the rows of the groups and files queued since the last validation: their `_valid`
    flags are set anew (`<feed>` shows the valid rows), their failures replace theirs in the
    quarantine table. Returns the failures by row id (empty when nothing was queued). `progress`
    hears when the rules are done, if that took long; dates after `today` (None: the real today)
    are in the future."""
    if not scope_tables(con, feed):
        return {}
    lines = ProgressLines(progress)
    candidates = f"candidates_{feed.name}"
    create_candidates(con, feed, candidates)
    with dates_checked_against(today):
        failures = failing_rows(con, feed, candidates)
    lines.tell(f"{feed.name}: validation rules checked, {len(failures):,} row(s) failing; setting the valid rows")
    con.execute("CREATE OR REPLACE TEMP TABLE _failures (row_id BIGINT, reasons VARCHAR, shown VARCHAR)")
    if failures:
        # A value that did not convert comes first: the rules that then see it missing only follow from it.
        ordered = {row_id: sorted(reasons, key=lambda r: r != BAD_TYPE) for row_id, reasons in failures.items()}
        con.executemany(
            "INSERT INTO _failures VALUES (?, ?, ?)",
            [[row_id, ",".join(reasons), ",".join(reasons)] for row_id, reasons in sorted(ordered.items())],
        )
        # The detail names the columns whose value did not convert: "bad_type(centres)".
        con.execute(
            f"""UPDATE _failures f SET shown = replace(f.reasons, ?, ? || '(' || c._cast_errors || ')')
            FROM {candidates} c WHERE c._row_id = f.row_id AND c._cast_errors IS NOT NULL""",
            [BAD_TYPE, BAD_TYPE],
        )
    if not failures:
        # Nothing failed: nothing to quarantine (and no scan of the candidates to find it out).
        con.execute("CREATE OR REPLACE TEMP TABLE _quarantined (row_id BIGINT, reason VARCHAR, detail VARCHAR)")
    elif feed is GAMES:
        # A game is valid only as a whole: every row of a game with a failing row is quarantined.
        con.execute(
            f"""CREATE OR REPLACE TEMP TABLE _quarantined AS
            WITH bad_games AS (
                SELECT c.game_id,
                       string_agg(f.shown || ' at ' || c._source_file || ':' || c._source_line, '; '
                                  ORDER BY c._source_file, c._source_line) AS why
                FROM {candidates} c JOIN _failures f ON f.row_id = c._row_id
                WHERE c.game_id IS NOT NULL GROUP BY 1
            )
            SELECT c._row_id AS row_id,
                   coalesce(split_part(f.reasons, ',', 1), ?) AS reason,
                   CASE WHEN c.game_id IS NULL THEN f.shown
                        ELSE 'game ' || c.game_id || ' rejected: ' || b.why END AS detail
            FROM {candidates} c
            LEFT JOIN _failures f ON f.row_id = c._row_id
            LEFT JOIN bad_games b ON b.game_id = c.game_id
            WHERE f.row_id IS NOT NULL OR b.game_id IS NOT NULL""",
            [GAME_REJECTED],
        )
    else:
        con.execute(
            """CREATE OR REPLACE TEMP TABLE _quarantined AS
            SELECT row_id, split_part(reasons, ',', 1) AS reason, shown AS detail FROM _failures"""
        )
    # Entries of rows in scope go, whether their rows are still delivered or not (a removed file).
    con.execute(
        f"""DELETE FROM {QUARANTINE_TABLE} q WHERE feed = ? AND record_key IS NOT NULL
        AND (source_file IN (SELECT path FROM _scope_files)
             OR EXISTS (SELECT 1 FROM {typed_table(feed)} t WHERE {in_scope(feed, "t")}
                        AND t._source_file = q.source_file AND t._source_line = q.source_line))""",
        [feed.name],
    )
    con.execute(
        f"""INSERT INTO {QUARANTINE_TABLE}
        SELECT ?, q.reason, q.detail, c._source_file, c._source_line, {_key_sql(feed, "c")}
        FROM _quarantined q JOIN {candidates} c ON c._row_id = q.row_id
        ORDER BY c._row_id""",
        [feed.name],
    )
    # The rows in scope are valid when they are the latest delivery of their key and not
    # quarantined; only the rows whose flag changes are written.
    con.execute(
        f"""UPDATE {typed_table(feed)} SET {VALID_FLAG} = NOT {VALID_FLAG}
        WHERE {in_scope(feed)} AND {VALID_FLAG} <> (NOT _replaced AND _row_id NOT IN (SELECT row_id FROM _quarantined))"""
    )
    drop_candidates(con, candidates)
    # Done last: a crash before this point leaves the work queued, and doing it again is harmless.
    queue_export(con, feed)
    return failures


def feed_counts(con: duckdb.DuckDBPyConnection, feed: Feed, files: list[str]) -> FeedCounts:
    """The feed's balance: rows in, valid, quarantined, replaced, and quarantine reasons."""
    counts = FeedCounts(feed.name, files=len(files))
    staged = con.execute(f"SELECT count(*) FROM {typed_table(feed)}").fetchall()[0][0]
    broken_lines = con.execute(
        f"SELECT count(*) FROM {QUARANTINE_TABLE} WHERE feed = ? AND record_key IS NULL AND source_line IS NOT NULL",
        [feed.name],
    ).fetchall()[0][0]
    counts.rows_in = staged + broken_lines
    counts.valid = con.execute(f"SELECT count(*) FROM {feed.name}").fetchall()[0][0]
    counts.replaced = con.execute(f"SELECT count(*) FROM {typed_table(feed)} WHERE _replaced").fetchall()[0][0]
    counts.quarantined = con.execute(
        f"SELECT count(*) FROM {QUARANTINE_TABLE} WHERE feed = ? AND (record_key IS NOT NULL OR source_line IS NOT NULL)",
        [feed.name],
    ).fetchall()[0][0]
    counts.files_rejected = con.execute(
        f"SELECT count(DISTINCT source_file) FROM {QUARANTINE_TABLE} WHERE feed = ? AND record_key IS NULL AND source_line IS NULL",
        [feed.name],
    ).fetchall()[0][0]
    counts.reasons = dict(
        con.execute(
            f"SELECT reason, count(*) FROM {QUARANTINE_TABLE} WHERE feed = ? GROUP BY 1 ORDER BY 1",
            [feed.name],
        ).fetchall()
    )
    return counts


def ingest_feed(
    con: duckdb.DuckDBPyConnection,
    raw_dir,
    feed: Feed,
    warehouse: Warehouse | None = None,
    progress: Progress | None = None,
    settle_seconds: float = 0.0,
):
    """Bring the feed's typed rows in step with the raw folder (reading only files not ingested
    before, with a warehouse, and none changed within `settle_seconds`), recording unreadable
    files and corrections; `progress` hears of long work."""
    ensure_report_tables(con)
    report = ingest_deliveries(con, Path(raw_dir), feed, warehouse, progress, settle_seconds)
    record_file_problems(con, feed, report.problems)
    record_skipped(con, feed, report.skipped, outside_feed_folders(Path(raw_dir)))
    if report.changed:
        record_corrections(con, feed)
    return report


def validate_and_count(
    con: duckdb.DuckDBPyConnection, feed: Feed, progress: Progress | None = None, today: dt.date | None = None
) -> FeedCounts:
    """Validate a staged feed (dates after `today` in the future, None: the real today) and return
    its balance; `progress` hears of it when it took long."""
    started = time.perf_counter()
    validate_feed(con, feed, progress, today)
    files = [r[0] for r in con.execute(f"SELECT DISTINCT _source_file FROM {typed_table(feed)} ORDER BY 1").fetchall()]
    counts = feed_counts(con, feed, files)
    report_if_slow(progress, started, f"{feed.name}: validated {counts.rows_in:,} rows, {counts.valid:,} valid")
    return counts


# Feeds in the order their rules need each other (events count their results; results need valid events).
VALIDATION_ORDER = (GAMES, PLAYERS, EVENTS, EVENT_RESULTS, LISTS)
