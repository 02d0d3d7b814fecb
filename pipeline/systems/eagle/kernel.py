"""The compiled month of the Eagle points table (SPEC §3.3): numba kernels over integer arrays.

Players are dense indices; dates are day numbers (days since 1970-01-01); every amount is an
exact int64 number of hundredths. Per player the arrays hold: `points` (table points, the sum of
the last 10 games), `games` (games since the last restart; 0 = never played), `last` (day of the
last game), `recent` (n x 10 ring of game points: game number g since the restart is in slot
g % 10, so the slot of the next game holds the game that drops out) and `year_points` /
`year_played` (the awards' tally of the calendar year). The ids themselves are
`id_bytes[id_offsets[p]:id_offsets[p + 1]]` (UTF-8, Arrow's string layout), numbered by
`number_ids` and compared bytewise for the last tie-break of the table.

`run_month` applies one month's games in order and returns the month-end table order; the
caller turns the row outputs into Arrow tables. Game points use integer half-up rounding:
a k-way draw share of V hundredths is floor((2V + k) / 2k), exactly round_half_up(V / k, 2).
Slice assignments are written as loops: numba compiles them far more slowly.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.systems.kernels.calendar import add_years, civil_from_days, days_from_civil  # noqa: F401

from pipeline.systems.eagle import table as tree

GAMES_COUNTED = 10
LISTING_YEARS = 2
RESTART_YEARS = 7

# Result codes (index into RESULT_NAMES).
SOLO, DRAW, SURVIVED, ELIMINATED, ANARCHY = 0, 1, 2, 3, 4
RESULT_NAMES = ("solo", "draw", "survived", "eliminated", "anarchy")
ELIMINATED_CENTS = 1
SURVIVED_BASE_CENTS = 10
SURVIVED_CENTRE_CENTS = 1

# Helpers that allocate nothing are compiled without numba's reference counting: otherwise every
# call that is not inlined pays an atomic increment and decrement per array argument.
plain_njit = njit(cache=True, _nrt=False)


# ---------------------------------------------------------------------------------------------
# Calendar arithmetic on day numbers (proleptic Gregorian, like datetime.date)
# ---------------------------------------------------------------------------------------------

@plain_njit
def last_day_before(day, years):
    """The latest day L with add_years(L, years) < day.

    add_years is non-decreasing, so add_years(last, years) < day exactly when last <= L: a game
    on `day` restarts a player whose last game was on or before last_day_before(day, 7), and a
    player is listed on `day` (day < add_years(last, 2)) exactly when last > last_day_before(day + 1, 2).
    """
    latest = day - 366 * years - 1  # add_years(latest, years) <= latest + 366 x years < day
    while add_years(latest + 1, years) < day:
        latest += 1
    return latest


# ---------------------------------------------------------------------------------------------
# Rows from Arrow string columns (offsets + UTF-8 bytes)
# ---------------------------------------------------------------------------------------------

_MIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_S29 = np.uint64(29)
_S32 = np.uint64(32)


@plain_njit
def _same_bytes(a, a_start, a_stop, b, b_start, b_stop):
    """Whether the byte strings a[a_start:a_stop] and b[b_start:b_stop] are equal."""
    if a_stop - a_start != b_stop - b_start:
        return False
    for k in range(a_stop - a_start):
        if a[a_start + k] != b[b_start + k]:
            return False
    return True


@plain_njit
def _prefix(data, start, stop):
    """The first eight bytes of data[start:stop] packed little-endian (zero-padded), as uint64.

    Where the buffer holds eight bytes from `start`, all eight are read and those past `stop`
    masked off, so no branch depends on the length; unsigned indices spare numba's check for
    negative ones on every read."""
    length = stop - start
    at = np.uint64(start)
    if start + 8 <= data.shape[0]:
        word = np.uint64(0)
        for k in range(8):
            word |= np.uint64(data[at + np.uint64(k)]) << np.uint64(8 * k)
        keep = np.uint64(0xFFFFFFFFFFFFFFFF) if length >= 8 else (np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)
        return word & keep
    word = np.uint64(0)
    for k in range(min(length, 8)):
        word |= np.uint64(data[at + np.uint64(k)]) << np.uint64(8 * k)
    return word


@plain_njit
def _id_key(data, start, stop):
    """(hash, first eight bytes packed little-endian) of the id data[start:stop]: the bytes are
    mixed in a word (eight bytes) at a time, multiply and xorshift, instead of byte by byte."""
    prefix = _prefix(data, start, stop)
    h = (prefix ^ np.uint64(stop - start)) * _MIX_1
    h ^= h >> _S29
    k = start + 8
    while k < stop:
        word = _prefix(data, k, stop)
        h = (h ^ word) * _MIX_1
        h ^= h >> _S29
        k += 8
    h *= _MIX_2
    return np.int64(h ^ (h >> _S32)), np.int64(prefix)


@njit(cache=True)
def _rehash(count, pool, pool_offsets, size):
    """A table of `size` slots (see number_ids) holding the first `count` ids."""
    slots = np.full((size, 2), -1, dtype=np.int64)
    mask = size - 1
    for v in range(count):
        start, stop = pool_offsets[v], pool_offsets[v + 1]
        h, prefix = _id_key(pool, start, stop)
        s = h & mask
        while slots[s, 0] >= 0:
            s = (s + 1) & mask
        slots[s, 0] = v | ((stop - start) << 32)
        slots[s, 1] = prefix
    return slots


@njit(cache=True)
def number_ids(offsets, data, count, pool, pool_offsets, slots):
    """The id number of each string offsets/data row; unseen ids get the next numbers.

    The known ids are pool[pool_offsets[v]:pool_offsets[v + 1]] for v < count (UTF-8, Arrow
    string layout), found through the open-addressing table `slots` (a power of two of rows, at
    most half full; a row is [number | length << 32, first eight bytes], or -1s when empty), so
    an id of up to eight bytes is recognised without reading the pool. New ids are appended;
    the arrays are replaced by larger ones when full. Returns (numbers, count, pool,
    pool_offsets, slots).
    """
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int32)
    mask = slots.shape[0] - 1
    for r in range(n):
        start, stop = offsets[r], offsets[r + 1]
        length = np.int64(stop - start)
        h, prefix = _id_key(data, start, stop)
        s = h & mask
        found = -1
        while slots[s, 0] >= 0:
            if slots[s, 0] >> 32 == length and slots[s, 1] == prefix:
                v = slots[s, 0] & 0xFFFFFFFF
                if length <= 8 or _same_bytes(data, start + 8, stop, pool, pool_offsets[v] + 8, pool_offsets[v + 1]):
                    found = v
                    break
            s = (s + 1) & mask
        if found >= 0:
            out[r] = found
            continue
        if count + 2 > pool_offsets.shape[0]:
            grown = np.zeros(2 * pool_offsets.shape[0], dtype=pool_offsets.dtype)
            for k in range(count + 1):
                grown[k] = pool_offsets[k]
            pool_offsets = grown
        end = pool_offsets[count] + length
        if end > pool.shape[0]:
            grown_pool = np.zeros(max(2 * pool.shape[0], end), dtype=np.uint8)
            for k in range(pool_offsets[count]):
                grown_pool[k] = pool[k]
            pool = grown_pool
        for k in range(length):
            pool[pool_offsets[count] + k] = data[start + k]
        pool_offsets[count + 1] = end
        slots[s, 0] = count | (length << 32)
        slots[s, 1] = prefix
        out[r] = count
        count += 1
        if 2 * count > slots.shape[0]:
            slots = _rehash(count, pool, pool_offsets, 2 * slots.shape[0])
            mask = slots.shape[0] - 1
    return out, count, pool, pool_offsets, slots


_NAME_SLOTS = 64
_NAME_SHIFT = np.uint64(58)   # the top six bits of a product pick one of the 64 slots
_AMBIGUOUS = -2


@plain_njit
def _name_slot(length, first):
    """The slot of a string of `length` bytes whose first eight are `first` (match_names)."""
    return np.int64(((first ^ np.uint64(length)) * _MIX_1) >> _NAME_SHIFT)


@plain_njit
def _name_at(c, length, first, second, name_lengths, name_words):
    """Whether name c has this length and these first sixteen bytes (as two words)."""
    return (name_lengths[c] == length) & (name_words[c, 0] == first) & (name_words[c, 1] == second)


@njit(cache=True)
def match_names(offsets, data, name_offsets, names):
    """Index of each row's string among the names (name_offsets/names, Arrow layout); -1 if none.

    Rows come in no predictable order of names, so branching byte by byte or name by name would
    mostly mispredict: a row's length and first eight bytes pick a slot of a small table that
    holds the one name that could match there (or marks a slot shared by several names, which
    are then tried in turn), and the name is compared by length and first sixteen bytes as two
    words. Only a string longer than sixteen bytes has its remaining bytes compared."""
    n_names = name_offsets.shape[0] - 1
    name_words = np.empty((n_names, 2), dtype=np.uint64)
    name_lengths = np.empty(n_names, dtype=np.int64)
    slots = np.full(_NAME_SLOTS, -1, dtype=np.int64)
    for c in range(n_names):
        start, stop = name_offsets[c], name_offsets[c + 1]
        name_words[c, 0] = _prefix(names, start, stop)
        name_words[c, 1] = _prefix(names, start + 8, max(stop, start + 8))
        name_lengths[c] = stop - start
        slot = _name_slot(name_lengths[c], name_words[c, 0])
        slots[slot] = c if slots[slot] == -1 else _AMBIGUOUS
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int8)
    for r in range(n):
        start, stop = offsets[r], offsets[r + 1]
        length = stop - start
        first = _prefix(data, start, stop)
        second = _prefix(data, start + 8, max(stop, start + 8))
        c = slots[_name_slot(length, first)]
        found = -1
        if c >= 0:
            found = c if _name_at(c, length, first, second, name_lengths, name_words) else -1
        elif c == _AMBIGUOUS:
            for d in range(n_names):
                if _name_at(d, length, first, second, name_lengths, name_words):
                    found = d
                    break
        if found >= 0 and length > 16:
            found = -1
            for d in range(n_names):
                if _same_bytes(data, start, stop, names, name_offsets[d], name_offsets[d + 1]):
                    found = d
                    break
        out[r] = found
    return out


# ---------------------------------------------------------------------------------------------
# Table order
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def radix_sort(values):
    """Non-negative int64 values sorted ascending (least significant digit first, 11 bits a pass)."""
    n = values.shape[0]
    src = values.copy()
    dst = np.empty_like(src)
    largest = 0
    for i in range(n):
        largest = max(largest, src[i])
    counts = np.zeros(2049, dtype=np.int64)
    shift = 0
    while (largest >> shift) > 0:
        for d in range(2049):
            counts[d] = 0
        for i in range(n):
            counts[((src[i] >> shift) & 2047) + 1] += 1
        for d in range(2048):
            counts[d + 1] += counts[d]
        for i in range(n):
            d = (src[i] >> shift) & 2047
            dst[counts[d]] = src[i]
            counts[d] += 1
        src, dst = dst, src
        shift += 11
    return src


@njit(cache=True)
def sort_players(players, points, games, last, id_offsets, id_bytes):
    """`players` sorted into table order.

    When the ranges of points, games and last game over these players allow (always, in
    practice: the players of one month), the three and the player's place in `players` are
    packed into one integer and radix-sorted, and only runs with equal keys are ordered by id;
    otherwise a merge sort with the table comparison is used.
    """
    n = players.shape[0]
    if n < 2:
        return players.copy()
    p_low = p_high = points[players[0]]
    g_low = g_high = games[players[0]]
    l_low = l_high = np.int64(last[players[0]])
    for i in range(1, n):
        q = players[i]
        p_low, p_high = min(p_low, points[q]), max(p_high, points[q])
        g_low, g_high = min(g_low, games[q]), max(g_high, games[q])
        l_low, l_high = min(l_low, np.int64(last[q])), max(l_high, np.int64(last[q]))
    g_span, l_span = g_high - g_low + 1, l_high - l_low + 1
    place_bits = 1
    while (1 << place_bits) < n:
        place_bits += 1
    if float(p_high - p_low + 1) * float(g_span) * float(l_span) * float(1 << place_bits) >= 2.0 ** 62:
        return _merge_sort_players(players, points, games, last, id_offsets, id_bytes)
    packed = np.empty(n, dtype=np.int64)
    for i in range(n):
        q = players[i]
        key = ((p_high - points[q]) * g_span + (games[q] - g_low)) * l_span + (l_high - last[q])
        packed[i] = (key << place_bits) | i
    packed = radix_sort(packed)
    out = np.empty(n, dtype=players.dtype)
    place_mask = (np.int64(1) << place_bits) - 1
    for i in range(n):
        out[i] = players[packed[i] & place_mask]
    start = 0
    for i in range(1, n + 1):
        if i == n or (packed[i] >> place_bits) != (packed[start] >> place_bits):
            if i - start > 1:  # equal points, games and last game: by id
                run = _merge_sort_players(out[start:i], points, games, last, id_offsets, id_bytes)
                for k in range(i - start):
                    out[start + k] = run[k]
            start = i
    return out


@njit(cache=True)
def _merge_sort_players(players, points, games, last, id_offsets, id_bytes):
    """`players` sorted into table order (bottom-up merge sort with the table comparison)."""
    n = players.shape[0]
    src = players.copy()
    buf = np.empty_like(src)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if tree.precedes(src[j], src[i], points, games, last, id_offsets, id_bytes):
                    buf[k] = src[j]
                    j += 1
                else:
                    buf[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                buf[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                buf[k] = src[j]
                j += 1
                k += 1
        src, buf = buf, src
        width *= 2
    return src


@njit(cache=True)
def merge_orders(kept, fresh, points, games, last, id_offsets, id_bytes):
    """Two lists already in table order merged into one."""
    out = np.empty(kept.shape[0] + fresh.shape[0], dtype=np.int32)
    i = j = k = 0
    while i < kept.shape[0] and j < fresh.shape[0]:
        if tree.precedes(fresh[j], kept[i], points, games, last, id_offsets, id_bytes):
            out[k] = fresh[j]
            j += 1
        else:
            out[k] = kept[i]
            i += 1
        k += 1
    while i < kept.shape[0]:
        out[k] = kept[i]
        i += 1
        k += 1
    while j < fresh.shape[0]:
        out[k] = fresh[j]
        j += 1
        k += 1
    return out


# ---------------------------------------------------------------------------------------------
# Live positions: the listed players and a treap of the top of the table
# ---------------------------------------------------------------------------------------------
#
# Only the scoring positions (1..low) need an exact position, so the treap
# (pipeline.systems.eagle.table) holds only the listed players with at least `threshold` points,
# and the threshold is kept so that it holds at least `low` players, or is 0 and holds everyone.
# A listed player outside the treap then has at least `low` players ahead. The treap stays near
# `target` players: when it falls below `low` the threshold comes down to take in the best
# players below it (found in last month's order and among this month's players), and when it
# grows past `high` the lowest points values leave it. Most updates of a big table then only
# flip a flag. meta = [treap root, threshold, treap size]; tree_sizes = [low, target, high].

ROOT, THRESHOLD, ABOVE = 0, 1, 2


@plain_njit
def _enlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """List player p (with their current key)."""
    listed[p] = True
    if points[p] >= meta[THRESHOLD]:
        meta[ROOT] = tree.insert(meta[ROOT], p, nodes, stack, points, games, last, id_offsets, id_bytes)
        in_tree[p] = True
        meta[ABOVE] += 1


@plain_njit
def _unlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """Unlist player p (whose key has not changed since listed)."""
    listed[p] = False
    if in_tree[p]:
        meta[ROOT] = tree.remove(meta[ROOT], p, nodes, stack, points, games, last, id_offsets, id_bytes)
        in_tree[p] = False
        meta[ABOVE] -= 1


@plain_njit
def _raise_threshold(target, nodes, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """Take the lowest points values out of the treap while it keeps `target` players."""
    while meta[ABOVE] > 0:
        value = points[tree.rightmost(meta[ROOT], nodes)]
        if tree.count_more_points(meta[ROOT], value, nodes) < target:
            return
        while meta[ABOVE] > 0:
            q = tree.rightmost(meta[ROOT], nodes)
            if points[q] != value:
                break
            meta[ROOT] = tree.remove(meta[ROOT], q, nodes, stack, points, games, last, id_offsets, id_bytes)
            in_tree[q] = False
            meta[ABOVE] -= 1
        meta[THRESHOLD] = value + 1


@njit(cache=True)
def _lower_threshold(target, previous_order, previous_points, movers, n_movers, month_start,
                     nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """Bring the best listed players below the threshold into the treap, a points value at a
    time, until it holds `target` players (or everyone, threshold 0).

    The listed players below the threshold are last month's players who have not played since
    (previous_order, with their points then, which are still theirs; a player has played this
    month when their last game is on or after month_start) and this month's players (movers)
    below it.
    """
    threshold = meta[THRESHOLD]
    count = 0
    for k in range(n_movers):
        if points[movers[k]] < threshold:
            count += 1
    below = np.empty(count, dtype=np.int32)
    count = 0
    for k in range(n_movers):
        if points[movers[k]] < threshold:
            below[count] = movers[k]
            count += 1
    below = sort_players(below, points, games, last, id_offsets, id_bytes)
    # previous_points is non-increasing: find the first entry below the threshold.
    lo, hi = 0, previous_order.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if previous_points[mid] >= threshold:
            lo = mid + 1
        else:
            hi = mid
    i, j = lo, 0
    while meta[ABOVE] < target:
        while i < previous_order.shape[0] and (last[previous_order[i]] >= month_start or not listed[previous_order[i]]):
            i += 1
        value = -1
        if i < previous_order.shape[0]:
            value = previous_points[i]
        if j < below.shape[0] and points[below[j]] > value:
            value = points[below[j]]
        if value < 0:
            threshold = 0  # everyone listed is in the treap
            break
        while i < previous_order.shape[0] and previous_points[i] == value:
            p = previous_order[i]
            if last[p] < month_start and listed[p]:
                meta[ROOT] = tree.insert(meta[ROOT], p, nodes, stack, points, games, last, id_offsets, id_bytes)
                in_tree[p] = True
                meta[ABOVE] += 1
            i += 1
        while j < below.shape[0] and points[below[j]] == value:
            meta[ROOT] = tree.insert(meta[ROOT], below[j], nodes, stack, points, games, last, id_offsets, id_bytes)
            in_tree[below[j]] = True
            meta[ABOVE] += 1
            j += 1
        threshold = value
    meta[THRESHOLD] = threshold


@plain_njit
def _unbalanced(tree_sizes, meta):
    """Whether the treap is below tree_sizes[0] players (threshold above 0) or above tree_sizes[2]."""
    return (meta[ABOVE] < tree_sizes[0] and meta[THRESHOLD] > 0) or meta[ABOVE] > tree_sizes[2]


@njit(cache=True)
def _rebalance(tree_sizes, previous_order, previous_points, movers, n_movers, month_start,
               nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """Bring the treap back to about tree_sizes[1] players when it is _unbalanced."""
    if meta[ABOVE] < tree_sizes[0] and meta[THRESHOLD] > 0:
        _lower_threshold(tree_sizes[1], previous_order, previous_points, movers, n_movers, month_start,
                         nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)
    elif meta[ABOVE] > tree_sizes[2]:
        _raise_threshold(tree_sizes[1], nodes, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)


@njit(cache=True)
def build_live(order, tree_sizes, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes):
    """Fill cleared live-mode arrays with the players of a month-end table (in table order)."""
    target = tree_sizes[1]
    for k in range(meta.shape[0]):
        meta[k] = 0
    if order.shape[0] > target:
        meta[THRESHOLD] = points[order[target - 1]]
    for k in range(order.shape[0]):
        _enlist(order[k], nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)


# ---------------------------------------------------------------------------------------------
# The month
# ---------------------------------------------------------------------------------------------

@plain_njit
def result_points(value, draw_size, out):
    """Fill out[result] with the hundredths each result takes from a game worth `value` with
    `draw_size` draw members (a survivor's centres come on top: see game_points)."""
    out[SOLO] = value
    out[DRAW] = (2 * value + draw_size) // (2 * draw_size) if draw_size else 0  # round_half_up(value / k)
    out[SURVIVED] = SURVIVED_BASE_CENTS
    out[ELIMINATED] = ELIMINATED_CENTS
    out[ANARCHY] = 0


@plain_njit
def game_points(result, centres, by_result):
    """Hundredths a power takes: by_result (from result_points) plus 0.01 per centre if it survived."""
    return by_result[result] + (result == SURVIVED) * SURVIVED_CENTRE_CENTS * centres


@njit(cache=True)
def run_month(live, month_start, as_of, previous_order, contribution_cents, unlisted_cents,
              game_start, game_day, row_player, row_result, row_centres, published_cents,
              points, games, last, recent, year_points, year_played, id_offsets, id_bytes,
              tree_sizes, nodes, listed, in_tree, meta, stack,
              out_before, out_after, out_contribution, out_value, out_points, out_rookie, out_first):
    """Apply the month's games (month_start..as_of, day numbers) in order; returns the month-end
    table order.

    previous_order: the players listed at the previous month end, in table order (in live mode
    also exactly the `listed` players, with the treap as described above). contribution_cents[p]:
    contribution of position p (1-based, index 0 unused) up to the last scoring position;
    unlisted_cents below it. published_cents[player]: the contribution of the player's position
    in the previous month's table (published mode). Per row outputs: points before (-1: none
    carried), after, the contribution, the game value, the points taken, whether it is the
    player's first game ever and whether it is the player's first row of the month.
    """
    n_games = game_day.shape[0]
    n_previous = previous_order.shape[0]
    last_scoring = contribution_cents.shape[0] - 1
    previous_points = np.empty(n_previous, dtype=np.int64)
    for k in range(n_previous):
        previous_points[k] = points[previous_order[k]]

    # Listed at the month end: last game after this day. In live mode, the listings of last
    # month's players that end by the month end (last game + 2 years), earliest first, end
    # before the first game on or after their end.
    expired_through = last_day_before(as_of + 1, LISTING_YEARS)
    expiring = np.empty(0, dtype=np.int32)
    expiry_days = np.empty(0, dtype=np.int64)
    if live:
        count = 0
        for k in range(n_previous):
            if last[previous_order[k]] <= expired_through:
                count += 1
        expiring = np.empty(count, dtype=np.int32)
        expiry_days = np.empty(count, dtype=np.int64)
        # They were listed at the previous month end, so their listings end within this month:
        # sort by (day - month_start, place) packed into one integer.
        place_bits = 1
        while (1 << place_bits) < count:
            place_bits += 1
        packed = np.empty(count, dtype=np.int64)
        count = 0
        for k in range(n_previous):
            p = previous_order[k]
            if last[p] <= expired_through:
                expiring[count] = p
                packed[count] = (max(add_years(last[p], LISTING_YEARS) - month_start, 0) << place_bits) | count
                count += 1
        packed = radix_sort(packed)
        place_mask = (np.int64(1) << place_bits) - 1
        by_day = expiring.copy()
        for k in range(count):
            expiring[k] = by_day[packed[k] & place_mask]
            expiry_days[k] = add_years(last[expiring[k]], LISTING_YEARS)
    next_expiry = 0

    by_result = np.empty(len(RESULT_NAMES), dtype=np.int64)
    movers = np.empty(row_player.shape[0], dtype=np.int32)  # this month's players, first row first
    n_movers = 0
    day = -2**31
    restart_through = 0
    for g in range(n_games):
        if game_day[g] != day:
            day = game_day[g]
            restart_through = last_day_before(day, RESTART_YEARS)
        first, stop = game_start[g], game_start[g + 1]
        if live:
            while next_expiry < expiring.shape[0] and expiry_days[next_expiry] <= day:
                p = expiring[next_expiry]
                next_expiry += 1
                # A player who played since is listed anew (with a new key).
                if listed[p] and last[p] < month_start:
                    _unlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)
            if _unbalanced(tree_sizes, meta):
                _rebalance(tree_sizes, previous_order, previous_points, movers, n_movers, month_start,
                           nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)

        value = 0
        draw_size = 0
        for r in range(first, stop):
            p = row_player[r]
            if live:
                c = unlisted_cents
                if in_tree[p] and row_result[r] != ANARCHY:
                    position = tree.rank(meta[ROOT], p, last_scoring, nodes, points, games, last, id_offsets, id_bytes) + 1
                    if position <= last_scoring:
                        c = contribution_cents[position]
            else:
                c = published_cents[p]
            c *= row_result[r] != ANARCHY
            out_contribution[r] = c
            value += c
            draw_size += row_result[r] == DRAW
        result_points(value, draw_size, by_result)

        for r in range(first, stop):
            p = row_player[r]
            earned = game_points(row_result[r], row_centres[r], by_result)
            rookie = games[p] == 0
            first_of_month = rookie or last[p] < month_start
            carried = (not rookie) and last[p] > restart_through
            if live and listed[p]:
                _unlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)
            if carried:
                out_before[r] = points[p]
            else:
                out_before[r] = -1
                points[p] = 0
                games[p] = 0
                for k in range(GAMES_COUNTED):
                    recent[p, k] = 0
            slot = games[p] % GAMES_COUNTED
            points[p] += earned - recent[p, slot]  # the slot holds the game that drops out (0 under 10)
            recent[p, slot] = earned
            games[p] += 1
            last[p] = day
            if live:
                _enlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)
            year_points[p] += earned
            year_played[p] = True
            out_first[r] = first_of_month
            if first_of_month:
                movers[n_movers] = p
                n_movers += 1
            out_after[r] = points[p]
            out_value[r] = value
            out_points[r] = earned
            out_rookie[r] = rookie

    if live:
        while next_expiry < expiring.shape[0]:
            p = expiring[next_expiry]
            next_expiry += 1
            if listed[p] and last[p] < month_start:
                _unlist(p, nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)
        if _unbalanced(tree_sizes, meta):
            _rebalance(tree_sizes, previous_order, previous_points, movers, n_movers, month_start,
                       nodes, listed, in_tree, meta, stack, points, games, last, id_offsets, id_bytes)

    # Month-end order: last month's players who did not play, still listed, in their old order,
    # merged with this month's players (all listed: their last game is in the month) sorted anew.
    kept_count = 0
    for k in range(n_previous):
        p = previous_order[k]
        if last[p] < month_start and last[p] > expired_through:
            kept_count += 1
    kept = np.empty(kept_count, dtype=np.int32)
    count = 0
    for k in range(n_previous):
        p = previous_order[k]
        if last[p] < month_start and last[p] > expired_through:
            kept[count] = p
            count += 1
    ordered = sort_players(movers[:n_movers], points, games, last, id_offsets, id_bytes)
    return merge_orders(kept, ordered, points, games, last, id_offsets, id_bytes)


# ---------------------------------------------------------------------------------------------
# Output columns
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def table_columns(order, points, games, last, recent):
    """The month-end table's points (float), games, last game and points to defend (float; shown
    from 10 games: the oldest of the last ten, which drops out at the next game), in `order`."""
    n = order.shape[0]
    points_out = np.empty(n, dtype=np.float64)
    games_out = np.empty(n, dtype=np.int64)
    last_out = np.empty(n, dtype=np.int32)
    defend = np.empty(n, dtype=np.float64)
    no_defend = np.empty(n, dtype=np.bool_)
    for i in range(n):
        p = order[i]
        points_out[i] = points[p] / 100.0
        games_out[i] = games[p]
        last_out[i] = last[p]
        no_defend[i] = games[p] < GAMES_COUNTED
        defend[i] = recent[p, games[p] % GAMES_COUNTED] / 100.0
    return points_out, games_out, last_out, defend, no_defend


@njit(cache=True)
def hundredths(cents):
    """Rows of exact hundredths (n x k int64) as floats, cents / 100 (correctly rounded)."""
    out = np.empty(cents.shape, dtype=np.float64)
    for i in range(cents.shape[0]):
        for j in range(cents.shape[1]):
            out[i, j] = cents[i, j] / 100.0
    return out
