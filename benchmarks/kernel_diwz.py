"""Speed of the DiWZ kernel path against the pure-Python reference and openskill's PlackettLuce.

`measure(games_table)` steps DiWZ over every month of a pre-built games table (GAME_COLUMNS,
in processing order) after a warm-up on a small table (so JIT compilation is not timed): the
whole step, from the month's Arrow table to its list and history tables. It runs the reference
(pipeline.systems.diwz.reference) on the first months up to a few thousand games and extrapolates per
game, and rates the same 7-power games once each with openskill's PlackettLuce (ratings kept in
a dict), on a slice when the table is large; the kernel and openskill take turns, best of
`repeats` rounds (benchmarks.timing). Rates count rated games (the ones DiWZ rates) and
their player results; times are CPU seconds of this process (time.process_time), which other
load on the machine disturbs less than wall time.

Run directly, it generates 200,000 games with pipeline.synthetic.generator.write_feeds (by default 10,000
players over 20 years: the 240 months and the games per player of 1,000,000 games among 50,000
players) and prints the three rates and the kernel/openskill ratio:

    .venv/bin/python benchmarks/kernel_diwz.py [--games 200000] [--players 10000] [--years 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import best_seconds  # noqa: E402
from pipeline.core.months import Month  # noqa: E402
from pipeline.synthetic.generator import write_feeds  # noqa: E402
from pipeline.systems.base import GAME_COLUMNS, MonthInput  # noqa: E402
from pipeline.systems.diwz.finish import DRAW, ELIMINATED, OUTSIDE_RESULT, SOLO  # noqa: E402
from pipeline.systems.diwz.reference import reference_diwz  # noqa: E402
from pipeline.systems.diwz.rules import DiWZ  # noqa: E402

EPOCH = dt.date(1970, 1, 1)
REFERENCE_GAMES = 3_000
OPENSKILL_GAMES = 20_000


def games_table_from_feed(folder: str | Path) -> pa.Table:
    """The games feed files of a folder as the table a game system is handed (GAME_COLUMNS,
    responsible player added, sorted by finished_on, game_id, power)."""
    table = pa.concat_tables(pq.read_table(path) for path in sorted(Path(folder).glob("*.parquet")))
    if "multi_site" not in table.column_names:  # generated feeds leave the optional column out
        table = table.append_column("multi_site", pa.array([False] * table.num_rows, pa.bool_()))
    denies = pc.and_(pc.fill_null(table["replacement_denies"], False), pc.is_valid(table["original_player_id"]))
    table = table.append_column(
        "responsible_player_id", pc.if_else(denies, table["original_player_id"], table["player_id"])
    )
    return table.sort_by([("finished_on", "ascending"), ("game_id", "ascending"), ("power", "ascending")]).cast(
        GAME_COLUMNS
    )


def month_slices(table: pa.Table) -> list[tuple[Month, pa.Table]]:
    """Every month from the first game's to the last one's with its rows (empty months too)."""
    days = table["finished_on"].combine_chunks().view(pa.int32()).to_numpy(zero_copy_only=False)
    if len(days) == 0:
        return []
    first, last = (Month.of(EPOCH + dt.timedelta(days=int(d))) for d in (days[0], days[-1]))
    months = []
    month = first
    while month <= last:
        months.append(month)
        month = month.next()
    bounds = np.searchsorted(
        days, [(m.first_day - EPOCH).days for m in months] + [(last.next().first_day - EPOCH).days]
    )
    return [(m, table.slice(int(a), int(b - a))) for m, a, b in zip(months, bounds[:-1], bounds[1:])]


def run_kernel(table: pa.Table, system: DiWZ | None = None) -> tuple[float, int]:
    """Seconds to step DiWZ over every month of the table, and the history rows it wrote."""
    system = system or DiWZ()
    slices = month_slices(table)
    state = system.initial_state()
    rows = 0
    started = time.process_time()
    for month, results in slices:
        out = system.step(state, MonthInput(month, results))
        state = out.state
        rows += out.history.num_rows
    return time.process_time() - started, rows


def rated_games(table: pa.Table) -> tuple[int, int]:
    """Rated games and their rows."""
    rated = table.filter(pc.fill_null(table["rated"], False))
    return pc.count_distinct(rated["game_id"]).as_py(), rated.num_rows


def head_months(table: pa.Table, games: int) -> pa.Table:
    """The table's first whole months holding at least `games` games (or all of it)."""
    taken = None
    count = 0
    for _month, results in month_slices(table):
        taken = results if taken is None else pa.concat_tables([taken, results])
        count += pc.count_distinct(results["game_id"]).as_py() if results.num_rows else 0
        if count >= games:
            break
    return taken if taken is not None else table.slice(0, 0)


def openskill_games(table: pa.Table, limit: int) -> list[tuple[list[str], list[int]]]:
    """The first `limit` rated 7-power games as (responsible players, ranks by finish order)."""
    rated = table.filter(pc.fill_null(table["rated"], False))
    ids = rated["game_id"].combine_chunks()
    n = rated.num_rows
    changed = pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.append(np.flatnonzero(np.concatenate(([True], changed))), n)
    named = pc.index_in(rated["result"], value_set=pa.array(["eliminated", "draw", "solo"]))
    category = np.array([ELIMINATED, DRAW, SOLO, OUTSIDE_RESULT])[pc.fill_null(named, 3).to_numpy()]
    centres = rated["centres"].to_numpy()
    year = pc.fill_null(rated["eliminated_year"], 0).to_numpy()
    # A finish score that orders like the DiWZ finish key (solo, draw, centres, elimination year).
    finish = category * 100_000 + np.where(category == 0, year, centres)
    players = rated["responsible_player_id"].to_pylist()
    games = []
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi - lo != 7:
            continue
        own = finish[lo:hi]
        games.append((players[lo:hi], [int(np.sum(own > f)) + 1 for f in own]))
        if len(games) >= limit:
            break
    return games


def run_openskill(games: list[tuple[list[str], list[int]]]) -> float:
    """Seconds to rate each game once with PlackettLuce, ratings kept in a dict."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, object] = {}
    started = time.process_time()
    for players, ranks in games:
        teams = [[ratings[p] if p in ratings else model.rating(name=p)] for p in players]
        rated = model.rate(teams, ranks=ranks)
        for p, (rating,) in zip(players, rated):
            ratings[p] = rating
    return time.process_time() - started


def measure(games_table: pa.Table, repeats: int = 3) -> dict:
    """games/s and player-results/s of the DiWZ kernel path, the reference and openskill."""
    run_kernel(head_months(games_table, 500))  # compile (or load the cache)
    games, rows = rated_games(games_table)
    sample = openskill_games(games_table, OPENSKILL_GAMES)
    best = best_seconds(
        repeats, {"kernel": lambda: run_kernel(games_table)[0], "openskill": lambda: run_openskill(sample)}
    )
    kernel_seconds, openskill_seconds = best["kernel"], best["openskill"]

    head = head_months(games_table, REFERENCE_GAMES)
    head_games, head_rows = rated_games(head)
    row_dicts = head.to_pylist()
    months = [month for month, _ in month_slices(head)]
    started = time.process_time()
    reference_diwz(row_dicts, months)
    reference_seconds = time.process_time() - started

    result = {
        "games": games,
        "player_results": rows,
        "kernel_seconds": kernel_seconds,
        "kernel_games_per_s": games / kernel_seconds,
        "kernel_results_per_s": rows / kernel_seconds,
        "reference_games": head_games,
        "reference_games_per_s": head_games / reference_seconds,
        "reference_results_per_s": head_rows / reference_seconds,
        "openskill_games": len(sample),
        "openskill_games_per_s": len(sample) / openskill_seconds,
        "openskill_results_per_s": 7 * len(sample) / openskill_seconds,
    }
    result["kernel_over_openskill"] = result["kernel_games_per_s"] / result["openskill_games_per_s"]
    result["kernel_over_reference"] = result["kernel_games_per_s"] / result["reference_games_per_s"]
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--years", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        write_feeds(folder, games=args.games, players=args.players, years=args.years, events=0, seed=7)
        table = games_table_from_feed(Path(folder) / "games")
        print(
            f"generated {args.games:,} games ({table.num_rows:,} rows, {args.players:,} players, "
            f"{args.years} years) in {time.perf_counter() - started:.1f} s"
        )
    r = measure(table, repeats=args.repeats)
    print(
        f"kernel     {r['kernel_games_per_s']:>12,.0f} games/s {r['kernel_results_per_s']:>14,.0f} player-results/s "
        f"({r['games']:,} rated games in {r['kernel_seconds']:.2f} s)"
    )
    print(
        f"reference  {r['reference_games_per_s']:>12,.0f} games/s {r['reference_results_per_s']:>14,.0f} player-results/s "
        f"(first {r['reference_games']:,} games, extrapolated per game)"
    )
    print(
        f"openskill  {r['openskill_games_per_s']:>12,.0f} games/s {r['openskill_results_per_s']:>14,.0f} player-results/s "
        f"(PlackettLuce, {r['openskill_games']:,} 7-player games)"
    )
    print(f"kernel/openskill {r['kernel_over_openskill']:.0f}x, kernel/reference {r['kernel_over_reference']:.0f}x")


if __name__ == "__main__":
    main()
