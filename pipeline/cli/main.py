"""The `diprank` command: run the pipeline through Dagster, generate feeds, print reports."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

from pipeline import settings as config
from pipeline.core.months import Month
from pipeline.reports.model import add_report_parser, command_report

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUSY = 0, 1, 2, 3
TOP_N = 5


class UsageError(Exception):
    """A problem with the command line or the folders it names."""


def _month(text: str) -> Month:
    try:
        return Month.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a month: {text!r} (expected YYYY-MM)") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diprank", description="Diplomacy rating pipeline.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="ingest, validate and rate everything through Dagster")
    run.add_argument("--raw", type=Path, help=f"raw feeds folder (default ${config.ENV_RAW_DIR} or {config.DEFAULT_RAW_DIR})")
    run.add_argument("--warehouse",
                     help=f"output folder (default ${config.ENV_WAREHOUSE_DIR} or {config.DEFAULT_WAREHOUSE_DIR})")
    run.add_argument("--from", dest="first", type=_month, help="first month to compute (default: each system's first month with data)")
    run.add_argument("--to", dest="last", type=_month, help="last month to compute (default: the latest month with data in any feed)")
    run.add_argument("--strict", action="store_true", help="fail the run if anything is quarantined")
    run.add_argument("--systems", help="comma-separated systems to compute (default: all)")
    run.add_argument("--wait", action="store_true", help="wait for another run on the same warehouse instead of refusing")
    run.add_argument("--quiet", action="store_true", help="print only the summary")

    gen = sub.add_parser("generate", help="write synthetic feeds of any size")
    gen.add_argument("--games", type=int, default=10_000)
    gen.add_argument("--players", type=int, default=2_000)
    gen.add_argument("--years", type=int, default=5)
    gen.add_argument("--events", type=int, default=100)
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--format", choices=["parquet", "csv", "jsonl"], default="parquet")
    gen.add_argument("--out", type=Path, required=True)

    add_report_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return command_run(args)
        if args.command == "generate":
            return command_generate(args)
        if args.command == "report":
            return command_report(args)
    except UsageError as error:
        print(f"diprank: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("diprank: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # a defect: say so plainly; the traceback only on request
        print(f"diprank: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("DIPRANK_DEBUG"):
            traceback.print_exc()
        else:
            print("diprank: set DIPRANK_DEBUG=1 to see the traceback", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_USAGE


def _prepare_environment(raw: Path, warehouse: str) -> None:
    """Point the Dagster resources and instance at the chosen folders before the code location loads."""
    from pipeline.warehouse.store import DEFAULT_LOCAL_DIR, ENV_LOCAL_DIR, Warehouse, is_url

    os.environ[config.ENV_RAW_DIR] = str(raw.resolve())
    if not is_url(warehouse):
        Path(warehouse).mkdir(parents=True, exist_ok=True)
        warehouse = str(Path(warehouse).resolve())
    else:
        # Workers in other folders must find the same DuckDB file and locks.
        os.environ[ENV_LOCAL_DIR] = str(Path(os.environ.get(ENV_LOCAL_DIR) or DEFAULT_LOCAL_DIR).resolve())
    os.environ[config.ENV_WAREHOUSE_DIR] = warehouse
    local_dir = Warehouse(warehouse).local_dir
    local_dir.mkdir(parents=True, exist_ok=True)
    home = Path(os.environ.get("DAGSTER_HOME") or (local_dir / ".dagster")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    settings_file = home / "dagster.yaml"
    if not settings_file.exists():
        settings_file.write_text("telemetry:\n  enabled: false\n")
    os.environ["DAGSTER_HOME"] = str(home)
    warnings.filterwarnings("ignore")
    logging.getLogger("dagster").setLevel(logging.ERROR)


def _progress_printer(quiet: bool) -> None:
    log = logging.getLogger("diprank.progress")
    log.setLevel(logging.INFO)
    log.propagate = False
    if not quiet and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("  %(message)s"))
        log.addHandler(handler)


def command_run(args) -> int:
    settings = config.Settings.from_env()
    raw = args.raw or settings.raw_dir
    warehouse_dir = args.warehouse or settings.warehouse_dir
    if not raw.is_dir():
        raise UsageError(f"raw folder {raw} does not exist (set --raw or ${config.ENV_RAW_DIR})")
    if args.first and args.last and args.first > args.last:
        raise UsageError(f"--from {args.first} is after --to {args.last}")
    _prepare_environment(raw, warehouse_dir)
    _progress_printer(args.quiet)
    from pipeline.warehouse.locks import WarehouseBusy, warehouse_lock
    from pipeline.orchestrate import run_everything
    from pipeline.warehouse.store import Warehouse

    warehouse = Warehouse(os.environ[config.ENV_WAREHOUSE_DIR])
    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        with warehouse_lock(warehouse.run_lock_path, wait=args.wait, on_wait=say):
            systems = [s.strip() for s in args.systems.split(",")] if args.systems else None
            return run_everything(raw.resolve(), warehouse, args.first, args.last, strict=args.strict,
                                  systems=systems, say=say)
    except WarehouseBusy as busy:
        print(f"diprank: {busy}", file=sys.stderr)
        return EXIT_BUSY


def command_generate(args) -> int:
    from pipeline.synthetic.generator import write_feeds

    started = time.perf_counter()
    counts = write_feeds(args.out, games=args.games, players=args.players, years=args.years,
                         events=args.events, seed=args.seed, fmt=args.format)
    rows = ", ".join(f"{feed} {n:,}" for feed, n in counts["rows"].items())
    files = sum(counts["files"].values())
    print(f"wrote {args.out}: {rows} rows in {files} files, {time.perf_counter() - started:.1f} s")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
