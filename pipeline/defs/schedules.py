"""The monthly schedule: early each month, an ingest run that asks for the month just ended."""

from __future__ import annotations

import datetime as dt

from dagster import DefaultScheduleStatus, RunRequest, ScheduleDefinition, ScheduleEvaluationContext, schedule

from pipeline.core.months import Month
from pipeline.defs.jobs import AssetJob
from pipeline.defs.tags import THROUGH_TAG

MONTHLY_TABLES = "monthly_tables"
# 06:00 on the 2nd: Dip2000 publishes its table early in the month.
MONTHLY_CRON = "0 6 2 * *"


def month_just_ended(now: dt.datetime) -> Month:
    """The calendar month before `now`'s month."""
    return Month.of(now.date()).previous()


def monthly_request(scheduled_at: dt.datetime) -> RunRequest:
    """The ingest run of a scheduled tick; rate_after_ingest then rates through the month just ended."""
    month = month_just_ended(scheduled_at)
    return RunRequest(run_key=f"monthly-{month}", tags={THROUGH_TAG: str(month)})


def build_schedules(ingest_job: AssetJob) -> list[ScheduleDefinition]:
    @schedule(
        name=MONTHLY_TABLES,
        cron_schedule=MONTHLY_CRON,
        job=ingest_job,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Early each month: ingest, then (via rate_after_ingest) every system through the month just ended.",
    )
    def monthly_tables(context: ScheduleEvaluationContext) -> RunRequest:
        return monthly_request(context.scheduled_execution_time)

    return [monthly_tables]
