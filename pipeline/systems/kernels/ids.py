"""Strings in Arrow's layout for the compiled kernels: comparing them, keeping a month's rows, and
numbering player ids; and Arrow arrays over the kernels' numpy output.

A string column is a pair (int32 offsets, UTF-8 bytes): row r is data[offsets[r]:offsets[r + 1]].
UTF-8 bytes compared bytewise order like Python's str comparison (by code point).

Player ids are numbered 0, 1, ... in order of first appearance; id v is
pool[offsets[v]:offsets[v + 1]], and an open-addressing hash table `slots` finds the number of an
id: an int64 array of shape (size, 2), size a power of two, kept at most a quarter full (FILL). A used row
holds [number | length << 32, the id's prefix], an unused one -1s, so an id of up to eight bytes
is recognised without reading the pool.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from pipeline.systems.kernels import plain_njit
from pipeline.systems.kernels.arrays import compiled_with_room


def string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's offsets (int32, one more than its length, into the bytes) and UTF-8
    bytes, without copying."""
    if len(array) == 0:
        return np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.uint8)
    _, offsets, data = array.buffers()
    starts = np.frombuffer(offsets, dtype=np.int32, count=len(array) + 1, offset=4 * array.offset)
    text = np.frombuffer(data, dtype=np.uint8) if data is not None and data.size else np.zeros(0, dtype=np.uint8)
    return starts, text


def validity_bits(array: pa.Array) -> np.ndarray:
    """An Arrow array's validity bitmap as uint8 (from bit `array.offset`), without copying;
    empty when the array has no nulls, which the kernels read as every row present."""
    bitmap = array.buffers()[0] if array.null_count else None
    return _NO_BITS if bitmap is None else np.frombuffer(bitmap, np.uint8)


_NO_BITS = np.zeros(0, dtype=np.uint8)


def boolean_bits(array: pa.BooleanArray) -> np.ndarray:
    """A boolean array's value bits as uint8 (from bit `array.offset`, little bit order), without
    copying: Arrow's to_numpy unpacks them into a byte per row."""
    data = array.buffers()[1] if len(array) else None
    return _NO_BITS if data is None else np.frombuffer(data, np.uint8)


def strings_of(offsets: np.ndarray, data: np.ndarray, count: int) -> pa.StringArray:
    """The first `count` strings of an id pool (offsets and UTF-8 bytes) as an Arrow array that
    shares the pool's memory. Pools only grow, so the strings it shows never change; the
    checkpoint codec copies what it writes into buffers of their exact size."""
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets[: count + 1]), pa.py_buffer(data))


def array_of(kind: pa.DataType, length: int, data: np.ndarray, validity: np.ndarray | None = None) -> pa.Array:
    """An Arrow array of `length` fixed-width values (packed bits for booleans) over a contiguous
    numpy array's memory, null where the packed `validity` bitmap (little bit order) has a 0;
    no copy (pa.array converts values and masks element by element)."""
    return pa.Array.from_buffers(
        kind, length, [None if validity is None else pa.py_buffer(validity), pa.py_buffer(data)]
    )


def kept_rows(keep: np.ndarray, *arrays: pa.Array) -> list[pa.Array]:
    """Each array's rows that `keep` marks (numpy bools, one per row), as Arrow's filter gives
    them. A month's kept rows come in long runs (whole games): string arrays without nulls are
    copied a run at a time by kept_string_buffers, in half the time of Arrow's filter; the
    others go through Arrow's filter with one packed mask."""
    mask = None  # packed when an array needs it
    kept = []
    for array in arrays:
        if array.type == pa.string() and not array.null_count:
            offsets, data = kept_string_buffers(*string_buffers(array), keep)
            kept.append(pa.StringArray.from_buffers(offsets.shape[0] - 1, pa.py_buffer(offsets), pa.py_buffer(data)))
        else:
            if mask is None:
                mask = array_of(pa.bool_(), len(keep), np.packbits(keep, bitorder="little"))
            kept.append(array.filter(mask))
    return kept


@njit(cache=True)
def kept_string_buffers(offsets, data, keep):
    """The offsets (from 0) and bytes of the strings of the rows `keep` marks, in one pass over
    the runs of kept rows, each run's bytes copied in one loop. The loops count with unsigned
    integers, which numba compiles without its test for negative indices: with signed ones, or
    a slice assignment, the copy of a month's ids ran slower than Arrow's filter (up to three
    times), not twice as fast."""
    rows = np.uint64(keep.shape[0])
    one = np.uint64(1)
    out_offsets = np.empty(rows + one, np.int32)
    out = np.empty(offsets[rows] - offsets[0], np.uint8)  # room for every row's bytes
    out_offsets[0] = 0
    kept = np.uint64(0)
    at = np.uint64(0)
    r = np.uint64(0)
    while r < rows:
        if not keep[r]:
            r += one
            continue
        end = r + one
        while end < rows and keep[end]:
            end += one
        start = np.uint64(offsets[r])
        for k in range(end - r):
            out_offsets[kept + k + one] = at + np.uint64(offsets[r + k + one]) - start
        for k in range(np.uint64(offsets[end]) - start):
            out[at + k] = data[start + k]
        kept += end - r
        at += np.uint64(offsets[end]) - start
        r = end
    return out_offsets[: kept + one], out[:at]


# The id hash's multipliers (MurmurHash3's 64-bit finaliser) and shifts.
MIX_1, MIX_2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_ALL_BYTES, _S29, _S32 = np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64(29), np.uint64(32)


@plain_njit
def longest_run(starts, count):
    """The most entries between consecutive starts among the first `count` runs (string offsets:
    the longest string's length; game starts: the most powers in a game); 0 for none."""
    longest = 0
    for k in range(count):
        longest = max(longest, starts[k + 1] - starts[k])
    return longest


@plain_njit
def same_bytes(a, a_start, a_stop, b, b_start, b_stop):
    """Whether the byte strings a[a_start:a_stop] and b[b_start:b_stop] are equal."""
    if a_stop - a_start != b_stop - b_start:
        return False
    for k in range(a_stop - a_start):
        if a[a_start + k] != b[b_start + k]:
            return False
    return True


@plain_njit
def prefix(data, start, stop):
    """The first eight bytes of data[start:stop] packed little-endian (zero-padded), as uint64.

    Where the buffer holds eight bytes from `start`, all eight are read and those past `stop`
    masked off, so no branch depends on the length; unsigned indices spare numba's check for
    negative ones on every read."""
    length = stop - start
    at = np.uint64(start)
    word = np.uint64(0)
    if start + 8 <= data.shape[0]:
        for k in range(8):
            word |= np.uint64(data[at + np.uint64(k)]) << np.uint64(8 * k)
        keep = _ALL_BYTES if length >= 8 else (np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)
        return word & keep
    for k in range(min(length, 8)):
        word |= np.uint64(data[at + np.uint64(k)]) << np.uint64(8 * k)
    return word


def name_words(name: str) -> tuple[int, int, int]:
    """A name of at most sixteen UTF-8 bytes as string_words reads a row holding it."""
    text = name.encode()
    if len(text) > 16:
        raise ValueError(f"{name!r} is longer than sixteen bytes")
    first, second = np.frombuffer(text.ljust(16, b"\0"), dtype="<i8").tolist()
    return len(text), first, second


@plain_njit
def string_words(data, start, stop):
    """The length of data[start:stop] and its first and second eight bytes (zero-padded) as
    int64: equal to name_words(name) exactly when the string is that name.

    Comparing these words decides which of a few names a row holds without a branch on its
    bytes: a month's results come in no predictable order, and a mispredicted branch per row
    cost more than the rest of reading the row."""
    return (
        np.int64(stop - start),
        np.int64(prefix(data, start, stop)),
        np.int64(prefix(data, start + 8, max(stop, start + 8))),
    )


@plain_njit
def is_name(words, name):
    """Whether a row's string_words are those of a name's name_words (no branch)."""
    return (words[0] == name[0]) & (words[1] == name[1]) & (words[2] == name[2])


@plain_njit
def same_string(data, start, stop, word, other_start, other_stop):
    """Whether data[start:stop] (whose prefix is `word`) equals data[other_start:other_stop]."""
    if stop - start != other_stop - other_start or prefix(data, other_start, other_stop) != word:
        return False
    return stop - start <= 8 or same_bytes(data, start + 8, stop, data, other_start + 8, other_stop)


@plain_njit
def run_end(offsets, data, r, rows):
    """The first row after r (rows at most) whose string differs from row r's: equal strings
    come in consecutive runs (a game's rows)."""
    start, stop = offsets[r], offsets[r + 1]
    word = prefix(data, start, stop)
    end = r + 1
    while end < rows and same_string(data, start, stop, word, offsets[end], offsets[end + 1]):
        end += 1
    return end


@njit(cache=True)
def run_starts(offsets, data):
    """The first row of each run of equal strings, then the row count (int64)."""
    rows = offsets.shape[0] - 1
    starts = np.empty(rows + 1, dtype=np.int64)
    runs = 0
    r = 0
    while r < rows:
        starts[runs] = r
        runs += 1
        r = run_end(offsets, data, r, rows)
    starts[runs] = rows
    return starts[: runs + 1].copy()


_THREE, _SEVEN, _ONE = np.uint64(3), np.uint64(7), np.uint64(1)


@plain_njit
def bit_at(bits, index):
    """Bit `index` (0 or 1) of an Arrow bitmap, little bit order: a boolean column's values or
    a validity bitmap, `index` counted from the bitmap's start (the array's offset added).
    Unsigned, so numba compiles no test for a negative index. A validity bitmap from
    validity_bits is empty for a column without nulls: test its size first, in the caller's
    loop (a helper that holds the test keeps numba from hoisting it out of the loop)."""
    at = np.uint64(index)
    return np.int64((np.uint64(bits[at >> _THREE]) >> (at & _SEVEN)) & _ONE)


_BYTE = np.uint64(0xFF)


@plain_njit
def copy_words(source, start, stop, target, at):
    """Copy source[start:stop] to target[at:]; returns the index after it. Eight bytes at a
    time: each word is read with one load (prefix) and written with one store, so `target` needs
    seven bytes of room past the copy. Unsigned indices spare numba's
    test for negative ones."""
    at = np.uint64(at)
    end = at + np.uint64(stop - start)
    while start < stop:
        word = prefix(source, start, stop)
        for k in range(8):  # the compiler merges these into one store
            target[at + np.uint64(k)] = np.uint8((word >> np.uint64(8 * k)) & _BYTE)
        start += 8
        at += np.uint64(8)
    return end


@plain_njit
def id_less(offsets, data, a, b):
    """Whether string a sorts before string b (UTF-8 bytes in order = code points in order)."""
    start_a, stop_a = offsets[a], offsets[a + 1]
    start_b, stop_b = offsets[b], offsets[b + 1]
    for k in range(min(stop_a - start_a, stop_b - start_b)):
        x, y = data[start_a + k], data[start_b + k]
        if x != y:
            return x < y
    return stop_a - start_a < stop_b - start_b


@plain_njit
def id_hash(word, data, start, stop):
    """A 64-bit hash of data[start:stop], whose prefix is `word`: its bytes are mixed in a
    word (eight bytes) at a time, multiply and xorshift."""
    h = (np.uint64(word) ^ np.uint64(stop - start)) * MIX_1
    h ^= h >> _S29
    k = start + 8
    while k < stop:
        h = (h ^ prefix(data, k, stop)) * MIX_1
        h ^= h >> _S29
        k += 8
    h *= MIX_2
    return h ^ (h >> _S32)


# Slots per id at least: in a table a quarter full fewer lookups step to a second slot than in
# one half full, a step the probe loop's branch mispredicts.
FILL = 4


@njit(cache=True)
def id_table(offsets, pool, count, size):
    """A hash table of `size` rows (a power of two, at least FILL × count) holding ids 0..count-1."""
    slots = np.full((size, 2), -1, np.int64)
    mask = size - 1
    for number in range(count):
        start, stop = offsets[number], offsets[number + 1]
        word = prefix(pool, start, stop)
        slot = np.int64(id_hash(word, pool, start, stop) & np.uint64(mask))
        while slots[slot, 0] >= 0:
            slot = (slot + 1) & mask
        slots[slot, 0] = number | (np.int64(stop - start) << 32)
        slots[slot, 1] = np.int64(word)
    return slots


@njit(cache=True)
def number_rows(offsets, data, rows, pool_offsets, pool, slots, count, out):
    """The number of the id of each row rows[i] of the string column (offsets, data) into out[i]
    (rows None: every row in order); unknown ids get the next numbers, from `count` on, their
    bytes appended to the pool. Returns
    (count, pool_offsets, pool, slots): the pool and its offsets are replaced by larger ones
    when full, the table by one twice the size when it would pass a quarter full (FILL)."""
    n = offsets.shape[0] - 1 if rows is None else rows.shape[0]
    done = 0
    while True:
        done, count = _number_some(offsets, data, rows, n, done, pool_offsets, pool, slots, count, out)
        if FILL * count > slots.shape[0]:
            slots = id_table(pool_offsets, pool, count, 2 * slots.shape[0])
        elif done < n:  # the next new id does not fit in the pool
            r = done if rows is None else rows[done]
            length = offsets[r + 1] - offsets[r]
            pool_offsets = compiled_with_room(pool_offsets, count + 2, count + 1)
            pool = compiled_with_room(pool, pool_offsets[count] + length, pool_offsets[count])
        else:
            return count, pool_offsets, pool, slots


@plain_njit
def _number_some(offsets, data, rows, n, done, pool_offsets, pool, slots, count, out):
    """number_rows from the `done`-th of its n rows on, until the table is more than a quarter full or the pool has no
    room for the next new id; returns (rows done, count). The table is probed here, in the loop
    over the rows: a lookup takes a few nanoseconds, and a call per row, which is not inlined,
    would cost as much again, as would arrays that may be replaced within the loop."""
    # Rows and slots are unsigned: numba tests a signed index for being negative on every access.
    mask = np.uint64(slots.shape[0] - 1)
    for i in range(done, n):
        r = np.uint64(i if rows is None else rows[i])
        start, stop = offsets[r], offsets[r + np.uint64(1)]
        length = np.int64(stop - start)
        word = prefix(data, start, stop)
        tag = np.int64(word)
        slot = id_hash(word, data, start, stop) & mask
        number = np.int64(-1)
        while slots[slot, 0] >= 0:
            entry = slots[slot, 0]
            if slots[slot, 1] == tag and entry >> 32 == length:
                known = entry & 0xFFFFFFFF
                if length <= 8 or same_bytes(
                    data, start + 8, stop, pool, pool_offsets[known] + 8, pool_offsets[known + 1]
                ):
                    number = known
                    break
            slot = (slot + np.uint64(1)) & mask
        if number >= 0:
            out[i] = number
            continue
        used = pool_offsets[count]
        if count + 2 > pool_offsets.shape[0] or used + length > pool.shape[0]:
            return i, count
        out[i] = count
        for k in range(length):
            pool[used + k] = data[start + k]
        pool_offsets[count + 1] = used + length
        slots[slot, 0] = count | (length << 32)
        slots[slot, 1] = tag
        count += 1
        if FILL * count > slots.shape[0]:
            return i + 1, count
    return n, count


def table_size(count: int, at_least: int = 1) -> int:
    """Rows of a hash table `slots` that holds `count` ids at most a quarter full: the smallest
    power of two that is at least FILL × count and at least `at_least`."""
    return 1 << (max(FILL * count, at_least, 1) - 1).bit_length()
