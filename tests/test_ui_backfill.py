"""A backfill launched the way the UI's Materialize dialog does it, on a real webserver and daemon
(`dagster dev` on a temporary instance), writes the same files as `diprank run` for that range."""

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pipeline.synthetic.generator import synthetic_games
from tests.support import REPO, environment, run_cli, write_csv

DAGSTER = REPO / ".venv" / "bin" / "dagster"
MONTHS = ["2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01"]
BACKFILL_ENDED = ("COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED")
BACKFILL_FAILED = ("COMPLETED_FAILED", "FAILED", "CANCELED")
RUN_ENDED = ("SUCCESS", "FAILURE", "CANCELED")

LAUNCH = """
mutation($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}"""
STATUS = """
query($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    __typename
    ... on PartitionBackfill { status runs(limit: 10) { runId status tags { key value } } }
  }
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str, variables: dict) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    assert "errors" not in answer, answer
    return answer["data"]


def wait_for_webserver(port: int, server: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "dagster dev exited"
        try:
            graphql(port, "{ version }", {})
            return
        except OSError:
            time.sleep(1)
    raise AssertionError("the webserver did not answer")


def club_files(warehouse: Path) -> dict[str, bytes]:
    files = {}
    for kind in ("rankings", "history"):
        for path in sorted((warehouse / kind / "club").rglob("*.parquet")):
            files[path.relative_to(warehouse).as_posix()] = path.read_bytes()
    return files


@pytest.mark.slow
@pytest.mark.skipif(not DAGSTER.exists(), reason="needs the project's .venv (make test)")
def test_a_ui_backfill_writes_what_diprank_run_writes(tmp_path):
    raw = tmp_path / "raw"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(21, 60, 20, dt.date(2020, 1, 1), dt.date(2020, 4, 30))))
    expected, warehouse, home = tmp_path / "expected", tmp_path / "w", tmp_path / "home"
    with environment(DAGSTER_HOME=str(tmp_path / "cli-home")):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(expected), "--systems", "club", "--quiet")
        assert code == 0, out + err
        # The UI's warehouse: ingested, nothing rated yet (dip_pouch has no events here).
        code, out, err = run_cli(
            "run", "--raw", str(raw), "--warehouse", str(warehouse), "--systems", "dip_pouch", "--quiet"
        )
        assert code == 0, out + err
    assert club_files(expected) and not club_files(warehouse)

    from pipeline.defs.instance import prepare_local_instance

    prepare_local_instance(home)
    (tmp_path / "workspace.yaml").write_text(
        "load_from:\n  - python_module:\n      module_name: pipeline.definitions\n"
        f"      working_directory: {tmp_path}\n      location_name: diprank\n"
    )
    port = free_port()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DIPRANK_RAW_DIR": str(raw),
        "DIPRANK_WAREHOUSE_DIR": str(warehouse),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    server = subprocess.Popen(
        [str(DAGSTER), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_webserver(port, server, 120)
        launched = graphql(
            port,
            LAUNCH,
            {"backfillParams": {"assetSelection": [{"path": ["club_rankings"]}], "partitionNames": MONTHS}},
        )
        result = launched["launchPartitionBackfill"]
        assert result["__typename"] == "LaunchBackfillSuccess", result
        # Done when its run has ended: the daemon marks the backfill itself completed only at its
        # next tick, up to 30 seconds later, which adds nothing to what is checked here.
        deadline, backfill = time.monotonic() + 240, None
        while time.monotonic() < deadline:
            backfill = graphql(port, STATUS, {"backfillId": result["backfillId"]})["partitionBackfillOrError"]
            if backfill["status"] in BACKFILL_ENDED or any(r["status"] in RUN_ENDED for r in backfill["runs"]):
                break
            time.sleep(1)
        assert backfill and backfill["status"] not in BACKFILL_FAILED, backfill
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    (run,) = backfill["runs"]  # one run for the range: the asset's backfill policy
    assert run["status"] == "SUCCESS"
    mine, theirs = club_files(warehouse), club_files(expected)
    assert sorted(mine) == sorted(theirs)
    assert [p for p in mine if mine[p] != theirs[p]] == []
    # The daemon recorded each planned month, the run worker each written one, in the local event log.
    from dagster import AssetKey, DagsterEventType, DagsterInstance

    with DagsterInstance.from_config(str(home)) as instance:
        planned = instance.get_records_for_run(
            run["runId"], of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        ).records
        assert sorted(r.event_log_entry.dagster_event.partition for r in planned) == MONTHS
        assert instance.get_materialized_partitions(AssetKey("club_rankings")) == set(MONTHS)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:xdist"]))
