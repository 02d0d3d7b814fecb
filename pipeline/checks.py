"""Checks on written outputs, run in DuckDB over the Parquet files of the months just written."""
from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from pipeline.months import Month
from pipeline.store import Warehouse
from pipeline.systems.base import RatingSystem

RANKS_CONTIGUOUS = "ranks_contiguous"
ONE_ROW_PER_PLAYER = "one_row_per_player"
RATING_IN_RANGE = "rating_in_range"
HISTORY_AGREES = "history_agrees_with_table"

CHECK_DESCRIPTIONS = {
    RANKS_CONTIGUOUS: "Ranks start at 1 and follow the system's tie rule (shared 1-2-2-4, or unique 1..n).",
    ONE_ROW_PER_PLAYER: "Each player appears at most once in each month's table.",
    RATING_IN_RANGE: "Every rating lies in the system's plausible range.",
    HISTORY_AGREES: "A listed player's last rating_after of the month equals the table's rating.",
}


@dataclass
class CheckOutcome:
    name: str
    passed: bool
    failures: int
    detail: str = ""
    examples: list = field(default_factory=list)


def _files(warehouse: Warehouse, kind: str, system: str, months: list[Month]) -> list[str]:
    return [str(warehouse.output(kind, system, m)) for m in months if warehouse.output(kind, system, m).exists()]


def output_checks(warehouse: Warehouse, system: RatingSystem, months: list[Month]) -> list[CheckOutcome]:
    """Every output check over the given months' rankings and history files."""
    rankings = _files(warehouse, "rankings", system.name, months)
    history = _files(warehouse, "history", system.name, months)
    if not rankings:
        return [CheckOutcome(name, True, 0, "no months written") for name in CHECK_DESCRIPTIONS]
    low, high = system.rating_bounds
    con = duckdb.connect(":memory:")
    try:
        # File lists travel as arguments of the relation API, not in SQL text.
        con.read_parquet(rankings, union_by_name=True).create_view("r")
        expected_rank = ("rank() OVER (PARTITION BY as_of ORDER BY rating DESC)" if system.ties_share_rank
                         else "row_number() OVER (PARTITION BY as_of ORDER BY rank, player_id)")
        queries = {
            RANKS_CONTIGUOUS: (f"SELECT as_of, player_id, rank FROM "
                               f"(SELECT *, {expected_rank} AS expected FROM r) WHERE rank <> expected", []),
            ONE_ROW_PER_PLAYER: ("SELECT as_of, player_id, count(*) FROM r GROUP BY 1, 2 HAVING count(*) > 1", []),
            RATING_IN_RANGE: ("SELECT as_of, player_id, rating FROM r WHERE rating IS NULL OR isnan(rating) "
                              "OR (? IS NOT NULL AND rating < ?) OR (? IS NOT NULL AND rating > ?)",
                              [low, low, high, high]),
        }
        outcomes = []
        for name, (sql, params) in queries.items():
            failing = con.execute(sql, params).fetchall()
            outcomes.append(CheckOutcome(name, not failing, len(failing), examples=[list(map(str, f)) for f in failing[:5]]))
        if history:
            con.read_parquet(history, union_by_name=True, filename=True, file_row_number=True).create_view("h")
            failing = con.execute(
                """WITH last AS (
                     SELECT player_id, last_day(source_date) AS as_of,
                            arg_max(rating_after, file_row_number) AS after
                     FROM h WHERE rating_after IS NOT NULL GROUP BY 1, 2)
                   SELECT r.as_of, r.player_id, r.rating, last.after FROM r JOIN last USING (player_id, as_of)
                   WHERE abs(r.rating - last.after) > 1e-9""").fetchall()
            outcomes.append(CheckOutcome(HISTORY_AGREES, not failing, len(failing),
                                         examples=[list(map(str, f)) for f in failing[:5]]))
        else:
            outcomes.append(CheckOutcome(HISTORY_AGREES, True, 0, "no history"))
        return outcomes
    finally:
        con.close()
