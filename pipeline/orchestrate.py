"""A whole run through Dagster: ingest and validation in one run, then one run per rating system
(a self-dependent partitioned asset runs apart from other assets).

Runs are the code location's own jobs, built in every process of the run from the settings the
caller resolved, executed with the executor the settings name on the instance of the settings'
Dagster home. Everything here returns data; the CLI prints it and chooses exit codes.
"""

from __future__ import annotations

import logging
import multiprocessing
import re
import signal
import time
import warnings
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Iterator, cast

import duckdb
import pyarrow.compute as pc
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter, build_reconstructable_job, execute_job

from pipeline.core.feed_spec import FEEDS
from pipeline.core.months import Month, month_range
from pipeline.core.progress import PROGRESS_LOGGER, show_progress
from pipeline.defs.instance import prepare_local_instance
from pipeline.defs.jobs import INGEST_JOB, QUALITY_JOB, rating_job_name
from pipeline.defs.partitions import partition_bounds
from pipeline.defs.tags import (
    COMMAND_LINE_TAG,
    INGEST_STEP,
    QUALITY_ASSET,
    WAREHOUSE_REBUILT,
    WAREHOUSE_TAG,
    range_tags,
    rankings_asset_name,
)
from pipeline.ingest.staging import SkippedEntry
from pipeline.ingest.validation import QUARANTINE_TABLE, SKIPPED_TABLE, FeedCounts, feed_counts
from pipeline.rating.planning import Plan
from pipeline.rating.quality import stale_quality_range
from pipeline.settings import Settings
from pipeline.systems.base import model_columns
from pipeline.systems.registry import system_class
from pipeline.warehouse.store import Warehouse, connect, read_parquet

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass(frozen=True)
class FailedCheck:
    """An asset check that failed in a run, with what it found."""

    asset: str
    check: str
    failures: int | None
    examples: list


# Reported by the quarantine listing itself, which the summary prints whole.
CHECKS_REPORTED_ELSEWHERE = {"nothing_quarantined"}


def failed_checks(result) -> list[FailedCheck]:
    """The run's failed asset checks, in the order they were evaluated."""
    failed = []
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.passed or evaluation.check_name in CHECKS_REPORTED_ELSEWHERE:
            continue
        metadata = evaluation.metadata
        failures = metadata.get("failures")
        examples = metadata.get("examples")
        failed.append(
            FailedCheck(
                evaluation.asset_key.to_user_string(),
                evaluation.check_name,
                failures.value if failures is not None else None,
                list(examples.value) if examples is not None else [],
            )
        )
    return failed


@dataclass
class SystemRun:
    """One system's range run: its months, its time, and why it failed if it did."""

    system: str
    first: Month | None
    last: Month | None
    months: int
    seconds: float
    note: str = ""
    compute_seconds: float | None = None  # the asset's own work, without Dagster's run start and bookkeeping
    failure: str = ""
    failed_checks: list[FailedCheck] = field(default_factory=list)


@dataclass(frozen=True)
class QuarantineEntry:
    feed: str
    reason: str
    source_file: str
    source_line: int | None
    record_key: str
    detail: str


@dataclass
class IngestOutcome:
    """What ingest and validation did: the feed balance, or why the run failed."""

    failure: str = ""
    counts: list[FeedCounts] | None = None
    quarantined: int = 0
    examples: list[QuarantineEntry] | None = None
    failed_checks: list[FailedCheck] = field(default_factory=list)
    skipped_total: int = 0  # entries of the raw folder the run did not read
    skipped: list[SkippedEntry] = field(default_factory=list)  # the first of them, by path
    rebuilt: str = ""  # why the warehouse's outputs were removed and written again, if they were

    @property
    def any_valid_results(self) -> bool:
        return any(c.valid for c in self.counts or [] if c.feed != "players")


def dagster_instance(settings: Settings) -> DagsterInstance:
    """The Dagster instance of the settings' home (a local one is prepared when missing)."""
    return DagsterInstance.from_config(str(prepare_local_instance(Path(settings.dagster_home))))


def bounds_now(settings: Settings, last_planned: Month | None = None) -> dict[str, str]:
    """The partitions' bounds as of now (after ingest, for a rating job), as job arguments;
    partitions that end at the data reach `last_planned` too (a run `--to` a later month)."""
    bounds = partition_bounds(settings)
    if bounds.last is not None and last_planned is not None and last_planned > bounds.last:
        bounds = replace(bounds, last=last_planned)
    return bounds.as_arguments()


def run_job(
    settings: Settings,
    name: str,
    tags: dict[str, str] | None = None,
    instance: DagsterInstance | None = None,
    bounds: dict[str, str] | None = None,
):
    """Execute one job of the code location to completion on `instance` (else one opened for it),
    its partitions within `bounds` (default: as of now); returns Dagster's result."""
    # Reconstructable, so that executors running steps in other processes load the same job there,
    # built from these settings and the partitions' bounds: they travel as the job's arguments.
    bounds = bounds or bounds_now(settings)
    tags = {**(tags or {}), COMMAND_LINE_TAG: "true"}
    job = build_reconstructable_job(
        "pipeline.definitions",
        "job_definition",
        reconstructable_args=(name, settings.environment(), bounds),  # type: ignore[arg-type]  # annotated as a 1-tuple, takes any
    )
    if instance is not None:
        return execute_job(job, instance=instance, run_config=QUIET_LOGS, tags=tags, raise_on_error=False)
    with dagster_instance(settings) as opened:
        return execute_job(job, instance=opened, run_config=QUIET_LOGS, tags=tags, raise_on_error=False)


IN_PROGRESS = [
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]


def end_abandoned_runs(instance: DagsterInstance, settings: Settings, job_name: str | None = None) -> list[str]:
    """Mark failed the runs (of `job_name`, else of every job) that a `diprank run` of this
    warehouse left in progress, free the pool slots they held, and return their ids.

    Call it holding the warehouse's run lock: a command holds it for the whole of its runs, so an
    earlier command's run still in progress has lost its process (killed, out of memory, a power
    cut) and would hold its pool's only slot forever. Dagster's run monitoring does the same for
    the runs its daemon watches (run_monitoring in the instance file); the command line has none.
    A command whose system process died ends that job's run the same way.
    """
    records = instance.get_run_records(
        RunsFilter(
            job_name=job_name,
            statuses=IN_PROGRESS,
            tags={WAREHOUSE_TAG: settings.warehouse_dir, COMMAND_LINE_TAG: "true"},
        )
    )
    for record in records:
        run = record.dagster_run
        instance.report_run_failed(run, message="The diprank process that ran it ended before the run did.")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
    return [record.dagster_run.run_id for record in records]


def end_runs_of(settings: Settings, instance: DagsterInstance | None, job_name: str) -> None:
    """End the in-progress runs of a job whose process died, on `instance` or one opened for it."""
    if instance is not None:
        end_abandoned_runs(instance, settings, job_name)
        return
    with dagster_instance(settings) as opened:
        end_abandoned_runs(opened, settings, job_name)


# How Celery reports a task whose worker process died (dagster-celery fails the run with it).
LOST_WORKER = re.compile(
    r"\[(?P<step>[^\]]+)\]: \S*WorkerLostError: Worker exited prematurely: signal \d+ \((?P<signal>\w+)\)"
)


def failure_message(result) -> str:
    """The first failed step and the innermost error that failed it, else why the run failed."""
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            # The user's exception is the innermost cause of Dagster's wrapper.
            while error is not None and error.cause is not None:
                error = error.cause
            message = error.message.strip().splitlines()[0] if error else "step failed"
            return f"{event.step_key}: {message}"
    for event in result.all_events:
        if event.is_run_failure and event.job_failure_data.error is not None:
            return run_failure_message(event.job_failure_data.error.message)
    return "the run failed"


def run_failure_message(text: str) -> str:
    """A run-level error in one line; a step whose Celery worker process died, in words a user can act on."""
    lost = LOST_WORKER.search(text)
    if lost:
        return (
            f"{lost['step']}: the Celery worker process running it was killed by {lost['signal']}"
            f"{OOM_HINT if lost['signal'] == 'SIGKILL' else ''}; {NOTHING_HALF_DONE}"
        )
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "the run failed"
    # "errors occurred in workers:" names them on the next line.
    return " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]


def ingest(settings: Settings, example_limit: int, instance: DagsterInstance | None = None) -> IngestOutcome:
    """Stage and validate every delivery; the feed balance, the first quarantine entries and the
    first entries of the raw folder that were not read."""
    result = run_job(settings, INGEST_JOB, instance=instance)
    if not result.success:
        return IngestOutcome(failure=failure_message(result))
    warehouse = Warehouse.of(settings)
    con = connect(str(warehouse.duckdb_path), config=warehouse.duckdb_config)
    try:
        quarantined, examples = quarantine_entries(con, example_limit)
        skipped_total, skipped = skipped_entries(con, example_limit)
        counts = feed_balance(con)
    finally:
        con.close()
    return IngestOutcome(
        counts=counts,
        quarantined=quarantined,
        examples=examples,
        failed_checks=failed_checks(result),
        skipped_total=skipped_total,
        skipped=skipped,
        rebuilt=rebuilt_message(result),
    )


def rebuilt_message(result) -> str:
    """The message of a warehouse of another format that the run's ingest rebuilt, else ""."""
    for materialization in result.asset_materializations_for_node(INGEST_STEP):
        value = materialization.metadata.get(WAREHOUSE_REBUILT)
        if value is not None:
            return str(value.value)
    return ""


def rate_system(
    plan: Plan, settings: Settings, instance: DagsterInstance | None = None, bounds: dict[str, str] | None = None
) -> SystemRun:
    """One system's range run, to completion."""
    started = time.perf_counter()
    first, last = plan.bounds()
    result = run_job(
        settings,
        rating_job_name(plan.system),
        tags=range_tags(first.partition_key, last.partition_key),
        instance=instance,
        bounds=bounds,
    )
    run = SystemRun(plan.system, first, last, len(month_range(first, last)), time.perf_counter() - started)
    if not result.success:
        run.failure = failure_message(result)
        return run
    run.compute_seconds = asset_seconds(result, rankings_asset_name(plan.system))
    run.failed_checks = failed_checks(result)
    return run


def _rate_system_in_child(
    plan: Plan, settings: Settings, progress: bool, bounds: dict[str, str], results: Connection
) -> None:
    # A process of its own, started anew: as quiet as the command, its progress lines shown the same way.
    warnings.filterwarnings("ignore")
    logging.getLogger("dagster").setLevel(logging.ERROR)
    show_progress(progress)
    try:
        run = rate_system(plan, settings, bounds=bounds)
    except Exception as error:  # reported by the parent like a failed run
        run = SystemRun(plan.system, plan.first, plan.last, 0, 0.0, failure=f"{type(error).__name__}: {error}")
    results.send(run)
    results.close()


OOM_HINT = " (what the kernel's out-of-memory killer sends)"
NOTHING_HALF_DONE = "no unfinished month was committed, and the next run computes them"


def death_message(exitcode: int | None) -> str:
    """Why a system's process ended without reporting its run, in words a user can act on."""
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        return (
            f"its process was killed by {name}{OOM_HINT if name == 'SIGKILL' else ''}; {NOTHING_HALF_DONE} "
            "(if memory ran out, see the README's memory section)"
        )
    return f"its process exited with code {exitcode} before it reported; the next run computes its months"


def expected_work(plan: Plan) -> tuple[int, bool]:
    """What orders the runs by length: their months, then games before events (a month of games
    is far more rows than a month of tournaments)."""
    return len(month_range(*plan.bounds())), system_class(plan.system).feed == "games"


def rate_systems(plans: list[Plan], settings: Settings, instance: DagsterInstance | None = None) -> Iterator[SystemRun]:
    """Run the systems' range runs: one after another in this process when the settings allow one
    at a time, else side by side, each in a process of its own (`systems_at_once` of them).

    The systems write disjoint outputs and only read the validated feeds (each run holds its own
    system's lock and a shared feeds lock), so they need no order among them. The processes are
    spawned, not forked: this process holds DuckDB's and Arrow's thread pools.
    """
    at_once = min(settings.systems_at_once, len(plans))
    # The feeds do not change while the systems run.
    bounds = bounds_now(settings, max(plan.bounds()[1] for plan in plans) if plans else None)
    if at_once <= 1:
        for plan in plans:
            yield rate_system(plan, settings, instance, bounds)
        return
    progress = bool(logging.getLogger(PROGRESS_LOGGER).handlers)
    context = multiprocessing.get_context("spawn")
    # The longest runs start first, so that no core is left with a long one at the end.
    waiting = sorted(plans, key=expected_work, reverse=True)
    running: dict[Connection, tuple[Plan, BaseProcess]] = {}
    runs: dict[str, SystemRun] = {}
    while waiting or running:
        while waiting and len(running) < at_once:
            plan = waiting.pop(0)
            receiver, sender = context.Pipe(duplex=False)
            child = context.Process(
                target=_rate_system_in_child,
                args=(plan, settings, progress, bounds, sender),
                name=f"diprank {plan.system}",
            )
            child.start()
            sender.close()  # the child holds the only sending end: its death closes the pipe
            running[receiver] = (plan, child)
        for ready in wait(list(running)):
            answered = cast(Connection, ready)
            plan, ended = running.pop(answered)
            try:
                run: SystemRun | None = answered.recv()
            except EOFError:  # the process ended without a word: killed, or out of memory
                run = None
            answered.close()
            ended.join()
            if run is None:
                end_runs_of(settings, instance, rating_job_name(plan.system))
                run = SystemRun(plan.system, plan.first, plan.last, 0, 0.0, failure=death_message(ended.exitcode))
            runs[plan.system] = run
    for plan in plans:
        yield runs[plan.system]


def score_quality(settings: Settings, instance: DagsterInstance | None = None) -> SystemRun | None:
    """The quality run over the months whose tables are missing or stale (run after the systems),
    or None when every table is current."""
    stale = stale_quality_range(Warehouse.of(settings))
    if stale is None:
        return None
    started = time.perf_counter()
    first, last = stale
    result = run_job(
        settings,
        QUALITY_JOB,
        tags=range_tags(first.partition_key, last.partition_key),
        instance=instance,
        bounds=bounds_now(settings, last),
    )
    run = SystemRun(QUALITY_ASSET, first, last, len(month_range(first, last)), time.perf_counter() - started)
    if not result.success:
        run.failure = failure_message(result)
        return run
    run.compute_seconds = asset_seconds(result, QUALITY_ASSET)
    run.failed_checks = failed_checks(result)
    return run


def asset_seconds(result, step: str) -> float | None:
    """The asset's own work in a run (its `seconds` metadata), without Dagster's run start and bookkeeping."""
    done = result.asset_materializations_for_node(step)
    seconds = done[-1].metadata.get("seconds") if done else None
    return seconds.value if seconds is not None else None


def feed_balance(con: duckdb.DuckDBPyConnection) -> list[FeedCounts]:
    """Rows in, valid, quarantined and replaced per feed, from the DuckDB file."""
    counts = []
    for feed in FEEDS.values():
        files = [r[0] for r in con.execute(f"SELECT DISTINCT _source_file FROM typed_{feed.name}").fetchall()]
        counts.append(feed_counts(con, feed, files))
    return counts


def quarantine_entries(con: duckdb.DuckDBPyConnection, limit: int) -> tuple[int, list[QuarantineEntry]]:
    """How many entries the quarantine holds, and the first `limit` of them in file order."""
    total = con.execute(f"SELECT count(*) FROM {QUARANTINE_TABLE}").fetchall()[0][0]
    rows = con.execute(
        f"SELECT feed, reason, source_file, source_line, coalesce(record_key, ''), coalesce(detail, '') "
        f"FROM {QUARANTINE_TABLE} ORDER BY feed, source_file, source_line NULLS FIRST LIMIT ?",
        [limit],
    ).fetchall()
    return total, [QuarantineEntry(*row) for row in rows]


def skipped_entries(con: duckdb.DuckDBPyConnection, limit: int) -> tuple[int, list[SkippedEntry]]:
    """How many entries of the raw folder the last ingest did not read, and the first `limit` by path."""
    total = con.execute(f"SELECT count(*) FROM {SKIPPED_TABLE}").fetchall()[0][0]
    rows = con.execute(
        f"SELECT feed, path, reason FROM {SKIPPED_TABLE} ORDER BY path, reason LIMIT ?", [limit]
    ).fetchall()
    return total, [SkippedEntry(*row) for row in rows]


# The rankings column with a rating as the system's community writes it, where it has one.
PUBLISHED_FORM = "display"


def top_rows(warehouse: Warehouse, system: str, month: Month, count: int) -> list[dict]:
    """The first `count` rows of a system's month (rank, player, rating, and the rating's published
    form where the system has one, DiWZ's `1782-12`), of its main list where it has several
    (Ghost's overall); empty if none was written."""
    path = warehouse.rankings(system, month)
    if not path.exists():
        return []
    cls = system_class(system)
    columns = ["rank", "player_id", "player_name", "rating"]
    if PUBLISHED_FORM in dict(model_columns(cls.rankings_model)):
        columns.append(PUBLISHED_FORM)
    if cls.list_column is None:
        return read_parquet(path, columns=columns).slice(0, count).to_pylist()
    table = read_parquet(path, columns=[*columns, cls.list_column])
    main = table.filter(pc.equal(table[cls.list_column], cls.lists[0])).select(columns)
    return main.slice(0, count).to_pylist()
