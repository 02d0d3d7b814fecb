"""DuckDB connections the project opens never draw a progress bar (it would end up in run logs)."""

import re
from pathlib import Path

from pipeline.settings import Settings
from pipeline.warehouse.store import Warehouse, connect

ROOT = Path(__file__).resolve().parents[1]


def progress_bar(con) -> bool:
    return con.sql("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]


def test_connections_have_the_progress_bar_off(tmp_path):
    assert not progress_bar(connect())
    assert not progress_bar(connect(str(tmp_path / "file.duckdb"), config={"memory_limit": "1GB"}))
    assert not progress_bar(Warehouse(tmp_path / "warehouse", Settings()).scan())


def test_every_connection_goes_through_connect():
    """Code that opens a DuckDB connection itself (bypassing pipeline.warehouse.store.connect) turns
    the progress bar off right after: the setting is per connection."""
    opened = []
    for path in [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]:
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            if re.search(r"\bduckdb\.connect\(", line):
                if not any("quiet(" in after for after in lines[k : k + 3]):
                    opened.append(f"{path.relative_to(ROOT)}:{k + 1}")
    assert opened == []


def test_a_small_memory_limit_runs_duckdb_on_fewer_threads():
    # An aggregation's per-thread state does not spill: 256MB shared by two threads runs out in the
    # validation of 1M games, where one thread completes (benchmarks/RESULTS.md, memory).
    from pipeline.warehouse.store import memory_bytes, threads_for_memory

    assert memory_bytes("256MB") == 256e6 and memory_bytes("2 GiB") == 2 * 1024**3 and memory_bytes("lots") is None
    assert threads_for_memory("256MB", 2) == 1
    assert threads_for_memory("2GB", 2) == 2 and threads_for_memory("2GB", 8) == 2
    assert threads_for_memory("16GB", 8) == 8
    assert threads_for_memory("lots", 8) is None
    con = connect(config=Warehouse("/tmp/w", Settings(duckdb_memory="256MB")).duckdb_config)
    assert con.execute("SELECT current_setting('threads')").fetchone() == (1,)
