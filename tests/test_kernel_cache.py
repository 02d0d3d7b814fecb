"""Numba's cache of the kernels: every kernel is kept fresh across the files of the systems."""
from __future__ import annotations

import importlib
import pkgutil

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
