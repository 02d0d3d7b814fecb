"""The Dagster code location: assets, resources, jobs, the schedule and the sensors of diprank."""
from __future__ import annotations

from dagster import Definitions

from assets.raw_feeds import raw_feed_assets
from assets.ratings import rating_assets
from assets.validated_feeds import validated_feed_assets
from pipeline.defs.automation import schedules, sensors
from pipeline.defs.executors import executor_from_env
from pipeline.defs.jobs import ingest_job, rating_jobs
from pipeline.defs.resources import diprank_resource

defs = Definitions(
    assets=[*raw_feed_assets, *validated_feed_assets, *rating_assets],
    resources={"diprank": diprank_resource()},
    jobs=[ingest_job, *rating_jobs.values()],
    schedules=schedules,
    sensors=sensors,
    executor=executor_from_env(),
)


def job_definition(name: str):
    """A job of the code location by name: the target of reconstructable runs (`diprank run`)."""
    return defs.resolve_job_def(name)
