"""Checks on the outputs, over each batch of months the writer writes: decided in one compiled
pass when every check passes, and run in DuckDB, which finds and counts the failing rows, when
one may not. In DuckDB the four checks cost about as much CPU as compressing and writing the
batch's files; the compiled pass reads each row once and hashes each player id once
(benchmarks/RESULTS.md has the figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from numba import njit

from pipeline.systems.base import RatingSystem
from pipeline.systems.kernels.numbering import PlayerNumbers
from pipeline.warehouse.store import scratch

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
    if all_checks_pass(system, rankings, history):
        return [
            CheckOutcome(name, True, 0, "no history" if name == HISTORY_AGREES and not history.num_rows else "")
            for name in CHECK_DESCRIPTIONS
        ]
    return checks_in_duckdb(system, rankings, history)


def checks_in_duckdb(system: RatingSystem, rankings: pa.Table, history: pa.Table) -> list[CheckOutcome]:
    """Every output check as a DuckDB query over the Arrow tables: the failing rows, counted, with examples."""
    low, high = system.rating_bounds
    con = scratch()
    try:
        con.register("r", rankings)
        expected_rank = (
            "rank() OVER (PARTITION BY as_of ORDER BY rating DESC)"
            if system.ties_share_rank
            else "row_number() OVER (PARTITION BY as_of ORDER BY rank, player_id)"
        )
        queries = {
            RANKS_CONTIGUOUS: (
                f"SELECT as_of, player_id, rank FROM "
                f"(SELECT *, {expected_rank} AS expected FROM r) WHERE rank <> expected ORDER BY ALL",
                [],
            ),
            ONE_ROW_PER_PLAYER: (
                "SELECT as_of, player_id, count(*) FROM r GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY ALL",
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
                """WITH last AS (
                     SELECT player_id, last_day(source_date) AS as_of, arg_max(rating_after, _row) AS after
                     FROM h WHERE rating_after IS NOT NULL GROUP BY 1, 2)
                   SELECT r.as_of, r.player_id, r.rating, last.after FROM r JOIN last USING (player_id, as_of)
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


def all_checks_pass(system: RatingSystem, rankings: pa.Table, history: pa.Table) -> bool:
    """Whether every check certainly passes on the batch (batch_passes). False also where the
    pass cannot tell cheaply: a null in a column a check reads, a month's ratings out of order,
    months or history dates out of order."""
    if any(rankings.column(c).null_count for c in ("as_of", "rank", "player_id", "rating")) or any(
        history.column(c).null_count for c in ("source_date", "player_id")
    ):
        return False
    numbers = PlayerNumbers()
    ranked = np.concatenate([numbers.numbers(chunk) for chunk in rankings.column("player_id").chunks])
    listed = [numbers.numbers(chunk) for chunk in history.column("player_id").chunks]
    after = history.column("rating_after").combine_chunks()
    low, high = system.rating_bounds
    return batch_passes(
        _days(rankings.column("as_of")),
        _values(rankings.column("rank"), np.int64),
        _values(rankings.column("rating"), np.float64),
        ranked,
        system.ties_share_rank,
        -np.inf if low is None else float(low),
        np.inf if high is None else float(high),
        _month_ends(history.column("source_date")),
        np.concatenate(listed) if listed else np.zeros(0, np.int32),
        np.asarray(after.to_numpy(zero_copy_only=False), dtype=np.float64),
        np.asarray(after.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_),
        numbers.count,
    )


def _values(column: pa.ChunkedArray, dtype) -> np.ndarray:
    return np.asarray(column.combine_chunks().to_numpy(zero_copy_only=False), dtype=dtype)


def _days(column: pa.ChunkedArray) -> np.ndarray:
    return _values(column.cast(pa.int32()), np.int64)


def _month_ends(column: pa.ChunkedArray) -> np.ndarray:
    """The day number of the last day of each date's month (DuckDB's last_day)."""
    months = _days(column).astype("datetime64[D]").astype("datetime64[M]")
    return ((months + 1).astype("datetime64[D]") - np.timedelta64(1, "D")).astype(np.int64)


@njit(cache=True)
def batch_passes(
    as_of, rank, rating, numbers, shared, low, high, history_as_of, history_numbers, rating_after, after_given, players
):
    """Every check of the batch in one pass, True when all of them pass. The rows of a month are
    those of one as_of; a batch lists its months in order. Ranks: competition ranks of the
    ratings in descending order (`shared`), else 1..n in row order (then ordering by rank and
    player_id gives the row order); one row per player and month (players numbered 0..players-1);
    ratings within [low, high]; and a listed player's last rating_after of the month, rows in
    time order, within 1e-9 of the table's rating."""
    for h in range(1, history_as_of.shape[0]):
        if history_as_of[h] < history_as_of[h - 1]:
            return False
    listed_on = np.full(players, np.iinfo(np.int64).min)  # the as_of a player was last listed in
    after_on = np.full(players, np.iinfo(np.int64).min)  # the as_of of his latest rating_after
    last_after = np.zeros(players)
    h = 0
    month_start = tie_start = 0
    for r in range(as_of.shape[0]):
        day = as_of[r]
        if r == 0 or day != as_of[r - 1]:
            if r > 0 and day < as_of[r - 1]:
                return False
            month_start = tie_start = r
            while h < history_as_of.shape[0] and history_as_of[h] <= day:
                if after_given[h]:
                    after_on[history_numbers[h]] = history_as_of[h]
                    last_after[history_numbers[h]] = rating_after[h]
                h += 1
        x = rating[r]
        if not (x >= low and x <= high):
            return False
        if shared:
            if r > month_start and x != rating[r - 1]:
                if x > rating[r - 1]:
                    return False
                tie_start = r
            if rank[r] != tie_start - month_start + 1:
                return False
        elif rank[r] != r - month_start + 1:
            return False
        p = numbers[r]
        if listed_on[p] == day:
            return False
        listed_on[p] = day
        if after_on[p] == day and not abs(x - last_after[p]) <= 1e-9:
            return False
    return True


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
