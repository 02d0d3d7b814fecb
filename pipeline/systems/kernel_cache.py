"""The folder of numba's on-disk cache of the kernels, named for the text of every kernel file.

Numba reuses a cached function while the text of its own file is unchanged. A compiled kernel
also holds the code of the kernels it calls from other files (every system calls
pipeline.systems.kernels.ids), so after one of those files changes, a cached caller would run
stale code. The cache therefore lives in a folder named for a digest of every file of
pipeline.systems and of every other module of the package that defines a kernel: a change to any
of them starts an empty folder, and every kernel is compiled again on its next use.

Numba reads NUMBA_CACHE_DIR when it is imported, so the folder is chosen first: by the diprank
program, by the Makefile (`python -m pipeline.systems.kernel_cache` prints it) and by the tests.
A NUMBA_CACHE_DIR the user has set is kept, and the freshness across files is then the user's.
This module imports nothing but the standard library.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
SYSTEMS = PACKAGE / "systems"
CACHE_VARIABLE = "NUMBA_CACHE_DIR"


def kernel_files() -> list[Path]:
    """Every Python file of pipeline.systems and every other file of the package that uses njit."""
    return sorted(
        path for path in PACKAGE.rglob("*.py") if path.is_relative_to(SYSTEMS) or b"njit" in path.read_bytes()
    )


@functools.lru_cache(maxsize=None)
def sources_digest() -> str:
    """A digest of the names and text of every kernel file."""
    digest = hashlib.sha256()
    for path in kernel_files():
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def kernel_cache_dir() -> Path:
    """The user's cache folder for the kernels compiled from the present kernel files."""
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return user_cache / "diprank" / "numba" / sources_digest()[:20]


def use_kernel_cache_dir() -> str:
    """NUMBA_CACHE_DIR, set to the kernels' folder unless the user set it; before numba is imported."""
    return os.environ.setdefault(CACHE_VARIABLE, str(kernel_cache_dir()))


if __name__ == "__main__":
    print(kernel_cache_dir())
