"""The compiled month of the Eagle points table (SPEC §3.3): numba kernels over integer arrays.

Players are dense indices; dates are day numbers (days since 1970-01-01); every amount is an
exact int64 number of hundredths. Per player the arrays hold: `points` (table points, the sum of
the last 10 games), `games` (games since the last restart; 0 = never played), `last` (day of the
last game), `recent` (n x 10 ring of game points: game number g since the restart is in slot
g % 10, so the slot of the next game holds the game that drops out) and `year_points` /
`year_played` (the awards' tally of the calendar year). The ids themselves are
`id_bytes[id_offsets[p]:id_offsets[p + 1]]` (UTF-8, Arrow's string layout), numbered by
pipeline.systems.kernels.numbering and compared bytewise for the last tie-break of the table.

`run_month` applies one month's games in order and returns the month-end table order; the
caller turns the row outputs into Arrow tables. Game points use integer half-up rounding:
a k-way draw share of V hundredths is floor((2V + k) / 2k), exactly round_half_up(V / k, 2).
Slice assignments are written as loops: numba compiles them far more slowly.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from pipeline.systems.eagle import table as top_counts
from pipeline.systems.kernels import plain_njit
from pipeline.systems.kernels.calendar import add_years, civil_from_days, days_from_civil  # noqa: F401
from pipeline.systems.kernels.ids import MIX_1, bit_at, copy_words, prefix, same_bytes, same_string
from pipeline.systems.kernels.sort import radix_order, sorted_by_id, stable_order

GAMES_COUNTED = 10
LISTING_YEARS = 2
RESTART_YEARS = 7

# Result codes (index into RESULT_NAMES).
SOLO, DRAW, SURVIVED, ELIMINATED, ANARCHY = 0, 1, 2, 3, 4
RESULT_NAMES = ("solo", "draw", "survived", "eliminated", "anarchy")
ELIMINATED_CENTS = 1
SURVIVED_BASE_CENTS = 10
SURVIVED_CENTRE_CENTS = 1


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


@plain_njit
def _is_counted(variant_offsets, variant_data, variant_validity, variant_bit, r, name_offsets, names):
    """Whether row r's variant (Arrow offsets, bytes, and validity bitmap with its bit offset,
    empty when there are no nulls) is one of the names; a missing variant is not."""
    if variant_validity.shape[0] and not bit_at(variant_validity, variant_bit + r):
        return False
    start, stop = variant_offsets[r], variant_offsets[r + 1]
    for d in range(name_offsets.shape[0] - 1):
        if same_bytes(variant_data, start, stop, names, name_offsets[d], name_offsets[d + 1]):
            return True
    return False


@njit(cache=True)
def counted_games(
    variant_offsets,
    variant_data,
    variant_validity,
    variant_bit,
    name_offsets,
    names,
    game_offsets,
    game_data,
    codes,
    centres,
    days,
):
    """The games of a counted variant (one of the names): whether each row is kept, where each
    game starts among the kept rows, then their number, and the kept rows' result codes,
    centres and days. A game is a run of rows with equal game ids (Arrow string
    offsets, bytes) and its variant is its first row's: validation has its rows agree, so one
    comparison a game decides, where matching every row's variant cost as much as the rest of
    the pass. The kept rows are gathered in the same pass (three numpy gathers of a month's
    rows cost as much as the pass)."""
    n = codes.shape[0]
    keep = np.zeros(n, dtype=np.bool_)
    starts = np.empty(n + 1, dtype=np.int64)
    kept_codes = np.empty(n, dtype=codes.dtype)
    kept_centres = np.empty(n, dtype=np.int64)
    kept_days = np.empty(n, dtype=days.dtype)
    n_kept = 0
    games = 0
    counting = False
    start, stop, word = 0, 0, np.uint64(0)  # the current game's id
    for r in range(n):
        if r == 0 or not same_string(game_data, start, stop, word, game_offsets[r], game_offsets[r + 1]):
            start, stop = game_offsets[r], game_offsets[r + 1]
            word = prefix(game_data, start, stop)
            counting = _is_counted(variant_offsets, variant_data, variant_validity, variant_bit, r, name_offsets, names)
            if counting:
                starts[games] = n_kept
                games += 1
        if counting:
            keep[r] = True
            kept_codes[n_kept] = codes[r]
            kept_centres[n_kept] = centres[r]
            kept_days[n_kept] = days[r]
            n_kept += 1
    starts[games] = n_kept
    return keep, starts[: games + 1], kept_codes[:n_kept], kept_centres[:n_kept], kept_days[:n_kept]


_NAME_SLOTS = 64
_NAME_SHIFT = np.uint64(58)  # the top six bits of a product pick one of the 64 slots
_AMBIGUOUS = -2


@plain_njit
def _name_slot(length, first):
    """The slot of a string of `length` bytes whose first eight are `first` (match_names)."""
    return np.int64(((first ^ np.uint64(length)) * MIX_1) >> _NAME_SHIFT)


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
        name_words[c, 0] = prefix(names, start, stop)
        name_words[c, 1] = prefix(names, start + 8, max(stop, start + 8))
        name_lengths[c] = stop - start
        slot = _name_slot(name_lengths[c], name_words[c, 0])
        slots[slot] = c if slots[slot] == -1 else _AMBIGUOUS
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int8)
    for r in range(n):
        start, stop = offsets[r], offsets[r + 1]
        length = stop - start
        first = prefix(data, start, stop)
        second = prefix(data, start + 8, max(stop, start + 8))
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
                if same_bytes(data, start, stop, names, name_offsets[d], name_offsets[d + 1]):
                    found = d
                    break
        out[r] = found
    return out


# ---------------------------------------------------------------------------------------------
# Table order
# ---------------------------------------------------------------------------------------------

# What orders the table, per player: points, games, last game and the id's bytes.
TableKeys = namedtuple("TableKeys", "points games last id_offsets id_bytes")


@njit(cache=True)
def sort_players(players, points, games, last, id_offsets, id_bytes):
    """`players` sorted into table order.

    When the ranges of points, games and last game over these players allow (always, in
    practice: the players of one month), the three are packed into one integer key and sorted
    at once, and only runs with equal keys are ordered by id; otherwise _sort_by_each_key.
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
    if float(p_high - p_low + 1) * float(g_span) * float(l_span) >= 2.0**62:
        return _sort_by_each_key(players, points, games, last, id_offsets, id_bytes)
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        q = players[i]
        keys[i] = ((p_high - points[q]) * g_span + (games[q] - g_low)) * l_span + (l_high - last[q])
    order, keys = radix_order(keys, (p_high - p_low + 1) * g_span * l_span - 1)
    out = np.empty(n, dtype=players.dtype)
    for i in range(n):
        out[i] = players[order[i]]
    start = 0
    for i in range(1, n + 1):
        if i == n or keys[i] != keys[start]:
            if i - start > 1:  # equal points, games and last game: by id
                run = sorted_by_id(out[start:i], id_offsets, id_bytes)
                for k in range(i - start):
                    out[start + k] = run[k]
            start = i
    return out


@njit(cache=True)
def _sort_by_each_key(players, points, games, last, id_offsets, id_bytes):
    """`players` sorted into table order by one stable sort per key, the least significant first:
    id, then the later last game, then fewer games, then more points."""
    out = sorted_by_id(players, id_offsets, id_bytes)
    keys = np.empty(out.shape[0], dtype=np.int64)
    for part in range(3):
        for i in range(out.shape[0]):
            q = out[i]
            keys[i] = -np.int64(last[q]) if part == 0 else (games[q] if part == 1 else -points[q])
        out = out[stable_order(keys)]
    return out


# ---------------------------------------------------------------------------------------------
# Live positions: the listed players and the counted top of the table
# ---------------------------------------------------------------------------------------------
#
# Only the scoring positions (1..low) need an exact position, so the counts
# (pipeline.systems.eagle.table) hold only the listed players with at least `threshold` points,
# and the threshold is kept so that they hold at least `low` players, or is 0 and hold everyone.
# A listed player outside them then has at least `low` players ahead. The counted top stays near
# `target` players: when it falls below `low` the threshold comes down to take in the best
# players below it (found in last month's order and among this month's players), and when it
# grows past `high` the lowest points values leave it. Most updates of a big table then only
# flip a flag. meta = [threshold, members]; top_sizes = [low, target, high].

THRESHOLD, ABOVE = 0, 1

# Live mode's arrays: top_sizes; the counted top (table.TopCounts); per player whether listed and
# whether counted in the top; meta.
LiveArrays = namedtuple("LiveArrays", "top_sizes top listed in_top meta")
# Where the top finds the best listed players below its threshold: last month's order with
# their points then, and this month's players (`movers`, a player has played this month when
# their last game is on or after month_start).
Candidates = namedtuple("Candidates", "previous_order previous_points movers month_start")


@plain_njit
def _set_in_top(p, inside, top, in_top, meta, points):
    """Count listed player p (with their current points) in the top, or (their key unchanged
    since they were counted in) out of it."""
    if inside:
        top_counts.insert(top, p, points)
        meta[ABOVE] += 1
    else:
        top_counts.remove(top, p, points)
        meta[ABOVE] -= 1
    in_top[p] = inside


@plain_njit
def _enlist(p, top, listed, in_top, meta, points):
    """List player p (with their current key)."""
    listed[p] = True
    if points[p] >= meta[THRESHOLD]:
        _set_in_top(p, True, top, in_top, meta, points)


@plain_njit
def _unlist(p, top, listed, in_top, meta, points):
    """Unlist player p (whose key has not changed since listed)."""
    listed[p] = False
    if in_top[p]:
        _set_in_top(p, False, top, in_top, meta, points)


@plain_njit
def _raise_threshold(target, table, keys):
    """Take the lowest points values out of the top while it keeps `target` players."""
    top, in_top, meta, points = table.top, table.in_top, table.meta, keys.points
    head = top.head
    while meta[ABOVE] > 0:
        value = top_counts.lowest_points(top)
        if meta[ABOVE] - top_counts.at_most(top, value) < target:
            return
        while head[value] != top_counts.NONE:
            _set_in_top(head[value], False, top, in_top, meta, points)
        meta[THRESHOLD] = value + 1


@njit(cache=True)
def _lower_threshold(target, candidates, n_movers, table, keys):
    """Bring the best listed players below the threshold into the top, a points value at a
    time, until it holds `target` players (or everyone, threshold 0).

    The listed players below the threshold are last month's players who have not played since
    (whose points then are still theirs) and this month's players below it.
    """
    previous_order, previous_points, movers, month_start = candidates
    points, games, last, id_offsets, id_bytes = keys
    top, listed, in_top, meta = table.top, table.listed, table.in_top, table.meta
    threshold = meta[THRESHOLD]
    movers = movers[:n_movers]
    below = movers[points[movers] < threshold]
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
            threshold = 0  # everyone listed is in the top
            break
        while i < previous_order.shape[0] and previous_points[i] == value:
            p = previous_order[i]
            if last[p] < month_start and listed[p]:
                _set_in_top(p, True, top, in_top, meta, points)
            i += 1
        while j < below.shape[0] and points[below[j]] == value:
            _set_in_top(below[j], True, top, in_top, meta, points)
            j += 1
        threshold = value
    meta[THRESHOLD] = threshold


@plain_njit
def _unbalanced(table):
    """Whether the top is below top_sizes[0] players (threshold above 0) or above top_sizes[2]."""
    sizes, meta = table.top_sizes, table.meta
    return (meta[ABOVE] < sizes[0] and meta[THRESHOLD] > 0) or meta[ABOVE] > sizes[2]


@njit(cache=True)
def _rebalance(candidates, n_movers, table, keys):
    """Bring the top back to about top_sizes[1] players when it is _unbalanced."""
    sizes, meta = table.top_sizes, table.meta
    if meta[ABOVE] < sizes[0] and meta[THRESHOLD] > 0:
        _lower_threshold(sizes[1], candidates, n_movers, table, keys)
    elif meta[ABOVE] > sizes[2]:
        _raise_threshold(sizes[1], table, keys)


@plain_njit
def _end_listings(day, expiring, expiry_days, next_expiry, month_start, table, keys):
    """Unlist the players of `expiring` (last month's players whose listings end this month,
    earliest end first) whose listing ends by `day`, from entry next_expiry on; returns the
    first entry left. A player who played since is listed anew (with a new key)."""
    top, listed, in_top, meta = table.top, table.listed, table.in_top, table.meta
    points, last = keys.points, keys.last
    while next_expiry < expiring.shape[0] and expiry_days[next_expiry] <= day:
        p = expiring[next_expiry]
        next_expiry += 1
        if listed[p] and last[p] < month_start:
            _unlist(p, top, listed, in_top, meta, points)
    return next_expiry


@njit(cache=True)
def build_live(order, table, keys):
    """Fill cleared live-mode arrays with the players of a month-end table (in table order)."""
    target, top, listed, in_top, meta = table.top_sizes[1], table.top, table.listed, table.in_top, table.meta
    points = keys.points
    for k in range(meta.shape[0]):
        meta[k] = 0
    if order.shape[0] > target:
        meta[THRESHOLD] = points[order[target - 1]]
    for k in range(order.shape[0]):
        _enlist(order[k], top, listed, in_top, meta, points)


# ---------------------------------------------------------------------------------------------
# The month
# ---------------------------------------------------------------------------------------------

# The month's games: game g has rows start[g]:start[g + 1] and finished on day[g]; per row the
# player, the result code and the centres; the month's first and last day.
MonthGames = namedtuple("MonthGames", "start day player result centres first_day last_day")
# Where a player's contribution comes from (Rule 1): `live`, the live table, or else
# published[player], the contribution of the player's position in the previous month's table;
# in hundredths, by_position[p] of position p (1-based, index 0 unused) up to the last scoring
# position, `unlisted` below it.
Contributions = namedtuple("Contributions", "live by_position unlisted published")
# Per player besides the table keys: the ring of the last games' points and the year's tally.
Tallies = namedtuple("Tallies", "recent year_points year_played")
# Per row: points before (-1: none carried), after, the contribution, the game value and the points
# taken.
RowOutputs = namedtuple("RowOutputs", "before after contribution value points")
# The month's players in order of their first game of the month, with the points each carried
# into the month (0: none).
Movers = namedtuple("Movers", "players carried_in")
# Live mode's month: the LiveArrays, the Candidates of its top, and the listings that end in the
# month (players, and the days they end, earliest first).
LiveMonth = namedtuple("LiveMonth", "table candidates expiring expiry_days")


@njit(cache=True)
def _ending_listings(previous_order, last, month_start, expired_through):
    """ "Players who haven't finished any games in the last two years are removed from the list":
    last month's players whose listings end by the month end (last game + 2 years), earliest
    end first, with the days they end."""
    ending = previous_order[last[previous_order] <= expired_through]
    end_days = np.empty(ending.shape[0], dtype=np.int64)
    for k in range(ending.shape[0]):
        end_days[k] = add_years(last[ending[k]], LISTING_YEARS)
    # They were listed at the previous month end, so their listings end within this month.
    order = stable_order(np.maximum(end_days - month_start, 0))
    return ending[order], end_days[order]


@plain_njit
def _before_game(day, next_expiry, n_movers, live, keys):
    """The live table as a game on `day` finds it: the listings ended by then removed (from
    entry next_expiry of the LiveMonth's), the top brought back to size; returns the next entry."""
    table, candidates, expiring, expiry_days = live
    next_expiry = _end_listings(day, expiring, expiry_days, next_expiry, candidates.month_start, table, keys)
    if _unbalanced(table):
        _rebalance(candidates, n_movers, table, keys)
    return next_expiry


@plain_njit
def _published_contribution(p, result, published):
    """Rule 1: "Eagle contribution = 0.5 + (601-P)/400" for position P in the published table
    (published[p], 0.5 below position 602 or unlisted); "Anarchies contribute zero"."""
    return published[p] * (result != ANARCHY)


@plain_njit
def _live_contribution(p, result, by_position, unlisted, table, keys):
    """Rule 1 in the live table, the position P at the time the game finished:
    by_position[P] up to the last scoring position, `unlisted` below it or unlisted;
    "Anarchies contribute zero"."""
    if result == ANARCHY or not table.in_top[p]:
        return unlisted * (result != ANARCHY)
    points, games, last, id_offsets, id_bytes = keys
    last_scoring = by_position.shape[0] - 1
    above = table.meta[ABOVE]
    position = top_counts.rank(table.top, above, p, last_scoring, points, games, last, id_offsets, id_bytes) + 1
    return by_position[position] if position <= last_scoring else unlisted


@plain_njit
def _game_value(first, stop, month, contributions, table, keys, out_contribution):
    """Rule 1: "The value of each game is calculated by adding the contribution of each players'
    points from their position in the EAGLE table at the time the game was finished": the value
    of the game of rows first:stop, and its number of draw members (for Rule 2)."""
    player, result = month.player, month.result
    live, by_position, unlisted, published = contributions
    value = 0
    draw_size = 0
    for r in range(first, stop):
        if live:
            c = _live_contribution(player[r], result[r], by_position, unlisted, table, keys)
        else:
            c = _published_contribution(player[r], result[r], published)
        out_contribution[r] = c
        value += c
        draw_size += result[r] == DRAW
    return value, draw_size


@plain_njit
def result_points(value, draw_size, out):
    """Rules 2 and 3: fill out[result] with the hundredths each result takes from a game worth
    `value` with `draw_size` draw members. "The winner gets all the points"; a draw shares them
    "equally with 0.005 rounded up"; "Anarchy: 0.00 points, Eliminated players: 0.01 points,
    Survived players: 0.10 + 0.01*number of centres" (the centres come on top: game_points)."""
    out[SOLO] = value
    out[DRAW] = (2 * value + draw_size) // (2 * draw_size) if draw_size else 0  # round_half_up(value / k)
    out[SURVIVED] = SURVIVED_BASE_CENTS
    out[ELIMINATED] = ELIMINATED_CENTS
    out[ANARCHY] = 0


@plain_njit
def game_points(result, centres, by_result):
    """Hundredths a power takes: by_result (from result_points) plus 0.01 per centre if it survived."""
    return by_result[result] + (result == SURVIVED) * SURVIVED_CENTRE_CENTS * centres


@plain_njit
def _take_points(p, earned, day, restart_through, points, games, last, recent, year_points, year_played):
    """Rule 4, "Only the 10 last games count": player p's game of `day` earned `earned`
    hundredths, which replace those of the game ten before; but players "will have to start over
    again after more than 7 year with absence" (a last game on or before restart_through).
    The year's tally (year_points, year_played) counts them too. Returns the points carried into the game (-1: none)."""
    before = -1
    if games[p] != 0 and last[p] > restart_through:
        before = points[p]
    else:
        points[p] = 0
        games[p] = 0
        for k in range(GAMES_COUNTED):
            recent[p, k] = 0
    slot = games[p] % GAMES_COUNTED
    points[p] += earned - recent[p, slot]  # the slot holds the game that drops out (0 under 10)
    recent[p, slot] = earned
    games[p] += 1
    last[p] = day
    year_points[p] += earned
    year_played[p] = True
    return before


@njit(cache=True)
def _play_games(month, contributions, keys, tallies, out, movers, live):
    """Every game of the month in order (Rules 1 to 4), with the live table kept as each game
    finds it; fills `out` and `movers`. Returns (movers, the next ending listing, the solo
    victories' best game value and its rows, the rookies' best first game and its rows)."""
    start, game_day, player, result, centres, month_start, _ = month
    points, games, last = keys.points, keys.games, keys.last
    recent, year_points, year_played = tallies
    out_before, out_after, out_contribution, out_value, out_points = out
    mover_players, carried_in = movers
    live_mode, table = contributions.live, live.table
    top, listed, in_top, meta = table.top, table.listed, table.in_top, table.meta
    by_result = np.empty(len(RESULT_NAMES), dtype=np.int64)
    victory_rows = np.empty(player.shape[0], dtype=np.int64)
    rookie_rows = np.empty(player.shape[0], dtype=np.int64)
    victory_best, victories, rookie_best, rookies = np.int64(0), 0, np.int64(0), 0
    n_movers, next_expiry = 0, 0
    day = -(2**31)
    restart_through = 0
    for g in range(game_day.shape[0]):
        if game_day[g] != day:
            day = game_day[g]
            restart_through = last_day_before(day, RESTART_YEARS)
        if live_mode:
            next_expiry = _before_game(day, next_expiry, n_movers, live, keys)
        first, stop = start[g], start[g + 1]
        value, draw_size = _game_value(first, stop, month, contributions, table, keys, out_contribution)
        result_points(value, draw_size, by_result)
        for r in range(first, stop):
            p = player[r]
            earned = game_points(result[r], centres[r], by_result)
            rookie = games[p] == 0
            first_of_month = rookie or last[p] < month_start
            if live_mode and listed[p]:
                _unlist(p, top, listed, in_top, meta, points)
            out_before[r] = _take_points(
                p, earned, day, restart_through, points, games, last, recent, year_points, year_played
            )
            if live_mode:
                _enlist(p, top, listed, in_top, meta, points)
            if first_of_month:
                mover_players[n_movers] = p
                carried_in[n_movers] = max(out_before[r], 0)
                n_movers += 1
            if rookie:
                rookie_best, rookies = _tied_best(earned, r, rookie_best, rookies, rookie_rows)
            if result[r] == SOLO:
                victory_best, victories = _tied_best(value, r, victory_best, victories, victory_rows)
            out_after[r] = points[p]
            out_value[r] = value
            out_points[r] = earned
    return (
        n_movers,
        next_expiry,
        (victory_best, victory_rows[:victories].copy()),
        (rookie_best, rookie_rows[:rookies].copy()),
    )


@njit(cache=True)
def _player_of_the_month(movers, n_movers, points):
    """ "The player with most gained points in a given month gets the title. If 2 or more players
    get the same, the title is shared": the best change of table points over the month
    (month-end points minus those carried in) and the players holding it."""
    players, carried_in = movers
    change_best, changers = np.int64(0), 0
    change_players = np.empty(n_movers, dtype=np.int64)
    for k in range(n_movers):
        change_best, changers = _tied_best(
            points[players[k]] - carried_in[k], players[k], change_best, changers, change_players
        )
    return change_best, change_players[:changers].copy()


@njit(cache=True)
def run_month(month, previous_order, contributions, keys, tallies, table, out):
    """Apply the month's games (MonthGames, day numbers) in order; returns the month-end table
    order and the month's leaders, and fills the RowOutputs `out`.

    The leaders are three (value, items) pairs, a running maximum with its ties in row order (0
    and none when nothing counts): the solo victories' game values with their rows, the rookies'
    points (a player's first game ever) with their rows, and the changes of table points over
    the month (month-end points minus the points carried in, 0 when none were) with the
    players. They are kept as the rows are applied: a pass over the month's rows for each cost
    more than the few comparisons there.

    previous_order: the players listed at the previous month end, in table order (in live mode
    also exactly the `listed` players of the LiveArrays `table`, with the counted top as described
    above). keys (TableKeys) and tallies (Tallies) are updated per player.
    """
    month_start, as_of = month.first_day, month.last_day
    movers = Movers(np.empty(month.player.shape[0], dtype=np.int32), np.empty(month.player.shape[0], dtype=np.int64))
    # Listed at the month end: last game after this day.
    expired_through = last_day_before(as_of + 1, LISTING_YEARS)
    if contributions.live:
        # The listings of last month's players that end by the month end end before the first
        # game on or after their end.
        expiring, expiry_days = _ending_listings(previous_order, keys.last, month_start, expired_through)
        previous_points = keys.points[previous_order]  # only live mode's top reads them
    else:
        expiring, expiry_days = previous_order[:0], np.empty(0, dtype=np.int64)
        previous_points = keys.points[:0]
    live = LiveMonth(
        table, Candidates(previous_order, previous_points, movers.players, month_start), expiring, expiry_days
    )
    n_movers, next_expiry, victories, rookies = _play_games(month, contributions, keys, tallies, out, movers, live)
    if contributions.live:
        _before_game(as_of, next_expiry, n_movers, live, keys)
    order = _month_end_order(previous_order, movers.players[:n_movers], keys, month_start, expired_through)
    return order, (victories, rookies, _player_of_the_month(movers, n_movers, keys.points))


@njit(cache=True)
def _month_end_order(previous_order, movers, keys, month_start, expired_through):
    """The month-end table: last month's players who did not play and are still listed, and this
    month's players (all listed: their last game is in the month), sorted together ("If two
    players have the same amount of points, the player with the fewest finished games is placed
    higher. If they have also played the same number of games, the player who finished his game
    most recently is placed higher"; then by id). One sort of both ran faster than merging the
    month's players into the others' old order, whose comparisons branch unpredictably."""
    previous_last = keys.last[previous_order]
    kept = previous_order[(previous_last < month_start) & (previous_last > expired_through)]
    return sort_players(
        np.concatenate((kept, movers)), keys.points, keys.games, keys.last, keys.id_offsets, keys.id_bytes
    )


# ---------------------------------------------------------------------------------------------
# Output columns
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def table_columns(order, points, games, last, recent, id_offsets, id_bytes):
    """The month-end table's columns in `order`: points (float), games, last game, points to
    defend (float; shown from 10 games: the oldest of the last ten, which drops out at the next
    game) with its validity bits (Arrow's little-endian bitmap), and the player ids as Arrow
    string offsets and bytes, copied from the id pool in the same pass."""
    n = order.shape[0]
    points_out = np.empty(n, dtype=np.float64)
    games_out = np.empty(n, dtype=np.int64)
    last_out = np.empty(n, dtype=np.int32)
    defend = np.empty(n, dtype=np.float64)
    defended = np.zeros((n + 7) // 8, dtype=np.uint8)
    ids_at = np.empty(n + 1, dtype=np.int32)
    ids = np.empty(id_bytes.shape[0] + 7, dtype=np.uint8)  # room for every id of the pool, and copy_words' last word
    ids_at[0] = 0
    for i in range(n):
        p = order[i]
        points_out[i] = points[p] / 100.0
        games_out[i] = games[p]
        last_out[i] = last[p]
        defended[i >> 3] |= np.uint8(games[p] >= GAMES_COUNTED) << np.uint8(i & 7)
        defend[i] = recent[p, games[p] % GAMES_COUNTED] / 100.0
        ids_at[i + 1] = copy_words(id_bytes, id_offsets[p], id_offsets[p + 1], ids, ids_at[i])
    return points_out, games_out, last_out, defend, defended, ids_at, ids[: ids_at[n]]


@plain_njit
def _tied_best(value, item, best, count, out):
    """A running maximum with its ties: `value` (of `item`) against `best`, held by out[:count];
    returns the new (best, count)."""
    if count == 0 or value > best:
        best, count = value, 0
    if value == best:
        out[count] = item
        count += 1
    return best, count


@njit(cache=True)
def leading_rows(mask, values):
    """The largest of the `values` of the rows `mask` marks, and the rows holding it, in order
    (0 and no rows when none is marked)."""
    rows = np.empty(mask.shape[0], dtype=np.int64)
    best, count = np.int64(0), 0
    for r in range(mask.shape[0]):
        if mask[r]:
            best, count = _tied_best(values[r], r, best, count, rows)
    return best, rows[:count].copy()


@njit(cache=True)
def hundredths(cents):
    """Rows of exact hundredths (n x k int64) as floats, cents / 100 (correctly rounded)."""
    out = np.empty(cents.shape, dtype=np.float64)
    for i in range(cents.shape[0]):
        for j in range(cents.shape[1]):
            out[i, j] = cents[i, j] / 100.0
    return out
