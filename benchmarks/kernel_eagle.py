"""Throughput of the Eagle points system: the compiled path against the pure-Python reference and
openskill's PlackettLuce model on the same seven-player games.

`measure(games_table)` steps EaglePoints over every month of a pre-built games table (columns of
pipeline.systems.base.GAME_COLUMNS, in processing order) in both position modes, after one
warm-up run on a small table so that compilation is not counted. The reference runs on a slice of
the games (it is quadratic, so its per-game rate on a slice flatters it), openskill rates each
seven-player game once with ratings kept in a dict (on a slice when the table is large). The
two position modes and openskill take turns, best of `repeats` rounds (benchmarks.timing); times
are CPU seconds of this process.

Run directly: `.venv/bin/python benchmarks/kernel_eagle.py [--games N --players N --years N]`
generates seven-power games as `make bench` does (benchmarks.kernel_club.games_table) and prints the
rates and the ratio of the kernel to openskill. The defaults (200,000 games among 10,000 players
over 4 years) have as many games a month as the full-size case, 1,000,000 games among 50,000
players over 20 years (`--games 1000000 --players 50000 --years 20`). Rates count the games the
system rates (the configured variants); all of the table's games are stepped through.
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

from benchmarks.kernel_club import games_table  # noqa: E402
from benchmarks.timing import Timing, best_seconds, cpu_seconds  # noqa: E402
from pipeline.core.months import Month, month_range  # noqa: E402
from pipeline.systems.base import MonthInput  # noqa: E402
from pipeline.systems.eagle.reference import eagle_reference  # noqa: E402
from pipeline.systems.eagle.rules import EaglePoints  # noqa: E402
from pipeline.systems.games import games_from_rows  # noqa: E402

REFERENCE_GAMES = 1_000
OPENSKILL_GAMES = 20_000
WARM_UP_GAMES = 2_000
EPOCH = dt.date(1970, 1, 1)
# Finish order for openskill: solo and draws first, then survivors by centres, then the rest.
RESULT_ORDER = {"solo": 0, "draw": 0, "survived": 1, "eliminated": 2, "anarchy": 2}


def month_inputs(games: pa.Table) -> list[MonthInput]:
    """One MonthInput per month from the first game's month to the last's (zero-copy slices)."""
    if games.num_rows == 0:
        return []
    days = pc.cast(games.column("finished_on"), pa.int32()).to_numpy()
    first = Month.of(EPOCH + dt.timedelta(days=int(days[0])))
    last = Month.of(EPOCH + dt.timedelta(days=int(days[-1])))
    inputs = []
    for month in month_range(first, last):
        lo = np.searchsorted(days, (month.first_day - EPOCH).days, side="left")
        hi = np.searchsorted(days, (month.last_day - EPOCH).days, side="right")
        inputs.append(MonthInput(month, games.slice(lo, hi - lo)))
    return inputs


def first_games(games: pa.Table, count: int) -> pa.Table:
    """The rows of the first `count` games."""
    ids = games.column("game_id").combine_chunks()
    if len(ids) == 0:
        return games
    starts = np.flatnonzero(
        np.concatenate(([True], pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1)).to_numpy(zero_copy_only=False)))
    )
    if count >= len(starts):
        return games
    return games.slice(0, int(starts[count]))


def counted_games(games: pa.Table, variants: tuple[str, ...] = ("standard",)) -> tuple[int, int]:
    """(games, player results) the system rates: rows of the counted variants."""
    rows = games.filter(pc.is_in(games.column("variant"), value_set=pa.array(variants)))
    return pc.count_distinct(rows.column("game_id")).as_py(), rows.num_rows


def run_system(system: EaglePoints, inputs: list[MonthInput]) -> None:
    state = system.initial_state()
    for month_input in inputs:
        state = system.step(state, month_input).state


def time_reference(games: pa.Table, positions: str, repeats: int) -> tuple[float, int, int]:
    """Best seconds of the reference over a slice, and the slice's counted games and rows."""
    part = first_games(games, REFERENCE_GAMES)
    listed = games_from_rows(part)
    months = [m.month for m in month_inputs(part)]
    best = best_seconds(
        repeats, {"reference": cpu_seconds(lambda: eagle_reference(listed, months, positions=positions))}
    )
    return best["reference"], *counted_games(part)


def openskill_timing(games: pa.Table) -> tuple[Timing, int, int]:
    """A timing of PlackettLuce rating the table's seven-player games once each (on a slice),
    from fresh ratings, and the games and rows it rates."""
    from openskill.models import PlackettLuce

    part = first_games(games, OPENSKILL_GAMES)
    cols = part.select(["game_id", "responsible_player_id", "result", "centres"]).to_pydict()
    listed: list[tuple[list[str], list[int]]] = []
    start = 0
    ids = cols["game_id"]
    for end in range(1, len(ids) + 1):
        if end == len(ids) or ids[end] != ids[start]:
            if end - start == 7:
                players = cols["responsible_player_id"][start:end]
                order = [(RESULT_ORDER[r], -c) for r, c in zip(cols["result"][start:end], cols["centres"][start:end])]
                ranks = [sorted(order).index(o) + 1 for o in order]
                listed.append((players, ranks))
            start = end
    model = PlackettLuce()

    def timing() -> float:
        ratings: dict[str, object] = {}
        started = time.process_time()
        for players, ranks in listed:
            teams = [[ratings[p] if p in ratings else model.rating(name=p)] for p in players]
            rated = model.rate(teams, ranks=ranks)
            for p, team in zip(players, rated):
                ratings[p] = team[0]
        return time.process_time() - started

    return timing, len(listed), 7 * len(listed)


def rates(seconds: float, games: int, rows: int) -> dict:
    return {
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds if seconds else float("inf"),
        "player_results_per_s": rows / seconds if seconds else float("inf"),
    }


def measure(games_table: pa.Table, repeats: int = 3) -> dict:
    """Games/s and player-results/s of the compiled path (both position modes), the reference
    (extrapolated per game from a slice) and openskill PlackettLuce, plus kernel/openskill ratios."""
    inputs = month_inputs(games_table)
    run_system(EaglePoints(positions="published"), month_inputs(first_games(games_table, WARM_UP_GAMES)))
    run_system(EaglePoints(positions="live"), month_inputs(first_games(games_table, WARM_UP_GAMES)))
    n_games, n_rows = counted_games(games_table)
    openskill, openskill_games, openskill_rows = openskill_timing(games_table)
    best = best_seconds(
        repeats,
        {
            "kernel": cpu_seconds(lambda: run_system(EaglePoints(positions="published"), inputs)),
            "kernel_live": cpu_seconds(lambda: run_system(EaglePoints(positions="live"), inputs)),
            "openskill": openskill,
        },
    )
    out = {
        "kernel": rates(best["kernel"], n_games, n_rows),
        "kernel_live": rates(best["kernel_live"], n_games, n_rows),
        "reference": rates(*time_reference(games_table, "published", repeats)),
        "openskill": rates(best["openskill"], openskill_games, openskill_rows),
    }
    for mode in ("kernel", "kernel_live"):
        out[f"{mode}_vs_openskill"] = out[mode]["games_per_s"] / out["openskill"]["games_per_s"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000, help="games to generate")
    parser.add_argument("--players", type=int, default=10_000, help="players in the generated pool")
    parser.add_argument("--years", type=int, default=4, help="years the games span (ending 2024)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each; the best counts")
    args = parser.parse_args()
    games = games_table(args.games, args.players, args.years)
    n_games = pc.count_distinct(games.column("game_id")).as_py()
    print(f"{n_games:,} games, {games.num_rows:,} rows, {args.players:,} players, {args.years} years")
    result = measure(games, repeats=args.repeats)
    for name in ("kernel", "kernel_live", "reference", "openskill"):
        r = result[name]
        print(
            f"{name:12s} {r['games_per_s']:>14,.0f} games/s {r['player_results_per_s']:>14,.0f} player results/s"
            f"   ({r['games']:,} games in {r['seconds']:.3f} s)"
        )
    print(
        f"kernel / openskill: {result['kernel_vs_openskill']:.1f}x (published positions), "
        f"{result['kernel_live_vs_openskill']:.1f}x (live positions)"
    )


if __name__ == "__main__":
    main()
