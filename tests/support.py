"""Helpers for tests that push feeds through the real pipeline."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.feed_spec import FEEDS
from pipeline.core.months import Month

REPO = Path(__file__).resolve().parents[1]


def write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> Path:
    """Rows as a CSV delivery (None -> empty field; bools as true/false)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_text(row.get(c)) for c in columns])
    return path


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def make_raw(root: Path, **feeds: list[dict]) -> Path:
    """A raw folder with one CSV delivery per feed given (games=..., events=..., ...)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in feeds.items():
        assert name in FEEDS, name
        if rows:
            write_csv(
                root / name / f"{name}.csv",
                rows,
                FEEDS[name].column_names if all(set(r) <= set(FEEDS[name].column_names) for r in rows) else None,
            )
    return root


@contextlib.contextmanager
def environment(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# Dagster homes whose instance lives in this process's memory while `dagster_in_memory` is on.
_IN_MEMORY: dict[str, object] | None = None


@contextlib.contextmanager
def dagster_in_memory():
    """While on, the Dagster instance of every home that `diprank` commands in this process open,
    and that `dagster_instance_at` opens, is an in-memory one, kept until the end.

    Dagster's in-memory storage is its SQL storage on an in-memory SQLite database: the same
    queries as a local instance's files, without creating a database file (and its schema) for
    every run. For tests that make hundreds of runs; the other tests use the files.
    """
    from pipeline import orchestrate

    global _IN_MEMORY
    saved, _IN_MEMORY = _IN_MEMORY, {}
    opened, original = _IN_MEMORY, orchestrate.dagster_instance
    orchestrate.dagster_instance = lambda settings: dagster_instance_at(Path(settings.dagster_home))
    try:
        yield
    finally:
        orchestrate.dagster_instance, _IN_MEMORY = original, saved
        for instance in opened.values():
            instance.dispose()


@contextlib.contextmanager
def dagster_instance_at(home: Path):
    """The Dagster instance of `home`: its in-memory one while `dagster_in_memory` is on, else the
    one its files hold."""
    from dagster import DagsterInstance

    if _IN_MEMORY is None:
        with DagsterInstance.from_config(str(home)) as instance:
            yield instance
        return
    key = home.resolve().as_posix()
    if key not in _IN_MEMORY:
        _IN_MEMORY[key] = DagsterInstance.ephemeral()
    yield _IN_MEMORY[key]


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `diprank` in-process; returns (exit code, stdout, stderr)."""
    from pipeline.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in ("DIPRANK_RAW_DIR", "DIPRANK_WAREHOUSE_DIR", "DAGSTER_HOME")}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue()


def rankings(warehouse: Path, system: str, month: str) -> list[dict]:
    m = Month.parse(month)
    return pq.read_table(
        warehouse / "rankings" / system / f"year={m.year:04d}" / f"month={m.month:02d}" / "rankings.parquet"
    ).to_pylist()


def history(warehouse: Path, system: str, month: str) -> list[dict]:
    m = Month.parse(month)
    return pq.read_table(
        warehouse / "history" / system / f"year={m.year:04d}" / f"month={m.month:02d}" / "history.parquet"
    ).to_pylist()


def validated_warehouse(root: Path, **feeds: list[dict]):
    """A warehouse whose validated feeds hold exactly these rows (games=..., events=...,
    event_results=..., players=...), with the month fingerprints ingest writes beside them:
    what a run of the rating systems reads, without a raw folder or a Dagster run."""
    from pipeline.ingest.fingerprints import write_month_fingerprints
    from pipeline.warehouse.store import MONTHLY_FEEDS, Warehouse, atomic_write_parquet

    warehouse = Warehouse(root)
    con = duckdb.connect()
    try:
        for name, rows in feeds.items():
            table = pa.Table.from_pylist(rows, schema=FEEDS[name].arrow_schema)
            if name in MONTHLY_FEEDS:  # one file per month, as ingest stores them
                months = sorted({Month.of(r[MONTHLY_FEEDS[name]]) for r in rows})
                for month in months:
                    atomic_write_parquet(
                        warehouse.validated_month(name, month),
                        pa.Table.from_pylist(
                            [r for r in rows if Month.of(r[MONTHLY_FEEDS[name]]) == month],
                            schema=FEEDS[name].arrow_schema,
                        ),
                    )
            else:
                atomic_write_parquet(warehouse.validated(name), table)
            con.register(name, table)
        if "games" in feeds:
            write_month_fingerprints(con, warehouse, "games")
        if "events" in feeds and "event_results" in feeds:
            write_month_fingerprints(con, warehouse, "events")
    finally:
        con.close()
    return warehouse


def ingest_in_process(raw: Path, root: Path) -> dict:
    """The ingest job's work, in process: every feed staged, then validated and written; the balances."""
    from pipeline.ingest.exports import publish_validated
    from pipeline.ingest.validation import VALIDATION_ORDER, ingest_feed, validate_and_count
    from pipeline.warehouse.store import Warehouse

    warehouse = Warehouse(root)
    root.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(warehouse.duckdb_path))
    try:
        for feed in VALIDATION_ORDER:
            ingest_feed(con, raw, feed, warehouse)
        counts = {}
        for feed in VALIDATION_ORDER:
            counts[feed.name] = validate_and_count(con, feed)
            publish_validated(con, warehouse, feed)
    finally:
        con.close()
    assert all(c.balanced for c in counts.values()), counts
    return counts


def quarantine(warehouse: Path, feed: str) -> list[dict]:
    return pq.read_table(warehouse / "quarantine" / f"{feed}.parquet").to_pylist()


def tree_bytes(
    root: Path, kinds=("rankings", "history", "awards", "quality", "validated", "quarantine")
) -> dict[str, bytes]:
    """Every output file's bytes by relative path (for byte-identical comparisons)."""
    files = {}
    for kind in kinds:
        base = root / kind
        if base.is_dir():
            for path in sorted(base.rglob("*.parquet")):
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def chromium() -> str | None:
    """The system's Chromium (or Chrome) binary, else None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def headless_dom(browser: str, page: Path, profile: Path) -> subprocess.CompletedProcess:
    """Open a page in headless Chromium with a fresh profile and no network chatter; stdout is its DOM."""
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
