"""Same input, same bytes; non-conflicting deliveries in another order or split, same outputs."""
import datetime as dt
from pathlib import Path

import pytest

from pipeline.synthetic.generator import synthetic_games
from tests.support import run_cli, tree_bytes, write_csv

OUTPUTS = ("rankings", "history", "awards", "validated")


def test_delivery_order_does_not_matter(tmp_path):
    games = list(synthetic_games(31, 120, 20, dt.date(2019, 1, 1), dt.date(2019, 12, 31)))
    one = tmp_path / "one"
    write_csv(one / "games" / "all.csv", games)
    split = tmp_path / "split"
    ids = sorted({g["game_id"] for g in games})
    thirds = [set(ids[i::3]) for i in range(3)]
    for name, part in zip(("z_first.csv", "m_middle.csv", "a_last.csv"), thirds):
        write_csv(split / "games" / name, list(reversed([g for g in games if g["game_id"] in part])))
    results = {}
    for label, raw in (("one", one), ("split", split)):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / f"w_{label}"), "--quiet")
        assert code == 0, out + err
        results[label] = tree_bytes(tmp_path / f"w_{label}", OUTPUTS)
    assert results["one"] and results["one"] == results["split"]


def test_names_round_trip_exactly_into_parquet(tmp_path):
    import pyarrow.parquet as pq

    names = ['Øhrn, Karl "Eagle"', "two\nlines", "Robert'); DROP TABLE games;--", "Müller 🙂 <b>&amp;",
             "ترکی", "  spaced  ", "日本語"]
    games = list(synthetic_games(32, 1, 7, dt.date(2019, 5, 1), dt.date(2019, 5, 1)))
    for row, name in zip(games, names):
        row["player_name"] = name
        row["original_player_id"], row["replacement_denies"] = None, False
    write_csv(tmp_path / "raw" / "games" / "g.csv", games)
    code, out, err = run_cli("run", "--raw", str(tmp_path / "raw"), "--warehouse", str(tmp_path / "w"),
                             "--systems", "club", "--quiet")
    assert code == 0, out + err
    table = pq.read_table(tmp_path / "w" / "rankings" / "club" / "year=2019" / "month=05" / "rankings.parquet")
    assert sorted(table.column("player_name").to_pylist()) == sorted(names)


def test_systems_side_by_side_write_what_one_after_another_writes(tmp_path):
    """Rating systems run in separate processes when cores allow; the bytes do not depend on it."""
    from tests.support import environment

    raw = tmp_path / "raw"
    write_csv(raw / "games" / "g.csv", list(synthetic_games(33, 150, 25, dt.date(2018, 1, 1), dt.date(2019, 6, 30))))
    results = {}
    for at_once in ("1", "2"):
        with environment(DIPRANK_SYSTEMS_AT_ONCE=at_once):
            code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / f"w{at_once}"), "--quiet")
        assert code == 0, out + err
        results[at_once] = tree_bytes(tmp_path / f"w{at_once}", OUTPUTS)
    assert results["1"] and results["1"] == results["2"]


def test_runs_of_a_few_months_stay_in_the_process_and_longer_ones_start_one_per_system(monkeypatch):
    """Starting a process per system costs more than rating a few months: a new month's run (four
    systems, one month each) rates in the command's process; a backfill starts the processes."""
    import pipeline.orchestrate as orchestrate
    from pipeline.core.months import Month
    from pipeline.rating.planning import Plan
    from pipeline.settings import Settings

    in_process, pools = [], []
    monkeypatch.setattr(orchestrate, "rate_system", lambda plan, settings, instance=None, first_months=None: in_process.append(plan.system))
    monkeypatch.setattr(orchestrate, "first_months_now", lambda settings: {})  # no warehouse here

    class NoPool:
        def __init__(self, max_workers, mp_context):
            pools.append(max_workers)
            raise RuntimeError("no process is started here")

    monkeypatch.setattr(orchestrate, "ProcessPoolExecutor", NoPool)
    settings = Settings(systems_at_once=2)
    month = Month(2026, 1)
    list(orchestrate.rate_systems([Plan(s, month, month) for s in ("club", "eagle", "diwz", "dip_pouch")], settings))
    assert in_process == ["club", "eagle", "diwz", "dip_pouch"] and pools == []
    with_years = [Plan(s, Month(2024, 1), month) for s in ("club", "eagle")]
    with pytest.raises(RuntimeError, match="no process"):
        list(orchestrate.rate_systems(with_years, settings))
    assert pools == [2]


def test_the_systems_process_server_starts_before_a_long_ingest_only(monkeypatch, tmp_path):
    """Much to read (a backfill) starts the server of the systems' processes before ingest, so that
    it imports beside it; little to read, or one system at a time, starts nothing."""
    import pipeline.orchestrate as orchestrate
    from pipeline.settings import Settings
    from pipeline.warehouse.store import Warehouse

    started = []
    monkeypatch.setattr(orchestrate, "start_system_processes", lambda: started.append(True))
    raw = tmp_path / "raw"
    write_csv(raw / "games" / "g.csv", list(synthetic_games(3, 20, 10, dt.date(2018, 1, 1), dt.date(2018, 6, 30))))
    size = (raw / "games" / "g.csv").stat().st_size
    warehouse = Warehouse(tmp_path / "w")
    side_by_side, one_at_a_time = Settings(raw_dir=str(raw), systems_at_once=2), Settings(raw_dir=str(raw), systems_at_once=1)
    assert not orchestrate.warm_up_system_processes(side_by_side, warehouse, threshold=size + 1) and not started
    assert not orchestrate.warm_up_system_processes(one_at_a_time, warehouse, threshold=size) and not started
    assert orchestrate.warm_up_system_processes(side_by_side, warehouse, threshold=size) and started == [True]


def test_the_systems_process_server_imports_every_system_and_freezes_the_imports():
    """The server's preload imports (a failing import would be skipped silently by multiprocessing,
    and every system's process would import on its own again), loads each system's module and
    leaves the imports' objects frozen. In a process of its own: freezing is for good."""
    import subprocess
    import sys

    from pipeline.orchestrate import SYSTEM_PROCESS_MODULES
    from pipeline.systems.registry import SYSTEM_NAMES, system_class

    modules = [system_class(name).__module__ for name in SYSTEM_NAMES]
    probe = (f"import gc, importlib, sys\nfor m in {SYSTEM_PROCESS_MODULES!r}: importlib.import_module(m)\n"
             f"missing = [m for m in {modules!r} if m not in sys.modules]\n"
             "assert not missing, missing\nassert gc.get_freeze_count() > 100_000, gc.get_freeze_count()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
