"""Crash safety: SIGKILL at many points of a run never leaves a torn file, and a rerun finishes
byte-identical to an uninterrupted run."""
import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq

from pipeline.synthetic.generator import synthetic_games
from tests.support import REPO, tree_bytes, write_csv

KILLS = 10
OUTPUTS = ("rankings", "history", "awards", "validated", "quarantine")


def feeds(root, late: bool):
    write_csv(root / "games" / "2020-07-01.csv",
              list(synthetic_games(21, 200, 30, dt.date(2018, 1, 1), dt.date(2020, 6, 30))))
    write_csv(root / "events" / "events.csv", [
        {"event_id": "e1", "name": "Open", "start_date": "2019-03-01", "end_date": "2019-03-02",
         "location": "X", "country": "NOR", "rounds": 2, "num_players": 20, "is_world_championship": False}])
    write_csv(root / "event_results" / "results.csv", [
        {"event_id": "e1", "player_id": f"p{i:05d}", "player_name": f"P{i}", "nationality": "NOR",
         "placement": i + 1} for i in range(10)])
    if late:
        rows = list(synthetic_games(22, 3, 30, dt.date(2018, 5, 1), dt.date(2018, 5, 30)))
        for row in rows:
            row["game_id"] = "late-" + row["game_id"]
        write_csv(root / "games" / "2020-08-01_late.csv", rows)


def command(raw, warehouse):
    diprank = REPO / ".venv" / "bin" / "diprank"
    base = [str(diprank)] if diprank.exists() else [sys.executable, "-m", "pipeline.cli"]
    return [*base, "run", "--raw", str(raw), "--warehouse", str(warehouse), "--to", "2020-06", "--quiet"]


def run_to_end(raw, warehouse) -> float:
    started = time.perf_counter()
    done = subprocess.run(command(raw, warehouse), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return time.perf_counter() - started


def assert_each_file_whole(warehouse, old: dict, new: dict):
    for path, data in tree_bytes(warehouse, OUTPUTS).items():
        assert data in (old.get(path), new.get(path)), f"{path} is neither the old nor the new file"
        pq.read_metadata(warehouse / path)  # and it is a complete Parquet file


def test_sigkill_at_many_points(tmp_path):
    before_raw, after_raw = tmp_path / "raw_before", tmp_path / "raw_after"
    feeds(before_raw, late=False)
    feeds(after_raw, late=True)
    old_wh, new_wh, victim = tmp_path / "old", tmp_path / "new", tmp_path / "victim"
    run_to_end(before_raw, old_wh)
    duration = run_to_end(after_raw, new_wh)
    old, new = tree_bytes(old_wh, OUTPUTS), tree_bytes(new_wh, OUTPUTS)
    assert old != new
    shutil.copytree(old_wh, victim)
    # The late delivery lands in the victim's raw folder; then runs are killed at spread-out moments.
    for kill in range(KILLS):
        delay = duration * (kill + 0.5) / KILLS
        process = subprocess.Popen(command(after_raw, victim), cwd=REPO, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert_each_file_whole(victim, old, new)
    run_to_end(after_raw, victim)
    assert tree_bytes(victim, OUTPUTS) == new
    assert not list(victim.rglob(".*.tmp")), "leftover temporary files are cleaned up"
