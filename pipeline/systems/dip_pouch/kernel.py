"""Dip Pouch month kernels: the rating rule of pipeline.systems.dip_pouch.rules over whole arrays.

A month's events are applied in one compiled loop instead of one round of numpy and Arrow calls
per event (a month holds dozens of events of a few dozen players each, so the per-call overhead
was most of the time). The arithmetic is the rule's, written as in
pipeline.systems.dip_pouch.rules.updated_rating and evaluated in the same order, so the floats
equal those of the reference (pipeline.systems.dip_pouch.reference) bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.systems.kernels.calendar import civil_from_days
from pipeline.systems.kernels.ids import id_less, longest_run
from pipeline.systems.kernels.sort import sorted_by_id

WORLD_CHAMPIONSHIP_VALUE = 20.0
MAX_EVENT_VALUE = 15.0


def tournament_values(
    num_players: np.ndarray, rounds: np.ndarray, world_championship: np.ndarray, end_year: np.ndarray, cutoff_year: int
) -> np.ndarray:
    """rules.tournament_value of many events at once (same operations, so the same floats)."""
    players = num_players.astype(np.float64)
    value = np.where(rounds == 1, players / 7 + 2, players / 3.5 + 2)
    value = np.minimum(value, MAX_EVENT_VALUE)
    value = np.where(end_year < cutoff_year, 0.0, value)
    return np.where(world_championship, WORLD_CHAMPIONSHIP_VALUE, value)


@njit(cache=True)
def percentiles(num_players, placement):
    """rules.percentile of every row, (N + 0.5 − placement) / N × 100, in one pass (the same
    operations in the same order as the rule and numpy's, so the same floats)."""
    out = np.empty(num_players.shape[0], np.float64)
    for r in range(num_players.shape[0]):
        n = np.float64(num_players[r])
        out[r] = (n + 0.5 - np.float64(placement[r])) / n * 100
    return out


@njit(cache=True)
def end_years(days):
    """The calendar year of each day number (days since 1970-01-01)."""
    out = np.empty(days.shape[0], np.int64)
    for k in range(days.shape[0]):
        out[k] = civil_from_days(days[k])[0]
    return out


@njit(cache=True)
def apply_events(event_start, value, players, pct, end_day, rating, events, last_event, before, after, counted):
    """Apply the month's events in order to the per-player arrays (changed in place).

    Event e owns rows event_start[e]:event_start[e + 1]; `value` is its tournament value. Each
    row gets the player's rating before the event in `before` and, for an event of value above
    0, the rating after it in `after` (left as it is otherwise); `counted` is scratch space, one
    entry per row. Every row of an event reads the player's rating and event count before any
    row of the event writes them, as one vectorised update per event would: a player listed
    twice in one event moves once, from the same old values.
    """
    for e in range(event_start.shape[0] - 1):
        lo, hi = event_start[e], event_start[e + 1]
        for r in range(lo, hi):
            before[r] = rating[players[r]]
            counted[r] = events[players[r]]
        tv = value[e]
        if tv > 0:
            for r in range(lo, hi):
                p = players[r]
                after[r] = before[r] + tv / 100 * (pct[r] - before[r])
                rating[p] = after[r]
                events[p] = counted[r] + 1
                last_event[p] = end_day[r]


@njit(cache=True)
def listed_columns(order, rating, events, last_event, country, countries, name_offsets, name_bytes):
    """The table's columns for the players in `order` (table order), in one pass: shared rank
    (1-2-2-4), rating, events, last event day, the country's name as Arrow string offsets and
    UTF-8 bytes (country names by code in name_offsets, name_bytes; "" for no country), whether
    the player has a country, and the national rank (0 for no country)."""
    n = order.shape[0]
    longest = longest_run(name_offsets, countries)
    rank = np.empty(n, np.int64)
    ratings = np.empty(n, np.float64)
    counted = np.empty(n, np.int64)
    last = np.empty(n, np.int32)
    codes = np.empty(n, np.int64)
    named = np.empty(n, np.bool_)
    offsets = np.zeros(n + 1, np.int32)
    names = np.empty(n * longest, np.uint8)  # room for the longest name on every row
    size = 0
    for k in range(n):
        p = order[k]
        ratings[k] = rating[p]
        rank[k] = k + 1 if k == 0 or ratings[k] != ratings[k - 1] else rank[k - 1]
        counted[k] = events[p]
        last[k] = last_event[p]
        c = np.int64(country[p])
        codes[k] = c
        named[k] = c >= 0
        if c >= 0:
            for b in range(np.int64(name_offsets[c]), np.int64(name_offsets[c + 1])):
                names[size] = name_bytes[b]
                size += 1
        offsets[k + 1] = size
    return rank, ratings, counted, last, offsets, names[:size], named, national_ranks(codes, ratings, countries)


@njit(cache=True)
def national_ranks(country, rating, countries):
    """Shared (1-2-2-4) rank of each row within its country, for rows in rating order (best
    first); `country` holds codes 0..countries-1, or -1 for none (rank 0). One pass, counting
    each country's rows so far, instead of sorting the rows by country."""
    n = country.shape[0]
    ranks = np.zeros(n, np.int64)
    seen = np.zeros(countries, np.int64)
    last_rank = np.zeros(countries, np.int64)
    last_rating = np.zeros(countries, np.float64)
    for k in range(n):
        c = country[k]
        if c < 0:
            continue
        seen[c] += 1
        if seen[c] == 1 or rating[k] != last_rating[c]:
            last_rank[c] = seen[c]
            last_rating[c] = rating[k]
        ranks[k] = last_rank[c]
    return ranks


@njit(cache=True)
def table_order(previous, touched, events, rating, id_offsets, id_data):
    """The listed players (events above 0) by rating, best first, then player_id: `previous`, last
    month's order, less the `touched` players (whose ratings may have moved; the others' have not,
    so they stay in order), merged with those of the touched players that are listed, sorted
    anew. The ids are Arrow string buffers (offsets, UTF-8 bytes) by player number.

    A month touches a few hundred players of tens of thousands listed: this is a pass over the
    table and a sort of the month's players, where sorting the whole table by rating and id
    every month cost more than the month's rating."""
    n = rating.shape[0]
    is_touched = np.zeros(n, np.bool_)
    moved = np.empty(touched.shape[0], np.int64)
    m = 0
    for p in touched:
        if not is_touched[p]:
            is_touched[p] = True
            if events[p] > 0:
                moved[m] = p
                m += 1
    moved = sorted_by_id(moved[:m], id_offsets, id_data)
    moved = moved[np.argsort(-rating[moved], kind="mergesort")]  # stable: equal ratings stay in id order
    out = np.empty(previous.shape[0] + m, np.int64)
    k = j = 0
    for p in previous:
        if is_touched[p]:
            continue
        while j < m and (
            rating[moved[j]] > rating[p]
            or (rating[moved[j]] == rating[p] and id_less(id_offsets, id_data, moved[j], p))
        ):
            out[k] = moved[j]
            k += 1
            j += 1
        out[k] = p
        k += 1
    while j < m:
        out[k] = moved[j]
        k += 1
        j += 1
    return out[:k].copy()


@njit(cache=True)
def latest_codes(codes, players, values, keep):
    """codes[players[r]] = values[r] for every row r where keep[r], rows in order (the last wins)."""
    for r in range(players.shape[0]):
        if keep[r]:
            codes[players[r]] = values[r]
