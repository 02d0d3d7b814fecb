"""The `diprank` command: run the pipeline through Dagster, generate feeds, print reports.

Settings are resolved once, here, from the environment and the command's flags; every command
receives them. The commands print and choose exit codes; the work they call returns data.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
import warnings
from pathlib import Path

from pipeline.cli.arguments import month_argument, whole_number
from pipeline.cli.report import add_report_parser, command_report
from pipeline.core.months import Month
from pipeline.core.progress import show_progress
from pipeline.settings import ENV_RAW_DIR, ENV_WAREHOUSE_DIR, Settings, SettingsError, is_url
from pipeline.systems.kernel_cache import use_kernel_cache_dir
from pipeline.systems.registry import SYSTEM_NAMES, system_class

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUSY = 0, 1, 2, 3
TOP_N = 5  # players shown per system in the run summary
MAX_LISTED_PROBLEMS = 20  # quarantine entries listed in the run summary


class UsageError(Exception):
    """A problem with the command line or the folders it names."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diprank", description="Diplomacy rating pipeline.")
    sub = parser.add_subparsers(dest="command", required=True)
    defaults = Settings()

    run = sub.add_parser("run", help="ingest, validate and rate everything through Dagster")
    run.add_argument("--raw", help=f"raw feeds folder (default ${ENV_RAW_DIR} or {defaults.raw_dir})")
    run.add_argument(
        "--warehouse", help=f"output folder or s3:// URL (default ${ENV_WAREHOUSE_DIR} or {defaults.warehouse_dir})"
    )
    run.add_argument(
        "--from",
        dest="first",
        type=month_argument,
        help="first month to compute (default: each system's first month with data)",
    )
    run.add_argument(
        "--to",
        dest="last",
        type=month_argument,
        help="last month to compute (default: the latest month with data in any feed)",
    )
    run.add_argument("--strict", action="store_true", help="fail the run if anything is quarantined or a check fails")
    run.add_argument("--systems", help="comma-separated systems to compute (default: all)")
    run.add_argument(
        "--wait", action="store_true", help="wait for another run on the same warehouse instead of refusing"
    )
    run.add_argument("--quiet", action="store_true", help="print only the summary")

    gen = sub.add_parser("generate", help="write synthetic feeds of any size")
    gen.add_argument("--games", type=whole_number(0), default=10_000)
    gen.add_argument("--players", type=whole_number(0), default=2_000)
    gen.add_argument("--years", type=whole_number(0), default=5)
    gen.add_argument("--events", type=whole_number(0), default=100)
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--format", choices=["parquet", "csv", "jsonl"], default="parquet")
    gen.add_argument("--out", type=Path, required=True)

    add_report_parser(sub)
    return parser


def resolve_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings with this command's folders in place of theirs."""
    try:
        return Settings.from_env(raw_dir=getattr(args, "raw", None), warehouse_dir=getattr(args, "warehouse", None))
    except SettingsError as error:
        raise UsageError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    settings: Settings | None = None
    try:
        settings = resolve_settings(args)
        if args.command == "generate":
            return command_generate(args)
        if args.command == "run":
            return command_run(args, settings)
        if args.command == "report":
            return command_report(args, settings)
    except UsageError as error:
        print(f"diprank: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("diprank: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # a defect: say so plainly; the traceback only on request
        print(f"diprank: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if settings is not None and settings.debug:
            traceback.print_exc()
        else:
            print("diprank: set DIPRANK_DEBUG=1 to see the traceback", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_USAGE


def command_line() -> int:
    """The `diprank` program: main on the process's arguments, with numba's cache in the kernels' folder.

    The folder is set before anything imports numba (pipeline/systems/kernel_cache.py), and the
    processes the run starts inherit it.
    """
    use_kernel_cache_dir()
    return main()


def selected_systems(text: str | None) -> list[str] | None:
    if not text:
        return None
    systems = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(SYSTEM_NAMES))
    if unknown:
        raise UsageError(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEM_NAMES)}")
    return systems


def check_folders(settings: Settings) -> None:
    """Usage errors for folders that cannot work, before any run starts."""
    if not settings.raw_path.is_dir():
        raise UsageError(f"raw folder {settings.raw_dir} does not exist (set --raw or ${ENV_RAW_DIR})")
    if not is_url(settings.warehouse_dir):
        warehouse = Path(settings.warehouse_dir)
        if warehouse.exists() and not warehouse.is_dir():
            raise UsageError(f"warehouse {settings.warehouse_dir} is a file, not a folder")
        warehouse.mkdir(parents=True, exist_ok=True)


def command_run(args, settings: Settings) -> int:
    if args.first and args.last and args.first > args.last:
        raise UsageError(f"--from {args.first} is after --to {args.last}")
    systems = selected_systems(args.systems)
    check_folders(settings)
    warnings.filterwarnings("ignore")
    logging.getLogger("dagster").setLevel(logging.ERROR)
    show_progress(not args.quiet)
    from pipeline.warehouse.locks import WarehouseBusy, warehouse_lock
    from pipeline.warehouse.store import Warehouse

    warehouse = Warehouse.of(settings)
    warehouse.local_dir.mkdir(parents=True, exist_ok=True)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        with warehouse_lock(warehouse.run_lock_path, wait=args.wait, on_wait=say):
            return run_and_summarise(
                settings, warehouse, args.first, args.last, strict=args.strict, systems=systems, say=say
            )
    except WarehouseBusy as busy:
        print(f"diprank: {busy}", file=sys.stderr)
        return EXIT_BUSY


def run_and_summarise(
    settings: Settings,
    warehouse,
    first: Month | None,
    last: Month | None,
    *,
    strict: bool,
    systems: list[str] | None,
    say,
) -> int:
    """Ingest, validate and rate; print the summary. Returns the exit code."""
    from pipeline import orchestrate

    # One Dagster instance for the command's runs in this process: opening one costs a tenth of a
    # second and a check of its storage's schema.
    with orchestrate.dagster_instance(settings) as instance:
        return summarised_run(settings, warehouse, first, last, strict, systems, say, instance)


def summarised_run(settings: Settings, warehouse, first, last, strict: bool, systems, say, instance) -> int:
    """The run of `run_and_summarise`, its Dagster runs on `instance`."""
    from pipeline import orchestrate
    from pipeline.ingest.deliveries import seconds_until_settled
    from pipeline.rating.planning import plan_all
    from pipeline.rating.published import list_starts

    started = time.perf_counter()
    warehouse.remove_leftovers()
    for run_id in orchestrate.end_abandoned_runs(instance, settings):
        say(f"run {run_id} of an earlier diprank command ended with it: marked failed, its pool slots freed")
    settling = seconds_until_settled(settings.raw_path, settings.settle_seconds)
    if settling:
        say(
            f"waiting {settling:.1f} s: delivery files changed in the last {settings.settle_seconds:g} s may still be written"
        )
        time.sleep(settling)
    say(f"ingest and validate {settings.raw_dir}")
    ingest = orchestrate.ingest(settings, MAX_LISTED_PROBLEMS, instance)
    say(f"  ingest and validation took {time.perf_counter() - started:.1f} s")
    if ingest.failure:
        print(f"diprank: ingest failed: {ingest.failure}")
        return EXIT_FAILED
    if ingest.rebuilt:
        print(f"diprank: {ingest.rebuilt}")
    print(feed_balance_text(ingest.counts))
    if ingest.quarantined and ingest.examples is not None:
        print(
            f"\n{plural(ingest.quarantined, 'quarantine entry', 'quarantine entries')} "
            f"(all in {warehouse.root / 'quarantine'}):"
        )
        print(
            "\n".join(
                [quarantine_line(e) for e in ingest.examples]
                + (["  …"] if ingest.quarantined > len(ingest.examples) else [])
            )
        )
    if ingest.skipped_total:
        print("\nskipped in the raw folder:")
        width = min(40, max(len(e.path) for e in ingest.skipped))
        print(
            "\n".join(
                [f"  {e.path:<{width}}  {e.reason}" for e in ingest.skipped]
                + (
                    [
                        f"  … {ingest.skipped_total - len(ingest.skipped)} more in the raw_skipped table of "
                        f"{warehouse.duckdb_path}"
                    ]
                    if ingest.skipped_total > len(ingest.skipped)
                    else []
                )
            )
        )
    if strict and ingest.quarantined:
        print(
            f"\ndiprank: strict mode: {plural(ingest.quarantined, 'quarantine entry', 'quarantine entries')} "
            "(listed above); nothing was rated."
        )
        return EXIT_FAILED
    if not ingest.any_valid_results:
        print("\ndiprank: no valid results in any feed; nothing to rate.")
        return EXIT_FAILED
    starts = list_starts(warehouse, {name: system_class(name).feed for name in SYSTEM_NAMES})
    if starts:
        print("\ncontinuing published lists:")
        print("\n".join(list_start_line(start) for start in starts))
    plans = plan_all(warehouse, settings, first, last, systems)
    todo = [p for p in plans if p.first is not None]
    for plan in todo:
        say(f"{plan.system}: {plan.first} … {plan.last}")
    runs: dict[str, orchestrate.SystemRun] = {
        run.system: run for run in orchestrate.rate_systems(todo, settings, instance)
    }
    failed = [run for run in runs.values() if run.failure]
    for run in failed:
        print(f"diprank: {run.system} failed: {run.failure}")
    if failed:
        return EXIT_FAILED
    quality = orchestrate.score_quality(settings, instance)
    if quality is not None and quality.failure:
        print(f"diprank: the quality table failed: {quality.failure}")
        return EXIT_FAILED
    print("\nsnapshots written:")
    for plan in plans:
        done = runs.get(plan.system)
        if done is None:
            print(f"  {plan.system:<10} {plan.note}")
            continue
        compute = f" (compute {done.compute_seconds:.1f} s)" if done.compute_seconds is not None else ""
        print(
            f"  {done.system:<10} {done.first} … {done.last}  {done.months:>4} months  {done.seconds:6.1f} s{compute}"
            f"  {warehouse.root / 'rankings' / done.system}"
        )
    if quality is not None:
        compute = f" (compute {quality.compute_seconds:.1f} s)" if quality.compute_seconds is not None else ""
        print(
            f"  {'quality':<10} {quality.first} … {quality.last}  {quality.months:>4} months  {quality.seconds:6.1f} s"
            f"{compute}  {warehouse.root / 'quality'}"
        )
    for plan in plans:
        written = warehouse.written_months("rankings", plan.system)
        shown = plan.last if plan.system in runs else (written[-1] if written else None)
        if shown is not None:
            rows = orchestrate.top_rows(warehouse, plan.system, shown, TOP_N)
            print(f"\n  {plan.system} top {TOP_N} as of {shown.last_day}:")
            print("\n".join(top_line(r) for r in rows) or "    (no one listed)")
    checks = ingest.failed_checks + [
        c for run in [*runs.values(), *([quality] if quality else [])] for c in run.failed_checks
    ]
    if checks:
        print(f"\n{plural(len(checks), 'failed check', 'failed checks')}:")
        print("\n".join(failed_check_line(c) for c in checks))
    print(f"\ndone in {time.perf_counter() - started:.1f} s; DuckDB: {warehouse.duckdb_path}")
    if strict and checks:
        print(f"diprank: strict mode: {plural(len(checks), 'failed check', 'failed checks')} (listed above).")
        return EXIT_FAILED
    return EXIT_OK


def list_start_line(start) -> str:
    """One system that continues a published list, and the valid results it leaves to the others."""
    kind = "game rows" if system_class(start.system).feed == "games" else "event results"
    return (
        f"  {start.system:<10} from its list of {start.as_of} ({plural(start.players, 'player', 'players')}), "
        f"first month {start.month.next()}; {start.results_before} valid {kind} on or before it not rated by {start.system}"
    )


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def feed_balance_text(counts) -> str:
    """The feed balance as a table: rows in = valid + quarantined + replaced. Each column is as
    wide as its widest entry, so counts of any size stay apart."""
    head = ("feed", "files", "rows in", "valid", "quarantined", "replaced", "files rejected")
    rows = [
        (
            c.feed,
            f"{c.files:,}",
            f"{c.rows_in:,}",
            f"{c.valid:,}",
            f"{c.quarantined:,}",
            f"{c.replaced:,}",
            f"{c.files_rejected:,}",
        )
        for c in counts
    ]
    widths = [max(len(row[k]) for row in (head, *rows)) for k in range(len(head))]

    def line(row) -> str:
        return (
            "  " + row[0].ljust(widths[0]) + "".join(f"  {cell:>{width}}" for cell, width in zip(row[1:], widths[1:]))
        )

    return "\n".join(line(row) for row in (head, *rows))


def quarantine_line(entry) -> str:
    where = (
        f"{entry.source_file}:{entry.source_line}"
        if entry.source_line is not None
        else f"{entry.source_file} (whole file)"
    )
    return f"  {entry.feed:<13} {entry.reason:<28} {where}  {entry.record_key}  {entry.detail[:100]}"


def failed_check_line(check, examples: int = 3) -> str:
    found = f" ({check.failures:,} found)" if check.failures is not None else ""
    shown = "; ".join(str(e) for e in check.examples[:examples])
    return f"  {check.asset:<16} {check.check:<28}{found}" + (f"  e.g. {shown[:160]}" if shown else "")


def top_line(row: dict) -> str:
    rating = row.get("display") or f"{row['rating']:.2f}"
    return f"    {row['rank']:>3}. {(row['player_name'] or row['player_id'])[:32]:<32} {rating:>9}"


def command_generate(args) -> int:
    from pipeline.synthetic.generator import write_feeds

    started = time.perf_counter()
    counts = write_feeds(
        args.out,
        games=args.games,
        players=args.players,
        years=args.years,
        events=args.events,
        seed=args.seed,
        fmt=args.format,
    )
    rows = ", ".join(f"{feed} {n:,}" for feed, n in counts["rows"].items())
    files = sum(counts["files"].values())
    print(f"wrote {args.out}: {rows} rows in {files} files, {time.perf_counter() - started:.1f} s")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(command_line())
