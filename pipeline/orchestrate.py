"""A whole run through Dagster: ingest and validation in one run, then one run per rating system
(a self-dependent partitioned asset runs apart from other assets), then a summary.

Runs are the code location's own jobs, executed with the executor DIPRANK_EXECUTOR selects (in
process by default, Celery workers in the production profile) on the instance DAGSTER_HOME names.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
from dagster import DagsterInstance, build_reconstructable_job, execute_job

from pipeline.core.feed_spec import FEEDS
from pipeline.defs.jobs import INGEST_JOB, rating_job_name
from pipeline.core.months import Month, month_range
from pipeline.warehouse.store import Warehouse, read_parquet
from pipeline.rating.planning import plan_all
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.ingest.validation import FeedCounts, QUARANTINE_TABLE, feed_counts

ENV_SYSTEMS_AT_ONCE = "DIPRANK_SYSTEMS_AT_ONCE"
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
MAX_LISTED_PROBLEMS = 20
TOP_N = 5


@dataclass
class SystemRun:
    system: str
    first: Month | None
    last: Month | None
    months: int
    seconds: float
    note: str = ""
    compute_seconds: float | None = None  # the asset's own work, without Dagster's run start and bookkeeping


def run_job(instance: DagsterInstance, name: str, folders: dict[str, str], tags: dict[str, str] | None = None):
    """Execute one job of the code location to completion; returns Dagster's result."""
    # Reconstructable, so that executors running steps in other processes can load the job there;
    # the folders travel in the run config, so workers use the ones this command was given.
    job = build_reconstructable_job("pipeline.definitions", "job_definition", reconstructable_args=(name,))
    run_config = {**QUIET_LOGS, "resources": {"diprank": {"config": folders}}}
    return execute_job(job, instance=instance, run_config=run_config, tags=tags, raise_on_error=False)


def _failure_message(result) -> str:
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            # The user's exception is the innermost cause of Dagster's wrapper.
            while error is not None and error.cause is not None:
                error = error.cause
            message = error.message.strip().splitlines()[0] if error else "step failed"
            return f"{event.step_key}: {message}"
    return "the run failed"


@dataclass
class SystemOutcome:
    run: SystemRun
    failure: str = ""


def rate_system(plan, folders: dict[str, str]) -> SystemOutcome:
    """One system's range run, to completion."""
    started = time.perf_counter()
    result = run_job(DagsterInstance.get(), rating_job_name(plan.system), folders, tags={
        "dagster/asset_partition_range_start": plan.first.partition_key,
        "dagster/asset_partition_range_end": plan.last.partition_key,
    })
    run = SystemRun(plan.system, plan.first, plan.last, len(month_range(plan.first, plan.last)),
                    time.perf_counter() - started)
    if not result.success:
        return SystemOutcome(run, _failure_message(result))
    done = result.asset_materializations_for_node(f"{plan.system}_rankings")
    compute = done[-1].metadata.get("seconds") if done else None
    run.compute_seconds = compute.value if compute is not None else None
    return SystemOutcome(run)


def _rate_system_in_child(plan, folders: dict[str, str], progress: bool) -> SystemOutcome:
    # A fresh (spawned) process: as quiet as the command, and its progress lines shown the same way.
    import warnings

    from pipeline.cli.main import _progress_printer

    warnings.filterwarnings("ignore")
    logging.getLogger("dagster").setLevel(logging.ERROR)
    _progress_printer(quiet=not progress)
    return rate_system(plan, folders)


def systems_at_once(env=os.environ) -> int:
    """How many systems run side by side (DIPRANK_SYSTEMS_AT_ONCE; default: one per core, at most four)."""
    value = env.get(ENV_SYSTEMS_AT_ONCE)
    if value:
        return max(1, int(value))
    return max(1, min(4, os.cpu_count() or 1))


def rate_systems(plans: list, folders: dict[str, str]):
    """Run the systems' range runs, side by side in separate processes when several cores are there.

    The systems write disjoint outputs and only read the validated feeds (each run holds its own
    system's lock and a shared feeds lock), so they need no order among them.
    """
    at_once = min(systems_at_once(), len(plans))
    if at_once <= 1:
        for plan in plans:
            yield rate_system(plan, folders)
        return
    progress = bool(logging.getLogger("diprank.progress").handlers)
    # Spawned, not forked: the parent holds DuckDB and Arrow thread pools.
    with ProcessPoolExecutor(max_workers=at_once, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_rate_system_in_child, plan, folders, progress) for plan in plans]
        for plan, future in zip(plans, futures):
            try:
                yield future.result()
            except Exception as error:  # a child that died (killed, out of memory) or could not start
                yield SystemOutcome(SystemRun(plan.system, plan.first, plan.last, 0, 0.0),
                                    f"{type(error).__name__}: {error}")


def read_counts(warehouse: Warehouse) -> list[FeedCounts]:
    con = duckdb.connect(str(warehouse.duckdb_path), read_only=False)
    try:
        counts = []
        for feed in FEEDS.values():
            files = [r[0] for r in con.execute(
                f"SELECT DISTINCT _source_file FROM typed_{feed.name}").fetchall()]
            counts.append(feed_counts(con, feed, files))
        return counts
    finally:
        con.close()


def quarantine_lines(warehouse: Warehouse, limit: int = MAX_LISTED_PROBLEMS) -> tuple[int, list[str]]:
    con = duckdb.connect(str(warehouse.duckdb_path))
    try:
        total = con.execute(f"SELECT count(*) FROM {QUARANTINE_TABLE}").fetchall()[0][0]
        rows = con.execute(
            f"SELECT feed, reason, source_file, source_line, coalesce(record_key, ''), detail FROM {QUARANTINE_TABLE} "
            "ORDER BY feed, source_file, source_line NULLS FIRST LIMIT ?", [limit]).fetchall()
    finally:
        con.close()
    lines = []
    for feed, reason, source, line, key, detail in rows:
        where = f"{source}:{line}" if line is not None else f"{source} (whole file)"
        lines.append(f"  {feed:<13} {reason:<28} {where}  {key}  {detail[:100] if detail else ''}")
    return total, lines


def format_counts(counts: list[FeedCounts]) -> str:
    head = f"  {'feed':<14}{'files':>6}{'rows in':>10}{'valid':>10}{'quarantined':>13}{'replaced':>10}{'files rejected':>16}"
    lines = [head]
    for c in counts:
        lines.append(f"  {c.feed:<14}{c.files:>6}{c.rows_in:>10,}{c.valid:>10,}{c.quarantined:>13,}"
                     f"{c.replaced:>10,}{c.files_rejected:>16}")
    return "\n".join(lines)


def top_lines(warehouse: Warehouse, system: str, month: Month) -> list[str]:
    path = warehouse.rankings(system, month)
    if not path.exists():
        return []
    table = read_parquet(path, columns=["rank", "player_id", "player_name", "rating"]).slice(0, TOP_N)
    return [f"    {r['rank']:>3}. {(r['player_name'] or r['player_id'])[:32]:<32} {r['rating']:>9.2f}"
            for r in table.to_pylist()]


def run_everything(raw: Path, warehouse: Warehouse, first: Month | None, last: Month | None, *,
                   strict: bool, systems: list[str] | None, say: Callable[[str], None]) -> int:
    """Ingest, validate and rate; print the summary. Returns the exit code."""
    from pipeline.settings import Settings

    started = time.perf_counter()
    warehouse.remove_leftovers()
    unknown = sorted(set(systems or []) - set(SYSTEM_NAMES))
    if unknown:
        print(f"diprank: unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEM_NAMES)}")
        return 2
    instance = DagsterInstance.get()
    say(f"ingest and validate {raw}")
    folders = {"raw_dir": str(raw), "warehouse_dir": warehouse.location}
    result = run_job(instance, INGEST_JOB, folders)
    if not result.success:
        print(f"diprank: ingest failed: {_failure_message(result)}")
        return 1
    counts = read_counts(warehouse)
    print(format_counts(counts))
    quarantined, lines = quarantine_lines(warehouse)
    if quarantined:
        print(f"\n{quarantined} quarantine entr{'y' if quarantined == 1 else 'ies'} "
              f"(all in {warehouse.root / 'quarantine'}):")
        print("\n".join(lines + (["  …"] if quarantined > len(lines) else [])))
    if strict and quarantined:
        print(f"\ndiprank: strict mode: {quarantined} quarantine entr{'y' if quarantined == 1 else 'ies'} "
              "(listed above); nothing was rated.")
        return 1
    if all(c.valid == 0 for c in counts if c.feed != "players"):
        print("\ndiprank: no valid results in any feed; nothing to rate.")
        return 1
    plans = plan_all(warehouse, Settings.from_env(), first, last, systems)
    runs = [SystemRun(p.system, None, None, 0, 0.0, p.note) for p in plans if p.first is None]
    todo = [p for p in plans if p.first is not None]
    for plan in todo:
        say(f"{plan.system}: {plan.first} … {plan.last}")
    failures = []
    for outcome in rate_systems(todo, folders):
        if outcome.failure:
            failures.append(outcome.failure)
            print(f"diprank: {outcome.run.system} failed: {outcome.failure}")
        else:
            runs.append(outcome.run)
    if failures:
        return 1
    order = {p.system: i for i, p in enumerate(plans)}
    runs.sort(key=lambda r: order[r.system])
    print("\nsnapshots written:")
    for run in runs:
        if run.first is None:
            print(f"  {run.system:<10} {run.note}")
            continue
        compute = f" (compute {run.compute_seconds:.1f} s)" if run.compute_seconds is not None else ""
        print(f"  {run.system:<10} {run.first} … {run.last}  {run.months:>4} months  {run.seconds:6.1f} s{compute}"
              f"  {warehouse.root / 'rankings' / run.system}")
    for run in runs:
        written = warehouse.written_months("rankings", run.system)
        shown = run.last or (written[-1] if written else None)
        if shown is not None:
            print(f"\n  {run.system} top {TOP_N} as of {shown.last_day}:")
            print("\n".join(top_lines(warehouse, run.system, shown)) or "    (no one listed)")
    print(f"\ndone in {time.perf_counter() - started:.1f} s; DuckDB: {warehouse.duckdb_path}")
    return 0
