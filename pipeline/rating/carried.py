"""The month's carried columns in one compiled pass: rank and rating change against last month's
table, and the peak rating, from the writer's arrays by player number; then the carry advanced
to this month's table.

Done with Arrow and numpy, the same work takes a dozen passes over the month's rows and as many
allocations.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def larger(a, b):
    """max(a, b) as Arrow's max_element_wise takes it: a NaN gives way to the other value, and of
    two equal values (0.0 and -0.0) the first is kept."""
    if np.isnan(a):
        return b
    if np.isnan(b):
        return a
    return a if not a < b else b


@njit(cache=True)
def carried_columns(
    numbers,
    rank,
    rank_valid,
    rating,
    rating_valid,
    prev_rank,
    has_prev_rank,
    prev_rating,
    has_prev_rating,
    peak,
    has_peak,
):
    """Per row (player number `numbers[r]`): rank change (last month's rank minus this one),
    rating change (this rating minus last month's) and peak rating (the larger of the peak so far
    and this rating), each with whether it is given. Then the carry is advanced in place: last
    month's ranks and ratings are replaced by this table's, and peaks by this month's; a player
    listed twice (which the output checks report) carries his first row."""
    n = numbers.shape[0]
    rank_change = np.zeros(n, np.int64)
    rating_change = np.zeros(n, np.float64)
    peak_out = np.zeros(n, np.float64)
    given = np.zeros((3, n), np.bool_)
    for r in range(n):
        p = numbers[r]
        if has_prev_rank[p] and rank_valid[r]:
            rank_change[r] = prev_rank[p] - rank[r]
            given[0, r] = True
        if has_prev_rating[p] and rating_valid[r]:
            rating_change[r] = rating[r] - prev_rating[p]
            given[1, r] = True
        if has_peak[p] and rating_valid[r]:
            peak_out[r] = larger(peak[p], rating[r])
            given[2, r] = True
        elif has_peak[p]:
            peak_out[r] = peak[p]
            given[2, r] = True
        elif rating_valid[r]:
            peak_out[r] = rating[r]
            given[2, r] = True
    has_prev_rank[:] = False
    has_prev_rating[:] = False
    done = np.zeros(prev_rank.shape[0], np.bool_)
    for r in range(n):
        p = numbers[r]
        if done[p]:
            continue
        done[p] = True
        prev_rank[p] = rank[r] if rank_valid[r] else 0
        has_prev_rank[p] = rank_valid[r]
        prev_rating[p] = rating[r] if rating_valid[r] else 0.0
        has_prev_rating[p] = rating_valid[r]
        peak[p] = peak_out[r] if given[2, r] else 0.0
        has_peak[p] = given[2, r]
    return rank_change, rating_change, peak_out, given
