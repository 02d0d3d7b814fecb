"""`diprank report`: a month's table printed the way each community publishes it.

    diprank report <system> [--month YYYY-MM] [--warehouse DIR] [--player ID] [--game ID]
                   [--top N] [--html [PATH]]
    diprank report quality [--month YYYY-MM] [--warehouse DIR] [--html [PATH]]

The report is built once from the warehouse (pipeline.reports.model), printed as text
(pipeline.reports.text) and, with --html, also written as one self-contained page
(pipeline.reports.html). `quality` prints every system's predictive quality of the month
(SPEC §3.5); its page, like every system's, charts trailing accuracy over time.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

from pipeline.cli.arguments import month_argument, whole_number
from pipeline.reports.html import write_html
from pipeline.reports.model import QUALITY, Report, ReportError, build_report
from pipeline.reports.text import render_text
from pipeline.settings import ENV_WAREHOUSE_DIR, Settings
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.store import Warehouse

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_HTML = "<warehouse>/reports/<system>/<YYYY-MM>.html"


def add_report_parser(subparsers) -> argparse.ArgumentParser:
    """Add `report` to the `diprank` subcommands and return its parser."""
    parser = subparsers.add_parser(
        "report",
        help="print a month's table the way its community publishes it",
        description="Print a rating system's monthly table as its community publishes it, "
        "optionally with a player's history (dip_pouch) or a game's evaluation (diwz), "
        "or every system's predictive quality of the month (quality), "
        "and write it as a self-contained HTML page.",
    )
    parser.add_argument(
        "system", help=f"one of {', '.join(SYSTEM_NAMES)}, or {QUALITY} for every system's predictive quality"
    )
    parser.add_argument(
        "--month",
        type=month_argument,
        metavar="YYYY-MM",
        help="the snapshot month (default: the latest month with a snapshot, or with a quality table)",
    )
    parser.add_argument(
        "--warehouse",
        metavar="DIR",
        help=f"warehouse folder (default ${ENV_WAREHOUSE_DIR} or {Settings.warehouse_dir})",
    )
    parser.add_argument("--player", metavar="ID", help="dip_pouch: also print this player's event history")
    parser.add_argument("--game", metavar="ID", help="diwz: also print this game's DiWZ evaluation table")
    parser.add_argument(
        "--category",
        metavar="NAME",
        help="ghost: the category to print (overall, classic, gunboat or live; default overall)",
    )
    parser.add_argument("--top", type=whole_number(1), metavar="N", help="print only the first N rows of the ranking")
    parser.add_argument(
        "--html",
        nargs="?",
        const=DEFAULT_HTML,
        default=None,
        metavar="PATH",
        help=f"also write the report as one self-contained HTML page (default {DEFAULT_HTML}; "
        "a folder gets <system>-<YYYY-MM>.html); give it after the system",
    )
    return parser


def html_target(option: str, warehouse: Warehouse, report: Report) -> Path:
    """Where --html writes the page: the warehouse's reports folder, the file given, or a file in the folder given."""
    target = (
        warehouse.root / "reports" / report.system / f"{report.month}.html" if option == DEFAULT_HTML else Path(option)
    )
    if target.is_dir():
        target = target / f"{report.system}-{report.month}.html"
    return target


def command_report(args: argparse.Namespace, settings: Settings) -> int:
    """Run `diprank report`; returns the exit code (2 for a request the warehouse cannot answer)."""
    warehouse = Warehouse(args.warehouse or settings.warehouse_dir)
    try:
        # Only the page shows the chart, and the chart reads every month's table.
        report = build_report(
            warehouse,
            args.system,
            args.month,
            player=args.player,
            game=args.game,
            category=args.category,
            top=args.top,
            with_chart=args.html is not None,
        )
    except ReportError as error:
        _write(f"diprank: {error}\n", sys.stderr)
        return EXIT_USAGE
    target = None
    if args.html is not None:  # written first, so a closed pipe cannot cost the page
        target = html_target(args.html, warehouse, report)
        write_html(report, target)
    try:
        _write(render_text(report))
        if target is not None:
            _write(f"wrote {target}\n")
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error
        _silence_stdout()
    return EXIT_OK


def _write(text: str, stream=None) -> None:
    """Write text whatever the stream's encoding can hold (unencodable characters become '?')."""
    stream = stream or sys.stdout
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(encoding, "replace").decode(encoding))
    stream.flush()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not complain again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
