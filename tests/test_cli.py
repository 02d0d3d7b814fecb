"""End to end: the `diprank` command on the bundled sample and on bad data."""

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus, RunsFilter

from pipeline.core.months import month_range
from pipeline.definitions import build_definitions
from pipeline.defs.jobs import rating_job_name
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.store import Warehouse
from tests.support import REPO, environment, make_raw, run_cli, tree_bytes
from tests.test_validation import GOOD_EVENT, GOOD_GAME, GOOD_RESULTS, bad_game

DIPRANK = REPO / ".venv" / "bin" / "diprank"
COMMAND = [str(DIPRANK)] if DIPRANK.exists() else [sys.executable, "-m", "pipeline.cli"]


def diprank(*args, env=None, timeout=600):
    return subprocess.run(
        [*COMMAND, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """`make run`: the sample, with the Dagster instance in the warehouse's `.dagster` folder."""
    warehouse = tmp_path_factory.mktemp("sample") / "warehouse"
    done = diprank(
        "run", "--raw", "data/raw", "--warehouse", str(warehouse), env={"DAGSTER_HOME": str(warehouse / ".dagster")}
    )
    return warehouse, done


def test_sample_run_succeeds_and_summarises(sample_run):
    warehouse, done = sample_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    for word in ("rows in", "valid", "quarantined", "snapshots written", "top 5"):
        assert word in done.stdout
    for system in SYSTEM_NAMES:
        assert f"{system} top 5" in done.stdout
    # DiWZ's ratings in the form its community reads: rating-evaluations (1782-12), not 1782.00.
    diwz_top = done.stdout.split("diwz top 5")[1].split("\n\n")[0].splitlines()[1:]
    assert diwz_top and all(re.search(r" \d{3,4}-\d+$", line) for line in diwz_top), diwz_top


def test_sample_run_writes_every_month_of_every_system(sample_run):
    warehouse, _ = sample_run
    store = Warehouse(warehouse)
    last = max(store.written_months("rankings", s)[-1] for s in SYSTEM_NAMES)
    for system in SYSTEM_NAMES:
        months = store.written_months("rankings", system)
        assert months == month_range(months[0], last), system
        assert store.written_months("history", system) == months
    assert store.written_months("awards", "eagle") == store.written_months("rankings", "eagle")
    assert (warehouse / "diprank.duckdb").exists()


def test_the_ui_after_make_run_shows_no_missing_month(sample_run):
    """What `make ui` loads after `make run` (DIPRANK_PARTITIONS_END=data, the same instance):
    every partition of every rating asset and of the quality table is materialized."""
    warehouse, _ = sample_run
    with DagsterInstance.from_config(str(warehouse / ".dagster")) as instance:

        def partitions(partitions_end):
            settings = Settings.from_env({"DIPRANK_PARTITIONS_END": partitions_end}, warehouse_dir=str(warehouse))
            defs = build_definitions(settings)
            for name in (*(f"{system}_rankings" for system in SYSTEM_NAMES), "rating_quality"):
                keys = set(defs.resolve_assets_def(name).partitions_def.get_partition_keys())
                yield name, keys, instance.get_materialized_partitions(AssetKey(name))

        for name, keys, materialized in partitions("data"):
            assert keys == materialized, name
        # Partitions to the current month: the months after the data are offered as work.
        for name, keys, materialized in partitions("current"):
            assert materialized < keys and min(keys - materialized) == "2021-01-01", name


def test_duckdb_views_answer_dashboard_queries(sample_run):
    import duckdb

    warehouse, _ = sample_run
    con = duckdb.connect(str(warehouse / "diprank.duckdb"), read_only=True)
    latest = con.execute("SELECT system, max(as_of) FROM rankings_dip_pouch GROUP BY 1").fetchall()
    assert latest and latest[0][0] == "dip_pouch"
    for view in ("rankings_club", "rankings_eagle", "rankings_diwz", "history_diwz", "awards_eagle"):
        assert con.execute(f"SELECT count(*) FROM {view}").fetchall()[0][0] > 0
    assert con.execute("SELECT count(*) FROM games").fetchall()[0][0] > 0


def test_same_input_same_bytes(sample_run, tmp_path):
    warehouse, _ = sample_run
    again = tmp_path / "again"
    code, out, err = run_cli("run", "--raw", str(REPO / "data" / "raw"), "--warehouse", str(again), "--quiet")
    assert code == 0, out + err
    first, second = tree_bytes(warehouse), tree_bytes(again)
    assert first.keys() == second.keys() and first == second


def test_bad_data_lands_the_valid_rows_and_strict_fails(tmp_path):
    raw = make_raw(
        tmp_path / "raw",
        games=GOOD_GAME + bad_game(France={"result": "solo"}),
        events=[GOOD_EVENT],
        event_results=GOOD_RESULTS + [{"event_id": "nope", "player_id": "q", "placement": 1}],
    )
    (raw / "games" / "broken.parquet").write_bytes(b"PAR1 not really")
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w1"))
    assert code == 0, out + err
    assert "not_one_solo_or_a_draw" in out and "unknown_event" in out and "unreadable_file" in out
    assert (tmp_path / "w1" / "rankings" / "dip_pouch").is_dir()
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w2"), "--strict")
    assert code == 1
    assert "strict mode: 5 quarantine entries" in out and "nothing was rated" in out
    assert not (tmp_path / "w2" / "rankings").exists()
    assert "Traceback" not in out + err


def test_strict_subprocess_message(tmp_path):
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME + bad_game(Germany={"centres": 3}))
    done = diprank("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), "--strict")
    assert done.returncode == 1
    assert "eliminated_with_centres" in done.stdout and "strict mode" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--raw", "/nonexistent/raw"], "does not exist"),
        (["--from", "2020-05", "--to", "2020-01"], "is after"),
    ],
)
def test_usage_errors(tmp_path, args, message):
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME)
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), *args)
    assert code == 2 and message in err


def test_nothing_valid_is_an_error(tmp_path):
    raw = make_raw(tmp_path / "raw", games=bad_game(France={"result": "solo"}))
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"))
    assert code == 1 and "nothing to rate" in out


def test_second_run_on_the_same_warehouse_refuses(tmp_path):
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME)
    store = Warehouse(tmp_path / "w")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from pipeline.warehouse.locks import warehouse_lock\n"
            f"with warehouse_lock(Path({str(store.run_lock_path)!r})):\n print('held', flush=True); time.sleep(60)",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(store.root))
        assert code == 3 and "another diprank run" in err and "--wait" in err
    finally:
        holder.kill()
        holder.wait()
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(store.root), "--quiet")
    assert code == 0, out + err


def test_a_failed_output_check_is_listed_and_fails_strict(tmp_path, monkeypatch):
    """A failed asset check reaches the summary with its examples; --strict exits 1 on it."""
    from pipeline.rating import writer
    from pipeline.rating.checks import RANKS_CONTIGUOUS, CheckOutcome, check_tables

    def ranks_broken(system, rankings, history):
        return [
            CheckOutcome(o.name, False, 2, "", [{"player_id": "p-odd", "rank": 3}]) if o.name == RANKS_CONTIGUOUS else o
            for o in check_tables(system, rankings, history)
        ]

    monkeypatch.setattr(writer, "check_tables", ranks_broken)
    monkeypatch.setenv("DIPRANK_SYSTEMS_AT_ONCE", "1")  # rated in this process, where the patch is
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME)
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), "--systems", "club")
    assert code == 0, out + err
    assert "1 failed check:" in out
    line = next(text for text in out.splitlines() if RANKS_CONTIGUOUS in text)
    assert "club_rankings" in line and "(2 found)" in line and "p-odd" in line
    code, out, err = run_cli(
        "run", "--raw", str(raw), "--warehouse", str(tmp_path / "w2"), "--systems", "club", "--strict"
    )
    assert code == 1 and "strict mode: 1 failed check" in out, out + err
    monkeypatch.setattr(writer, "check_tables", check_tables)
    code, out, err = run_cli(
        "run", "--raw", str(raw), "--warehouse", str(tmp_path / "w3"), "--systems", "club", "--strict"
    )
    assert code == 0 and "failed check" not in out, out + err


def test_the_feed_balance_keeps_counts_of_any_size_apart():
    from pipeline.cli.main import feed_balance_text
    from pipeline.ingest.validation import FeedCounts

    big = FeedCounts("games", files=50, rows_in=69_499_022, valid=69_499_022)
    small = FeedCounts("event_results", files=2, rows_in=1_827_663, valid=1_827_660, quarantined=3, files_rejected=1)
    head, *rows = feed_balance_text([big, small]).splitlines()
    cells = [line.split() for line in rows]
    assert head.split()[:4] == ["feed", "files", "rows", "in"]
    assert cells == [
        ["games", "50", "69,499,022", "69,499,022", "0", "0", "0"],
        ["event_results", "2", "1,827,663", "1,827,660", "3", "0", "1"],
    ]
    # Right-aligned under their headings: every line ends at the same column.
    assert len({len(line) for line in (head, *rows)}) == 1


# A system's process killed mid-step by the kernel's out-of-memory killer itself (the process
# moved into a memory cgroup with a limit far below what it needs; SIGKILL, what that killer
# sends, where no cgroup can be made): the run fails with a message naming the system and the
# signal, the other systems finish, no Dagster run is left in progress, and the next run leaves
# what a run from scratch writes.
VICTIM = "club"
MEMORY_CGROUPS = Path("/sys/fs/cgroup/memory")  # cgroup v1's memory controller


@contextmanager
def out_of_memory_killer(limit_bytes: int = 4 << 20):
    """A function that moves a process into a new memory cgroup with this limit (its next
    allocations beyond it make the kernel kill it), or SIGKILLs it where no cgroup can be made."""
    folder = MEMORY_CGROUPS / f"diprank-test-{os.getpid()}"
    try:
        folder.mkdir()
        (folder / "memory.limit_in_bytes").write_text(str(limit_bytes))
    except OSError:
        yield lambda pid: os.kill(pid, signal.SIGKILL)
        return
    try:
        yield lambda pid: (folder / "cgroup.procs").write_text(str(pid))
    finally:
        deadline = time.monotonic() + 30
        while (folder / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        folder.rmdir()


def lock_holder(lock: Path, besides: int) -> int | None:
    """The pid, other than `besides`, holding an exclusive flock on the file (from /proc/locks)."""
    if not lock.exists():
        return None
    inode = lock.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[3] == "WRITE":
            pid, device_inode = int(fields[4]), fields[5]
            if device_inode.rsplit(":", 1)[-1] == str(inode) and pid != besides:
                return pid
    return None


def test_a_system_process_killed_mid_step_fails_clearly_and_the_next_run_repairs(sample_run, tmp_path):
    warehouse, home = tmp_path / "warehouse", tmp_path / "dagster"
    home.mkdir()
    env = {**os.environ, "DIPRANK_SYSTEMS_AT_ONCE": "2", "DAGSTER_HOME": str(home)}
    run = subprocess.Popen(
        [*COMMAND, "run", "--raw", str(REPO / "data" / "raw"), "--warehouse", str(warehouse), "--quiet"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = Warehouse(warehouse).system_lock_path(VICTIM)
    deadline = time.monotonic() + 300
    victim = None
    while victim is None and run.poll() is None and time.monotonic() < deadline:
        victim = lock_holder(lock, besides=run.pid)
        time.sleep(0.01)
    assert victim is not None, "the club step never ran in a process of its own"
    with out_of_memory_killer() as kill:
        kill(victim)
        out, err = run.communicate(timeout=300)
    assert run.returncode != 0
    assert f"diprank: {VICTIM} failed: its process was killed by SIGKILL (what the kernel's out-of-memory" in out
    assert "Traceback" not in out + err
    assert [line for line in out.splitlines() if " failed: " in line] == [
        line for line in out.splitlines() if line.startswith(f"diprank: {VICTIM} failed")
    ]
    with DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records(RunsFilter(job_name=rating_job_name(VICTIM)))
        assert [r.dagster_run.status for r in records] == [DagsterRunStatus.FAILURE]
        others = instance.get_run_records(RunsFilter(statuses=[DagsterRunStatus.SUCCESS]))
        assert {r.dagster_run.job_name for r in others} >= {rating_job_name(s) for s in SYSTEM_NAMES if s != VICTIM}

    with environment(DAGSTER_HOME=str(home)):
        code, out, err = run_cli("run", "--raw", str(REPO / "data" / "raw"), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    assert tree_bytes(warehouse) == tree_bytes(sample_run[0])  # the sample from scratch
