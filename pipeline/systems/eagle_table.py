"""An ordered set of table keys with position look-ups in about O(log n), for the live Eagle table.

The Eagle table is ordered by a composite key (points desc, fewer games, later last game,
player_id), encoded as a tuple that sorts ascending. A game changes the keys of its seven
players and asks for the positions of the seven; re-sorting the table per game would cost
O(n log n) per game. `OrderedKeys` keeps the keys instead as a list of sorted blocks
(each between about LOAD/2 and 2·LOAD keys) plus:

- `_maxes`: the largest key of each block, so `bisect` on it finds the block of a key in
  O(log B) (B = number of blocks);
- `_counts`: a Fenwick (binary indexed) tree over the block sizes, so the number of keys in the
  blocks before block i is a prefix sum in O(log B).

The position of a key is then that prefix sum plus a `bisect` inside its block. Inserting or
removing a key is a `bisect` plus an insertion into one short block (O(LOAD) memory move) and
an O(log B) Fenwick update. A block that grows past 2·LOAD is split and one that shrinks below
LOAD/2 is merged with a neighbour; both rebuild the Fenwick tree in O(B), which happens at
most once per about LOAD/2 updates, so it is O(B / LOAD) amortised. Iteration yields the keys
in order, which is how the month-end table is read without a sort.
"""
from __future__ import annotations

from bisect import bisect_left
from itertools import chain
from typing import Any, Iterable, Iterator

LOAD = 256  # target block size: short enough for cheap list inserts, long enough for few blocks


class OrderedKeys:
    """A set of mutually comparable keys kept in order, with rank queries."""

    __slots__ = ("_blocks", "_maxes", "_counts", "_size")

    def __init__(self, keys: Iterable[Any] = ()) -> None:
        ordered = sorted(set(keys))
        self._blocks: list[list[Any]] = [ordered[i:i + LOAD] for i in range(0, len(ordered), LOAD)]
        self._maxes: list[Any] = [block[-1] for block in self._blocks]
        self._size = len(ordered)
        self._counts: list[int] = []
        self._rebuild_counts()

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(self._blocks)

    def __contains__(self, key: Any) -> bool:
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            return False
        block = self._blocks[i]
        j = bisect_left(block, key)
        return j < len(block) and block[j] == key

    def copy(self) -> "OrderedKeys":
        """An independent copy (blocks copied, keys shared: keys are immutable)."""
        clone = OrderedKeys.__new__(OrderedKeys)
        clone._blocks = [list(block) for block in self._blocks]
        clone._maxes = list(self._maxes)
        clone._counts = list(self._counts)
        clone._size = self._size
        return clone

    def rank(self, key: Any) -> int:
        """Number of keys strictly smaller than `key` (the 0-based position it has or would have)."""
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            return self._size
        return self._keys_before_block(i) + bisect_left(self._blocks[i], key)

    def index(self, key: Any) -> int | None:
        """0-based position of `key`, or None when it is not in the set."""
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            return None
        block = self._blocks[i]
        j = bisect_left(block, key)
        if j == len(block) or block[j] != key:
            return None
        return self._keys_before_block(i) + j

    def add(self, key: Any) -> None:
        """Insert `key`; a key already present is left as it is."""
        if not self._blocks:
            self._blocks.append([key])
            self._maxes.append(key)
            self._size = 1
            self._rebuild_counts()
            return
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            i -= 1  # larger than every key: it goes at the end of the last block
        block = self._blocks[i]
        j = bisect_left(block, key)
        if j < len(block) and block[j] == key:
            return
        block.insert(j, key)
        self._maxes[i] = block[-1]
        self._size += 1
        if len(block) > 2 * LOAD:
            self._blocks[i:i + 1] = [block[:LOAD], block[LOAD:]]
            self._maxes[i:i + 1] = [block[LOAD - 1], block[-1]]
            self._rebuild_counts()
        else:
            self._add_count(i, 1)

    def discard(self, key: Any) -> bool:
        """Remove `key` if present; True when it was."""
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            return False
        block = self._blocks[i]
        j = bisect_left(block, key)
        if j == len(block) or block[j] != key:
            return False
        del block[j]
        self._size -= 1
        if len(block) < LOAD // 2 and len(self._blocks) > 1:
            self._merge_with_neighbour(i)
            self._rebuild_counts()
        elif not block:
            del self._blocks[i]
            del self._maxes[i]
            self._rebuild_counts()
        else:
            self._maxes[i] = block[-1]
            self._add_count(i, -1)
        return True

    def _merge_with_neighbour(self, i: int) -> None:
        """Join the short block i with the next one (or the previous, for the last), re-splitting if long."""
        left = i if i + 1 < len(self._blocks) else i - 1
        merged = self._blocks[left] + self._blocks[left + 1]
        if len(merged) > 2 * LOAD:
            half = len(merged) // 2
            parts = [merged[:half], merged[half:]]
        else:
            parts = [merged]
        self._blocks[left:left + 2] = parts
        self._maxes[left:left + 2] = [part[-1] for part in parts]

    def _rebuild_counts(self) -> None:
        """Fenwick tree of the block sizes, built in O(B)."""
        counts = [0] + [len(block) for block in self._blocks]
        for index in range(1, len(counts)):
            parent = index + (index & -index)
            if parent < len(counts):
                counts[parent] += counts[index]
        self._counts = counts

    def _add_count(self, block_index: int, delta: int) -> None:
        """Fenwick point update: block `block_index` changed size by `delta`."""
        index = block_index + 1
        counts = self._counts
        while index < len(counts):
            counts[index] += delta
            index += index & -index

    def _keys_before_block(self, block_index: int) -> int:
        """Fenwick prefix sum: keys in the blocks before `block_index`."""
        total = 0
        index = block_index
        counts = self._counts
        while index > 0:
            total += counts[index]
            index -= index & -index
        return total
