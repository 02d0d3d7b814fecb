"""The monthly schedule and the sensors: new files are ingested, then every stale month is rated."""
from __future__ import annotations

import datetime as dt
import hashlib
import json

from dagster import (
    DagsterRunStatus, DefaultScheduleStatus, DefaultSensorStatus, RunRequest, ScheduleEvaluationContext,
    SensorEvaluationContext, SkipReason, run_status_sensor, schedule, sensor,
)

from pipeline import settings as config
from pipeline.core.feed_spec import FEEDS, FILE_EXTENSIONS
from pipeline.ingest.staging import delivery_files
from pipeline.defs.jobs import INGEST_JOB, ingest_job, rating_job_name, rating_jobs
from pipeline.core.months import Month
from pipeline.rating.planning import plan_all
from pipeline.warehouse.store import Warehouse

THROUGH_TAG = "diprank/through"  # the last month the ratings after this ingest must reach
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def month_just_ended(now: dt.datetime) -> Month:
    """The calendar month before `now`'s month."""
    return Month.of(now.date()).previous()


@schedule(
    name="monthly_tables",
    cron_schedule="0 6 2 * *",  # 06:00 on the 2nd: Dip2000 publishes its table early in the month
    job=ingest_job,
    default_status=DefaultScheduleStatus.RUNNING,
    description="Early each month: ingest, then (via rate_after_ingest) every system through the month just ended.",
)
def monthly_tables(context: ScheduleEvaluationContext) -> RunRequest:
    month = month_just_ended(context.scheduled_execution_time)
    return RunRequest(run_key=f"monthly-{month}", tags={THROUGH_TAG: str(month)})


def raw_folder_signature(raw_dir) -> str:
    """A hash of every delivery file's path, size and modification time."""
    entries = []
    for feed in FEEDS.values():
        for path in delivery_files(raw_dir, feed):
            if path.suffix.lower() in FILE_EXTENSIONS:
                stat = path.stat()
                entries.append([path.relative_to(raw_dir).as_posix(), stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


@sensor(
    name="new_raw_files",
    job=ingest_job,
    minimum_interval_seconds=60,
    default_status=DefaultSensorStatus.RUNNING,
    description="Starts ingestion when files in the raw folder are added or changed; rate_after_ingest follows.",
)
def new_raw_files(context: SensorEvaluationContext):
    raw_dir = config.Settings.from_env().raw_dir
    if not raw_dir.is_dir():
        return SkipReason(f"raw folder {raw_dir} does not exist")
    signature = raw_folder_signature(raw_dir)
    if signature == context.cursor:
        return SkipReason("no new or changed files")
    context.update_cursor(signature)
    return RunRequest(run_key=f"files-{signature[:16]}")


def rating_requests(warehouse: Warehouse, settings: config.Settings, through: Month | None,
                    key: str) -> list[RunRequest]:
    """One range run per system that has missing or stale months, up to `through` (or the data's end)."""
    requests = []
    for plan in plan_all(warehouse, settings, None, through):
        if plan.first is None:
            continue
        requests.append(RunRequest(
            run_key=f"{key}-{plan.system}-{plan.first}-{plan.last}",
            job_name=rating_job_name(plan.system),
            tags={RANGE_START: plan.first.partition_key, RANGE_END: plan.last.partition_key},
        ))
    return requests


@run_status_sensor(
    name="rate_after_ingest",
    run_status=DagsterRunStatus.SUCCESS,
    monitored_jobs=[ingest_job],
    request_jobs=list(rating_jobs.values()),
    default_status=DefaultSensorStatus.RUNNING,
    description="After a successful ingest, computes each system from its first stale month to the end.",
)
def rate_after_ingest(context):
    settings = config.Settings.from_env()
    through_tag = context.dagster_run.tags.get(THROUGH_TAG)
    through = Month.parse(through_tag) if through_tag else None
    if through is not None:
        # The schedule asks for the month just ended; data may already reach further.
        from pipeline.rating.inputs import last_data_month

        data_end = last_data_month(Warehouse(settings.warehouse_dir))
        through = max(through, data_end) if data_end else through
    requests = rating_requests(Warehouse(settings.warehouse_dir), settings, through, context.dagster_run.run_id)
    return requests or SkipReason("every system is up to date")


schedules = [monthly_tables]
sensors = [new_raw_files, rate_after_ingest]

__all__ = ["schedules", "sensors", "INGEST_JOB"]
