"""DiWZ month kernels (SPEC §3.4), compiled with numba over integer-coded arrays.

The encoding pipeline.systems.diwz.rules shares with these kernels:
  - players are dense numbers; a player's record is one 64-byte RECORD in `records`;
  - days are day numbers (days since 1970-01-01, as Arrow's date32), NO_DAY for "none";
  - scores are doubled to integers (0, 1, 2 for 0, ½, 1), so every sum of scores is exact;
  - a rated player's waiting results (at most MIN_RESULTS − 1) sit in two slots of the record;
  - a newcomer's collected results (unbounded) sit in a pool of chunks: one int64 row of
    `chunks` per chunk (the next chunk or -1, then CHUNK doubled scores, then CHUNK opponent
    ratings), linked per player from collected_head to collected_tail; an emptied collection
    returns its chunks to a free list. `pool` holds [chunks ever used, first free chunk or -1,
    free chunks];
  - player ids are Arrow-style string buffers (int32 offsets, UTF-8 bytes) with an
    open-addressing hash table of their numbers (`slots`, pipeline.systems.kernels.ids) and
    `order`, every number in id order.

Floats are computed in the order and with the operations of the reference
(pipeline.systems.diwz.reference), so results agree to the last bit: sums of W run over waiting (or
collected) results first, then the game's opponents in power order; TE = R + (P − We)·800/n and
R + (TE − R)·n/(20 + n) are evaluated left to right as written there. W's power of ten is taken
with a base passed in at run time (TEN), so the compiled code calls libm's pow exactly as
Python's float power does (a literal base could be rewritten by the compiler into exp10, which
rounds differently). W between two whole ratings depends only on their difference, so it is
read from a table of the very same expression evaluated once per difference (W_SPAN each way).

The kernels are compiled without numba's test of every divisor for zero
(kernels.numpy_division_njit): each divisor is a count of at least one result, 20 plus a
count, or 1 plus a positive power.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.systems.kernels import numpy_division_njit, plain_njit
from pipeline.systems.kernels.calendar import add_years, civil_from_days, days_from_civil  # noqa: F401
from pipeline.systems.kernels.ids import (
    bit_at, copy_words, is_name, kept_string_buffers, longest_run, name_words, number_rows, run_end,
    string_words,
)
from pipeline.systems.kernels.sort import extend_id_order, stable_order

from pipeline.systems.diwz.finish import DRAW, ELIMINATED, OUTSIDE_RESULT, SOLO

START_RATING = 1600          # the newcomer's and the average rating (seed part I, 2)
SLOPE = 0.0025               # rule 2.1
SCALE = 800                  # rule 2.4
DEVELOPMENT = 20             # rule 2.5: new = old + (TE - old) * n / (20 + n)
MIN_RESULTS = 3              # rule 2.5: fewer results wait for the next game
MIN_FIRST_RESULTS = 5        # rule 2.6
STRIKE_OFF_YEARS = 2         # rules 1.5 and 4.4
# The Erstzahl iteration contracts (its slope stays within (-0.16, 1)), so it stops long before
# this; the cap only guarantees termination should floats ever cycle across an integer.
MAX_FIRST_RATING_STEPS = 10_000

TEN = 10.0                   # the base of W's power, passed to the kernels at run time
W_SPAN = 4096                # W of whole-rating differences -W_SPAN..W_SPAN comes from a table
NO_DAY = -(2**31)

# A player's record, one 64-byte row of `records` per player number.
RECORD = np.dtype(
    [
        ("rating", np.int64),
        ("pending_opponent", np.int64, (MIN_RESULTS - 1,)),  # waiting results' opponent ratings
        ("evaluations", np.int64),
        ("keeps_until", np.int32),       # last day the rating stands without an evaluation
        ("last_evaluated", np.int32),
        ("rated_since", np.int32),       # the day a never-evaluated rating was given
        ("collected_count", np.int32),   # newcomer: results toward the Erstzahl ...
        ("collected_score", np.int32),   # ... their doubled sum
        ("collected_head", np.int32),    # ... first and last pool chunk, or -1
        ("collected_tail", np.int32),
        ("rated", np.bool_),             # the player holds a rating
        ("pending_count", np.int8),      # rated player: results waiting (fewer than MIN_RESULTS)
        ("pending_score", np.int8, (MIN_RESULTS - 1,)),      # ... their doubled scores
    ],
    align=True,
)
UNKNOWN_PLAYER = np.zeros((), dtype=RECORD)   # the record of a player never seen
for _name in ("keeps_until", "last_evaluated", "rated_since"):
    UNKNOWN_PLAYER[_name] = NO_DAY
for _name in ("collected_head", "collected_tail"):
    UNKNOWN_PLAYER[_name] = -1
PENDING_SLOTS = MIN_RESULTS - 1

CHUNK = 8                    # collected results per pool chunk
CHUNK_NEXT = 0
CHUNK_SCORE = 1              # CHUNK doubled scores from here
CHUNK_OPPONENT = 1 + CHUNK   # CHUNK opponent ratings from here
CHUNK_FIELDS = 1 + 2 * CHUNK


# The results whose finish category is not OUTSIDE_RESULT (finish_key in diwz_finish).
_ELIMINATED_NAME = name_words("eliminated")
_DRAW_NAME = name_words("draw")
_SOLO_NAME = name_words("solo")


# --- arithmetic -------------------------------------------------------------------------------


@numpy_division_njit
def half_up_int(value):
    """Nearest integer, halves away from zero: pipeline.core.rounding.half_up_int for a float64.

    Exact: floor(|x|) and |x| − floor(|x|) are both exact in binary floating point, so the
    fraction is compared with ½ without any rounding (Decimal(x) is the float's exact value).
    """
    magnitude = abs(value)
    whole = np.floor(magnitude)
    if magnitude - whole >= 0.5:
        whole += 1.0
    result = np.int64(whole)
    return -result if value < 0 else result


@numpy_division_njit
def expectation(rating, opponent_rating, ten):
    """W = 1 / (1 + 10^(−0.0025 (R − R_opp))) (rule 2.1); `ten` is TEN."""
    return 1.0 / (1.0 + ten ** (-SLOPE * (rating - opponent_rating)))


@numpy_division_njit
def expectation_table(ten):
    """W(d, 0) for every whole difference d from -W_SPAN to W_SPAN."""
    table = np.empty(2 * W_SPAN + 1, np.float64)
    for d in range(-W_SPAN, W_SPAN + 1):
        table[d + W_SPAN] = expectation(np.int64(d), np.int64(0), ten)
    return table


@numpy_division_njit
def whole_expectation(rating, opponent_rating, table, ten):
    """W between two whole ratings: the table entry of their difference, else computed."""
    at = rating - opponent_rating + W_SPAN
    if 0 <= at <= 2 * W_SPAN:
        return table[np.uint64(at)]
    return expectation(rating, opponent_rating, ten)


# --- calendar ---------------------------------------------------------------------------------


@numpy_division_njit
def set_keeps_until(records, count):
    """Every record's keeps_until from its anchors: two years after the last evaluation, or after
    a never-evaluated rating was given; NO_DAY without a rating or an anchor."""
    for p in range(count):
        rec = records[p]
        anchor = rec.last_evaluated if rec.last_evaluated != NO_DAY else rec.rated_since
        if rec.rated and anchor != NO_DAY:
            rec.keeps_until = add_years(anchor, STRIKE_OFF_YEARS)
        else:
            rec.keeps_until = NO_DAY


# --- finish order (rule 2.3, pipeline.systems.diwz.finish) ------------------------------------


@njit(cache=True, inline="always")
def result_category(data, start, end):
    """The first part of a power's finish key from its `result` (UTF-8 bytes data[start:end]):
    ELIMINATED, DRAW, SOLO, and OUTSIDE_RESULT for survived, anarchy and anything else.

    Read without a branch on the bytes (kernels.ids.string_words)."""
    words = string_words(data, start, end)
    return (OUTSIDE_RESULT + np.int64(is_name(words, _DRAW_NAME)) * (DRAW - OUTSIDE_RESULT)
            + np.int64(is_name(words, _SOLO_NAME)) * (SOLO - OUTSIDE_RESULT)
            + np.int64(is_name(words, _ELIMINATED_NAME)) * (ELIMINATED - OUTSIDE_RESULT))


@njit(cache=True, inline="always")
def finish_key(category, centres, eliminated_year, powers, supply_centres):
    """The second part of a power's finish key; the first is its category (without a branch on
    it, as result_category): the elimination year, the tier of a power left outside the solo or
    draw ("fewer than VZ/N" and "fewer than 2·VZ/N", compared in integers), else 0."""
    tier = np.int64(centres * powers >= supply_centres) + np.int64(centres * powers >= 2 * supply_centres)
    return (np.int64(category == ELIMINATED) * eliminated_year
            + np.int64(category == OUTSIDE_RESULT) * tier)


_KEY_LIMIT = 1 << 40


@plain_njit
def fits_packed(key):
    """Whether a finish key is below 2^40 in size (elimination years and tiers always are), so
    that category·2^41 + key orders a game's powers as (category, key) does."""
    return (key >= -_KEY_LIMIT) & (key < _KEY_LIMIT)


@numpy_division_njit
def finish_values(category, key, lo, hi, out):
    """One integer per power of a game that orders the game's powers as their finish keys
    (category, key) do, for a game with a key that does not fit_packed: the number of powers
    with a smaller key. parse_month writes every other game's values packed as it reads them."""
    for i in range(lo, hi):
        below = 0
        for j in range(lo, hi):
            if category[j] < category[i] or (category[j] == category[i] and key[j] < key[i]):
                below += 1
        out[i] = below


@numpy_division_njit
def doubled_score(own, other):
    """2, 1 or 0 (a point, half a point, nothing) for a better, the same or a worse finish
    group, from two finish values."""
    return (own > other) + (own >= other)


# --- the month's rows -------------------------------------------------------------------------


@numpy_division_njit
def parse_month(
    game_offsets, game_data, result_offsets, result_data, player_offsets, player_data,
    rated_bits, rated_offset, row_day, row_supply, row_centres, row_year, year_validity, year_offset,
    index_offsets, index_data, slots, count, order,
):
    """The month's rated games from its rows (GAME_COLUMNS in processing order; the string
    columns as Arrow offsets and bytes, `rated` as its Arrow bits (no nulls) and their offset,
    eliminated_year with its Arrow validity bitmap, empty when it has no nulls, and the bitmap's
    offset): a game is a run of rows with the same game_id and is rated when its first row is.
    Numbers the responsible players not known yet (the index's offsets and bytes must have room
    for every row).

    Returns game_start (into the kept rows), game_day, whether each input row is kept (belongs
    to a rated game), per kept row its finish value (packed, or finish_values) and player
    number, the pool chunks the month's results could need at most; then the hash table, the
    new player count and id order; then, when some rows are not kept, the kept rows' game ids
    and player ids (offsets and bytes each) and days for the history (empty arrays otherwise).
    """
    rows = row_day.size
    game_start = np.empty(rows + 1, np.int64)
    game_day = np.empty(rows, np.int64)
    kept = np.empty(rows, np.int64)
    kept_day = np.empty(rows, np.int32)
    keep = np.zeros(rows, np.bool_)
    category = np.empty(rows, np.int64)
    key = np.empty(rows, np.int64)
    finish = np.empty(rows, np.int64)
    games = 0
    kept_rows = 0
    chunks_needed = 0
    r = 0
    while r < rows:
        end = run_end(game_offsets, game_data, r, rows)
        if bit_at(rated_bits, rated_offset + r):  # a game is rated when its first row is
            game_start[games] = kept_rows
            game_day[games] = row_day[r]
            games += 1
            lo = kept_rows
            small = True
            day, supply = row_day[r], row_supply[r]  # a game's rows share its day and map
            for k in range(r, end):
                # Indexed with unsigned integers, which numba compiles without its test for a
                # negative index on every access (the loop ran about 5% faster).
                at, row = np.uint64(kept_rows), np.uint64(k)
                kept[at] = k
                kept_day[at] = day
                keep[row] = True
                cat = result_category(result_data, result_offsets[row], result_offsets[row + np.uint64(1)])
                given = year_validity.size == 0 or bit_at(year_validity, year_offset + k) == 1
                year = row_year[row] * np.int64(given)  # read for every row: a branch would mispredict
                category[at] = cat
                value = finish_key(cat, row_centres[row], year, end - r, supply)
                key[at] = value
                # Packed as the row is read: a second pass over the game cost more.
                small &= fits_packed(value)
                finish[at] = cat * (2 * _KEY_LIMIT) + value
                kept_rows += 1
            if not small:
                finish_values(category, key, lo, kept_rows, finish)
            # Pool chunks the game's results could need at most (a row adds powers − 1 results).
            powers = end - r
            chunks_needed += powers * ((powers - 1 + CHUNK - 1) // CHUNK)
        r = end
    game_start[games] = kept_rows

    players = np.empty(kept_rows, np.int64)
    first_new = count
    # The index has room for every row's id: only the table may be replaced.
    count, _, _, slots = number_rows(player_offsets, player_data, kept[:kept_rows], index_offsets, index_data,
                                     slots, count, players)
    if count > first_new:
        grown = np.empty(count, order.dtype)
        grown[:first_new] = order
        extend_id_order(grown, first_new, count, index_offsets, index_data)
        order = grown
    # The history's ids and days are copied here when rows were dropped: as a separate pass, with
    # its own calls and arrays, the copy cost twice as much.
    if kept_rows < rows:
        game_ids = kept_string_buffers(game_offsets, game_data, keep)
        player_ids = kept_string_buffers(player_offsets, player_data, keep)
        days = kept_day[:kept_rows]
    else:
        game_ids = player_ids = (np.zeros(1, np.int32), np.zeros(0, np.uint8))
        days = kept_day[:0]
    return (game_start[:games + 1], game_day[:games], keep, finish[:kept_rows], players, chunks_needed,
            slots, count, order, *game_ids, *player_ids, days)


# --- pool of collected results ----------------------------------------------------------------


@numpy_division_njit
def _take_chunk(chunks, pool):
    free = pool[1]
    if free >= 0:
        pool[1] = chunks[free, CHUNK_NEXT]
        pool[2] -= 1
        chunk = free
    else:
        chunk = pool[0]
        pool[0] += 1
    chunks[chunk, CHUNK_NEXT] = -1
    return chunk


@numpy_division_njit
def _free_collection(rec, chunks, pool):
    count = rec.collected_count
    if count > 0:
        chunks[rec.collected_tail, CHUNK_NEXT] = pool[1]
        pool[1] = rec.collected_head
        pool[2] += (count + CHUNK - 1) // CHUNK
    rec.collected_count = 0
    rec.collected_score = 0
    rec.collected_head = -1
    rec.collected_tail = -1


@numpy_division_njit
def _append_collected(rec, scores, opponents, m, chunks, pool):
    count = rec.collected_count
    for t in range(m):
        slot = count % CHUNK
        if slot == 0:
            chunk = _take_chunk(chunks, pool)
            if count == 0:
                rec.collected_head = chunk
            else:
                chunks[rec.collected_tail, CHUNK_NEXT] = chunk
            rec.collected_tail = chunk
        chunks[rec.collected_tail, CHUNK_SCORE + slot] = scores[t]
        chunks[rec.collected_tail, CHUNK_OPPONENT + slot] = opponents[t]
        rec.collected_score += scores[t]
        count += 1
    rec.collected_count = count


@numpy_division_njit
def _collected_opponents(rec, chunks):
    """A collection's opponent ratings, in the order they were gathered."""
    count = rec.collected_count
    out = np.empty(count, np.int64)
    chunk = rec.collected_head
    for k in range(count):
        if k > 0 and k % CHUNK == 0:
            chunk = chunks[chunk, CHUNK_NEXT]
        out[k] = chunks[chunk, CHUNK_OPPONENT + k % CHUNK]
    return out


@numpy_division_njit
def first_rating(score, opponents, ten):
    """The Erstzahl (rule 2.6): R ← R + (P − We(R))·800/(20 + n) from 1600, unrounded, until the
    integer part (floor) of two successive values is the same; that integer.

    Only that integer is kept, so the steps need not give the reference's floats to the bit,
    only the same floors: they are first taken with one power per step
    (_first_rating_by_products), and taken as the reference takes them
    (_first_rating_by_powers) only when those cannot vouch for every floor."""
    rating, vouched = _first_rating_by_products(score, opponents, ten)
    return rating if vouched else _first_rating_by_powers(score, opponents, ten)


@numpy_division_njit
def _first_rating_by_powers(score, opponents, ten):
    """first_rating with W evaluated as the reference evaluates it, one power per opponent per
    step (pipeline.systems.diwz.reference._erstzahl)."""
    count = opponents.size
    rating = float(START_RATING)
    for _ in range(MAX_FIRST_RATING_STEPS):
        expected = 0.0
        for opponent in opponents:
            expected += expectation(rating, opponent, ten)
        following = rating + (score - expected) * SCALE / (DEVELOPMENT + count)
        if np.floor(following) == np.floor(rating):
            return np.int64(np.floor(following))
        rating = following
    return np.int64(np.floor(rating))


# Ratings whose powers of ten the bound in _first_rating_by_products covers (exponents within ±20).
_PRODUCT_RATINGS = 8000


@numpy_division_njit
def _first_rating_by_products(score, opponents, ten):
    """first_rating with W = 1/(1 + 10^(−0.0025·R)·10^(0.0025·R_opp)): the opponents' powers
    once, then one power per step. Returns (the rating, True), or (0, False) when it cannot
    vouch that every floor is the reference's (_first_rating_by_powers).

    Both evaluate the same map F(R) = R + (P − We(R))·800/(20 + n), whose slope lies within
    (−0.16, 1], so a difference between their iterates is carried into the next step at most as
    large, and grows by the two evaluations' own errors: each W here and there is within
    1e−14 of the true W (relative errors of a few units in the last place of powers whose
    exponents stay within ±20, on W·(1 − W) ≤ ¼), their sums within (n + 2)²·1e−14 (with the
    rounding of n additions each), times 800/(20 + n), and the rounding of R itself (|R|·1e−15).
    `margin` adds these up, generously; while every iterate lies farther than it from an
    integer, every floor, so the step the iteration stops at and the rating, are the reference's.
    """
    count = opponents.size
    powers = np.empty(count, np.float64)
    for k in range(count):
        if abs(opponents[k]) > _PRODUCT_RATINGS:
            return np.int64(0), False
        powers[k] = ten ** (SLOPE * opponents[k])
    step = SCALE / (DEVELOPMENT + count)
    sum_error = (count + 2.0) ** 2 * 1e-14
    margin = 0.0
    rating = float(START_RATING)
    for _ in range(MAX_FIRST_RATING_STEPS):
        base = ten ** (-SLOPE * rating)
        expected = 0.0
        for k in range(count):
            expected += 1.0 / (1.0 + base * powers[k])
        following = rating + (score - expected) * SCALE / (DEVELOPMENT + count)
        margin += step * sum_error + abs(following) * 1e-15
        if abs(following) > _PRODUCT_RATINGS or np.floor(following - margin) != np.floor(following + margin):
            return np.int64(0), False
        if np.floor(following) == np.floor(rating):
            return np.int64(np.floor(following)), True
        rating = following
    return np.int64(np.floor(rating)), True


# --- player transitions -----------------------------------------------------------------------


@numpy_division_njit
def _clear_pending(rec):
    rec.pending_count = 0
    for slot in range(PENDING_SLOTS):
        rec.pending_score[slot] = 0
        rec.pending_opponent[slot] = 0


@numpy_division_njit
def _set_rating(rec, rated, rating, evaluations, last_evaluated, rated_since, keeps_until, chunks, pool):
    """The record's rating anew, with nothing waiting or collected."""
    rec.rated = rated
    rec.rating = rating
    rec.evaluations = evaluations
    rec.last_evaluated = last_evaluated
    rec.rated_since = rated_since
    rec.keeps_until = keeps_until
    _clear_pending(rec)
    _free_collection(rec, chunks, pool)


@numpy_division_njit
def _strike_off(rec, chunks, pool):
    """No rating any more: a newcomer again, with nothing waiting or collected."""
    _set_rating(rec, False, 0, 0, NO_DAY, NO_DAY, NO_DAY, chunks, pool)


@numpy_division_njit
def _establish(rec, rating, evaluations, day, last_evaluated, keeps_until, chunks, pool):
    """A new rating given on `day` (1600-0 at start, or the Erstzahl), standing until
    `keeps_until` (two years after `day`)."""
    _set_rating(rec, True, rating, evaluations, last_evaluated, day, keeps_until, chunks, pool)


# --- the month's history rows ----------------------------------------------------------------
# rate_month's columns: rows of its floats, integers and flags (see there).
_BEFORE, _AFTER, _SCORE, _NIVEAU, _EXPECTED, _PERFORMANCE = range(6)
_OPPONENTS, _EVALUATIONS = range(2)
_POOLED, _BEFORE_GIVEN, _AFTER_GIVEN, _NIVEAU_GIVEN, _EXPECTED_GIVEN, _PERFORMANCE_GIVEN, _EVALUATIONS_GIVEN = range(7)


@numpy_division_njit
def _game_results(r, doubled, opponent_sum, m, floats, flags):
    """Row r's score and niveau from the game's `m` results alone (doubled points, opponents' ratings)."""
    floats[_SCORE, r] = doubled * 0.5
    if m > 0:
        floats[_NIVEAU, r] = opponent_sum / m
        flags[_NIVEAU_GIVEN, r] = True


@numpy_division_njit
def _evaluation(r, rating, points, count, opponent_sum, expected, performance, pooled, evaluations,
                floats, integers, flags):
    """Row r's columns when its results are evaluated: the new rating, and the points, opponents,
    niveau, expected points and performance over all `count` results evaluated."""
    floats[_AFTER, r] = rating
    floats[_SCORE, r] = points
    floats[_NIVEAU, r] = opponent_sum / count
    floats[_EXPECTED, r] = expected
    floats[_PERFORMANCE, r] = performance
    integers[_OPPONENTS, r] = count
    integers[_EVALUATIONS, r] = evaluations
    flags[_POOLED, r] = pooled
    for given in range(_AFTER_GIVEN, _EVALUATIONS_GIVEN + 1):  # rating_after .. evaluations are given
        flags[given, r] = True


@numpy_division_njit
def _add_game_results(n, rating, finish, expected, score, opponent_sum, w_table, ten):
    """Add each of a game's n rated powers' results against the others, in power order: W to
    expected[a], doubled points to score[a], the opponents' ratings to opponent_sum[a]."""
    low = high = rating[0] if n > 0 else 0
    for a in range(1, n):
        low = min(low, rating[a])
        high = max(high, rating[a])
    if high - low <= W_SPAN:
        # Every difference in the game is in the table, so no pair needs a range check; one
        # power's sum at a time, in a register.
        for a in range(n):
            at = rating[a] + W_SPAN
            own = finish[a]
            total = expected[a]
            points = score[a]
            ratings = opponent_sum[a]
            for b in range(n):
                if b != a:
                    total += w_table[np.uint64(at - rating[b])]
                    points += doubled_score(own, finish[b])
                    ratings += rating[b]
            expected[a] = total
            score[a] = points
            opponent_sum[a] = ratings
        return
    for a in range(n):
        total = expected[a]
        points = score[a]
        ratings = opponent_sum[a]
        for b in range(n):
            if b != a:
                total += whole_expectation(rating[a], rating[b], w_table, ten)
                points += doubled_score(finish[a], finish[b])
                ratings += rating[b]
        expected[a] = total
        score[a] = points
        opponent_sum[a] = ratings


# --- the month --------------------------------------------------------------------------------


@numpy_division_njit
def rate_month(game_start, game_day, finish, players, records, chunks, pool,
               player_count, start_newcomers, clock_day, month_end, w_table, ten):
    """Apply one month's rated games in order, then strike off expired ratings at `month_end`.

    `records` and the pool are changed in place (the caller passes its own copies; the pool
    must have room for every result the month could collect). `clock_day`, when not NO_DAY,
    first starts the strike-off clock of every rating that has none (an initial list entry, in
    the first month with games). `start_newcomers` gives a newcomer 1600-0 before its game is
    evaluated (start_1600 and the bootstrap month).

    Returns the history columns, one row per game row, as three arrays: floats (rating_before,
    rating_after, score, niveau, expected, performance), integers (opponents, evaluations) and
    flags (pooled, then whether rating_before, rating_after, niveau, expected, performance and
    evaluations are given).
    """
    rows = players.size
    games = game_day.size
    floats = np.zeros((6, rows), np.float64)
    integers = np.zeros((2, rows), np.int64)
    flags = np.zeros((7, rows), np.bool_)
    before_out, expected_out = floats[_BEFORE], floats[_EXPECTED]
    opponents_out, evaluations_out = integers[_OPPONENTS], integers[_EVALUATIONS]
    before_ok, expected_ok, evaluations_ok = flags[_BEFORE_GIVEN], flags[_EXPECTED_GIVEN], flags[_EVALUATIONS_GIVEN]

    # The end of the strike-off clock for the days of this month (its games lie within it).
    first_day = month_end - 31
    keeps_of_day = np.empty(32, np.int64)
    for d in range(32):
        keeps_of_day[d] = add_years(first_day + d, STRIKE_OFF_YEARS)

    if clock_day != NO_DAY:
        for p in range(player_count):
            rec = records[p]
            if rec.rated and rec.keeps_until == NO_DAY:
                rec.rated_since = clock_day
                rec.keeps_until = add_years(clock_day, STRIKE_OFF_YEARS)

    widest = longest_run(game_start, games)
    has_before = np.zeros(widest, np.bool_)
    before = np.zeros(widest, np.int64)
    result_score = np.zeros(widest, np.int64)
    result_opponent = np.zeros(widest, np.int64)
    rated_rating = np.zeros(widest, np.int64)     # the game's rated powers, in power order
    rated_finish = np.zeros(widest, np.int64)
    rated_slot = np.zeros(widest, np.int64)       # a rated power's place among them
    rated_expected = np.zeros(widest, np.float64) # per rated power: Σ W so far
    rated_score = np.zeros(widest, np.int64)      # ... doubled points and opponents' ratings
    rated_opponents = np.zeros(widest, np.int64)  #     from this game's results

    for g in range(games):
        lo = game_start[g]
        powers = game_start[g + 1] - lo
        day = game_day[g]
        if first_day <= day <= month_end:
            keeps = keeps_of_day[day - first_day]
        else:
            keeps = add_years(day, STRIKE_OFF_YEARS)
        for i in range(powers):
            rec = records[players[lo + i]]
            if rec.keeps_until != NO_DAY and day > rec.keeps_until:
                _strike_off(rec, chunks, pool)
            if not rec.rated and start_newcomers:
                # 1600-0 before the game is evaluated, so a rated opponent in it (seed example 1).
                _establish(rec, START_RATING, 0, day, NO_DAY, keeps, chunks, pool)
            has_before[i] = rec.rated
            before[i] = rec.rating

        rated_here = 0
        for i in range(powers):
            if has_before[i]:
                rated_slot[i] = rated_here
                rated_rating[rated_here] = before[i]
                rated_finish[rated_here] = finish[lo + i]
                rated_here += 1
        # Σ W of every rated power, the waiting results first when they are evaluated with this
        # game's, then this game's opponents in power order.
        for a in range(rated_here):
            rated_expected[a] = 0.0
            rated_score[a] = 0
            rated_opponents[a] = 0
        for i in range(powers):
            if has_before[i]:
                rec = records[players[lo + i]]
                waiting = np.int64(rec.pending_count)
                if waiting + rated_here - 1 >= MIN_RESULTS:
                    a = rated_slot[i]
                    for t in range(waiting):
                        rated_expected[a] += whole_expectation(before[i], rec.pending_opponent[t], w_table, ten)
        _add_game_results(rated_here, rated_rating, rated_finish, rated_expected, rated_score, rated_opponents,
                          w_table, ten)

        for i in range(powers):
            r = lo + i
            rec = records[players[r]]
            own = finish[r]
            # This game's results against rated opponents, in power order.
            m = rated_here - 1 if has_before[i] else rated_here
            opponents_out[r] = m

            if not has_before[i]:
                # Newcomer: collect, and take the Erstzahl once the rule allows (rule 2.6).
                game_score = 0
                game_opponents = 0
                t = 0
                for j in range(powers):
                    if j != i and has_before[j]:
                        result_score[t] = doubled_score(own, finish[lo + j])
                        result_opponent[t] = before[j]
                        game_score += result_score[t]
                        game_opponents += before[j]
                        t += 1
                _game_results(r, game_score, game_opponents, m, floats, flags)
                had_earlier = rec.collected_count > 0
                _append_collected(rec, result_score, result_opponent, m, chunks, pool)
                count = np.int64(rec.collected_count)
                doubled = np.int64(rec.collected_score)
                if m == 0 or count < MIN_FIRST_RESULTS or doubled == 0 or doubled == 2 * count:
                    continue
                points = doubled * 0.5
                opponents = _collected_opponents(rec, chunks)
                first = first_rating(points, opponents, ten)
                expected = 0.0
                opponent_sum = 0
                for opponent in opponents:
                    expected += whole_expectation(first, opponent, w_table, ten)
                    opponent_sum += opponent
                performance = first + (points - expected) * SCALE / count
                _evaluation(r, first, points, count, opponent_sum, expected, performance, had_earlier, 1,
                            floats, integers, flags)
                _establish(rec, first, 1, day, day, keeps, chunks, pool)
                continue

            # Rated player: evaluate waiting and new results together (W summed in that order),
            # or let the new ones wait, W summed over them alone (rule 2.5).
            old = before[i]
            waiting = np.int64(rec.pending_count)
            count = waiting + m
            evaluate = count >= MIN_RESULTS
            mine = rated_slot[i]
            expected = rated_expected[mine]
            game_score = rated_score[mine]
            game_opponents = rated_opponents[mine]
            doubled = 0
            opponent_sum = 0
            if evaluate:
                for t in range(waiting):
                    doubled += rec.pending_score[t]
                    opponent_sum += rec.pending_opponent[t]
            else:
                t = waiting
                for j in range(powers):
                    if j != i and has_before[j]:
                        rec.pending_score[t] = doubled_score(own, finish[lo + j])
                        rec.pending_opponent[t] = before[j]
                        t += 1
            before_out[r] = old
            before_ok[r] = True
            expected_ok[r] = True
            evaluations_ok[r] = True
            if not evaluate:
                rec.pending_count = count
                _game_results(r, game_score, game_opponents, m, floats, flags)
                expected_out[r] = expected
                evaluations_out[r] = rec.evaluations
                continue
            doubled += game_score
            opponent_sum += game_opponents
            points = doubled * 0.5
            performance = old + (points - expected) * SCALE / count
            new = half_up_int(old + (performance - old) * count / (DEVELOPMENT + count))
            rec.rating = new
            rec.evaluations += 1
            _evaluation(r, new, points, count, opponent_sum, expected, performance, waiting > 0, rec.evaluations,
                        floats, integers, flags)
            rec.last_evaluated = day
            rec.keeps_until = keeps
            _clear_pending(rec)

    for p in range(player_count):
        rec = records[p]
        if rec.keeps_until != NO_DAY and month_end > rec.keeps_until:
            _strike_off(rec, chunks, pool)

    return floats, integers, flags


# --- the month's list -------------------------------------------------------------------------


# "00", "01", ..., "99": a value's decimal digits are written two at a time.
_DIGIT_PAIRS = np.array([ord(c) for k in range(100) for c in f"{k:02d}"], dtype=np.uint8)
_TEN, _HUNDRED, _THOUSAND = np.uint64(10), np.uint64(100), np.uint64(1000)


@plain_njit
def _write_int(buffer, at, value):
    """Write the decimal form of an int64 at buffer[at:]; returns the index after it.

    The list writes two such numbers for every player every month: the digits are counted by
    comparisons and written in pairs from a table, with unsigned division by 100 (a multiply),
    where a digit at a time with Python's signed floor division cost half of the list's time."""
    if value < 0:
        buffer[at] = 45  # "-"
        at += 1
    magnitude = np.uint64(value) if value >= 0 else np.uint64(-(value + 1)) + np.uint64(1)
    width = 1 + np.int64(magnitude >= _TEN) + np.int64(magnitude >= _HUNDRED) + np.int64(magnitude >= _THOUSAND)
    rest = magnitude // np.uint64(10_000)
    while rest > 0:
        width += 1
        rest //= _TEN
    end = at + width
    place = np.uint64(end)
    while magnitude >= _HUNDRED:
        pair = (magnitude % _HUNDRED) * np.uint64(2)
        magnitude //= _HUNDRED
        place -= np.uint64(2)
        buffer[place] = _DIGIT_PAIRS[pair]
        buffer[place + np.uint64(1)] = _DIGIT_PAIRS[pair + np.uint64(1)]
    if magnitude >= _TEN:
        pair = magnitude * np.uint64(2)
        buffer[place - np.uint64(2)] = _DIGIT_PAIRS[pair]
        buffer[place - np.uint64(1)] = _DIGIT_PAIRS[pair + np.uint64(1)]
    else:
        buffer[place - np.uint64(1)] = np.uint8(48) + np.uint8(magnitude)
    return end


_LONGEST_ENTRY = 41   # the longest display string: two int64 values (20 characters each) and "-"


@numpy_division_njit
def rankings(records, count, id_rank, id_offsets, id_bytes):
    """The list: rated players by rating desc, then player id (`id_rank` is each player's place
    in id order); equal ratings share a rank (1-2-2-4). Returns rank and evaluations as rows of
    one array, the ratings, last_evaluated (NO_DAY for none), and the player ids (from the
    index's offsets and bytes) and display strings ("1797-5") as Arrow string offsets and bytes.

    The records are read once, in number order, and what the list shows is carried through the
    sort in plain arrays, so no pass reads records out of order; the display strings are
    written in one pass into room for the longest ones."""
    # About half the players known are listed, in no order a branch could predict: both passes
    # write every player and count the listed ones (a branch on `rated` mispredicted about every
    # other player and took half of the list's time).
    at_rank = np.empty(count, np.int64)    # by place in id order: the player number, or -1
    rating_at = np.empty(count, np.int64)
    evaluations_at = np.empty(count, np.int64)
    last_at = np.empty(count, np.int32)
    listed = 0
    id_size = 0
    for p in range(count):
        rec = records[p]
        rated = rec.rated
        place = np.uint64(id_rank[p])  # unsigned: no test for a negative index (so below)
        at_rank[place] = p if rated else -1
        rating_at[place] = rec.rating
        evaluations_at[place] = rec.evaluations
        last_at[place] = rec.last_evaluated
        listed += rated
        id_size += (id_offsets[p + 1] - id_offsets[p]) * rated
    # In id order: the listed players' ratings and places (each player is written at the next
    # free entry, which only a listed one keeps).
    rating_by_id = np.empty(count, np.int64)
    place_by_id = np.empty(count, np.int64)
    at = 0
    for place in range(count):
        rating_by_id[at] = rating_at[place]
        place_by_id[at] = place
        at += at_rank[place] >= 0
    rating_by_id = rating_by_id[:listed]
    place_by_id = place_by_id[:listed]
    # Best first, ties in id order: each listed player's place in id order.
    places = np.empty(listed, np.int64)
    if listed > 0:
        low = rating_by_id.min()
        high = rating_by_id.max()
        span = high - low + 1
        if span <= 4 * listed + 65536:
            # Stable counting sort on the rating, best first: ties keep the id order.
            start = np.zeros(span + 1, np.int64)
            for rating in rating_by_id:
                start[high - rating + 1] += 1
            for v in range(span):
                start[v + 1] += start[v]
            for at in range(listed):
                slot = high - rating_by_id[at]
                places[start[slot]] = place_by_id[at]
                start[slot] += 1
        else:
            # Ratings too far apart to count: a stable merge sort, best first.
            order = stable_order(high - rating_by_id)
            for at in range(listed):
                places[at] = place_by_id[order[at]]

    ids_at = np.zeros(listed + 1, np.int32)
    ids = np.empty(id_size + 7, np.uint8)  # room for copy_words' last word
    columns = np.empty((2, listed), np.int64)
    last_out = np.empty(listed, np.int32)
    ratings_out = np.empty(listed, np.float64)
    offsets = np.zeros(listed + 1, np.int32)
    text = np.empty(_LONGEST_ENTRY * listed, np.uint8)
    size = 0
    previous = 0
    for at in range(listed):
        place = np.uint64(places[at])
        rating = rating_at[place]
        player = np.uint64(at_rank[place])
        ids_at[at + 1] = copy_words(id_bytes, id_offsets[player], id_offsets[player + np.uint64(1)], ids, ids_at[at])
        if at > 0 and rating == previous:
            columns[0, at] = columns[0, at - 1]
        else:
            columns[0, at] = at + 1
        previous = rating
        ratings_out[at] = rating
        columns[1, at] = evaluations_at[place]
        last_out[at] = last_at[place]
        end = _write_int(text, size, rating)
        text[end] = 45  # "-"
        size = _write_int(text, end + 1, evaluations_at[place])
        offsets[at + 1] = size
    return columns, ratings_out, last_out, ids_at, ids[:id_size], offsets, text[:size]



# --- checkpoints ------------------------------------------------------------------------------


@numpy_division_njit
def flatten_collections(records, count, chunks):
    """Every player's collected results, player after player: doubled scores and opponents."""
    total = 0
    for p in range(count):
        total += records[p].collected_count
    scores = np.empty(total, np.int8)
    opponents = np.empty(total, np.int64)
    at = 0
    for p in range(count):
        chunk = records[p].collected_head
        for k in range(records[p].collected_count):
            if k > 0 and k % CHUNK == 0:
                chunk = chunks[chunk, CHUNK_NEXT]
            scores[at] = chunks[chunk, CHUNK_SCORE + k % CHUNK]
            opponents[at] = chunks[chunk, CHUNK_OPPONENT + k % CHUNK]
            at += 1
    return scores, opponents


@numpy_division_njit
def pool_collections(records, count, scores, opponents, chunks):
    """The inverse of flatten_collections into an empty pool (with room): links every
    player's collection and sets its collected_score, collected_head and collected_tail."""
    used = 0
    at = 0
    for p in range(count):
        rec = records[p]
        rec.collected_score = 0
        rec.collected_head = -1
        rec.collected_tail = -1
        for k in range(rec.collected_count):
            slot = k % CHUNK
            if slot == 0:
                if k == 0:
                    rec.collected_head = used
                else:
                    chunks[rec.collected_tail, CHUNK_NEXT] = used
                rec.collected_tail = used
                used += 1
            chunks[rec.collected_tail, CHUNK_SCORE + slot] = scores[at]
            chunks[rec.collected_tail, CHUNK_OPPONENT + slot] = opponents[at]
            rec.collected_score += scores[at]
            at += 1
    return np.array([used, -1, 0], np.int64)
