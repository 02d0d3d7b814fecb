"""Speed of Ghost Rating's compiled path against the pure-Python reference and openskill.

`measure(games_table)` steps GhostRating over every month of a games table (GAME_COLUMNS, in
processing order, split into zero-copy month slices beforehand as the runner does) and reports
games/s and player-results/s (rows/s) of the best of `repeats` runs, taking turns with
openskill's (benchmarks.timing), after a warm-up on a small table so JIT compilation (or loading
the cache) is not counted. The reference (pipeline.systems.ghost.reference, game by game in
plain Python, each month's four lists made from its standings) runs on the first games only;
openskill's PlackettLuce rates each game of a slice once, ratings kept in a dict. Rates count the
games Ghost Rating rates (standard map, scoring not `unranked`) and their rows, on every path;
a counted game moves the ratings of each category it belongs to (overall and up to one more).
Times are this process's CPU time, so other work on the machine does not skew the comparison;
every path runs on one thread.

The games are benchmarks.kernel_club's, with the game modes the generator draws for them
(pipeline.synthetic.generator.game_kinds: four scoring systems, four kinds of press, some games
live). Run directly, it generates 200,000 seven-player games (by default 10,000 players over 20
years: the 240 months and the games per player of 1,000,000 games among 50,000 players) and
prints the three rates and the ratio of the compiled path to openskill:

    .venv/bin/python benchmarks/kernel_ghost.py [--games 200000] [--players 10000] [--years 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.kernel_club import (  # noqa: E402
    by_month,
    first_games,
    game_count,
    game_starts,
    games_table,
    rate_openskill,
)
from benchmarks.timing import best_seconds, cpu_seconds  # noqa: E402
from pipeline.core.months import Month  # noqa: E402
from pipeline.systems.base import MonthInput  # noqa: E402
from pipeline.systems.ghost import reference  # noqa: E402
from pipeline.systems.ghost.rules import GhostRating, counted_games  # noqa: E402

REFERENCE_GAMES = 3_000
OPENSKILL_GAMES = 20_000
WARM_UP_GAMES = 2_000
GAME_MODES = ("scoring", "press", "live")


def run_kernel(months: list[tuple[Month, pa.Table]]) -> None:
    """Step a fresh GhostRating over the months."""
    system = GhostRating()
    state = system.initial_state()
    for month, rows in months:
        state = system.step(state, MonthInput(month, rows)).state


def rate_reference(table: pa.Table) -> float:
    """Seconds the reference takes to rate the table's counted games month by month, making
    each month's lists at its end."""
    months = by_month(table)
    games = [reference.counted_games(rows.to_pylist()) for _, rows in months]
    state = reference.ReferenceGhost()
    started = time.process_time()
    for (month, _), month_games in zip(months, games):
        for game in month_games:
            reference.rate(state, game)
        reference.table(state, month)
    return time.process_time() - started


def mode_shares(table: pa.Table) -> dict[str, dict]:
    """Each game mode's values and their shares of the table's games."""
    heads = table.take(pa.array(game_starts(table)[:-1]))
    return {
        column: {
            entry["values"]: entry["counts"] / heads.num_rows
            for entry in sorted(pc.value_counts(heads.column(column)).to_pylist(), key=lambda e: -e["counts"])
        }
        for column in GAME_MODES
    }


def measure(games_table: pa.Table, repeats: int = 3) -> dict[str, Any]:
    """games/s and player-results/s of the compiled path, the reference and openskill, on the
    counted games of the table (all of it stepped through) and of its first games."""
    missing = [c for c in GAME_MODES if c not in games_table.column_names]
    if missing:
        raise ValueError(f"the games table has no {', '.join(missing)} column")
    run_kernel(by_month(first_games(games_table, WARM_UP_GAMES)))  # warm-up: JIT compile or load the cache
    months = by_month(games_table)
    counted = counted_games(games_table)
    reference_table = first_games(games_table, REFERENCE_GAMES)
    reference_seconds = rate_reference(reference_table)
    reference_counted = counted_games(reference_table)
    openskill_table = counted_games(first_games(games_table, OPENSKILL_GAMES))
    best = best_seconds(
        repeats,
        {"kernel": cpu_seconds(lambda: run_kernel(months)), "openskill": lambda: rate_openskill(openskill_table)},
    )
    kernel_seconds, openskill_seconds = best["kernel"], best["openskill"]

    def rates(table: pa.Table, seconds: float) -> dict:
        games = game_count(table)
        return {
            "games": games,
            "seconds": seconds,
            "games_per_s": games / seconds,
            "player_results_per_s": table.num_rows / seconds,
        }

    result: dict[str, Any] = {
        "months": len(months),
        "modes": mode_shares(games_table),
        "kernel": rates(counted, kernel_seconds),
        "reference": rates(reference_counted, reference_seconds),
        "openskill": rates(openskill_table, openskill_seconds),
    }
    result["kernel_over_openskill"] = result["kernel"]["games_per_s"] / result["openskill"]["games_per_s"]
    result["kernel_over_reference"] = result["kernel"]["games_per_s"] / result["reference"]["games_per_s"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--years", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    table = games_table(args.games, args.players, args.years)
    print(f"ghost: {args.games:,} games, {table.num_rows:,} rows, {args.players:,} players, {args.years} years")
    result = measure(table, repeats=args.repeats)
    for column, shares in result["modes"].items():
        print(f"  {column:<10} " + ", ".join(f"{value} {share:.0%}" for value, share in shares.items()))
    for name in ("kernel", "reference", "openskill"):
        r = result[name]
        print(
            f"  {name:<10} {r['games_per_s']:>12,.0f} games/s {r['player_results_per_s']:>13,.0f} results/s"
            f"   ({r['games']:,} counted games in {r['seconds']:.3f} s)"
        )
    print(
        f"  kernel/openskill {result['kernel_over_openskill']:.1f}x   "
        f"kernel/reference {result['kernel_over_reference']:.0f}x"
    )


if __name__ == "__main__":
    main()
