"""The production profile against real servers: PostgreSQL storage, Dagster's queued run coordinator with concurrency pools,
two Celery workers and the warehouse on an S3 emulator. Its outputs equal the embedded run's."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from pipeline.defs.jobs import QUALITY_JOB, rating_job_name
from pipeline.systems.registry import SYSTEM_NAMES
from tests.integration.conftest import TIMINGS
from tests.integration.servers import BIN, BUCKET, DEPLOYMENT_WAREHOUSE, REPO

pytestmark = pytest.mark.integration

SYSTEM_JOBS = {rating_job_name(system) for system in SYSTEM_NAMES}
PENDING = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING")
# Local files that are bookkeeping of one machine, not warehouse contents.
LOCAL_ONLY = ("diprank.duckdb",)


def local_files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.name not in LOCAL_ONLY
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def remote_files(env: dict[str, str], prefix: str) -> dict[str, bytes]:
    import s3fs  # the integration extra; `make test` collects this module without it

    fs = s3fs.S3FileSystem(
        key=env["AWS_ACCESS_KEY_ID"],
        secret=env["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
        use_listings_cache=False,
    )
    base = f"{BUCKET}/{prefix}"
    return {path[len(base) + 1 :]: fs.cat_file(path) for path in sorted(fs.find(base))}


def assert_same_outputs(embedded: Path, env: dict[str, str], prefix: str) -> None:
    expected, actual = local_files(embedded), remote_files(env, prefix)
    assert sorted(actual) == sorted(expected)
    assert any(name.startswith("rankings/diwz/") for name in actual)
    different = [name for name in expected if expected[name] != actual[name]]
    assert different == [], f"{len(different)} files differ, e.g. {different[:5]}"


def runs_of(stack, warehouse: str) -> list[dict]:
    """Dagster's run records of one warehouse, read from the PostgreSQL run storage."""
    import psycopg2  # the production extra; `make test` collects this module without it

    with psycopg2.connect(host="127.0.0.1", port=stack.pg_port, user="dagster", dbname="dagster") as con:
        with con.cursor() as cur:
            cur.execute(
                "SELECT r.run_id, r.pipeline_name, r.status, r.start_time, r.end_time FROM runs r "
                "WHERE EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.run_id "
                "AND t.key = 'diprank/warehouse' AND t.value = %s) ORDER BY r.create_timestamp",
                [warehouse],
            )
            return [dict(zip(("run_id", "job", "status", "start", "end"), row)) for row in cur.fetchall()]


def overlap(a: dict, b: dict) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def most_at_once(runs: list[dict]) -> int:
    return max(sum(1 for other in runs if other["start"] <= run["start"] < other["end"]) for run in runs)


def test_cli_run_on_the_production_profile_equals_the_embedded_run(stack, embedded_run):
    # `--warehouse` differs from the deployment's: the CLI passes its folders to the workers in the run config.
    prefix = "cli"
    warehouse = f"s3://{BUCKET}/{prefix}"
    env = stack.env(warehouse=DEPLOYMENT_WAREHOUSE)
    before = stack.steps_done_by_worker()
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "diprank"), "run", "--raw", str(REPO / "data" / "raw"), "--warehouse", warehouse],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    TIMINGS["`diprank run`, production profile (PostgreSQL, 2 Celery workers, S3 emulator)"] = (
        time.perf_counter() - started
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_same_outputs(embedded_run, env, prefix)
    runs = runs_of(stack, warehouse)
    # Ingest, every system, then the quality table over what they wrote.
    assert runs[0]["job"] == "ingest" and sorted(r["job"] for r in runs[1:-1]) == sorted(SYSTEM_JOBS)
    assert runs[-1]["job"] == QUALITY_JOB
    # Every step (one a run) ran on a Celery worker, and both workers consume the deployment's
    # queue. Which worker takes a step is the broker's choice: one worker took all five once.
    after = stack.steps_done_by_worker()
    assert sum(after) - sum(before) == len(runs), (before, after)
    queues = stack.queues_by_worker(env)
    assert sorted(worker.split("@")[0] for worker in queues) == ["diprank1", "diprank2"], queues
    assert all(names == ["dagster"] for names in queues.values()), queues
    assert all(r["status"] == "SUCCESS" for r in runs)


def wait_for(predicate, what: str, timeout: float, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(2)
    raise AssertionError(f"timed out waiting for {what}; daemon log:\n{log.read_text()[-4000:]}")


def test_daemon_queues_runs_and_the_systems_run_side_by_side(stack, embedded_run):
    warehouse = DEPLOYMENT_WAREHOUSE
    prefix = warehouse.removeprefix(f"s3://{BUCKET}/")
    env = stack.env(warehouse=warehouse)
    started = time.perf_counter()
    daemon = stack.start_daemon(env)  # its sensors see the raw files: ingest, then one run per system

    def all_rated():
        runs = runs_of(stack, warehouse)
        done = {r["job"] for r in runs if r["status"] == "SUCCESS"}
        failed = [r for r in runs if r["status"] == "FAILURE"]
        assert not failed, failed
        if {"ingest", *SYSTEM_JOBS, QUALITY_JOB} <= done and not any(r["status"] in PENDING for r in runs):
            return runs
        return None

    runs = wait_for(all_rated, "the sensors' ingest and rating runs", 900, stack.root / "daemon.log")
    TIMINGS["sensor-driven runs through the daemon (ingest, every system, quality)"] = time.perf_counter() - started
    assert_same_outputs(embedded_run, env, prefix)
    systems = [r for r in runs if r["job"] in SYSTEM_JOBS]
    assert most_at_once(systems) >= 2, f"the system runs never overlapped: {systems}"
    ingest = [r for r in runs if r["job"] == "ingest"]
    assert all(not overlap(i, s) for i in ingest for s in systems)

    # The daemon goes away; two runs of one system are queued meanwhile and wait in PostgreSQL.
    stack.stop_process(daemon)
    tags = json.dumps(
        {"dagster/asset_partition_range_start": "2020-01-01", "dagster/asset_partition_range_end": "2020-12-01"}
    )
    for _ in range(2):
        launched = subprocess.run(
            [
                str(BIN / "dagster"),
                "job",
                "launch",
                "-w",
                str(REPO / "workspace.yaml"),
                "-j",
                "club_job",
                "--tags",
                tags,
            ],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert launched.returncode == 0, launched.stdout + launched.stderr
    club_runs = [r for r in runs_of(stack, warehouse) if r["job"] == "club_job"]
    assert [r["status"] for r in club_runs[-2:]] == ["QUEUED", "QUEUED"]
    # A new daemon starts them; the club pool's limit runs them one after the other.
    stack.start_daemon(env)

    def both_club_runs_done():
        club = [r for r in runs_of(stack, warehouse) if r["job"] == "club_job"]
        return club[-2:] if len(club) >= len(club_runs) and all(r["status"] == "SUCCESS" for r in club[-2:]) else None

    first, second = wait_for(both_club_runs_done, "the two club runs", 600, stack.root / "daemon.log")
    assert not overlap(first, second), (first, second)
    assert_same_outputs(embedded_run, env, prefix)  # recomputing a range changes no byte
