"""Read the validated feeds (Parquet in the warehouse) in each system's processing order."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

from pipeline.core.months import Month
from pipeline.systems.base import EVENT_RESULT_COLUMNS, GAME_COLUMNS, PlayerInfo
from pipeline.systems.games import merged_powers
from pipeline.systems.kernels.sort import columns_in_order
from pipeline.warehouse.store import Warehouse, file_location, is_local

# Whose result a power's row is (SPEC §2, responsible player).
RESPONSIBLE_PLAYER_SQL = (
    "CASE WHEN replacement_denies AND original_player_id IS NOT NULL THEN original_player_id ELSE player_id END"
)
GAMES_SQL = f"""
SELECT game_id, site, variant, supply_centres, finished_on, rated, power, player_id, player_name,
       original_player_id, replacement_denies, result, centres, eliminated_year, multi_site,
       scoring, press, live, {RESPONSIBLE_PLAYER_SQL} AS responsible_player_id
FROM read_parquet(?)
WHERE finished_on BETWEEN ? AND ?
"""
# The processing order. Month files hold their rows in it (pipeline.ingest.exports.write_months),
# so a year is read in file order, checked, and sorted only when it is not in order: a read
# without ORDER BY runs on every thread, where a sorting one gathers the rows on one.
PROCESSING_ORDER = ("finished_on", "game_id", "power")
GAMES_ORDER = f"ORDER BY {', '.join(PROCESSING_ORDER)}"

EVENTS_SQL = """
SELECT e.event_id, e.name AS event_name, e.start_date, e.end_date, e.rounds, e.num_players,
       e.is_world_championship, r.player_id, r.player_name, r.nationality, r.placement
FROM read_parquet(?) r JOIN read_parquet(?) e USING (event_id)
WHERE e.end_date BETWEEN ? AND ?
ORDER BY e.end_date, e.start_date, e.event_id, r.placement, r.player_id
"""

# The date that places a row in a month, per feed kind.
DATE_COLUMN = {"games": "finished_on", "events": "end_date"}


def read_results(warehouse: Warehouse, feed: str, first: Month, last: Month) -> pa.Table:
    """Every validated row of a system's feed finished within [first, last], in processing order."""
    con = warehouse.scan()
    try:
        if feed == "games":
            # Only the months wanted are opened (validated games are stored by month).
            files = [file_location(p) for p in warehouse.validated_files("games", first, last)]
            if not files:
                return GAME_COLUMNS.empty_table()
            parameters = [files, first.first_day, last.last_day]
            table = con.sql(GAMES_SQL, params=parameters).to_arrow_table()
            if not in_processing_order(table):
                table = con.sql(GAMES_SQL + GAMES_ORDER, params=parameters).to_arrow_table()
            return merged_powers(table.cast(GAME_COLUMNS))
        results, events = warehouse.validated("event_results"), warehouse.validated("events")
        if not (results.exists() and events.exists()):
            return EVENT_RESULT_COLUMNS.empty_table()
        table = con.sql(
            EVENTS_SQL, params=[file_location(results), file_location(events), first.first_day, last.last_day]
        ).to_arrow_table()
        return table.cast(EVENT_RESULT_COLUMNS)
    finally:
        con.close()


def in_processing_order(games: pa.Table) -> bool:
    """Whether every row comes after the one before it in PROCESSING_ORDER."""
    days, game, power = (games.column(name).combine_chunks() for name in PROCESSING_ORDER)
    return columns_in_order(days.cast(pa.int32()), game, power)


def split_by_month(table: pa.Table, feed: str, months: list[Month]) -> dict[Month, pa.Table]:
    """Zero-copy slices of a date-sorted table, one per month (empty where nothing finished)."""
    # Days since the epoch, searched as integers: no Python date per row.
    days = table.column(DATE_COLUMN[feed]).combine_chunks().cast(pa.int32()).to_numpy(zero_copy_only=False)
    epoch = dt.date(1970, 1, 1)
    slices = {}
    for month in months:
        lo = int(np.searchsorted(days, (month.first_day - epoch).days, side="left"))
        hi = int(np.searchsorted(days, (month.last_day - epoch).days, side="right"))
        slices[month] = table.slice(lo, hi - lo)
    return slices


def read_registry(warehouse: Warehouse) -> dict[str, PlayerInfo]:
    """The players registry: player_id -> name and country."""
    path = warehouse.validated("players")
    if not path.exists():
        return {}
    rows = warehouse.query("SELECT player_id, name, country FROM read_parquet(?)", [file_location(path)])
    return {pid: PlayerInfo(name, country) for pid, name, country in rows}


# feed_bounds of local warehouses, by the identity of the files it reads: a run asks for them a
# dozen times (partitions, plans, each system's range), while only ingest changes those files, each
# replaced whole by a rename (a new inode).
_BOUNDS: dict[tuple, dict[str, tuple[Month, Month] | None]] = {}


def _file_identity(path) -> tuple | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns


def feed_bounds(warehouse: Warehouse) -> dict[str, tuple[Month, Month] | None]:
    """First and last month with validated data, per feed kind ('games', 'events')."""
    games = warehouse.validated_files("games")
    results, events = warehouse.validated("event_results"), warehouse.validated("events")
    key = None
    if is_local(warehouse.root):
        # The first and the last file hold the extremes (files are months, oldest first).
        key = tuple(_file_identity(p) for p in (*games[:1], *games[-1:], results, events))
        if key in _BOUNDS:
            return dict(_BOUNDS[key])
    con = warehouse.scan()
    bounds: dict[str, tuple[Month, Month] | None] = {"games": None, "events": None}
    try:
        if games:
            lo, hi = con.execute(
                "SELECT min(finished_on), max(finished_on) FROM read_parquet(?)",
                [[file_location(games[0]), file_location(games[-1])]],
            ).fetchall()[0]
            if lo is not None:
                bounds["games"] = (Month.of(lo), Month.of(hi))
        if results.exists() and events.exists():
            lo, hi = con.execute(
                "SELECT min(e.end_date), max(e.end_date) FROM read_parquet(?) e "
                "WHERE event_id IN (SELECT event_id FROM read_parquet(?))",
                [file_location(events), file_location(results)],
            ).fetchall()[0]
            if lo is not None:
                bounds["events"] = (Month.of(lo), Month.of(hi))
    finally:
        con.close()
    if key is not None:
        if len(_BOUNDS) >= 16:  # earlier states of the feeds are not asked for again
            _BOUNDS.clear()
        _BOUNDS[key] = dict(bounds)
    return bounds


def last_data_month(warehouse: Warehouse) -> Month | None:
    """The latest month with data in any feed: the default end of a run."""
    ends = [b[1] for b in feed_bounds(warehouse).values() if b is not None]
    return max(ends) if ends else None
