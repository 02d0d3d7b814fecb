"""Stable sorting for the compiled kernels: one sort over integer keys serves every order.

An order by several fields, or by strings, is encoded as int64 keys that order the same way
(fields packed into one integer, or sorted field by field from the least significant up); equal
keys keep their given order, so the outcome of every sort is fixed, ties included.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from pipeline.systems.kernels.ids import id_less, string_buffers

_CHUNK = 7  # id bytes per key (sorted_by_id)
_MORE = 8  # a key's low four bits: bytes of the id from its chunk on, 8 for more than 7
_LOW4 = 15
_RADIX_FROM = 256  # stable_order radix-sorts this many keys or more
_DIGIT_BITS = 11
_DIGITS = 1 << _DIGIT_BITS
_DIGIT_MASK = _DIGITS - 1


@njit(cache=True)
def stable_order(keys):
    """The positions of the int64 `keys` in ascending order of key, equal keys in their order:
    radix_order of key − smallest key, or a merge sort for a few keys (where the radix sort's
    passes over its digits would cost more than the sorting) or for keys more than 2**63 apart."""
    n = keys.shape[0]
    if n < _RADIX_FROM:
        return np.argsort(keys, kind="mergesort")
    low = high = keys[0]
    for k in range(1, n):
        low, high = min(low, keys[k]), max(high, keys[k])
    if np.uint64(high) - np.uint64(low) >= np.uint64(1) << np.uint64(63):
        return np.argsort(keys, kind="mergesort")
    return radix_order(keys - low, high - low)[0]


@njit(cache=True)
def radix_order(keys, span):
    """(order, sorted keys) of int64 keys from 0 to `span`: the positions in ascending order of
    key, equal keys in their order, and the keys in that order. A least-significant-digit
    radix sort, 11 bits a pass, as many passes as `span` needs."""
    n = keys.shape[0]
    digits, order = keys.copy(), np.arange(n)
    to_digits, to_order = np.empty(n, np.int64), np.empty(n, np.int64)
    counts = np.empty(_DIGITS + 1, np.int64)
    shift = 0
    while shift < 63 and (span >> shift) > 0:
        for d in range(_DIGITS + 1):
            counts[d] = 0
        for k in range(n):
            counts[((digits[k] >> shift) & _DIGIT_MASK) + 1] += 1
        for d in range(_DIGITS):
            counts[d + 1] += counts[d]
        for k in range(n):
            d = (digits[k] >> shift) & _DIGIT_MASK
            to = counts[d]
            counts[d] = to + 1
            to_digits[to] = digits[k]
            to_order[to] = order[k]
        digits, to_digits = to_digits, digits
        order, to_order = to_order, order
        shift += _DIGIT_BITS
    return order, digits


@njit(cache=True)
def id_key(offsets, data, p, chunk):
    """The sort key of string p's bytes 7·chunk .. 7·chunk + 6: those bytes big-endian (zero
    bytes past the end) above four bits of how many bytes the string has from there on (8 for
    more than seven).

    Strings equal before the chunk order as their keys do, or tie in it and both go on: a
    shorter string sorts before any longer one it begins, and its key is smaller."""
    start = offsets[p] + _CHUNK * chunk
    stop = offsets[p + 1]
    key = np.int64(0)
    for k in range(start, start + _CHUNK):
        key <<= 8
        if k < stop:
            key |= data[k]
    return (key << 4) | min(max(stop - start, 0), _MORE)


@njit(cache=True)
def _order_run(out, keys, cut, start, stop, offsets, data, chunk):
    """Sort out[start:stop] stably by id_key of `chunk`; cut[k] marks where the key changes."""
    for k in range(start, stop):
        keys[k] = id_key(offsets, data, out[k], chunk)
    order = stable_order(keys[start:stop])
    moved, moved_keys = out[start:stop][order], keys[start:stop][order]
    for k in range(stop - start):
        out[start + k] = moved[k]
        keys[start + k] = moved_keys[k]
    for k in range(start + 1, stop):
        cut[k] = keys[k] != keys[k - 1]


@njit(cache=True)
def sorted_by_id(players, offsets, data):
    """`players` in the order of their strings (offsets, data): sorted by the first chunk's
    key, then every run of strings equal so far that goes on by the next chunk's, and so on."""
    n = players.shape[0]
    out = players.copy()
    keys = np.empty(n, np.int64)
    cut = np.ones(n + 1, np.bool_)  # cut[k]: the strings from k on differ from those before k
    _order_run(out, keys, cut, 0, n, offsets, data, 0)
    chunk = 0
    going_on = True
    while going_on:
        going_on = False
        chunk += 1
        start = 0
        for k in range(1, n + 1):
            if cut[k]:
                if k - start > 1 and keys[start] & _LOW4 == _MORE:
                    _order_run(out, keys, cut, start, k, offsets, data, chunk)
                    going_on = True
                start = k
    return out


@njit(cache=True)
def extend_id_order(order, known, total, offsets, data):
    """order[:known], the strings 0..known-1 in string order, with known..total-1 (none equal
    to another) merged in, in place (order has room for total)."""
    if total == known:
        return
    new = sorted_by_id(np.arange(known, total), offsets, data)
    old = known  # order[:old] are the old strings not yet moved
    for j in range(new.shape[0] - 1, -1, -1):
        lo, hi = 0, old  # binary search: the first old string sorting after new[j]
        while lo < hi:
            mid = (lo + hi) // 2
            if id_less(offsets, data, new[j], order[mid]):
                hi = mid
            else:
                lo = mid + 1
        for k in range(old - 1, lo - 1, -1):
            order[k + j + 1] = order[k]
        order[lo + j] = new[j]
        old = lo


@njit(cache=True)
def rows_in_order(numbers, first_offsets, first_data, second_offsets, second_data):
    """Whether every row comes after the one before it by (number, first string, second string):
    a day, a game and a power, or a rank and a player twice. The strings as Arrow offsets and
    UTF-8 bytes. One pass, stopping at the first row out of order."""
    for r in range(1, numbers.shape[0]):
        if numbers[r] != numbers[r - 1]:
            if numbers[r] < numbers[r - 1]:
                return False
        elif id_less(first_offsets, first_data, r, r - 1):
            return False
        elif not id_less(first_offsets, first_data, r - 1, r) and id_less(second_offsets, second_data, r, r - 1):
            return False
    return True


def columns_in_order(numbers: pa.Array, first: pa.Array, second: pa.Array) -> bool:
    """rows_in_order over Arrow columns: integers and two strings; a null anywhere is not known
    to be in order."""
    if numbers.null_count or first.null_count or second.null_count:
        return False
    return rows_in_order(
        np.asarray(numbers.to_numpy(zero_copy_only=False), dtype=np.int64),
        *string_buffers(first),
        *string_buffers(second),
    )
