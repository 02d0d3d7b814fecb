"""The run coordinator that gives every run its writer tags, however it was launched.

Runs of diprank's jobs carry their writer tags from the job. A run launched from the UI on an
asset selection (Materialize, a partition-range backfill) runs Dagster's implicit asset job,
which has no tags of its own: before such a run is queued, this coordinator copies the writer
tags of the named job that writes the same assets, as the code location resolved them, so the
tag values are the same canonical warehouse location whichever way the run came.
"""
from __future__ import annotations

from dagster import DagsterRun
from dagster._core.run_coordinator import QueuedRunCoordinator, SubmitRunContext

from pipeline.defs.jobs import INGEST_JOB, rating_job_name
from pipeline.defs.tags import WRITER_TAG_PREFIX, writing_system


def writer_job_names(asset_names: set[str]) -> set[str]:
    """The named jobs whose writes cover a run of these assets."""
    systems = {writing_system(name) for name in asset_names}
    return {rating_job_name(system) if system else INGEST_JOB for system in systems}


def missing_writer_tags(run: DagsterRun, workspace) -> dict[str, str]:
    """The writer tags the run lacks, read from the code location's own jobs."""
    if run.remote_job_origin is None:
        return {}
    origin = run.remote_job_origin
    repository = workspace.get_code_location(origin.location_name).get_repository(
        origin.repository_origin.repository_name)
    if run.asset_selection is not None:
        writers = writer_job_names({key.to_user_string() for key in run.asset_selection})
    else:  # a run of a job by name: its own tags (a launcher may not have applied them)
        writers = {run.job_name}
    wanted: dict[str, str] = {}
    for job_name in sorted(writers):
        if repository.has_job(job_name):
            wanted.update({k: v for k, v in repository.get_full_job(job_name).tags.items()
                           if k.startswith(WRITER_TAG_PREFIX)})
    return {k: v for k, v in wanted.items() if run.tags.get(k) != v}


class WriterTagsRunCoordinator(QueuedRunCoordinator):
    """Dagster's queued run coordinator, with writer tags on every run it queues."""

    def submit_run(self, context: SubmitRunContext) -> DagsterRun:
        tags = missing_writer_tags(context.dagster_run, context.workspace)
        if tags:
            self._instance.add_run_tags(context.dagster_run.run_id, tags)
            context = context._replace(dagster_run=self._instance.get_run_by_id(context.dagster_run.run_id))
        return super().submit_run(context)
