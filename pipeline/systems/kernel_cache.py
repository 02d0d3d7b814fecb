"""Numba's on-disk cache of the kernels, fresh across the files the kernels call into.

Numba reuses a cached function while the text of its own file is unchanged. A compiled kernel
also holds the code of the kernels it calls from other files (every system calls
pipeline.systems.kernels.ids), so after one of those files changes, the cached caller would run
stale code, and can fail outright ("In 'NRT_adapt_ndarray_to_python', 'descr' is NULL"). Here a
kernel's freshness is also the text of every file of pipeline.systems: a change to any of them
compiles every kernel again on its next use.

A kernel's cache entry that cannot be read back (a file cut short by a full disk or an
interrupted copy of the project, or damaged otherwise) is a miss, not a failed run: the kernel is
compiled again and its entry written anew, with a warning that says so.
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from numba.core import caching

from pipeline.core.progress import progress_log

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


_numba_load_overload = caching.Cache.load_overload


def _load_or_compile_again(cache: caching.Cache, sig, target_context):
    """Numba's load of a cached kernel, where an entry of ours that cannot be read is a miss.

    Numba only forgives a data file that has gone; a damaged one raises from every call of the
    kernel, in every run, until the cache is deleted by hand. The damaged index goes too, so
    that the entry compiled next replaces it (numba reads the index again before writing one)."""
    try:
        return _numba_load_overload(cache, sig, target_context)
    except Exception as error:  # noqa: BLE001 - whatever a damaged file raises while it is unpickled
        if type(cache._impl.locator) not in LOCATORS:
            raise  # another package's kernel: numba's own behaviour
        kernel = cache._py_func
        # On the progress lines: a command ignores Python's warnings (Dagster's are many).
        progress_log().warning("the cached kernel %s.%s cannot be read (%s: %s) in %s; compiling it again",
                               kernel.__module__, kernel.__qualname__, type(error).__name__, error, cache._cache_path)
        Path(cache._cache_file._index_path).unlink(missing_ok=True)
        return None


def use_fresh_kernel_cache() -> None:
    """Put the locators ahead of numba's own, and read their damaged entries as misses; to be
    called before any kernel is decorated."""
    known = caching.CacheImpl._locator_classes
    if not any(locator in known for locator in LOCATORS):
        known[:0] = LOCATORS
    caching.Cache.load_overload = _load_or_compile_again
