"""Growing the numpy arrays a system keeps per player, the one way every system does it.

An array that must hold more rows is replaced by one of `room` rows: at least twice as many, so
that a run grows it a few times only. `with_room` grows an array only when it is full,
`copy_with_room` always copies (for a step that changes the array while the state it was
stepped from keeps its own), and `compiled_with_room` is with_room for compiled kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

MIN_ROWS = 64


def room(held: int, rows: int) -> int:
    """The rows of an array of `held` rows once it must hold `rows`: `held` when enough, else at
    least double (and MIN_ROWS)."""
    return held if rows <= held else max(rows, 2 * held, MIN_ROWS)


def resized(array: np.ndarray, rows: int, fill: Any = 0, *, keep: int | None = None) -> np.ndarray:
    """A new array of `rows` rows: the first `keep` rows of `array` (default: as many as fit), then `fill`.

    Rows are copied as raw bytes, so structured records keep every byte (numpy would otherwise
    copy them field by field)."""
    out = np.empty((rows, *array.shape[1:]), dtype=array.dtype)
    kept = min(rows, len(array)) if keep is None else keep
    out[:kept].view(np.uint8)[...] = array[:kept].view(np.uint8)
    out[kept:] = fill
    return out


def with_room(array: np.ndarray, rows: int, fill: Any = 0, *, used: int | None = None) -> np.ndarray:
    """`array` itself when it holds `rows` rows, else a larger copy of its first `used` rows
    (default all), the capacity at least doubling so that a run grows it a few times only."""
    if rows <= len(array):
        return array
    return resized(array, room(len(array), rows), fill, keep=used)


def copy_with_room(array: np.ndarray, rows: int, fill: Any = 0, *, used: int | None = None) -> np.ndarray:
    """A copy of `array` (its first `used` rows, default all, then `fill`) that holds `rows`
    rows: of the same capacity when it does, else grown as with_room grows it."""
    return resized(array, room(len(array), rows), fill, keep=used)


@njit(cache=True)
def compiled_with_room(array, rows, used):
    """with_room for a compiled kernel's 1-D array: `array`, or a larger one holding its first
    `used` entries, zeros after."""
    if rows <= array.shape[0]:
        return array
    grown = np.zeros(max(rows, 2 * array.shape[0], MIN_ROWS), dtype=array.dtype)
    for k in range(used):
        grown[k] = array[k]
    return grown
