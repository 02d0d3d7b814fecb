"""The sensors: new raw files start an ingest; a successful ingest starts every system's stale months;
the last of the systems' runs to finish starts the quality tables' stale months.

Both receive the code location's resource, so they see the settings the code location resolved.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dagster import (
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SkipReason,
    run_status_sensor,
    sensor,
)

from pipeline.core.feed_spec import FILE_EXTENSIONS
from pipeline.core.months import Month
from pipeline.defs.jobs import Jobs, rating_job_name
from pipeline.defs.partitions import PartitionBounds
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import THROUGH_TAG, range_tags
from pipeline.ingest.deliveries import delivery_file_states
from pipeline.rating.inputs import last_data_month
from pipeline.rating.planning import plan_all
from pipeline.rating.quality import quality_fingerprints, stale_quality_range
from pipeline.settings import Settings
from pipeline.warehouse.store import Warehouse

NEW_RAW_FILES = "new_raw_files"
RATE_AFTER_INGEST = "rate_after_ingest"
SCORE_AFTER_RATING = "score_after_rating"
# A run in one of these states may still write a system's months.
UNFINISHED_STATUSES = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
]


def raw_folder_signature(raw_dir: Path) -> str:
    """A hash of every delivery file's path, size and modification time."""
    entries = [
        [path.relative_to(raw_dir).as_posix(), state]
        for path, state in delivery_file_states(raw_dir)
        if path.suffix.lower() in FILE_EXTENSIONS
    ]
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


def files_cursor(cursor: str | None) -> tuple[str | None, str | None]:
    """The raw folder's signature at the last look and the one last asked to ingest. A cursor
    of an earlier version is the bare signature last asked for."""
    if not cursor:
        return None, None
    try:
        value = json.loads(cursor)
    except ValueError:
        return None, cursor
    if not isinstance(value, dict):
        return None, cursor
    return value.get("seen"), value.get("asked")


def new_files_request(raw_dir: Path, cursor: str | None) -> tuple[RunRequest | SkipReason, str | None]:
    """An ingest run when the raw folder's files differ from those last asked for and have stayed
    as they are since the last look (one sensor interval: a copy in progress changes them), and
    the new cursor."""
    if not raw_dir.is_dir():
        return SkipReason(f"raw folder {raw_dir} does not exist"), cursor
    seen, asked = files_cursor(cursor)
    signature = raw_folder_signature(raw_dir)
    if signature == asked:
        return SkipReason("no new or changed files"), cursor
    if signature != seen:
        return (
            SkipReason(
                "files were added or changed since the last look; ingest once they stay the same for an interval"
            ),
            json.dumps({"seen": signature, "asked": asked}),
        )
    return RunRequest(run_key=f"files-{signature[:16]}"), json.dumps({"seen": signature, "asked": signature})


def rating_requests(
    warehouse: Warehouse,
    settings: Settings,
    through: Month | None,
    key: str,
    bounds: PartitionBounds | None = None,
) -> tuple[list[RunRequest], list[str]]:
    """One range run per system that has missing or stale months, up to `through` (or the data's
    end), and why a system could not be requested: its data now starts before the partitions
    loaded, or reaches past their last month."""
    last_partition = bounds.last if bounds else None  # None: partitions to the current month
    if last_partition is not None and through is not None and through > last_partition:
        # Partitions that end at the data: the months after the data are no work (data after the
        # last partition is, and is reported below).
        data_end = last_data_month(warehouse)
        through = max(last_partition, data_end) if data_end else last_partition
    requests, problems = [], []
    for plan in plan_all(warehouse, settings, None, through):
        if plan.first is None or plan.last is None:
            continue
        loaded = (bounds.first if bounds else {}).get(plan.system)
        if loaded is not None and plan.first < loaded:
            problems.append(
                f"{plan.system}: its data now starts at {plan.first}, before its first partition "
                f"{loaded}; reload the code location (Deployment → Reload) to rate it"
            )
            continue
        if last_partition is not None and plan.last > last_partition:
            problems.append(
                f"{plan.system}: its data now reaches {plan.last}, after the last partition {last_partition} "
                f"(DIPRANK_PARTITIONS_END=data); reload the code location (Deployment → Reload) to rate it"
            )
            continue
        requests.append(
            RunRequest(
                run_key=f"{key}-{plan.system}-{plan.first}-{plan.last}",
                job_name=rating_job_name(plan.system),
                tags=range_tags(*(month.partition_key for month in plan.bounds())),
            )
        )
    return requests, problems


def requests_after_ingest(
    settings: Settings, through_tag: str | None, run_id: str, bounds: PartitionBounds
) -> tuple[list[RunRequest], list[str]]:
    """The rating runs after an ingest: through the schedule's month (or further, if data reaches
    further), else through the data's last month."""
    warehouse = Warehouse.of(settings)
    through = Month.parse(through_tag) if through_tag else None
    if through is not None:
        data_end = last_data_month(warehouse)
        through = max(through, data_end) if data_end else through
    return rating_requests(warehouse, settings, through, run_id, bounds)


def unfinished_rating_jobs(instance: DagsterInstance, jobs: Jobs) -> list[str]:
    """The rating jobs that have a queued or running run."""
    return sorted(
        job.name
        for job in jobs.rating.values()
        if instance.get_runs_count(RunsFilter(job_name=job.name, statuses=UNFINISHED_STATUSES))
    )


def quality_request(warehouse: Warehouse, pending: list[str] | None = None) -> RunRequest | SkipReason:
    """A quality run over the months whose tables are missing or stale, once no system's run is
    pending (the last of an ingest's runs to finish asks; the others would score tables it changes).

    The run key names the outputs scored, so two runs finishing together ask for one quality run."""
    if pending:
        return SkipReason(f"waiting for {', '.join(pending)}; the last system's run to finish scores")
    fingerprints = quality_fingerprints(warehouse)
    stale = stale_quality_range(warehouse, fingerprints)
    if stale is None:
        return SkipReason("every quality table is current")
    first, last = stale
    scored = hashlib.sha256(json.dumps(sorted(fingerprints.values())).encode()).hexdigest()
    return RunRequest(
        run_key=f"quality-{first}-{last}-{scored[:16]}",
        tags=range_tags(first.partition_key, last.partition_key),
    )


def build_sensors(jobs: Jobs, bounds: PartitionBounds) -> list[SensorDefinition]:
    @sensor(
        name=NEW_RAW_FILES,
        job=jobs.ingest,
        minimum_interval_seconds=60,
        default_status=DefaultSensorStatus.RUNNING,
        description=(
            "Starts ingestion when files in the raw folder were added or changed and have stayed the same "
            "since the last check; rate_after_ingest follows."
        ),
    )
    def new_raw_files(context: SensorEvaluationContext, diprank: DiprankResource):
        result, cursor = new_files_request(diprank.settings().raw_path, context.cursor)
        if cursor != context.cursor:
            context.update_cursor(cursor)
        return result

    @run_status_sensor(
        name=RATE_AFTER_INGEST,
        run_status=DagsterRunStatus.SUCCESS,
        monitored_jobs=[jobs.ingest],
        request_jobs=list(jobs.rating.values()),
        default_status=DefaultSensorStatus.RUNNING,
        description="After a successful ingest, computes each system from its first stale month to the end.",
    )
    def rate_after_ingest(context, diprank: DiprankResource):
        requests, problems = requests_after_ingest(
            diprank.settings(), context.dagster_run.tags.get(THROUGH_TAG), context.dagster_run.run_id, bounds
        )
        for problem in problems:
            context.log.warning(problem)
        return requests or SkipReason("; ".join(problems) or "every system is up to date")

    @run_status_sensor(
        name=SCORE_AFTER_RATING,
        run_status=DagsterRunStatus.SUCCESS,
        monitored_jobs=list(jobs.rating.values()),
        request_job=jobs.quality,
        default_status=DefaultSensorStatus.RUNNING,
        description=(
            "When the last queued or running system's run succeeds, scores the quality tables "
            "from their first stale month."
        ),
    )
    def score_after_rating(context, diprank: DiprankResource):
        pending = unfinished_rating_jobs(context.instance, jobs)
        return quality_request(Warehouse.of(diprank.settings()), pending)

    return [new_raw_files, rate_after_ingest, score_after_rating]
