import atexit
import os
import shutil
import tempfile

import pytest

from pipeline.systems.kernel_cache import use_kernel_cache_dir


def memory_folder(needed_bytes: int = 8 << 30) -> str | None:
    """A memory-backed folder with room for the tests' files, where the machine has one: the runs
    the tests start write thousands of small files and SQLite commits, which a disk syncs."""
    shm = "/dev/shm"
    try:
        stats = os.statvfs(shm)
    except OSError:
        return None
    return shm if os.access(shm, os.W_OK) and stats.f_bavail * stats.f_frsize >= needed_bytes else None


# Tests never use the user's Dagster instance or warehouse, whatever the shell or the Makefile
# exports: Dagster's home and the default raw, warehouse and local folders point into a folder of
# this test process (each xdist worker imports this file and gets its own), set here, before any
# test module imports dagster or the pipeline, and inherited by the processes tests start.
SCRATCH = tempfile.mkdtemp(prefix="diprank-tests-", dir=memory_folder())
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
for _variable, _folder in {
    "DAGSTER_HOME": "dagster",
    "DIPRANK_RAW_DIR": "raw",
    "DIPRANK_WAREHOUSE_DIR": "warehouse",
    "DIPRANK_LOCAL_DIR": "local",
}.items():
    os.environ[_variable] = os.path.join(SCRATCH, _folder)
    os.makedirs(os.environ[_variable], exist_ok=True)

# Numba's cache in the folder named for the present kernel sources, as the diprank program has it,
# set before any test module imports numba: a cache compiled from older sources is never read.
use_kernel_cache_dir()

# Reproducible "today" for the not-in-the-future rule.
os.environ.setdefault("DIPRANK_TODAY", "2026-11-29")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
# Tests write a delivery and ingest it at once; the tests of deliveries in progress
# (tests/test_deliveries_in_progress.py) set their own settle time.
os.environ.setdefault("DIPRANK_SETTLE_SECONDS", "0")
# Systems one after another in the run's process: xdist already keeps every core busy, and each
# worker process a run would start imports Dagster and loads the kernels anew. The tests of
# systems side by side (tests/test_determinism.py) set their own value.
os.environ["DIPRANK_SYSTEMS_AT_ONCE"] = "1"


def pytest_configure(config):
    """Tests' temporary folders in memory too, unless --basetemp names a place (xdist's workers
    receive the main process's)."""
    if config.option.basetemp is None and not hasattr(config, "workerinput") and memory_folder():
        config.option.basetemp = tempfile.mkdtemp(prefix="diprank-pytest-", dir=memory_folder())
        atexit.register(shutil.rmtree, config.option.basetemp, ignore_errors=True)


def pytest_collection_modifyitems(items):
    """The slow tests first, in their order, then the rest in theirs. xdist gives each worker a
    block of the collected tests, and a worker with nothing left takes the end of another's: a
    long test collected near the end would run last, on one worker, while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def warehouse(tmp_path):
    return tmp_path / "warehouse"
