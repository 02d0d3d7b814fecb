"""Published lists (the lists feed, SPEC §2): the table a system continues from, read from the
validated feed. A system with a list starts at the month after the list's `as_of`, from the
list's state, and leaves earlier results to the other systems."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa

from pipeline.core.feed_spec import LISTS, recent_points_sql
from pipeline.core.months import Month
from pipeline.systems.base import PublishedList
from pipeline.warehouse.store import Warehouse, file_location
from schemas.lists import SYSTEM_CATEGORIES, SYSTEM_COLUMNS

# The columns a system's list rows carry beyond player_id and player_name (and the category, for
# a system with several lists), in the order read.
LIST_SQL = {
    system: "SELECT player_id, player_name, "
    + ("category, " if system in SYSTEM_CATEGORIES else "")
    + ", ".join(f"{recent_points_sql(c)} AS {c}" if c == "recent_points" else c for c in columns)
    + ", as_of FROM read_parquet(?) WHERE system = ? ORDER BY player_id"
    + (", category" if system in SYSTEM_CATEGORIES else "")
    for system, columns in SYSTEM_COLUMNS.items()
}
STARTS_SQL = "SELECT system, min(as_of), count(DISTINCT player_id) FROM read_parquet(?) GROUP BY 1 ORDER BY 1"
FINGERPRINT_SQL = (
    "SELECT count(*), bit_xor(hash(as_of, player_id, player_name, category, rating, events, last_event_date, "
    "recent_points, games, last_game_date, evaluations, last_evaluated)) "
    "FROM read_parquet(?) WHERE system = ?"
)
BEFORE_SQL = {
    "games": "SELECT count(*) FROM read_parquet(?) WHERE finished_on <= ?",
    "events": "SELECT count(*) FROM read_parquet(?) r JOIN read_parquet(?) e USING (event_id) WHERE e.end_date <= ?",
}


@dataclass(frozen=True)
class ListStart:
    """Where a system continues a published list: the list's day, its players, and how many of the
    system's valid result rows finished on or before it (valid, but not rated by this system)."""

    system: str
    as_of: dt.date
    players: int
    results_before: int = 0

    @property
    def month(self) -> Month:
        return Month.of(self.as_of)


def _lists_file(warehouse: Warehouse):
    path = warehouse.validated(LISTS.name)
    return path if path.exists() else None


def list_months(warehouse: Warehouse) -> dict[str, Month]:
    """The month each system's published list stands for (systems without a list are absent)."""
    path = _lists_file(warehouse)
    if path is None:
        return {}
    return {system: Month.of(as_of) for system, as_of, _ in warehouse.query(STARTS_SQL, [file_location(path)])}


def published_list(warehouse: Warehouse, system: str) -> PublishedList | None:
    """A system's validated list, or None when it has none."""
    path = _lists_file(warehouse)
    if path is None or system not in SYSTEM_COLUMNS:
        return None
    con = warehouse.scan()
    try:
        rows = con.sql(LIST_SQL[system], params=[file_location(path), system]).to_arrow_table()
    finally:
        con.close()
    if rows.num_rows == 0:
        return None
    as_of = rows.column("as_of")[0].as_py()
    return PublishedList(system, as_of, rows.drop_columns(["as_of"]))


def list_fingerprint(warehouse: Warehouse, system: str) -> str:
    """Row count and an order-independent hash of a system's list ("none" without one): part of
    every month's input fingerprint, so a late or corrected list recomputes the system."""
    path = _lists_file(warehouse)
    if path is None:
        return "none"
    ((count, digest),) = warehouse.query(FINGERPRINT_SQL, [file_location(path), system])
    return "none" if count == 0 else f"{count}:{digest}"


def list_starts(warehouse: Warehouse, feeds: dict[str, str]) -> list[ListStart]:
    """Every system (name -> feed kind) that continues a list, with the result rows it leaves out."""
    path = _lists_file(warehouse)
    if path is None:
        return []
    starts = []
    for system, as_of, players in warehouse.query(STARTS_SQL, [file_location(path)]):
        if system not in feeds:
            continue
        starts.append(ListStart(system, as_of, players, _results_until(warehouse, feeds[system], as_of)))
    return starts


def _results_until(warehouse: Warehouse, feed: str, day) -> int:
    if feed == "games":
        games = [file_location(p) for p in warehouse.validated_files("games", last=Month.of(day))]
        if not games:
            return 0
        return warehouse.query(BEFORE_SQL["games"], [games, day])[0][0]
    results, events = warehouse.validated("event_results"), warehouse.validated("events")
    if not (results.exists() and events.exists()):
        return 0
    return warehouse.query(BEFORE_SQL["events"], [file_location(results), file_location(events), day])[0][0]


def list_names(published: PublishedList) -> pa.Table:
    """The list's player names, as the rows the writer's name carry takes."""
    return published.rows.select(["player_id", "player_name"])
