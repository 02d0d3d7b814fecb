"""The top of the Eagle table as counts by points, compiled with numba.

The Eagle table is ordered by a composite key: points desc, then fewer games, then the later
last game, then `player_id`. `precedes(a, b, ...)` compares two players by that key, read from
the per-player arrays (points in hundredths, games, last game as a day number) and, for the last
tie-break, the ids' UTF-8 bytes (`id_bytes[id_offsets[p]:id_offsets[p + 1]]`, Arrow's string
layout; bytewise order is code point order, as Python compares str).

Live mode (pipeline.systems.eagle.kernel) asks, before every game, for the position of each
player at the top of the table, and takes a player out and puts them back after it. Points
decide the position almost always, so the members are counted by points value in a Fenwick
tree (binary indexed tree): the players with more points than a given value are found, and a
member is counted in or out, by a loop of at most log2(values) steps whatever the keys are,
where a search tree descends through data-dependent comparisons. The members with equal points,
few at the top of a table, are chained per value and compared key by key.

Layout (`TopCounts`, int32 arrays):
  fenwick  values + 1 entries: entry i sums the members with points in (i − lowbit(i), i]
           − 1, the usual one-based Fenwick layout over points values 0 .. values − 1;
  head     values entries: the first member with that many points, or NONE;
  next     one entry per player number: the next member with the same points, or NONE.
Points at or above `values` do not fit (insert refuses them): the caller sizes the arrays.

A player's key must not change while the player is a member: take them out, update their
arrays, put them back.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from pipeline.systems.kernels import plain_njit
from pipeline.systems.kernels.ids import id_less

NONE = -1
TopCounts = namedtuple("TopCounts", "fenwick head next")


def empty(players: int, values: int) -> TopCounts:
    """No members, room for `players` player numbers and points 0 .. values − 1."""
    return TopCounts(
        np.zeros(values + 1, dtype=np.int32),
        np.full(values, NONE, dtype=np.int32),
        np.full(players, NONE, dtype=np.int32),
    )


@plain_njit
def precedes(a, b, points, games, last, id_offsets, id_bytes):
    """Whether player a comes before player b in the table (a != b)."""
    if points[a] != points[b]:
        return points[a] > points[b]
    if games[a] != games[b]:
        return games[a] < games[b]
    if last[a] != last[b]:
        return last[a] > last[b]
    return id_less(id_offsets, id_bytes, a, b)


@plain_njit
def _add(fenwick, value, delta):
    i = value + 1
    while i < fenwick.shape[0]:
        fenwick[i] += delta
        i += i & -i


@plain_njit
def at_most(top, value):
    """Members with at most `value` points."""
    fenwick = top.fenwick
    i = min(value + 1, fenwick.shape[0] - 1)
    total = 0
    while i > 0:
        total += fenwick[i]
        i &= i - 1
    return total


@plain_njit
def insert(top, x, points):
    """Count player x (not a member) in with their points."""
    fenwick, head, follow = top
    value = points[x]
    if not 0 <= value < head.shape[0]:
        raise ValueError("eagle table: points outside the counted values")
    _add(fenwick, value, 1)
    follow[x] = head[value]
    head[value] = x


@plain_njit
def remove(top, x, points):
    """Count player x (a member, with the points they were counted in with) out."""
    fenwick, head, follow = top
    value = points[x]
    _add(fenwick, value, -1)
    q = head[value]
    if q == x:
        head[value] = follow[x]
    else:
        while follow[q] != x:
            q = follow[q]
        follow[q] = follow[x]
    follow[x] = NONE


@plain_njit
def rank(top, size, x, limit, points, games, last, id_offsets, id_bytes):
    """Number of the `size` members that precede player x (x's 0-based position when a member),
    or `limit` when that number is `limit` or more (a position beyond it is not needed)."""
    head, follow = top.head, top.next
    value = points[x]
    before = size - at_most(top, value)
    if before >= limit:
        return limit
    q = head[value]
    while q != NONE:
        if q != x and precedes(q, x, points, games, last, id_offsets, id_bytes):
            before += 1
        q = follow[q]
    return min(before, limit)


@plain_njit
def lowest_points(top):
    """The fewest points any member has (there must be one): the first value whose count
    is not 0, found by descending the Fenwick tree."""
    fenwick = top.fenwick
    step = 1
    while 2 * step < fenwick.shape[0]:
        step *= 2
    i = 0  # the largest index whose prefix holds no member
    while step > 0:
        if i + step < fenwick.shape[0] and fenwick[i + step] == 0:
            i += step
        step //= 2
    return i  # value i holds the first member (index i + 1)


@njit(cache=True)
def members(top):
    """Every member, by points (fewest first), members with equal points in chain order."""
    out = []
    for value in range(top.head.shape[0]):
        q = top.head[value]
        while q != NONE:
            out.append(q)
            q = top.next[q]
    return np.array(out, dtype=np.int32) if out else np.zeros(0, dtype=np.int32)


@njit(cache=True)
def regrown(top, players, values):
    """The same members in arrays for `players` player numbers and `values` points values."""
    fenwick = np.zeros(values + 1, dtype=np.int32)
    head = np.full(values, NONE, dtype=np.int32)
    follow = np.full(players, NONE, dtype=np.int32)
    for value in range(top.head.shape[0]):
        head[value] = top.head[value]
        q = top.head[value]
        count = 0
        while q != NONE:
            follow[q] = top.next[q]
            count += 1
            q = top.next[q]
        fenwick[value + 1] = count
    for i in range(1, values + 1):  # the Fenwick sums from the counts, in one pass
        parent = i + (i & -i)
        if parent <= values:
            fenwick[parent] += fenwick[i]
    return TopCounts(fenwick, head, follow)
