"""Speed of the club rating's compiled path against the pure-Python reference and openskill.

`measure(games_table)` steps ClubRating over every month of a games table (GAME_COLUMNS, in
processing order, split into zero-copy month slices beforehand as the runner does) and reports
games/s and player-results/s (rows/s) of the best of `repeats` runs, taking turns with
openskill's (benchmarks.timing), after a warm-up on a small table so JIT compilation (or loading
the cache) is not counted. The reference
(pipeline.systems.club.reference, which recomputes every month from scratch, so its per-game rate falls
as the slice grows) runs on the first games only; openskill's PlackettLuce rates each game of a
slice once, ratings kept in a dict. Times are this process's CPU time, so other work on the
machine does not skew the comparison; every path runs on one thread.

Run directly, it generates 200,000 seven-player games with pipeline.synthetic.generator (by default 10,000
players over 20 years: the 240 months and the games per player of 1,000,000 games among 50,000
players) and prints the three rates and the ratio of the compiled path to openskill:

    .venv/bin/python benchmarks/kernel_club.py [--games 200000] [--players 10000] [--years 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import best_seconds, cpu_seconds  # noqa: E402
from pipeline.core.months import Month, month_range  # noqa: E402
from pipeline.synthetic import generator as generate  # noqa: E402
from pipeline.systems.base import GAME_COLUMNS, MonthInput  # noqa: E402
from pipeline.systems.club.reference import club_reference  # noqa: E402
from pipeline.systems.club.rules import ClubRating  # noqa: E402
from pipeline.systems.games import games_from_rows  # noqa: E402

REFERENCE_GAMES = 1_500
OPENSKILL_GAMES = 20_000
SEVEN_POWER_VARIANTS = tuple(v for v in generate.VARIANTS if len(v.powers) == 7)


def games_table(n_games: int, n_players: int, years: int, seed: int = 2024, end_year: int = 2024) -> pa.Table:
    """n_games synthetic 7-power games over `years` calendar years, as the runner hands them over."""
    gen = np.random.default_rng(seed)
    first_year = end_year - years + 1
    first_day, last_day = dt.date(first_year, 1, 1), dt.date(end_year, 12, 31)
    pool = generate.player_pool(gen, n_players, first_year, end_year)
    per_day = generate.game_days(gen, n_games, first_day, last_day)
    days = (first_day - dt.date(1970, 1, 1)).days + np.repeat(np.arange(len(per_day)), per_day)
    ids = pc.binary_join_element_wise(
        "g", pc.utf8_lpad(pc.cast(pa.array(np.arange(n_games)), pa.string()), width=8, padding="0"), ""
    )
    table = generate.games_table(gen, pool, days, ids, variants=SEVEN_POWER_VARIANTS)
    denied = pc.and_(table.column("replacement_denies"), pc.is_valid(table.column("original_player_id")))
    responsible = pc.if_else(denied, table.column("original_player_id"), table.column("player_id"))
    table = table.append_column("multi_site", pa.array(np.zeros(table.num_rows, np.bool_)))
    table = table.append_column("responsible_player_id", responsible)
    table = table.sort_by([("finished_on", "ascending"), ("game_id", "ascending"), ("power", "ascending")])
    return table.select(GAME_COLUMNS.names).cast(GAME_COLUMNS)


def by_month(table: pa.Table) -> list[tuple[Month, pa.Table]]:
    """Every month from the first game's to the last game's, with its rows (empty months too)."""
    days = table.column("finished_on").to_numpy()
    months = month_range(Month.of(days[0].astype(dt.date)), Month.of(days[-1].astype(dt.date)))
    bounds = np.searchsorted(
        days, [np.datetime64(m.first_day) for m in months] + [np.datetime64(months[-1].next().first_day)]
    )
    return [(m, table.slice(int(a), int(b - a))) for m, a, b in zip(months, bounds[:-1], bounds[1:])]


def run_kernel(months: list[tuple[Month, pa.Table]]) -> None:
    """Step a fresh ClubRating over the months."""
    system = ClubRating()
    state = system.initial_state()
    for month, rows in months:
        state = system.step(state, MonthInput(month, rows)).state


def game_count(table: pa.Table) -> int:
    return pc.count_distinct(table.column("game_id")).as_py()


def game_starts(table: pa.Table) -> list[int]:
    """Row offsets of each game (a game's rows are consecutive), and the row count at the end."""
    game_ids = table.column("game_id")
    changed = pc.not_equal(game_ids.slice(1), game_ids.slice(0, table.num_rows - 1)).to_numpy()
    return [0, *(np.flatnonzero(changed) + 1).tolist(), table.num_rows]


def first_games(table: pa.Table, n_games: int) -> pa.Table:
    """The rows of the first n_games games."""
    starts = game_starts(table)
    return table.slice(0, starts[min(n_games, len(starts) - 1)])


def rate_reference(table: pa.Table) -> float:
    """Seconds the from-scratch reference takes for every month of the table."""
    months = [m for m, _ in by_month(table)]
    games = games_from_rows(table)
    started = time.process_time()
    club_reference(games, months)
    return time.process_time() - started


def rate_openskill(table: pa.Table) -> float:
    """Seconds PlackettLuce takes to rate each game of the table once (ranks: solo and draw 1,
    survived 2, eliminated and anarchy 3)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    players = table.column("responsible_player_id").to_pylist()
    order = {"solo": 1, "draw": 1, "survived": 2}
    places = [order.get(result, 3) for result in table.column("result").to_pylist()]
    starts = game_starts(table)
    ratings: dict = {}
    started = time.process_time()
    for a, b in zip(starts[:-1], starts[1:]):
        seats = players[a:b]
        teams = [[ratings.get(p) or model.rating(name=p)] for p in seats]
        rated = model.rate(teams, ranks=places[a:b])
        for p, team in zip(seats, rated):
            ratings[p] = team[0]
    return time.process_time() - started


def measure(games_table: pa.Table, repeats: int = 3) -> dict:
    """games/s and player-results/s of the compiled path, the reference and openskill."""
    run_kernel(by_month(first_games(games_table, 2_000)))  # warm-up: JIT compile or load the cache
    months = by_month(games_table)
    games, rows = game_count(games_table), games_table.num_rows
    reference_table = first_games(games_table, REFERENCE_GAMES)
    reference_seconds = rate_reference(reference_table)
    openskill_table = first_games(games_table, OPENSKILL_GAMES)
    best = best_seconds(
        repeats,
        {"kernel": cpu_seconds(lambda: run_kernel(months)), "openskill": lambda: rate_openskill(openskill_table)},
    )
    kernel_seconds, openskill_seconds = best["kernel"], best["openskill"]

    def rates(table_games: int, table_rows: int, seconds: float) -> dict:
        return {
            "games": table_games,
            "seconds": seconds,
            "games_per_s": table_games / seconds,
            "player_results_per_s": table_rows / seconds,
        }

    result = {
        "months": len(months),
        "kernel": rates(games, rows, kernel_seconds),
        "reference": rates(game_count(reference_table), reference_table.num_rows, reference_seconds),
        "openskill": rates(game_count(openskill_table), openskill_table.num_rows, openskill_seconds),
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
    print(f"club: {args.games:,} games, {table.num_rows:,} rows, {args.players:,} players, {args.years} years")
    result = measure(table, repeats=args.repeats)
    for name in ("kernel", "reference", "openskill"):
        r = result[name]
        print(
            f"  {name:<10} {r['games_per_s']:>12,.0f} games/s {r['player_results_per_s']:>13,.0f} results/s"
            f"   ({r['games']:,} games in {r['seconds']:.3f} s)"
        )
    print(
        f"  kernel/openskill {result['kernel_over_openskill']:.1f}x   "
        f"kernel/reference {result['kernel_over_reference']:.0f}x"
    )


if __name__ == "__main__":
    main()
