"""Fixtures of the integration suite: one stack of servers for the session, one embedded run to compare with."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.servers import BIN, REPO, ServerMissing, start_stack

# Wall times of the runs, printed at the end (docs/DEPLOYMENT.md quotes them).
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="session")
def stack(request):
    try:
        running = start_stack(workers=2)
    except ServerMissing as missing:
        pytest.fail(f"{missing} (`bash .ci/run` installs the servers)")
    yield running
    running.stop()
    # The servers' data and logs (about 90 MB) are kept only when something failed, to read them.
    if request.session.testsfailed:
        print(f"\nintegration servers' logs and data kept in {running.root}")
    else:
        shutil.rmtree(running.root, ignore_errors=True)


@pytest.fixture(scope="session")
def embedded_run(tmp_path_factory) -> Path:
    """The embedded default on the sample data: local folder, SQLite instance, in-process steps."""
    root = tmp_path_factory.mktemp("embedded")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIPRANK_", "DAGSTER_", "AWS_"))}
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(BIN / "diprank"),
            "run",
            "--raw",
            str(REPO / "data" / "raw"),
            "--warehouse",
            str(root / "warehouse"),
            "--quiet",
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    TIMINGS["embedded run (SQLite, in process, local folder)"] = time.perf_counter() - started
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "warehouse"


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.section("diprank integration timings")
        for what, seconds in TIMINGS.items():
            terminalreporter.write_line(f"{what}: {seconds:.1f} s")
