"""Growing the numpy arrays a system's state keeps per player, the one way every system does it."""
from __future__ import annotations

from typing import Any

import numpy as np

MIN_ROWS = 64


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
    return resized(array, max(rows, 2 * len(array), MIN_ROWS), fill, keep=used)
