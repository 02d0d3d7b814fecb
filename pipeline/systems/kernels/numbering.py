"""Dense numbers for player ids across a run's months, in one compiled hash table.

The writer carries each player's last rank and rating, peak and latest feed name from month to
month, and Dip Pouch its players' ratings: a month finds its players among everyone seen so far.
A lookup with Arrow (`pc.index_in`) builds a hash of the whole value set on every call, and a
Python dict costs a lookup per row, so a month's cost grew with the players seen or its rows;
this table is built once and probed in one compiled pass (pipeline.systems.kernels.ids).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.systems.kernels.ids import number_rows, string_buffers, strings_of, table_size

_FIRST_IDS, _FIRST_BYTES = 1024, 16 * 1024


class PlayerNumbers:
    """Player ids numbered 0, 1, ... in order of first sight.

    Successive states of a system share one numbering, each knowing how many of its ids are
    its own (their `count`): numbering a month's new ids appends to it, so an earlier state
    never sees a change, and `first(count)` gives a state the numbering it may add to.
    Id v is pool[offsets[v]:offsets[v + 1]] (UTF-8, Arrow's string layout), which the kernels
    read to copy ids into tables and to break ties by id."""

    __slots__ = ("count", "offsets", "pool", "slots")

    def __init__(self, ids: pa.Array | None = None, expected: int = _FIRST_IDS) -> None:
        """`expected`: about how many ids will be numbered (the table grows past it when needed)."""
        self.count = 0
        self.offsets = np.zeros(max(expected, _FIRST_IDS) + 1, dtype=np.int32)
        self.pool = np.zeros(_FIRST_BYTES, dtype=np.uint8)
        self.slots = np.full((table_size(max(expected, _FIRST_IDS)), 2), -1, dtype=np.int64)
        if ids is not None:
            self.numbers(ids)

    def numbers(self, ids: pa.Array, out: np.ndarray | None = None) -> np.ndarray:
        """Each id's number (into `out`, int32 of the ids' length, when given); ids not seen
        before get the next ones. Ids must not be null."""
        if ids.null_count:
            raise ValueError("a player id is missing")
        offsets, data = string_buffers(ids if ids.type == pa.string() else ids.cast(pa.string()))
        out = np.empty(len(ids), dtype=np.int32) if out is None else out
        self.count, self.offsets, self.pool, self.slots = number_rows(
            offsets, data, None, self.offsets, self.pool, self.slots, self.count, out
        )
        return out

    def ids(self, count: int | None = None) -> pa.Array:
        """The first `count` ids (default every id), in number order, sharing the table's memory."""
        return strings_of(self.offsets, self.pool, self.count if count is None else count)

    def id_of(self, number: int) -> str:
        """The id numbered `number`."""
        return bytes(self.pool[self.offsets[number] : self.offsets[number + 1]]).decode()

    def buffers(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The first `count` ids as Arrow offsets (from 0) and the UTF-8 bytes they point into."""
        offsets = self.offsets[: count + 1]
        return offsets, self.pool[: offsets[count]]

    def first(self, count: int) -> "PlayerNumbers":
        """The numbering a state of `count` ids may add to: this one when it holds no more, else
        a new one of its first `count` ids (a state stepped a second time gets its own copy)."""
        if count == self.count:
            return self
        return PlayerNumbers(self.ids(count), expected=count)


def distinct_numbers(ids: pa.Array, refusal: str, expected: int = 0) -> PlayerNumbers:
    """A numbering of ids that must all differ (a state's or a checkpoint's players), in their
    order; ValueError(refusal) when one comes twice."""
    numbers = PlayerNumbers(ids if ids.type == pa.string() else ids.cast(pa.string()), expected=max(expected, len(ids)))
    if numbers.count != len(ids):
        raise ValueError(refusal)
    return numbers
