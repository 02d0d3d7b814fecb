"""diprank benchmarks: rating kernels, end-to-end backfills, incremental months, the largest sites.

    .venv/bin/python benchmarks/run.py            # the full suite (tens of minutes), writes RESULTS.md
    .venv/bin/python benchmarks/run.py --quick    # small sizes, to check the harness itself
    .venv/bin/python benchmarks/run.py --skip-property --skip-largest   # leave out the longest parts

Every figure is measured in this run on this machine; nothing is copied from elsewhere.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import importlib
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from benchmarks.timing import best_seconds, cpu_seconds  # noqa: E402
from pipeline.synthetic.generator import write_feeds  # noqa: E402
from pipeline.warehouse.store import connect  # noqa: E402

if TYPE_CHECKING:
    import pyarrow as pa

WORK = ROOT / "benchmarks" / "scratch"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
DIPRANK = ROOT / ".venv" / "bin" / "diprank"


@dataclass
class Size:
    games: int
    players: int
    years: int
    events: int


FULL = {
    "kernel_games": 200_000,
    "e2e": Size(1_000_000, 50_000, 20, 20_000),
    "small_history": Size(100_000, 20_000, 20, 2_000),
    "largest": Size(10_000_000, 300_000, 20, 50_000),
}
QUICK = {
    "kernel_games": 5_000,
    "e2e": Size(20_000, 2_000, 4, 200),
    "small_history": Size(5_000, 1_000, 4, 50),
    "largest": Size(40_000, 4_000, 4, 300),
}
# Few games over many months: what a range run costs Dagster beyond the asset's own compute.
BOOKKEEPING = Size(3_000, 300, 20, 100)


def machine_details() -> list[tuple[str, str]]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    versions = []
    for package in ("dagster", "duckdb", "pandera", "pyarrow", "numba", "numpy", "openskill"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return [
        ("date", dt.datetime.now().strftime("%Y-%m-%d %H:%M")),
        ("cpu", cpu),
        ("cores", str(os.cpu_count())),
        ("memory", memory),
        ("system", platform.platform()),
        ("python", platform.python_version()),
        ("packages", ", ".join(versions)),
    ]


@dataclass
class RunStats:
    wall: float
    peak_mib: float
    output: str
    returncode: int


def group_resident_bytes(group: int) -> int:
    """Resident memory of every process in a process group, summed (from /proc)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != group:  # the process group id
                continue
            with open(f"/proc/{entry.name}/statm") as statm:
                total += int(statm.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue  # the process ended meanwhile
    return total


def run_measured(command: list[str], env: dict | None = None) -> RunStats:
    """Run a command; wall time and the peak resident memory of it and all its processes together.

    The command's processes (rating systems run side by side) are sampled as one process group every
    0.2 s; wait4's figure (the largest single process) is the floor.
    """
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    peak = 0
    finished = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not finished.wait(0.2):
            peak = max(peak, group_resident_bytes(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    finished.set()
    sampler.join()
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return RunStats(wall, max(peak / 2**20, usage.ru_maxrss / 1024), output, process.returncode)


def diprank_run(raw: Path, warehouse: Path, *extra: str, env: dict | None = None) -> RunStats:
    command = [
        str(DIPRANK) if DIPRANK.exists() else sys.executable,
        *([] if DIPRANK.exists() else ["-m", "pipeline.cli"]),
        "run",
        "--raw",
        str(raw),
        "--warehouse",
        str(warehouse),
        *extra,
    ]
    stats = run_measured(command, env={"DAGSTER_HOME": str(warehouse / ".dagster"), **(env or {})})
    if stats.returncode != 0:
        raise RuntimeError(f"diprank run failed ({stats.returncode}):\n{stats.output[-3000:]}")
    return stats


def system_times(output: str) -> dict[str, tuple[float, float | None]]:
    """Per system: (wall seconds of its Dagster run, the asset's own compute seconds) from the summary."""
    times = {}
    for match in re.finditer(
        r"^\s+(\w+)\s+\d{4}-\d{2} … \d{4}-\d{2}\s+\d+ months\s+([\d.]+) s(?: \(compute ([\d.]+) s\))?", output, re.M
    ):
        times[match.group(1)] = (float(match.group(2)), float(match.group(3)) if match.group(3) else None)
    return times


def ingest_seconds(output: str) -> float:
    """Seconds of the ingest and validation run, from the run's progress lines."""
    match = re.search(r"ingest and validation took ([\d.]+) s", output)
    return float(match.group(1)) if match else float("nan")


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def generate(size: Size, name: str, seed: int) -> tuple[Path, float]:
    raw = fresh(WORK / f"raw_{name}")
    started = time.perf_counter()
    write_feeds(raw, games=size.games, players=size.players, years=size.years, events=size.events, seed=seed)
    return raw, time.perf_counter() - started


def output_rows(warehouse: Path) -> int:
    con = connect()
    total = 0
    for kind in ("rankings", "history", "awards"):
        files = [str(p) for p in (warehouse / kind).rglob("*.parquet")]
        if files:
            total += con.sql(
                "SELECT sum(num_rows) FROM (SELECT DISTINCT file_name, row_group_id, row_group_num_rows AS num_rows "
                "FROM parquet_metadata($files))",
                params={"files": files},
            ).fetchall()[0][0]
    return int(total)


def floor_seconds(raw: Path, rows: int) -> float:
    """The same work's floor: DuckDB reads every raw file once and writes `rows` Parquet rows once."""
    target = fresh(WORK / "floor")
    con = connect()
    started = time.perf_counter()
    for feed in ("games", "events", "event_results", "players"):
        files = sorted(str(p) for p in (raw / feed).glob("*.parquet"))
        if files:
            con.read_parquet(files).create_view(f"raw_{feed}")
            con.sql(f"SELECT count(*), max(COLUMNS(*)) FROM raw_{feed}").fetchall()
    # Rows shaped like a snapshot row: a dozen typed columns.
    con.sql(
        "COPY (SELECT 'system' AS system, DATE '2020-01-31' AS as_of, i AS rank, 'p' || (i % 50000) AS player_id, "
        "'Player ' || (i % 50000) AS player_name, random() * 100 AS rating, (i % 7) - 3 AS rank_change, "
        "random() AS rating_change, random() * 100 AS peak_rating, i % 11 AS games, random() AS extra "
        f"FROM range({rows}) t(i)) TO $path (FORMAT parquet, COMPRESSION zstd)",
        params={"path": str(target / "rows.parquet")},
    )
    return time.perf_counter() - started


def _rates(result: dict, key: str) -> tuple[float, float]:
    """(games/s, player-results/s) of one measured path, whichever shape the module reports."""
    if key in result and isinstance(result[key], dict):
        return result[key]["games_per_s"], result[key]["player_results_per_s"]
    return result[f"{key}_games_per_s"], result[f"{key}_results_per_s"]


# The kernels' games spread over 10 years (the sparser history every earlier run measured) and over
# 4, which gives 200,000 games the games a month of section 2's 1,000,000 over 20 years. A month
# costs its Arrow and numpy calls whatever its size, so the sparser spread weighs them more.
KERNEL_YEARS = (10, 4)


def kernel_rows(n_games: int) -> list[list[str]]:
    """Each game system's kernel next to its pure-Python reference and openskill PlackettLuce, at
    each spread of KERNEL_YEARS; then Dip Pouch's rows."""
    rows = []
    base = importlib.import_module("benchmarks.kernel_club")
    for years in KERNEL_YEARS:
        table = base.games_table(n_games, max(1000, n_games // 20), years)
        per_month = f"{n_games / (12 * years):,.0f}"
        for system, paths in (
            ("club", [("kernel", "club")]),
            ("eagle", [("kernel", "eagle (published)"), ("kernel_live", "eagle (live)")]),
            ("diwz", [("kernel", "diwz")]),
            ("ghost", [("kernel", "ghost")]),
        ):
            result = importlib.import_module(f"benchmarks.kernel_{system}").measure(table)
            reference, openskill = _rates(result, "reference"), _rates(result, "openskill")
            for key, label in paths:
                games, results = _rates(result, key)
                rows.append(
                    [
                        label,
                        per_month,
                        f"{results:,.0f}",
                        f"{reference[1]:,.0f}",
                        f"{openskill[1]:,.0f}",
                        f"{games / openskill[0]:,.1f}×",
                        f"{games / reference[0]:,.0f}×",
                    ]
                )
    rows.extend(dip_pouch_row(max(200, n_games // 50)))
    return rows


def dip_pouch_row(n_events: int) -> list[str]:
    """Dip Pouch over generated events, next to openskill on the same fields: the system stepped month
    by month against the plain reference that makes the same monthly tables, and the compiled rule
    applied to every event at once against the plain reference of the final ratings."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from openskill.models import PlackettLuce

    from pipeline.core.months import Month, month_range
    from pipeline.systems.base import EVENT_RESULT_COLUMNS, MonthInput
    from pipeline.systems.dip_pouch.reference import dip_pouch_ratings, dip_pouch_tables
    from pipeline.systems.dip_pouch.rules import DipPouch

    folder = fresh(WORK / "dip_pouch_events")
    write_feeds(folder, games=10, players=max(500, n_events * 5), years=20, events=n_events, seed=4)
    events = {e["event_id"]: e for e in pq.read_table(next((folder / "events").glob("*.parquet"))).to_pylist()}
    results = pq.read_table(next((folder / "event_results").glob("*.parquet"))).to_pylist()
    rows = sorted(
        (
            {
                "event_id": r["event_id"],
                "event_name": events[r["event_id"]]["name"],
                **{
                    k: events[r["event_id"]][k]
                    for k in ("start_date", "end_date", "rounds", "num_players", "is_world_championship")
                },
                "player_id": r["player_id"],
                "player_name": r["player_name"],
                "nationality": r["nationality"],
                "placement": r["placement"],
            }
            for r in results
        ),
        key=lambda r: (r["end_date"], r["start_date"], r["event_id"], r["placement"], r["player_id"]),
    )
    table = pa.Table.from_pylist(rows, schema=EVENT_RESULT_COLUMNS)
    months = month_range(Month.of(rows[0]["end_date"]), Month.of(rows[-1]["end_date"]))
    slices, start = [], 0
    for month in months:
        stop = start
        while stop < len(rows) and Month.of(rows[stop]["end_date"]) == month:
            stop += 1
        slices.append(MonthInput(month, table.slice(start, stop - start)))
        start = stop
    system = DipPouch()

    def monthly_step(keep: bool = False) -> list:
        state, tables = system.initial_state(), []
        for month_input in slices:
            output = system.step(state, month_input)
            state = output.state
            if keep:
                tables.append(output.table.to_pylist())
        return tables

    # Also the warm-up: the compiled kernels are loaded before any path is timed.
    assert monthly_step(keep=True) == [table for _, table in dip_pouch_tables(rows, months)], (
        "the monthly step and its reference disagree"
    )
    for e in events.values():
        e["results"] = []
    for r in results:
        events[r["event_id"]]["results"].append(r)
    ratings = final_ratings(table)
    assert dict(
        zip(ratings.column("player_id").to_pylist(), ratings.column("rating").to_pylist())
    ) == dip_pouch_ratings(list(events.values())), "the compiled rule and its reference disagree"
    model = PlackettLuce()
    sample = list(events.values())[: max(1, len(events) // 10)]
    sample_rows = sum(len(e["results"]) for e in sample)

    def openskill_run() -> float:
        ratings: dict = {}
        started = time.process_time()
        for e in sample:
            players = [r["player_id"] for r in e["results"]]
            teams = [[ratings.get(p) or model.rating(name=p)] for p in players]
            for p, team in zip(players, model.rate(teams, ranks=[r["placement"] for r in e["results"]])):
                ratings[p] = team[0]
        return time.process_time() - started

    best = best_seconds(
        3,
        {
            "monthly step": cpu_seconds(monthly_step),
            "monthly reference": cpu_seconds(lambda: collections.deque(dip_pouch_tables(rows, months), maxlen=0)),
            "ratings only": cpu_seconds(lambda: final_ratings(table)),
            "ratings reference": cpu_seconds(lambda: dip_pouch_ratings(list(events.values()))),
            "openskill": openskill_run,
        },
    )
    rate = {path: len(rows) / seconds for path, seconds in best.items() if path != "openskill"}
    openskill = sample_rows / best["openskill"]
    per_month = f"{len(events) / len(months):,.1f} events"
    return [
        [
            label,
            per_month,
            f"{rate[path]:,.0f}",
            f"{rate[reference]:,.0f}",
            f"{openskill:,.0f}",
            f"{rate[path] / openskill:,.1f}×",
            f"{rate[path] / rate[reference]:,.1f}×",
        ]
        for label, path, reference in (
            ("dip_pouch (events, monthly tables)", "monthly step", "monthly reference"),
            ("dip_pouch (events, final ratings only)", "ratings only", "ratings reference"),
        )
    ]


def final_ratings(table) -> pa.Table:
    """The reference's work with the compiled rule: every event of the table applied in one call of
    the kernel, the final rating of each listed player (player_id, rating, in order of first
    appearance, as Arrow columns like the system's tables); no monthly table, no history rows.
    The ids are numbered in the compiled hash table the writer and the checks use
    (pipeline.systems.kernels.numbering), sized for the rows at the start so that it is never rebuilt."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from pipeline.systems.dip_pouch import kernel
    from pipeline.systems.dip_pouch.rules import DEFAULT_CUTOFF_YEAR, START_RATING, run_starts
    from pipeline.systems.kernels.numbering import PlayerNumbers

    numbers = PlayerNumbers(expected=table.num_rows)
    players = numbers.numbers(table.column("player_id").combine_chunks())
    pct = kernel.percentiles(table.column("num_players").to_numpy(), table.column("placement").to_numpy())
    end_days = table.column("end_date").cast(pa.int32()).to_numpy().astype(np.int32)
    event_start = run_starts(table.column("event_id"))
    heads = event_start[:-1]
    value = kernel.tournament_values(
        table.column("num_players").to_numpy()[heads],
        table.column("rounds").to_numpy()[heads],
        pc.fill_null(table.column("is_world_championship"), False).to_numpy()[heads],
        kernel.end_years(end_days[heads]),
        DEFAULT_CUTOFF_YEAR,
    )
    count = numbers.count
    rating, events = np.full(count, START_RATING), np.zeros(count, np.int64)
    m = table.num_rows
    kernel.apply_events(
        event_start,
        value,
        players,
        pct,
        end_days,
        rating,
        events,
        np.zeros(count, np.int32),
        np.zeros(m),
        np.zeros(m),
        np.empty(m, np.int64),
    )
    listed = np.flatnonzero(events > 0)
    return pa.table({"player_id": numbers.ids().take(pa.array(listed)), "rating": pa.array(rating[listed])})


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def next_month_delivery(raw: Path) -> str:
    """Deliver one more month: the last month's games again, one month later, as new games."""
    con = connect()
    files = sorted(str(p) for p in (raw / "games").glob("*.parquet"))
    con.read_parquet(files).create_view("games")
    last = con.sql("SELECT max(finished_on) FROM games").fetchall()[0][0]
    first_of_last = last.replace(day=1)
    con.sql(
        "COPY (SELECT * REPLACE (game_id || '-next' AS game_id, "
        "CAST(finished_on + INTERVAL 1 MONTH AS DATE) AS finished_on) FROM games "
        "WHERE finished_on >= $first AND finished_on + INTERVAL 1 MONTH <= $limit) TO $path (FORMAT parquet)",
        params={"first": first_of_last, "limit": dt.date.today(), "path": str(raw / "games" / "zz-next-month.parquet")},
    )
    return f"{(first_of_last.replace(day=28) + dt.timedelta(days=4)).strftime('%Y-%m')}"


def bookkeeping_rows() -> list[list[str]]:
    """Per system: months, run and compute seconds of a whole-history range run on a warm instance."""
    raw, _ = generate(BOOKKEEPING, "bookkeeping", seed=5)
    warehouse = fresh(WORK / "wh_bookkeeping")
    diprank_run(raw, warehouse, env={"DIPRANK_SYSTEMS_AT_ONCE": "1"})
    first = (
        connect()
        .sql(
            "SELECT strftime(least((SELECT min(finished_on) FROM read_parquet($games)), "
            "(SELECT min(end_date) FROM read_parquet($events))), '%Y-%m')",
            params={
                "games": [str(p) for p in (raw / "games").glob("*.parquet")],
                "events": [str(p) for p in (raw / "events").glob("*.parquet")],
            },
        )
        .fetchall()[0][0]
    )
    output = diprank_run(raw, warehouse, "--from", first, env={"DIPRANK_SYSTEMS_AT_ONCE": "1"}).output
    rows = []
    for match in re.finditer(
        r"^\s+(\w+)\s+\d{4}-\d{2} … \d{4}-\d{2}\s+(\d+) months\s+([\d.]+) s \(compute ([\d.]+) s\)", output, re.M
    ):
        system, months, wall, compute = (
            match.group(1),
            int(match.group(2)),
            float(match.group(3)),
            float(match.group(4)),
        )
        rows.append([system, str(months), f"{wall:.1f} s", f"{compute:.1f} s", f"{wall - compute:.1f} s"])
    return rows


PROPERTY_TEST = "tests/test_incremental.py::test_any_sequence_of_deliveries_equals_a_run_from_scratch"


def property_sequences(count: int) -> tuple[int, int, float, str]:
    """Run the incremental property test (after every step of random deliveries, a whole run equals
    a run from scratch) with `count` sequences; (sequences run, steps run, wall seconds, outcome)."""
    report = WORK / "property_sequences.txt"
    report.unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROPERTY_TEST],
        cwd=ROOT,
        env={**os.environ, "DIPRANK_PROPERTY_SEQUENCES": str(count), "DIPRANK_PROPERTY_REPORT": str(report)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wall = time.perf_counter() - started
    steps = [int(line) for line in report.read_text().split()] if report.exists() else []
    outcome = "passed" if process.returncode == 0 else f"FAILED:\n{process.stdout[-3000:]}"
    return len(steps), sum(steps), wall, outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (checks the harness)")
    parser.add_argument("--skip-largest", action="store_true", help="leave out the 10,000,000-game run")
    parser.add_argument(
        "--skip-property", action="store_true", help="leave out the long run of the incremental property test"
    )
    parser.add_argument(
        "--property-sequences",
        type=int,
        default=None,
        help="sequences of the property test (default 200; 10 with --quick)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    WORK.mkdir(parents=True, exist_ok=True)
    sections = [
        "# diprank benchmarks",
        "",
        "Measured by `make bench` (`benchmarks/run.py`)"
        + (" with `--quick` sizes" if args.quick else "")
        + "; every figure comes from that run.",
        "",
        "## Machine",
        "",
        markdown_table(["", ""], [[k, v] for k, v in machine_details()]),
        "",
    ]

    def say(text: str) -> None:
        print(text, flush=True)
        # The figures so far are kept even if a later, larger section fails.
        args.out.write_text("\n".join(sections) + "\n")

    say("kernels …")
    kernels = kernel_rows(sizes["kernel_games"])
    sections += [
        "## 1. Rating kernels",
        "",
        f"Player-results per second on the same {sizes['kernel_games']:,} generated 7-power games "
        "(compile time excluded), next to the pure-Python reference and openskill's PlackettLuce "
        f"rating the same games; the games spread over {' and over '.join(map(str, KERNEL_YEARS))} years "
        "(the second gives the games a month of section 2). The systems step month by month, as in a run.",
        "",
        "Ratios compare games per second (events per second for Dip Pouch rows: player-results). "
        "Each path's figure is its best of three rounds of CPU time, a system's paths and openskill "
        "taking turns in every round (benchmarks/timing.py), so a change in the machine's speed "
        "reaches both sides of a ratio; a path shorter than a tenth of a second runs again within its "
        "round and counts its mean.",
        "",
        markdown_table(
            [
                "system",
                "games a month",
                "kernel results/s",
                "reference results/s",
                "openskill PL results/s",
                "kernel / openskill",
                "kernel / reference",
            ],
            kernels,
        ),
        "",
    ]

    e2e = sizes["e2e"]
    say(f"end to end: {e2e.games:,} games …")
    raw, generated = generate(e2e, "e2e", seed=1)
    warehouse = fresh(WORK / "wh_e2e")
    backfill = diprank_run(raw, warehouse)
    rows = output_rows(warehouse)
    floor = floor_seconds(raw, rows)
    per_system = system_times(backfill.output)
    sections += [
        "## 2. End to end",
        "",
        f"`diprank run` on {e2e.games:,} games, {e2e.events:,} events, {e2e.players:,} players over "
        f"{e2e.years} years (Parquet feeds generated in {generated:.1f} s): every system, every month, one backfill.",
        "",
        markdown_table(
            ["measure", "value"],
            [
                ["wall time", f"{backfill.wall:.1f} s"],
                ["peak memory (all processes)", f"{backfill.peak_mib:,.0f} MiB"],
                ["Parquet rows written", f"{rows:,}"],
                ["floor (DuckDB reads the raw files once, writes as many Parquet rows once)", f"{floor:.1f} s"],
                ["ratio to the floor", f"{backfill.wall / floor:.1f}×"],
                ["ingest and validation", f"{ingest_seconds(backfill.output):.1f} s"],
            ]
            + [
                [f"{s}: Dagster run / asset compute", f"{w:.1f} s / {c:.1f} s" if c is not None else f"{w:.1f} s"]
                for s, (w, c) in per_system.items()
            ]
            + (
                [["quality: share of the backfill's wall time", f"{per_system['quality'][0] / backfill.wall:.1%}"]]
                if "quality" in per_system
                else []
            ),
        ),
        "",
    ]

    say("runs that cost what changed …")
    sample_wh = fresh(WORK / "wh_sample")
    diprank_run(ROOT / "data" / "raw", sample_wh)
    sample_noop = diprank_run(ROOT / "data" / "raw", sample_wh).wall
    incremental = []
    small = sizes["small_history"]
    small_raw, _ = generate(small, "small", seed=2)
    small_wh = fresh(WORK / "wh_small")
    diprank_run(small_raw, small_wh)
    for history_raw, history_wh, size in ((small_raw, small_wh, small), (raw, warehouse, e2e)):
        noop = diprank_run(history_raw, history_wh)
        month = next_month_delivery(history_raw)
        stats = diprank_run(history_raw, history_wh)
        times = system_times(stats.output)
        compute = sum(c or 0.0 for _, c in times.values())
        incremental.append(
            [
                f"{size.games:,}",
                f"{noop.wall:.1f} s ({noop.wall / sample_noop:.2f}×)",
                month,
                f"{stats.wall:.1f} s ({stats.wall / sample_noop:.2f}×)",
                f"{ingest_seconds(stats.output):.1f} s",
                f"{compute:.1f} s",
                f"{stats.peak_mib:,.0f} MiB",
            ]
        )
    sections += [
        "## 3. Runs that cost what changed",
        "",
        "After the backfill, `diprank run` again with nothing new, then with one more month of games "
        "delivered as one new file. Ratios are to a run with nothing new on the bundled sample, "
        f"measured in this run: {sample_noop:.1f} s. Delivery files already ingested are not read again.",
        "",
        markdown_table(
            [
                "history (games)",
                "nothing new",
                "new month",
                "whole run with the new month",
                "ingest and validation",
                "four systems' asset compute",
                "peak memory (all processes)",
            ],
            incremental,
        ),
        "",
    ]

    if not args.skip_property:
        wanted = args.property_sequences or (10 if args.quick else 200)
        say(f"incremental property test: {wanted} sequences …")
        ran, steps, wall, outcome = property_sequences(wanted)
        sections += [
            "## 3b. Incremental runs equal runs from scratch",
            "",
            f"`{PROPERTY_TEST}` with {wanted} random sequences (`make test` runs 10, and 25 at the ingest level): after every step "
            "of new, corrected, edited or removed delivery files, a whole `diprank run` leaves the files, "
            "bytes, view rows and Dagster's materialized months of a run from scratch.",
            "",
            markdown_table(
                ["measure", "value"],
                [
                    ["sequences run", f"{ran:,}"],
                    ["steps run (each: an incremental and a from-scratch run)", f"{steps:,}"],
                    ["wall time", f"{wall:.0f} s"],
                    ["outcome", outcome.splitlines()[0]],
                ],
            ),
            "",
        ]
        if outcome != "passed":
            print(outcome, flush=True)

    if not args.skip_largest:
        largest = sizes["largest"]
        say(f"largest: {largest.games:,} games …")
        big_raw, big_generated = generate(largest, "largest", seed=3)
        big_wh = fresh(WORK / "wh_largest")
        big = diprank_run(big_raw, big_wh)
        big_noop = diprank_run(big_raw, big_wh)
        sections += [
            "## 4. The largest sites",
            "",
            f"`diprank run` on {largest.games:,} games ({largest.players:,} players, {largest.events:,} events, "
            f"{largest.years} years; generated in {big_generated:.1f} s), then again with nothing new.",
            "",
            markdown_table(
                ["measure", "value"],
                [
                    ["wall time", f"{big.wall:.1f} s"],
                    ["peak memory (all processes)", f"{big.peak_mib:,.0f} MiB"],
                    [
                        "run with nothing new (ratio to the sample's, section 3)",
                        f"{big_noop.wall:.1f} s ({big_noop.wall / sample_noop:.2f}×)",
                    ],
                    ["ingest and validation", f"{ingest_seconds(big.output):.1f} s"],
                ]
                + [
                    [f"{s}: Dagster run / asset compute", f"{w:.1f} s / {c:.1f} s" if c else f"{w:.1f} s"]
                    for s, (w, c) in system_times(big.output).items()
                ],
            ),
            "",
        ]
    else:
        sections += ["## 4. The largest sites", "", "Not measured in this run (`--skip-largest`).", ""]

    say("Dagster bookkeeping …")
    sections += [
        "## 5. Dagster's bookkeeping of a long backfill",
        "",
        f"`diprank run --from <first month>` on {BOOKKEEPING.games:,} games and {BOOKKEEPING.events:,} events over "
        f"{BOOKKEEPING.years} years, once more after a first run, the systems one after another "
        "(`DIPRANK_SYSTEMS_AT_ONCE=1`): each system's Dagster run is one range run of every month. "
        "Bookkeeping is the run's wall time less the asset's own compute (creating the run, "
        "recording the months planned and written, the checks).",
        "",
        markdown_table(["system", "months", "Dagster run", "asset compute", "bookkeeping"], bookkeeping_rows()),
        "",
    ]

    text = "\n".join(sections)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
