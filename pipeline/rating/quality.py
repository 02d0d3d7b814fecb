"""Predictive quality (SPEC §3.5): how well each system's table of the month before ordered the
players of the month's games and events, pair by pair, and the same on the games all three
online systems rated.

Every month of a range is scored in one pass per system: DuckDB gathers, per game or event, the
history rows of the months (each system's own choice of games and players), each row's outcome
(from the validated games, with multi-site powers merged as the systems merge them; an event's
placement) and the player's rating in the table of the month before; a compiled pass counts each
game's pairs, and DuckDB sums them by month. A month's quality depends on the systems' outputs up to that month
only, and each system's manifest already fingerprints those cumulatively, so a month is stale
exactly when one of its systems' manifest entries changed (`quality_fingerprints`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from pipeline.core.months import Month, month_range
from pipeline.rating.inputs import RESPONSIBLE_PLAYER_SQL
from pipeline.rating.ranges import forget_manifest_months, remove_file
from pipeline.rating.writer import validate_output
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.store import Warehouse, atomic_write_parquet
from schemas.quality import Quality

# Bumped whenever the table's definition or layout changes: every month is then scored again.
QUALITY_FORMAT = 1
# The record of which inputs each month's table was scored from (state/quality/manifest.json).
QUALITY_MANIFEST = "quality"
TRAILING_MONTHS = 12
# The online systems compared on the same games (SPEC §3.5).
COMMON_SYSTEMS = ("club", "eagle", "diwz")

QUALITY_COLUMNS = pa.schema(
    [
        ("system", pa.string()),
        ("as_of", pa.date32()),
        ("games", pa.int64()),
        ("pairs", pa.int64()),
        ("concordant", pa.float64()),
        ("pairwise_accuracy", pa.float64()),
        ("trailing_pairs", pa.int64()),
        ("trailing_concordant", pa.float64()),
        ("trailing_accuracy", pa.float64()),
        ("common_games", pa.int64()),
        ("common_pairs", pa.int64()),
        ("common_accuracy", pa.float64()),
    ]
)
# One row per game or event of a system's month, with its pairs and concordant pairs.
SCORED_COLUMNS = pa.schema(
    [
        ("system", pa.string()),
        ("m", pa.int64()),
        ("source_id", pa.string()),
        ("pairs", pa.int64()),
        ("concordant", pa.float64()),
    ]
)

# A game row's outcome as one number, higher is better (SPEC §3.5): solo > draw member > survived
# (more centres better) > eliminated (later better) > anarchy. The powers of one responsible
# player in a multi-site game are merged first, as every system merges them (SPEC §2): the best
# result in the order solo, draw, survived, anarchy, eliminated; centres summed; the latest
# elimination year.
GAME_OUTCOMES_SQL = f"""
SELECT game_id AS source_id, responsible AS player_id,
       CASE min(preference)
           WHEN 0 THEN 4000000
           WHEN 1 THEN 3000000
           WHEN 2 THEN 2000000 + sum(centres)
           WHEN 3 THEN 0
           ELSE 1000000 + max(eliminated_year)
       END AS outcome
FROM (
    SELECT game_id, {RESPONSIBLE_PLAYER_SQL} AS responsible, centres, eliminated_year,
           CASE result WHEN 'solo' THEN 0 WHEN 'draw' THEN 1 WHEN 'survived' THEN 2 WHEN 'anarchy' THEN 3 ELSE 4 END
               AS preference
    FROM read_parquet(?)
)
GROUP BY ALL
"""
MONTH_INDEX = "(year({0}) * 12 + month({0}) - 1)"
# One system's rated rows: the month, the game or event, the player, the outcome and the rating
# of the table before the month (the newcomer's value when it does not list the player).
RATED_ROWS_SQL = {
    "games": "SELECT ? AS system, {month} AS m, h.source_id, h.player_id, {rating} AS rating, o.outcome "
    "FROM {history} h LEFT JOIN game_outcomes o USING (source_id, player_id) {previous}",
    # An event's outcome: the lower placement is the better one.
    "events": "SELECT ? AS system, {month} AS m, h.source_id, h.player_id, {rating} AS rating, "
    "-h.placement AS outcome FROM {history} h {previous}",
}
PREVIOUS_TABLE_SQL = (
    f"LEFT JOIN (SELECT player_id, rating, {MONTH_INDEX.format('as_of')} + 1 AS m FROM {{tables}}) r "
    f"ON r.player_id = h.player_id AND r.m = {MONTH_INDEX.format('h.source_date')}"
)
# A system's files, or the rows of the list it is scored on (the list column is the system's
# own identifier; the list's name is a parameter).
FILES_SQL = "read_parquet(?)"
LIST_SQL = '(SELECT * FROM read_parquet(?) WHERE "{column}" = ?)'
# One system's rated rows gathered per game or event (a row without an outcome is a history row
# the validated games do not hold, see `scored_sources`).
SOURCES_SQL = (
    "SELECT system, m, source_id, list({{'rating': rating, 'outcome': outcome::BIGINT}}) AS players, "
    "count(*) FILTER (WHERE outcome IS NULL) AS unmatched FROM ({rated}) GROUP BY system, m, source_id"
)
# Each system's month sums of a chunk of months, over its games and events with pairs, and over
# those of them that every common system rated.
MONTH_SUMS_SQL = """
WITH common AS (
    SELECT m, source_id, true AS common FROM scored WHERE system IN (SELECT unnest(?::VARCHAR[]))
    GROUP BY ALL HAVING count(DISTINCT system) = ?
)
SELECT system, m, count(*) AS games, sum(pairs) AS pairs, sum(concordant) AS concordant,
       count(*) FILTER (WHERE common) AS common_games,
       coalesce(sum(pairs) FILTER (WHERE common), 0) AS common_pairs,
       coalesce(sum(concordant) FILTER (WHERE common), 0) AS common_concordant
FROM scored LEFT JOIN common USING (m, source_id)
WHERE pairs > 0
GROUP BY ALL
"""
# Every system's months (the calendar; a month without a game has zeros), their trailing sums
# and the accuracies, from `first` on.
MONTHLY_SQL = """
WITH filled AS (
    SELECT k.system, k.m,
           coalesce(games, 0)::BIGINT AS games, coalesce(pairs, 0)::BIGINT AS pairs,
           coalesce(concordant, 0)::DOUBLE AS concordant,
           coalesce(common_games, 0)::BIGINT AS common_games, coalesce(common_pairs, 0)::BIGINT AS common_pairs,
           coalesce(common_concordant, 0)::DOUBLE AS common_concordant
    FROM calendar k LEFT JOIN month_sums USING (system, m)
), summed AS (
    SELECT *,
           sum(pairs) OVER twelve AS trailing_pairs, sum(concordant) OVER twelve AS trailing_concordant
    FROM filled
    WINDOW twelve AS (PARTITION BY system ORDER BY m RANGE BETWEEN ? PRECEDING AND CURRENT ROW)
)
SELECT system, m, games, pairs, concordant,
       CASE WHEN pairs > 0 THEN concordant / pairs END AS pairwise_accuracy,
       trailing_pairs::BIGINT AS trailing_pairs, trailing_concordant::DOUBLE AS trailing_concordant,
       CASE WHEN trailing_pairs > 0 THEN trailing_concordant / trailing_pairs END AS trailing_accuracy,
       CASE WHEN common_systems THEN common_games END AS common_games,
       CASE WHEN common_systems THEN common_pairs END AS common_pairs,
       CASE WHEN common_systems AND common_pairs > 0 THEN common_concordant / common_pairs END AS common_accuracy
FROM (SELECT *, system IN (SELECT unnest(?::VARCHAR[])) AS common_systems FROM summed)
WHERE m >= ?
ORDER BY m, system
"""
# Months scored in one query per system: a month's games are scored on their own (against the
# table of the month before), so a range is scored chunk by chunk and its memory is one chunk's
# rows, not the whole history's (a 10M-game backfill would otherwise spill many GB to disk).
CHUNK_MONTHS = 24


@dataclass(frozen=True)
class QualityRun:
    """What one scoring run wrote: its months, their tables and the number of rows."""

    months: list[Month]
    rows: int
    tables: dict[Month, pa.Table]


def month_index(month: Month) -> int:
    return month.year * 12 + month.month - 1


def months_of_index(index: int) -> Month:
    return Month(index // 12, index % 12 + 1)


def system_months(warehouse: Warehouse) -> dict[str, set[Month]]:
    """The months each system has a snapshot of: the months its quality rows stand for."""
    return {name: set(warehouse.written_months("rankings", name)) for name in SYSTEM_NAMES}


def quality_fingerprints(warehouse: Warehouse) -> dict[Month, str]:
    """Every month that any system has a snapshot of, with a hash of what its quality table is
    scored from: the systems that hold the month and their manifest entries of it, which
    fingerprint each system's inputs up to that month (so its outputs up to it)."""
    months = system_months(warehouse)
    manifests = {name: warehouse.load_manifest(name) for name in SYSTEM_NAMES}
    fingerprints = {}
    for month in sorted(set().union(*months.values())):
        parts = [f"format:{QUALITY_FORMAT}"]
        for name in SYSTEM_NAMES:
            if month in months[name]:
                parts.append(f"{name}:{min(months[name])}:{manifests[name].get(str(month), 'none')}")
        fingerprints[month] = hashlib.blake2b("|".join(parts).encode(), digest_size=16).hexdigest()
    return fingerprints


def stale_quality_range(
    warehouse: Warehouse, fingerprints: dict[Month, str] | None = None
) -> tuple[Month, Month] | None:
    """The months to score again: from the first whose table is missing or was scored from other
    outputs to the last month any system has; None when every table is current. `fingerprints`
    are `quality_fingerprints(warehouse)` when the caller has them already."""
    if fingerprints is None:
        fingerprints = quality_fingerprints(warehouse)
    if not fingerprints:
        return None
    recorded = warehouse.load_manifest(QUALITY_MANIFEST)
    written = set(warehouse.quality_months())
    for month, fingerprint in fingerprints.items():
        if recorded.get(str(month)) != fingerprint or month not in written:
            return month, max(fingerprints)
    return None


def quality_months_outside(warehouse: Warehouse, months: set[Month]) -> list[Month]:
    """Months with a quality table or manifest entry that no system's range holds, oldest first."""
    held = set(warehouse.quality_months()) | {Month.parse(key) for key in warehouse.load_manifest(QUALITY_MANIFEST)}
    return sorted(held - months)


def remove_quality_months(warehouse: Warehouse, months: list[Month]) -> None:
    """Delete the quality tables of these months, the manifest's entries first (see remove_months)."""
    if not months:
        return
    forget_manifest_months(warehouse, QUALITY_MANIFEST, months)
    for month in months:
        remove_file(warehouse.quality(month))


def quality_tables(
    warehouse: Warehouse, first: Month, last: Month, chunk_months: int = CHUNK_MONTHS
) -> dict[Month, pa.Table]:
    """The quality table of every month from `first` to `last` that any system has a snapshot of,
    scored `chunk_months` months at a time."""
    months = system_months(warehouse)
    window = month_range(first.shift(1 - TRAILING_MONTHS), last)
    # Listed once for every chunk: on object storage each listing is a request.
    written = WrittenMonths(
        months,
        {name: set(warehouse.written_months("history", name)) for name in SYSTEM_NAMES},
        set(warehouse.validated_months("games")),
    )
    sums = [
        month_sums(warehouse, written, window[start : start + chunk_months])
        for start in range(0, len(window), chunk_months)
    ]
    calendar = pa.table(
        {
            "system": [name for name in SYSTEM_NAMES for m in window if m in months[name]],
            "m": pa.array([month_index(m) for name in SYSTEM_NAMES for m in window if m in months[name]], pa.int64()),
        }
    )
    con = warehouse.scan()
    try:
        con.register("month_sums", pa.concat_tables(sums))
        con.register("calendar", calendar)
        monthly = con.sql(
            MONTHLY_SQL, params=[TRAILING_MONTHS - 1, list(COMMON_SYSTEMS), month_index(first)]
        ).to_arrow_table()
    finally:
        con.close()
    return split_months(monthly)


class WrittenMonths(NamedTuple):
    """The months on disk that the quality table reads: each system's snapshots and histories,
    and the validated games."""

    snapshots: dict[str, set[Month]]
    histories: dict[str, set[Month]]
    games: set[Month]


def month_sums(warehouse: Warehouse, written: WrittenMonths, chunk: list[Month]) -> pa.Table:
    """Each system's sums of pairs and concordant pairs per month of `chunk` (MONTH_SUMS_SQL)."""
    games = [warehouse.validated_month("games", m) for m in chunk if m in written.games]
    inputs = {}  # per system: its history files of the chunk and its tables of the months before
    for name in SYSTEM_NAMES:
        snapshots = written.snapshots[name]
        inputs[name] = (
            [warehouse.history(name, m) for m in chunk if m in snapshots and m in written.histories[name]],
            [warehouse.rankings(name, m.previous()) for m in chunk if m.previous() in snapshots],
        )
    files = [*games, *(path for pair in inputs.values() for paths in pair for path in paths)]
    with warehouse.readable(files) as locations:
        location = dict(zip(map(str, files), locations))
        con = warehouse.scan()
        try:
            games_files = [location[str(p)] for p in games]
            if games_files:
                con.execute(f"CREATE TEMP TABLE game_outcomes AS {GAME_OUTCOMES_SQL}", [games_files])
            scored = []
            for name, (history_paths, table_paths) in inputs.items():
                cls = system_class(name)
                if not history_paths or (cls.feed == "games" and not games_files):
                    continue
                history = [location[str(p)] for p in history_paths]
                tables = [location[str(p)] for p in table_paths]
                files_sql = FILES_SQL if cls.list_column is None else LIST_SQL.format(column=cls.list_column)
                rated = RATED_ROWS_SQL[cls.feed].format(
                    month=MONTH_INDEX.format("h.source_date"),
                    rating="coalesce(r.rating, ?)" if tables else "?::DOUBLE",
                    history=files_sql,
                    previous=PREVIOUS_TABLE_SQL.format(tables=files_sql) if tables else "",
                )
                listed = [] if cls.list_column is None else [cls.lists[0]]
                parameters = [name, cls.newcomer_rating, history, *listed, *([tables, *listed] if tables else [])]
                sources = con.sql(SOURCES_SQL.format(rated=rated), params=parameters).to_arrow_table()
                scored.append(scored_sources(sources))
            con.register("scored", pa.concat_tables(scored) if scored else SCORED_COLUMNS.empty_table())
            return con.sql(MONTH_SUMS_SQL, params=[list(COMMON_SYSTEMS), len(COMMON_SYSTEMS)]).to_arrow_table()
        finally:
            con.close()


def scored_sources(sources: pa.Table) -> pa.Table:
    """Each game or event of one system (its rated players as `players`) with its pairs and
    concordant pairs."""
    unmatched = pc.greater(sources.column("unmatched"), 0)
    if pc.any(unmatched).as_py():
        first = sources.filter(unmatched).slice(0, 1).to_pylist()[0]
        raise RuntimeError(
            f"history row without a result in the validated games: {first['system']} {first['source_id']}"
        )
    players = sources.column("players").combine_chunks()
    offsets = players.offsets.to_numpy()
    rating, outcome = pc.list_flatten(players).flatten()
    pairs, concordant = pairs_and_concordant(
        offsets - offsets[0], rating.to_numpy(zero_copy_only=False), outcome.to_numpy(zero_copy_only=False)
    )
    return pa.table(
        [sources.column("system"), sources.column("m"), sources.column("source_id"), pairs, concordant],
        schema=SCORED_COLUMNS,
    )


@njit(cache=True)
def pairs_and_concordant(offsets, rating, outcome):
    """Per game or event g (its players are rows offsets[g] to offsets[g + 1]): every unordered
    pair of players whose outcomes differ, and the concordant ones among them: 1 when the higher
    rating finished better, 0.5 when the ratings are equal (SPEC §3.5)."""
    sources = len(offsets) - 1
    pairs = np.zeros(sources, np.int64)
    concordant = np.zeros(sources, np.float64)
    for g in range(sources):
        for a in range(offsets[g], offsets[g + 1]):
            for b in range(a + 1, offsets[g + 1]):
                if outcome[a] == outcome[b]:
                    continue
                pairs[g] += 1
                if rating[a] == rating[b]:
                    concordant[g] += 0.5
                elif (rating[a] > rating[b]) == (outcome[a] > outcome[b]):
                    concordant[g] += 1.0
    return pairs, concordant


def split_months(scored: pa.Table) -> dict[Month, pa.Table]:
    """The scored rows (system, m, figures; ordered by m, system) as one table per month."""
    tables: dict[Month, pa.Table] = {}
    indexes = scored.column("m").to_pylist()
    start = 0
    for end in range(1, len(indexes) + 1):
        if end == len(indexes) or indexes[end] != indexes[start]:
            month = months_of_index(indexes[start])
            rows = scored.slice(start, end - start).drop_columns(["m"])
            as_of = pa.array([month.last_day] * rows.num_rows, pa.date32())
            tables[month] = rows.add_column(1, "as_of", as_of).select(QUALITY_COLUMNS.names).cast(QUALITY_COLUMNS)
            start = end
    return tables


def score_months(warehouse: Warehouse, first: Month, last: Month) -> QualityRun:
    """Score every month from `first` to `last`, validate the tables, write them, then record
    their fingerprints (the manifest is written after the files it vouches for)."""
    tables = quality_tables(warehouse, first, last)
    if not tables:
        return QualityRun([], 0, {})
    every = pa.concat_tables(tables.values())
    validate_output(Quality, every, f"quality {first}..{last}", warehouse.duckdb_config)
    for month, table in tables.items():
        atomic_write_parquet(warehouse.quality(month), table)
    fingerprints = quality_fingerprints(warehouse)
    manifest = warehouse.load_manifest(QUALITY_MANIFEST)
    manifest.update({str(month): fingerprints[month] for month in tables if month in fingerprints})
    warehouse.save_manifest(QUALITY_MANIFEST, manifest)
    return QualityRun(sorted(tables), every.num_rows, tables)
