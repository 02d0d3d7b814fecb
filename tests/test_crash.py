"""Crash safety: SIGKILL at many points of a run never leaves a torn file, and a rerun finishes
byte-identical to an uninterrupted run."""

import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from pipeline.synthetic.generator import synthetic_games
from tests.support import REPO, tree_bytes, write_csv

OUTPUTS = ("rankings", "history", "awards", "validated", "quarantine", "ingest")
TABLES = ("rankings/", "history/", "awards/")


def tables_written(changed: set[str]) -> int:
    return sum(path.startswith(TABLES) and path.endswith(".parquet") for path in changed)


# Where the runs are killed, one run each, in this order. A point is reached by what the run has
# done (the files it has replaced or created, relative to the warehouse), not by the clock, so
# every point is reached whatever the machine's speed. The late delivery is one new games file:
# ingest stores its staged rows and the games manifest (in that order, within a moment of each
# other), then loads them into the DuckDB working copy, then writes the validated games (the late game's month); each
# point's run redoes whatever the kill before it left undone (a delivery the manifest does not list
# is staged again; validation not done is done), so the next point is always ahead of it. No point
# waits for the files written within milliseconds after the validated games (fingerprints,
# quarantine): a kill may land after them and after the export is recorded as done. Then every system whose manifest no earlier run wrote
# recomputes from 2018-01 (the late game is in 2018-05). The table points cannot finish a system
# (each writes 30 months of at least two files), and a system's checkpoint comes before its
# manifest, so a kill at the first checkpoint leaves a system for the manifest point.
KILL_POINTS = [
    ("ingest: the run has taken the warehouse", lambda changed: ".lock-run" in changed),
    (
        "ingest: the new delivery's staged rows stored in the warehouse",
        lambda changed: any(re.fullmatch(r"ingest/games/[0-9a-f]+\.parquet", p) for p in changed),
    ),
    ("ingest: the DuckDB working copy changed", lambda changed: any(p.startswith("diprank.duckdb") for p in changed)),
    (
        "validation: the validated games written",
        lambda changed: any(re.fullmatch(r"validated/games/\d{4}-\d{2}\.parquet", p) for p in changed),
    ),
    ("rating: the first table written", lambda changed: tables_written(changed) >= 1),
    ("rating: 15 tables written", lambda changed: tables_written(changed) >= 15),
    ("rating: 30 tables written", lambda changed: tables_written(changed) >= 30),
    (
        "rating: a checkpoint written",
        lambda changed: any(re.fullmatch(r"state/\w+/\d{4}-\d{2}\.json", p) for p in changed),
    ),
    (
        "rating: a system's manifest written",
        lambda changed: any(re.fullmatch(r"state/\w+/manifest\.json", p) for p in changed),
    ),
]
KILLS = len(KILL_POINTS)


def feeds(root, late: bool):
    write_csv(
        root / "games" / "2020-07-01.csv", list(synthetic_games(21, 200, 30, dt.date(2018, 1, 1), dt.date(2020, 6, 30)))
    )
    write_csv(
        root / "events" / "events.csv",
        [
            {
                "event_id": "e1",
                "name": "Open",
                "start_date": "2019-03-01",
                "end_date": "2019-03-02",
                "location": "X",
                "country": "NOR",
                "rounds": 2,
                "num_players": 20,
                "is_world_championship": False,
            }
        ],
    )
    write_csv(
        root / "event_results" / "results.csv",
        [
            {
                "event_id": "e1",
                "player_id": f"p{i:05d}",
                "player_name": f"P{i}",
                "nationality": "NOR",
                "placement": i + 1,
            }
            for i in range(10)
        ],
    )
    if late:
        rows = list(synthetic_games(22, 3, 30, dt.date(2018, 5, 1), dt.date(2018, 5, 30)))
        for row in rows:
            row["game_id"] = "late-" + row["game_id"]
        write_csv(root / "games" / "2020-08-01_late.csv", rows)


def command(raw, warehouse):
    diprank = REPO / ".venv" / "bin" / "diprank"
    base = [str(diprank)] if diprank.exists() else [sys.executable, "-m", "pipeline.cli"]
    return [*base, "run", "--raw", str(raw), "--warehouse", str(warehouse), "--to", "2020-06", "--quiet"]


def environment(tmp_path) -> dict[str, str]:
    """The runs' environment: a Dagster instance of their own, apart from the other tests' one."""
    return {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster")}


def run_to_end(raw, warehouse, env) -> None:
    done = subprocess.run(command(raw, warehouse), cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def files(root) -> dict[str, tuple[int, int]]:
    """Every file under root by relative path, with its inode and modification time."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # a temporary file renamed meanwhile
                continue
            found[os.path.relpath(path, root).replace(os.sep, "/")] = (stat.st_ino, stat.st_mtime_ns)
    return found


def kill_at(point, raw, warehouse, env) -> bool:
    """Start a run and SIGKILL it (the whole process group) once it has done what `point` asks;
    True if it was killed, False if it ended first."""
    before = files(warehouse)
    process = subprocess.Popen(
        command(raw, warehouse),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    changed: set[str] = set()
    deadline = time.monotonic() + 600
    try:
        while process.poll() is None and time.monotonic() < deadline:
            changed |= {path for path, seen in files(warehouse).items() if before.get(path) != seen}
            if point(changed):
                os.killpg(process.pid, signal.SIGKILL)
                break
            time.sleep(0.005)
    except ProcessLookupError:  # it ended just before the kill
        pass
    finally:
        if process.poll() is None and time.monotonic() >= deadline:
            os.killpg(process.pid, signal.SIGKILL)
    return process.wait() == -signal.SIGKILL and point(changed)


def assert_each_file_whole(warehouse, old: dict, new: dict):
    for path, data in tree_bytes(warehouse, OUTPUTS).items():
        assert data in (old.get(path), new.get(path)), f"{path} is neither the old nor the new file"
        pq.read_metadata(warehouse / path)  # and it is a complete Parquet file


@pytest.mark.slow
def test_sigkill_at_many_points(tmp_path):
    before_raw, after_raw = tmp_path / "raw_before", tmp_path / "raw_after"
    feeds(before_raw, late=False)
    feeds(after_raw, late=True)
    env = environment(tmp_path)
    old_wh, new_wh, victim = tmp_path / "old", tmp_path / "new", tmp_path / "victim"
    run_to_end(before_raw, old_wh, env)
    run_to_end(after_raw, new_wh, env)
    old, new = tree_bytes(old_wh, OUTPUTS), tree_bytes(new_wh, OUTPUTS)
    assert old != new
    shutil.copytree(old_wh, victim)
    # The late delivery lands in the victim's raw folder; then a run is killed at each point.
    killed = []
    for name, point in KILL_POINTS:
        if kill_at(point, after_raw, victim, env):
            killed.append(name)
        assert_each_file_whole(victim, old, new)
    missed = [name for name, _ in KILL_POINTS if name not in killed]
    assert len(killed) == KILLS, f"runs ended before these kill points: {missed}"
    run_to_end(after_raw, victim, env)
    assert tree_bytes(victim, OUTPUTS) == new
    assert not list(victim.rglob(".*.tmp")), "leftover temporary files are cleaned up"
