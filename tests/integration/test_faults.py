"""Faults a deployment meets, on the production profile: a Celery worker's process killed in the
middle of a system's step, the S3 store stopped while a system writes, PostgreSQL restarted during a
run. Each is followed by a normal run whose outputs, and the months Dagster shows, equal a run from
scratch."""

from __future__ import annotations

import glob
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from pipeline.defs.jobs import rating_job_name
from pipeline.defs.tags import rankings_asset_name
from tests.integration.servers import BIN, BUCKET, DEPLOYMENT_WAREHOUSE, REPO
from tests.integration.test_production import PENDING, local_files, remote_files, runs_of
from tests.support import environment
from tests.test_cli import lock_holder

pytestmark = pytest.mark.integration

# One warehouse for the three cases, each rating a system of its own, so that ingest is paid once.
PREFIX = "faults"
WAREHOUSE = f"s3://{BUCKET}/{PREFIX}"
FEEDS = ("ingest", "validated", "quarantine", "format.json")
OUTPUTS = ("rankings", "history", "awards", "state")
MONTH_FOLDER = re.compile(r"^rankings/[^/]+/year=(\d{4})/month=(\d{2})/")


def system_files(files: dict[str, bytes], system: str) -> dict[str, bytes]:
    """The validated feeds and one system's outputs (the quality table depends on every system)."""
    return {
        name: data
        for name, data in files.items()
        if name.split("/")[0] in FEEDS or (name.split("/")[0] in OUTPUTS and name.split("/")[1] == system)
    }


def diprank_run(stack, system: str) -> subprocess.Popen:
    command = ["run", "--raw", str(REPO / "data" / "raw"), "--warehouse", WAREHOUSE, "--systems", system]
    return subprocess.Popen(
        [str(BIN / "diprank"), *command],
        env=stack.env(warehouse=DEPLOYMENT_WAREHOUSE),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def step_process(stack, run: subprocess.Popen, system: str, timeout: float = 300) -> int | None:
    """The pid of the process running the system's step (it holds the system's lock), once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and run.poll() is None:
        holder = step_process_now(stack, run, system)
        if holder is not None:
            return holder
        time.sleep(0.01)
    return None


def step_process_now(stack, run: subprocess.Popen, system: str) -> int | None:
    for lock in glob.glob(str(stack.root / "local" / f"*{PREFIX}" / f".lock-{system}")):
        holder = lock_holder(Path(lock), besides=run.pid)
        if holder is not None:
            return holder
    return None


def finish(run: subprocess.Popen) -> tuple[int, str]:
    out, err = run.communicate(timeout=600)
    return run.returncode, out + err


def dagster_months(stack, system: str) -> set[str]:
    """The months Dagster shows as materialized for the system (its instance in PostgreSQL)."""
    with environment(DIPRANK_POSTGRES_URL=stack.postgres_url):
        with DagsterInstance.from_config(str(stack.dagster_home)) as instance:
            return instance.get_materialized_partitions(AssetKey(rankings_asset_name(system)))


def assert_repaired(stack, embedded_run: Path, system: str) -> None:
    """A normal run after the fault succeeds and leaves no Dagster run in progress, the files a run
    from scratch writes, and Dagster showing exactly the months on disk."""
    code, output = finish(diprank_run(stack, system))
    assert code == 0, output[-3000:]
    assert not [r for r in runs_of(stack, WAREHOUSE) if r["status"] in PENDING]
    expected = system_files(local_files(embedded_run), system)
    actual = system_files(remote_files(stack.env(warehouse=DEPLOYMENT_WAREHOUSE), PREFIX), system)
    assert sorted(actual) == sorted(expected)
    different = [name for name in expected if expected[name] != actual[name]]
    assert different == [], f"{len(different)} files differ, e.g. {different[:5]}"
    on_disk = {f"{m[1]}-{m[2]}-01" for name in actual if (m := MONTH_FOLDER.match(name))}
    assert on_disk and dagster_months(stack, system) == on_disk


def test_a_celery_worker_process_killed_mid_step_fails_clearly_and_the_next_run_repairs(stack, embedded_run):
    run = diprank_run(stack, "club")
    victim = step_process(stack, run, "club")
    assert victim is not None, "the club step never started"
    time.sleep(1)  # well into the step: some months written, none of the last ones
    os.kill(victim, signal.SIGKILL)  # the pool process running the task, as the OOM killer picks it
    code, output = finish(run)
    assert code != 0
    assert (
        "diprank: club failed: club_rankings: the Celery worker process running it was killed by SIGKILL" in output
    ), output[-3000:]
    assert "Traceback" not in output
    club_runs = [r for r in runs_of(stack, WAREHOUSE) if r["job"] == rating_job_name("club")]
    assert club_runs[-1]["status"] == "FAILURE"
    assert_repaired(stack, embedded_run, "club")


def test_the_s3_store_stopped_for_ten_seconds_while_a_system_writes(stack, embedded_run):
    run = diprank_run(stack, "eagle")
    assert step_process(stack, run, "eagle") is not None, "the eagle step never started"
    time.sleep(1)
    stack.pause_s3(10)
    # The step was still writing when the store came back: its requests waited (botocore's
    # timeouts are 60 s) and went on.
    assert step_process_now(stack, run, "eagle") is not None
    code, output = finish(run)
    assert code == 0, output[-3000:]
    assert_repaired(stack, embedded_run, "eagle")


def test_postgresql_restarted_during_a_run(stack, embedded_run):
    run = diprank_run(stack, "diwz")
    assert step_process(stack, run, "diwz") is not None, "the diwz step never started"
    time.sleep(1)
    stack.restart_postgres()
    assert step_process_now(stack, run, "diwz") is not None
    code, output = finish(run)
    # dagster-postgres opens a connection per operation and retries one that fails for about 6 s:
    # a restart (about a second down) costs the run nothing. A statement cut mid-flight fails the
    # run, and the message names the database.
    if code != 0:
        failure = [line for line in output.splitlines() if line.startswith("diprank: diwz failed: ")]
        assert failure and re.search(r"(?i)postgres|database|connection", failure[0]), output[-3000:]
    assert "Traceback" not in output
    assert_repaired(stack, embedded_run, "diwz")
