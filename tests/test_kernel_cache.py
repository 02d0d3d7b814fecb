"""Numba's cache of the kernels: every kernel is kept fresh across the files of the systems."""
from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

import pipeline.systems
from pipeline.systems import kernel_cache


def cached_kernels():
    for module in pkgutil.walk_packages(pipeline.systems.__path__, "pipeline.systems."):
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == module.name and value._cache is not None:
                yield f"{module.name}.{name}", value


def test_every_cached_kernel_is_stamped_with_all_the_systems_files():
    kernels = dict(cached_kernels())
    assert len(kernels) > 20  # the club, Eagle, DiWZ and Dip Pouch kernels and the shared helpers
    for name, kernel in kernels.items():
        locator = kernel._cache._impl._locator
        assert type(locator) in kernel_cache.LOCATORS, name
        assert locator.get_source_stamp()[1] == kernel_cache.sources_digest(), name


def test_the_digest_follows_every_file(tmp_path, monkeypatch):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "ids.py").write_text("A = 1\n")
    (tmp_path / "club.py").write_text("B = 2\n")
    monkeypatch.setattr(kernel_cache, "SOURCES", tmp_path)
    kernel_cache.sources_digest.cache_clear()
    try:
        before = kernel_cache.sources_digest()
        (tmp_path / "kernels" / "ids.py").write_text("A = 3\n")
        kernel_cache.sources_digest.cache_clear()
        assert kernel_cache.sources_digest() != before
    finally:
        kernel_cache.sources_digest.cache_clear()


CALL_A_KERNEL = """
import numpy as np
from pipeline.systems.kernels.sort import stable_order
print(stable_order(np.array([3, 1, 2, 1], dtype=np.int64)).tolist())
"""


def run_a_kernel(cache_dir) -> subprocess.CompletedProcess:
    """Call one cached kernel in a new process whose numba cache is `cache_dir`."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "NUMBA_DEBUG_CACHE": "1"}
    return subprocess.run([sys.executable, "-c", CALL_A_KERNEL], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[1], timeout=300)


@pytest.mark.parametrize("damaged", ["nbc", "nbi"])
def test_a_damaged_cache_entry_is_compiled_again_and_rewritten(tmp_path, damaged):
    first = run_a_kernel(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == "[1, 3, 2, 0]"
    entries = sorted(tmp_path.rglob(f"sort.stable_order-*.{damaged}"))
    assert entries
    for entry in entries:  # cut short, as by a full disk or an interrupted copy
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])

    second = run_a_kernel(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[-1] == "[1, 3, 2, 0]"
    assert "the cached kernel pipeline.systems.kernels.sort.stable_order cannot be read" in second.stderr

    third = run_a_kernel(tmp_path)
    assert third.returncode == 0, third.stderr
    assert third.stdout.splitlines()[-1] == "[1, 3, 2, 0]"
    assert "cannot be read" not in third.stderr
    assert any("data loaded" in line and "stable_order" in line for line in third.stdout.splitlines())
