"""Numba's on-disk cache of the kernels, fresh across the files the kernels call into.

Numba reuses a cached function while the text of its own file is unchanged. A compiled kernel
also holds the code of the kernels it calls from other files (every system calls
pipeline.systems.kernels.ids), so after one of those files changes, the cached caller would run
stale code, and can fail outright ("In 'NRT_adapt_ndarray_to_python', 'descr' is NULL"). Here a
kernel's freshness is also the text of every file of pipeline.systems: a change to any of them
compiles every kernel again on its next use.
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from numba.core import caching

SOURCES = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def sources_digest() -> str:
    """A digest of the names and text of every Python file of pipeline.systems."""
    digest = hashlib.sha256()
    for path in sorted(SOURCES.rglob("*.py")):
        digest.update(path.relative_to(SOURCES).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class _FreshAcrossKernels:
    """For functions defined under pipeline.systems: the file's stamp and the digest of all of them."""

    def get_source_stamp(self):
        return super().get_source_stamp(), sources_digest()

    @classmethod
    def from_function(cls, py_func, py_file):
        if not Path(py_file).resolve().is_relative_to(SOURCES):
            return None  # another package's function: numba's own locators
        return super().from_function(py_func, py_file)


# Numba's locators, in numba's order (a NUMBA_CACHE_DIR first), each fresh across the kernels.
LOCATORS = [type(f"Kernel{base.__name__}", (_FreshAcrossKernels, base), {})
            for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)]


def use_fresh_kernel_cache() -> None:
    """Put the locators ahead of numba's own; to be called before any kernel is decorated."""
    known = caching.CacheImpl._locator_classes
    if not any(locator in known for locator in LOCATORS):
        known[:0] = LOCATORS
