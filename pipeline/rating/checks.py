"""Checks on the outputs, over each batch of months the writer writes: each check one DuckDB
query over the batch's Arrow tables, which finds, counts and shows the failing rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pipeline.systems.base import RatingSystem
from pipeline.warehouse.store import scratch

RANKS_CONTIGUOUS = "ranks_contiguous"
ONE_ROW_PER_PLAYER = "one_row_per_player"
RATING_IN_RANGE = "rating_in_range"
HISTORY_AGREES = "history_agrees_with_table"

CHECK_DESCRIPTIONS = {
    RANKS_CONTIGUOUS: "Ranks start at 1 and follow the system's tie rule (shared 1-2-2-4, or unique 1..n).",
    ONE_ROW_PER_PLAYER: "Each player appears at most once in each month's table (in each of its lists).",
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


def no_outcomes(detail: str) -> list[CheckOutcome]:
    """Every check passing with nothing to look at (no month was written)."""
    return [CheckOutcome(name, True, 0, detail) for name in CHECK_DESCRIPTIONS]


def check_tables(system: RatingSystem, rankings: pa.Table, history: pa.Table) -> list[CheckOutcome]:
    """Every output check over a batch of months' tables, run in DuckDB on the Arrow data itself.

    Each check compares rows of one month only, so checking batch by batch equals checking the
    whole range at once; the tables checked are the ones the writer turns into files.
    """
    if rankings.num_rows == 0:
        return no_outcomes("no rows")
    low, high = system.rating_bounds
    con = scratch()
    try:
        con.register("r", rankings)
        # A month's table is one list, or one per value of the system's list column (an
        # identifier of the system's own, never data).
        lists = "as_of" if system.list_column is None else f'as_of, "{system.list_column}"'
        expected_rank = (
            f"rank() OVER (PARTITION BY {lists} ORDER BY rating DESC)"
            if system.ties_share_rank
            else f"row_number() OVER (PARTITION BY {lists} ORDER BY rank, player_id)"
        )
        queries = {
            RANKS_CONTIGUOUS: (
                f"SELECT {lists}, player_id, rank FROM "
                f"(SELECT *, {expected_rank} AS expected FROM r) WHERE rank <> expected ORDER BY ALL",
                [],
            ),
            ONE_ROW_PER_PLAYER: (
                f"SELECT {lists}, player_id, count(*) FROM r GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL",
                [],
            ),
            RATING_IN_RANGE: (
                "SELECT as_of, player_id, rating FROM r WHERE rating IS NULL OR isnan(rating) "
                "OR (? IS NOT NULL AND rating < ?) OR (? IS NOT NULL AND rating > ?) ORDER BY ALL",
                [low, low, high, high],
            ),
        }
        outcomes = []
        # Failing rows in a fixed order: the examples shown are the same on every run.
        for name, (sql, params) in queries.items():
            failing = con.execute(sql, params).fetchall()
            outcomes.append(
                CheckOutcome(name, not failing, len(failing), examples=[list(map(str, f)) for f in failing[:5]])
            )
        if history.num_rows:
            # Row order within a month is time order: the last row of a player is the latest.
            con.register("h", history.append_column("_row", pa.array(np.arange(history.num_rows, dtype=np.int64))))
            failing = con.execute(
                f"""WITH last AS (
                     SELECT {lists}, player_id, arg_max(rating_after, _row) AS after
                     FROM (SELECT *, last_day(source_date) AS as_of FROM h)
                     WHERE rating_after IS NOT NULL GROUP BY ALL)
                   SELECT {lists}, player_id, r.rating, last.after FROM r JOIN last USING ({lists}, player_id)
                   WHERE abs(r.rating - last.after) > 1e-9 ORDER BY ALL"""
            ).fetchall()
            outcomes.append(
                CheckOutcome(
                    HISTORY_AGREES, not failing, len(failing), examples=[list(map(str, f)) for f in failing[:5]]
                )
            )
        else:
            outcomes.append(CheckOutcome(HISTORY_AGREES, True, 0, "no history"))
        return outcomes
    finally:
        con.close()


def merge_outcomes(earlier: list[CheckOutcome], later: list[CheckOutcome]) -> list[CheckOutcome]:
    """The outcome of a range from the outcomes of two consecutive batches."""
    if not earlier:
        return later
    by_name = {o.name: o for o in later}
    return [
        CheckOutcome(
            o.name,
            o.passed and by_name[o.name].passed,
            o.failures + by_name[o.name].failures,
            examples=(o.examples + by_name[o.name].examples)[:5],
        )
        for o in earlier
    ]
