"""DiWZ month kernels (seed 004, SPEC §3.4), compiled with numba over integer-coded arrays.

The rule (seed part II) and the functions that apply it:
  1.3, 1.4  only rated games count, in the order they ended:  parse_month, rate_month, rate_games
  1.5, 4.4  a rating two years without an evaluation is
            struck off, at a game or at the month's end:      stands_until, strike_off_expired
  2.1       W against a rated opponent, We over the game:     expectation, game_expectations
  2.3       the points from the finish order (2.3.1-2.3.4),
            opponents without a rating left out:              finish_key, doubled_score, rated_powers
  2.4       the performance TE:                               performance
  2.5       the new DiWZ; results from fewer than three
            opponents wait and are pooled with the next game: results_wait, wait_results,
                                                              evaluate_results, new_rating
  2.6       a newcomer collects results against rated
            opponents; the Erstzahl, iterated from 1600, once
            five are collected, not at 0% or 100%:            collect_newcomer_results,
                                                              first_rating_due, take_first_rating,
                                                              first_rating
  part I, 3 the niveau, the opponents' average:              niveau
Where the rules are silent (see pipeline.systems.diwz.rules): newcomers start at 1600-0
(ratings_before_game), and an existing list's strike-off clock starts with the data
(start_clocks).

rate_games, which takes each game's steps, allocates nothing and is compiled without numba's
reference counting (kernels.plain_njit), and the steps it takes for every game and row inline
into it: the tuples of arrays they are handed then cost nothing per call. rate_month allocates
what it needs.

The encoding pipeline.systems.diwz.rules shares with these kernels:
  - players are dense numbers (pipeline.systems.kernels.numbering); a player's record is one
    64-byte RECORD in `records`;
  - days are day numbers (days since 1970-01-01, as Arrow's date32), NO_DAY for "none";
  - scores are doubled to integers (0, 1, 2 for 0, ½, 1), so every sum of scores is exact;
  - a rated player's waiting results (at most MIN_RESULTS − 1) sit in two slots of the record;
  - a newcomer's collected results (unbounded) are rows of `collected` (COLLECTED), each
    linked to the same player's previous one; the record holds the newest row, the count and
    the doubled sum. A month appends rows after those in use; the rows of a collection that
    became a rating are left behind, and the next month's copy keeps the live rows only
    (flatten_collections, linked_collections).

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

from pipeline.systems.diwz.finish import DRAW, ELIMINATED, OUTSIDE_RESULT, SOLO
from pipeline.systems.kernels import numpy_division_njit, plain_njit
from pipeline.systems.kernels.calendar import add_years, civil_from_days, days_from_civil  # noqa: F401
from pipeline.systems.kernels.ids import (
    bit_at,
    copy_words,
    is_name,
    kept_string_buffers,
    longest_run,
    name_words,
    run_end,
    string_words,
)
from pipeline.systems.kernels.sort import stable_order

START_RATING = 1600  # the newcomer's and the average rating (seed part I, 2)
SLOPE = 0.0025  # rule 2.1
SCALE = 800  # rule 2.4
DEVELOPMENT = 20  # rule 2.5: new = old + (TE - old) * n / (20 + n)
MIN_RESULTS = 3  # rule 2.5: fewer results wait for the next game
MIN_FIRST_RESULTS = 5  # rule 2.6
STRIKE_OFF_YEARS = 2  # rules 1.5 and 4.4
# The Erstzahl iteration contracts (its slope stays within (-0.16, 1)), so it stops long before
# this; the cap only guarantees termination should floats ever cycle across an integer.
MAX_FIRST_RATING_STEPS = 10_000

TEN = 10.0  # the base of W's power, passed to the kernels at run time
W_SPAN = 4096  # W of whole-rating differences -W_SPAN..W_SPAN comes from a table
NO_DAY = -(2**31)

# A player's record, one 64-byte row of `records` per player number.
RECORD = np.dtype(
    [
        ("rating", np.int64),
        ("pending_opponent", np.int64, (MIN_RESULTS - 1,)),  # waiting results' opponent ratings
        ("evaluations", np.int64),
        ("keeps_until", np.int32),  # last day the rating stands without an evaluation
        ("last_evaluated", np.int32),
        ("rated_since", np.int32),  # the day a never-evaluated rating was given
        ("collected_count", np.int32),  # newcomer: results toward the Erstzahl ...
        ("collected_score", np.int32),  # ... their doubled sum
        ("collected_last", np.int32),  # ... the row of the newest in `collected`, or -1
        ("rated", np.bool_),  # the player holds a rating
        ("pending_count", np.int8),  # rated player: results waiting (fewer than MIN_RESULTS)
        ("pending_score", np.int8, (MIN_RESULTS - 1,)),  # ... their doubled scores
    ],
    align=True,
)
UNKNOWN_PLAYER = np.zeros((), dtype=RECORD)  # the record of a player never seen
for _name in ("keeps_until", "last_evaluated", "rated_since"):
    UNKNOWN_PLAYER[_name] = NO_DAY
UNKNOWN_PLAYER["collected_last"] = -1
PENDING_SLOTS = MIN_RESULTS - 1

# A newcomer's collected result, one row of `collected` (rule 2.6).
COLLECTED = np.dtype([("previous", np.int32), ("score", np.int32), ("opponent", np.int64)])


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


@numpy_division_njit
def performance(rating, tally):
    """TE = R + (P − We)·800/n (rule 2.4), from a tally (doubled P, n, Σ opponents' ratings, We)."""
    doubled, count, _opponent_sum, expected = tally
    return rating + (doubled * 0.5 - expected) * SCALE / count


@numpy_division_njit
def niveau(opponent_sum, count):
    """The niveau: the opponents' average rating (seed part I, 3)."""
    return opponent_sum / count


@numpy_division_njit
def new_rating(old, performance, count):
    """DiWZn = DiWZa + (TE − DiWZa)·n/(20 + n), rounded half up (rule 2.5)."""
    return half_up_int(old + (performance - old) * count / (DEVELOPMENT + count))


# --- calendar (rules 1.5, 4.4) ----------------------------------------------------------------


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


@numpy_division_njit
def month_days(month_end):
    """The month's first day (a game's day lies on or after it) and, for each of the 32 days
    from it, the last day a rating evaluated that day stands (rules 1.5, 4.4)."""
    first_day = month_end - 31
    keeps = np.empty(32, np.int64)
    for d in range(32):
        keeps[d] = add_years(first_day + d, STRIKE_OFF_YEARS)
    return first_day, keeps


@njit(cache=True, inline="always")
def stands_until(day, days):
    """The last day a rating evaluated on `day` stands without another evaluation (rules 1.5,
    4.4): from month_days' table for a day of the month."""
    first_day, keeps = days
    if first_day <= day < first_day + 32:
        return keeps[day - first_day]
    return add_years(day, STRIKE_OFF_YEARS)


# --- finish order (rule 2.3, pipeline.systems.diwz.finish) ------------------------------------


@njit(cache=True, inline="always")
def result_category(data, start, end):
    """The first part of a power's finish key from its `result` (UTF-8 bytes data[start:end]):
    ELIMINATED, DRAW, SOLO, and OUTSIDE_RESULT for survived, anarchy and anything else.

    Read without a branch on the bytes (kernels.ids.string_words)."""
    words = string_words(data, start, end)
    return (
        OUTSIDE_RESULT
        + np.int64(is_name(words, _DRAW_NAME)) * (DRAW - OUTSIDE_RESULT)
        + np.int64(is_name(words, _SOLO_NAME)) * (SOLO - OUTSIDE_RESULT)
        + np.int64(is_name(words, _ELIMINATED_NAME)) * (ELIMINATED - OUTSIDE_RESULT)
    )


@njit(cache=True, inline="always")
def finish_key(category, centres, eliminated_year, powers, supply_centres):
    """The second part of a power's finish key; the first is its category (without a branch on
    it, as result_category): the elimination year (rule 2.3.2), the tier of a power left
    outside the solo or draw ("fewer than VZ/N" and "fewer than 2·VZ/N", compared in integers,
    rule 2.3.4), else 0."""
    tier = np.int64(centres * powers >= supply_centres) + np.int64(centres * powers >= 2 * supply_centres)
    return np.int64(category == ELIMINATED) * eliminated_year + np.int64(category == OUTSIDE_RESULT) * tier


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
    with a smaller key. Every other game's values are packed as they are read."""
    for i in range(lo, hi):
        below = 0
        for j in range(lo, hi):
            if category[j] < category[i] or (category[j] == category[i] and key[j] < key[i]):
                below += 1
        out[i] = below


@numpy_division_njit
def doubled_score(own, other):
    """2, 1 or 0 (a point, half a point, nothing) for a better, the same or a worse finish
    group, from two finish values (rules 2.3.1 to 2.3.4)."""
    return (own > other) + (own >= other)


# --- the month's rows -------------------------------------------------------------------------


@plain_njit
def is_rated(rated, row):
    """Whether a row's game is rated, from the `rated` column's (bits, offset) (rule 1.3)."""
    bits, offset = rated
    return bit_at(bits, offset + row)


@plain_njit
def elimination_year(eliminated_year, row):
    """A row's eliminated_year, 0 where null, from the column's (values, validity bitmap (empty
    without nulls), offset); read for every row, as a branch on the result would mispredict."""
    values, validity, offset = eliminated_year
    given = validity.size == 0 or bit_at(validity, offset + row) == 1
    return values[np.uint64(row)] * np.int64(given)


@plain_njit
def write_finish_values(first, end, supply_centres, finish_columns, finish, at):
    """The finish values of a game's powers, rows first..end-1, to finish[at:] (rule 2.3):
    category·2^41 + key. `finish_columns`: result as (offsets, bytes), centres, and
    eliminated_year as elimination_year reads it. Returns whether every key fit_packed (else
    unpacked_finish_values gives the game's values)."""
    (result_offsets, result_data), centres, eliminated_year = finish_columns
    powers = end - first
    small = True
    for k in range(first, end):
        # Indexed with unsigned integers, which numba compiles without its test for a negative
        # index on every access.
        row, out = np.uint64(k), np.uint64(at + k - first)
        category = result_category(result_data, result_offsets[row], result_offsets[row + np.uint64(1)])
        key = finish_key(category, centres[row], elimination_year(eliminated_year, k), powers, supply_centres)
        # Packed as the row is read, sparing a second pass over the game.
        small &= fits_packed(key)
        finish[out] = category * (2 * _KEY_LIMIT) + key
    return small


@numpy_division_njit
def unpacked_finish_values(first, end, supply_centres, finish_columns, finish, at):
    """write_finish_values for a game with a finish key that does not fit_packed."""
    (result_offsets, result_data), centres, eliminated_year = finish_columns
    powers = end - first
    category = np.empty(powers, np.int64)
    key = np.empty(powers, np.int64)
    for k in range(powers):
        row = first + k
        category[k] = result_category(result_data, result_offsets[row], result_offsets[row + 1])
        key[k] = finish_key(category[k], centres[row], elimination_year(eliminated_year, row), powers, supply_centres)
    finish_values(category, key, 0, powers, finish[at : at + powers])


@numpy_division_njit
def parse_month(game_id, result, player_id, rated, day, supply_centres, centres, eliminated_year):
    """The month's rated games from its rows (GAME_COLUMNS in processing order): the string
    columns as Arrow (offsets, bytes), `rated` as its Arrow (bits, offset) (no nulls),
    eliminated_year as (values, validity bitmap (empty without nulls), the bitmap's offset). A
    game is a run of rows with the same game_id, and is rated when its first row is (rule 1.3).

    Returns game_start (into the kept rows), game_day, whether each row is kept (belongs to a
    rated game), per kept row its finish value (rule 2.3), the most results the month's
    newcomers could collect, and, when some rows are not kept, the kept rows' game ids and
    player ids ((offsets, bytes) each) and days for the history (empty arrays otherwise).
    """
    rows = day.size
    game_start = np.empty(rows + 1, np.int64)
    game_day = np.empty(rows, np.int64)
    keep = np.zeros(rows, np.bool_)
    finish = np.empty(rows, np.int64)
    kept_day = np.empty(rows, np.int32)
    finish_columns = (result, centres, eliminated_year)
    games = 0
    kept = 0
    results_needed = 0
    r = 0
    while r < rows:
        end = run_end(game_id[0], game_id[1], r, rows)
        if is_rated(rated, r):
            game_start[games] = kept
            game_day[games] = day[r]
            games += 1
            first = kept
            kept += end - r
            # A game's rows share its day and map.
            if not write_finish_values(r, end, supply_centres[r], finish_columns, finish, first):
                unpacked_finish_values(r, end, supply_centres[r], finish_columns, finish, first)
            for k in range(end - r):
                keep[np.uint64(r + k)] = True
                kept_day[np.uint64(first + k)] = day[r]
            results_needed += (end - r) * (end - r - 1)  # each power against every other
        r = end
    game_start[games] = kept

    # The history's ids and days are copied here, while the rows are at hand, when rows were
    # dropped: a separate pass would read the columns again.
    if kept < rows:
        game_ids = kept_string_buffers(game_id[0], game_id[1], keep)
        player_ids = kept_string_buffers(player_id[0], player_id[1], keep)
        days = kept_day[:kept]
    else:
        game_ids = player_ids = (np.zeros(1, np.int32), np.zeros(0, np.uint8))
        days = kept_day[:0]
    return game_start[: games + 1], game_day[:games], keep, finish[:kept], results_needed, game_ids, player_ids, days


# --- newcomers' collected results (rule 2.6) --------------------------------------------------


@njit(cache=True, inline="always")
def collect(rec, score, opponent, collected, used):
    """Append one result (doubled score, the opponent's rating) to a newcomer's collection, at
    row `used` of `collected`; returns the next free row."""
    row = collected[used]
    row.previous = rec.collected_last
    row.score = score
    row.opponent = opponent
    rec.collected_last = used
    rec.collected_count += 1
    rec.collected_score += score
    return used + 1


@plain_njit
def collected_opponents(rec, collected, out):
    """A collection's opponent ratings, in the order they were gathered, to the start of `out`."""
    row = rec.collected_last
    for k in range(rec.collected_count - 1, -1, -1):
        out[k] = collected[row].opponent
        row = collected[row].previous


@plain_njit
def first_rating(score, opponents, powers, ten):
    """The Erstzahl (rule 2.6): R ← R + (P − We(R))·800/(20 + n) from 1600, unrounded, until the
    integer part (floor) of two successive values is the same; that integer.

    Only that integer is kept, so the steps need not give the reference's floats to the bit,
    only the same floors: they are first taken with one power per step
    (_first_rating_by_products), and taken as the reference takes them
    (_first_rating_by_powers) only when those cannot vouch for every floor. `powers`: room for
    a float per opponent."""
    rating, vouched = _first_rating_by_products(score, opponents, powers, ten)
    return rating if vouched else _first_rating_by_powers(score, opponents, ten)


@plain_njit
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


@plain_njit
def _first_rating_by_products(score, opponents, powers, ten):
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


@njit(cache=True, inline="always")
def clear_pending(rec):
    """No results waiting (rule 2.5)."""
    rec.pending_count = 0
    for slot in range(PENDING_SLOTS):
        rec.pending_score[slot] = 0
        rec.pending_opponent[slot] = 0


@njit(cache=True, inline="always")
def set_rating(rec, rated, rating, evaluations, last_evaluated, rated_since, keeps_until):
    """The record's rating anew, with nothing waiting or collected (the collection's rows are
    left for the next month's copy to drop)."""
    rec.rated = rated
    rec.rating = rating
    rec.evaluations = evaluations
    rec.last_evaluated = last_evaluated
    rec.rated_since = rated_since
    rec.keeps_until = keeps_until
    clear_pending(rec)
    rec.collected_count = 0
    rec.collected_score = 0
    rec.collected_last = -1


@njit(cache=True, inline="always")
def strike_off(rec):
    """No rating any more (rules 1.5, 4.4): a newcomer again, with nothing waiting or collected."""
    set_rating(rec, False, 0, 0, NO_DAY, NO_DAY, NO_DAY)


@njit(cache=True, inline="always")
def establish(rec, rating, evaluations, day, last_evaluated, keeps_until):
    """A new rating given on `day` (1600-0 at start, or the Erstzahl), standing until
    `keeps_until` (two years after `day`)."""
    set_rating(rec, True, rating, evaluations, last_evaluated, day, keeps_until)


@njit(cache=True, inline="always")
def strike_off_expired(rec, day):
    """Strike off a rating that has stood two years without an evaluation on `day` (rules 1.5, 4.4)."""
    if rec.keeps_until != NO_DAY and day > rec.keeps_until:
        strike_off(rec)


@numpy_division_njit
def start_clocks(records, clock_day):
    """Start the strike-off clock on `clock_day` of every rating that has none (an existing
    list's entries, in the first month with games)."""
    for p in range(records.size):
        rec = records[p]
        if rec.rated and rec.keeps_until == NO_DAY:
            rec.rated_since = clock_day
            rec.keeps_until = add_years(clock_day, STRIKE_OFF_YEARS)


# --- the month's history rows ----------------------------------------------------------------
# rate_month's history: rows of its floats, integers and flags (see there).
_BEFORE, _AFTER, _SCORE, _NIVEAU, _EXPECTED, _PERFORMANCE = range(6)
_OPPONENTS, _EVALUATIONS = range(2)
_POOLED, _BEFORE_GIVEN, _AFTER_GIVEN, _NIVEAU_GIVEN, _EXPECTED_GIVEN, _PERFORMANCE_GIVEN, _EVALUATIONS_GIVEN = range(7)


@numpy_division_njit
def empty_history(rows):
    """The month's history columns (floats, integers, flags), every value unset."""
    return np.zeros((6, rows), np.float64), np.zeros((2, rows), np.int64), np.zeros((7, rows), np.bool_)


@njit(cache=True, inline="always")
def write_game_results(history, r, doubled, opponent_sum, m):
    """Row r's score, opponents and niveau from the game's `m` results alone (doubled points,
    opponents' ratings)."""
    floats, integers, flags = history
    floats[_SCORE, r] = doubled * 0.5
    integers[_OPPONENTS, r] = m
    if m > 0:
        floats[_NIVEAU, r] = niveau(opponent_sum, m)
        flags[_NIVEAU_GIVEN, r] = True


@njit(cache=True, inline="always")
def write_rated_player(history, r, rating, expected, evaluations):
    """Row r's rating before the game, expected points and evaluations, of a rated player."""
    floats, integers, flags = history
    floats[_BEFORE, r] = rating
    floats[_EXPECTED, r] = expected
    integers[_EVALUATIONS, r] = evaluations
    flags[_BEFORE_GIVEN, r] = True
    flags[_EXPECTED_GIVEN, r] = True
    flags[_EVALUATIONS_GIVEN, r] = True


@njit(cache=True, inline="always")
def write_evaluation(history, r, rating, tally, performance, pooled, evaluations):
    """Row r's columns when its results are evaluated: the new rating, and the points,
    opponents, niveau, expected points (the tally: doubled P, n, Σ opponents' ratings, We) and
    performance over all the results evaluated."""
    floats, integers, flags = history
    doubled, count, opponent_sum, expected = tally
    floats[_AFTER, r] = rating
    floats[_SCORE, r] = doubled * 0.5
    floats[_NIVEAU, r] = niveau(opponent_sum, count)
    floats[_EXPECTED, r] = expected
    floats[_PERFORMANCE, r] = performance
    integers[_OPPONENTS, r] = count
    integers[_EVALUATIONS, r] = evaluations
    flags[_POOLED, r] = pooled
    for given in range(_AFTER_GIVEN, _EVALUATIONS_GIVEN + 1):  # rating_after .. evaluations are given
        flags[given, r] = True


# --- a game -----------------------------------------------------------------------------------
# A game's powers in rate_month: `standing`, per power in power order, whether it held a
# rating before the game, that rating and its place among the rated powers; `rated`, per rated
# power in power order, its rating, finish value, and Σ W, doubled points and Σ opponents'
# ratings of its results against the other rated powers.


@numpy_division_njit
def game_powers(widest, collections):
    """Room for the standing and the rated powers of a game of up to `widest` powers, and for a
    newcomer's collection of up to `collections` results (take_first_rating)."""
    standing = (np.zeros(widest, np.bool_), np.zeros(widest, np.int64), np.zeros(widest, np.int64))
    rated = (
        np.zeros(widest, np.int64),
        np.zeros(widest, np.int64),
        np.zeros(widest, np.float64),
        np.zeros(widest, np.int64),
        np.zeros(widest, np.int64),
    )
    return standing, rated, (np.empty(collections, np.int64), np.empty(collections, np.float64))


@njit(cache=True, inline="always")
def ratings_before_game(game, players, records, start_newcomers, standing):
    """Each power's rating before the game into `standing`: a rating expired on the game's day
    is struck off first (rules 1.5, 4.4); with `start_newcomers` a newcomer holds 1600-0 before
    the game is evaluated, so is a rated opponent in it (seed example 1)."""
    lo, hi, day, keeps = game
    has_rating, rating, _slot = standing
    for i in range(hi - lo):
        rec = records[players[lo + i]]
        strike_off_expired(rec, day)
        if not rec.rated and start_newcomers:
            establish(rec, START_RATING, 0, day, NO_DAY, keeps)
        has_rating[i] = rec.rated
        rating[i] = rec.rating


@njit(cache=True, inline="always")
def rated_powers(game, finish, standing, rated):
    """The game's rated powers, in power order, into `rated` (their sums zero) and their places
    into `standing`: opponents without a rating do not count (rule 2.3). Returns how many."""
    lo, hi, _day, _keeps = game
    has_rating, before, slot = standing
    rating, rated_finish, expected, score, opponent_sum = rated
    n = 0
    for i in range(hi - lo):
        if has_rating[i]:
            slot[i] = n
            rating[n] = before[i]
            rated_finish[n] = finish[lo + i]
            expected[n] = 0.0
            score[n] = 0
            opponent_sum[n] = 0
            n += 1
    return n


@njit(cache=True, inline="always")
def game_expectations(game, players, records, standing, rated, n, w):
    """Σ W (rule 2.1), doubled points (rule 2.3) and Σ opponents' ratings of each of the `n`
    rated powers: over the waiting results first when they are evaluated with this game's
    (rule 2.5), then this game's opponents in power order. `w`: (the W table, TEN)."""
    lo, hi, _day, _keeps = game
    has_rating, before, slot = standing
    expected = rated[2]
    w_table, ten = w
    for i in range(hi - lo):
        if has_rating[i]:
            rec = records[players[lo + i]]
            waiting = np.int64(rec.pending_count)
            if waiting + n - 1 >= MIN_RESULTS:
                for t in range(waiting):
                    expected[slot[i]] += whole_expectation(before[i], rec.pending_opponent[t], w_table, ten)
    add_game_results(n, rated, w)


@njit(cache=True, inline="always")
def add_game_results(n, rated, w):
    """Add each of a game's n rated powers' results against the others, in power order: W to
    its Σ W, doubled points to its score, the opponents' ratings to its Σ opponents' ratings."""
    rating, finish, expected, score, opponent_sum = rated
    w_table, ten = w
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


@njit(cache=True, inline="always")
def results_wait(rec, n):
    """Whether a rated player's results from a game of `n` rated powers wait for the next game:
    fewer than three with those already waiting (rule 2.5)."""
    return rec.pending_count + n - 1 < MIN_RESULTS


@njit(cache=True, inline="always")
def wait_results(rec, r, slot, n, rated, history):
    """A rated player's results against the game's other rated powers, in power order, added to
    those waiting (rule 2.5) and written as row r's, W summed over them alone. `slot`: the
    player's place among the game's `n` rated powers."""
    rating, finish, expected, score, opponent_sum = rated
    t = rec.pending_count
    for a in range(n):
        if a != slot:
            rec.pending_score[t] = doubled_score(finish[slot], finish[a])
            rec.pending_opponent[t] = rating[a]
            t += 1
    rec.pending_count = t
    write_game_results(history, r, score[slot], opponent_sum[slot], n - 1)
    write_rated_player(history, r, rating[slot], expected[slot], rec.evaluations)


@njit(cache=True, inline="always")
def evaluate_results(rec, r, slot, n, game, rated, history):
    """A rated player's new DiWZ from the waiting results and the game's, evaluated together
    (rules 2.4, 2.5), written as row r's. `slot`: the player's place among the game's `n`
    rated powers."""
    _lo, _hi, day, keeps = game
    rating, _finish, expected, score, opponent_sum = rated
    old = rating[slot]
    waiting = np.int64(rec.pending_count)
    doubled = 0
    opponents = 0
    for t in range(waiting):
        doubled += rec.pending_score[t]
        opponents += rec.pending_opponent[t]
    count = waiting + n - 1
    tally = (doubled + score[slot], count, opponents + opponent_sum[slot], expected[slot])
    te = performance(old, tally)
    rec.rating = new_rating(old, te, count)
    rec.evaluations += 1
    write_rated_player(history, r, old, expected[slot], rec.evaluations)
    write_evaluation(history, r, rec.rating, tally, te, waiting > 0, rec.evaluations)
    rec.last_evaluated = day
    rec.keeps_until = keeps
    clear_pending(rec)


@njit(cache=True, inline="always")
def collect_newcomer_results(rec, r, own, n, rated, collected, used, history):
    """A newcomer's results against the game's `n` rated powers, in power order, added to its
    collection (rule 2.6: only results against rated opponents are collected) and written as
    row r's game results; returns the next free row of `collected`."""
    rating, finish = rated[0], rated[1]
    doubled = 0
    opponent_sum = 0
    for a in range(n):
        score = doubled_score(own, finish[a])
        used = collect(rec, score, rating[a], collected, used)
        doubled += score
        opponent_sum += rating[a]
    write_game_results(history, r, doubled, opponent_sum, n)
    return used


@njit(cache=True, inline="always")
def first_rating_due(rec, n):
    """Whether a newcomer with new results from a game of `n` rated opponents takes its
    Erstzahl: at least five results collected, neither 0% nor 100% of the points (rule 2.6)."""
    count = np.int64(rec.collected_count)
    doubled = np.int64(rec.collected_score)
    return n > 0 and count >= MIN_FIRST_RESULTS and doubled != 0 and doubled != 2 * count


@plain_njit
def take_first_rating(rec, r, n, game, collected, room, history, w):
    """The newcomer's Erstzahl from every collected result (rule 2.6), written to row r with W,
    TE and niveau over them (pooled when earlier games' results are among them); the rating
    is given on the game's day. `room`: two arrays (int64 and float64) with room for the collection.
    """
    _lo, _hi, day, keeps = game
    w_table, ten = w
    opponent_room, power_room = room
    count = np.int64(rec.collected_count)
    doubled = np.int64(rec.collected_score)
    collected_opponents(rec, collected, opponent_room)
    opponents = opponent_room[:count]
    first = first_rating(doubled * 0.5, opponents, power_room, ten)
    expected = 0.0
    opponent_sum = 0
    for opponent in opponents:
        expected += whole_expectation(first, opponent, w_table, ten)
        opponent_sum += opponent
    tally = (doubled, count, opponent_sum, expected)
    write_evaluation(history, r, first, tally, performance(first, tally), count > n, 1)
    establish(rec, first, 1, day, day, keeps)


# --- the month --------------------------------------------------------------------------------


@numpy_division_njit
def rate_month(games, records, collected, used, month, w):
    """Apply one month's rated games in the order they ended (rule 1.4), then strike off the
    ratings expired at the month's end (rules 1.5, 4.4).

    `games`: (game_start, game_day, finish, players) as parse_month and the numbering give
    them. `records` and `collected` are changed in place (the caller passes its own copies);
    rows of `collected` from `used` on are free, at least as many as the month's newcomers could
    collect. `month`: (start_newcomers: a newcomer gets 1600-0 before its game is evaluated
    (start_1600 and the bootstrap month); clock_day: when not NO_DAY, the day the strike-off
    clock of every rating without one starts (an existing list, in the first month with games);
    the month's last day). `w`: (the W table, TEN).

    Returns the history columns, one row per game row, as three arrays: floats (rating_before,
    rating_after, score, niveau, expected, performance), integers (opponents, evaluations) and
    flags (pooled, then whether rating_before, rating_after, niveau, expected, performance and
    evaluations are given).
    """
    _game_start, _game_day, _finish, players = games
    start_newcomers, clock_day, month_end = month
    history = empty_history(players.size)
    if clock_day != NO_DAY:
        start_clocks(records, clock_day)
    powers = game_powers(longest_run(games[0], games[1].size), collected.size)
    rate_games(games, records, collected, used, (start_newcomers, month_days(month_end)), powers, history, w)
    for p in range(records.size):
        strike_off_expired(records[p], month_end)
    return history


@plain_njit
def rate_games(games, records, collected, used, month, powers, history, w):
    """The month's games in the order they ended (rule 1.4), as rate_month describes; `month`:
    (start_newcomers, month_days), `powers`: room for a game's (game_powers)."""
    game_start, game_day, finish, players = games
    start_newcomers, days = month
    standing, rated, room = powers
    has_rating, _before, slot = standing
    for g in range(game_day.size):
        day = game_day[g]
        game = (game_start[g], game_start[g + 1], day, stands_until(day, days))
        ratings_before_game(game, players, records, start_newcomers, standing)
        n = rated_powers(game, finish, standing, rated)
        game_expectations(game, players, records, standing, rated, n, w)
        for r in range(game_start[g], game_start[g + 1]):
            i = r - game_start[g]
            rec = records[players[r]]
            if has_rating[i] and results_wait(rec, n):
                wait_results(rec, r, slot[i], n, rated, history)
                continue
            if has_rating[i]:
                evaluate_results(rec, r, slot[i], n, game, rated, history)
                continue
            used = collect_newcomer_results(rec, r, finish[r], n, rated, collected, used, history)
            if first_rating_due(rec, n):
                take_first_rating(rec, r, n, game, collected, room, history, w)


# --- the month's list -------------------------------------------------------------------------


# "00", "01", ..., "99": a value's decimal digits are written two at a time.
_DIGIT_PAIRS = np.array([ord(c) for k in range(100) for c in f"{k:02d}"], dtype=np.uint8)
_TEN, _HUNDRED, _THOUSAND = np.uint64(10), np.uint64(100), np.uint64(1000)


@plain_njit
def _write_int(buffer, at, value):
    """Write the decimal form of an int64 at buffer[at:]; returns the index after it.

    The list writes two such numbers for every player every month: the digits are counted by
    comparisons and written in pairs from a table, with unsigned division by 100 (a multiply),
    rather than a digit at a time with Python's signed floor division."""
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


_LONGEST_ENTRY = 41  # the longest display string: two int64 values (20 characters each) and "-"


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
    # write every player and count the listed ones (a branch on `rated` would mispredict about
    # every other player).
    at_rank = np.empty(count, np.int64)  # by place in id order: the player number, or -1
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


# --- collections across months and checkpoints ------------------------------------------------


@numpy_division_njit
def flatten_collections(records, count, collected):
    """Every player's collected results, player after player, each in the order gathered:
    doubled scores and opponents' ratings."""
    total = 0
    for p in range(count):
        total += records[p].collected_count
    scores = np.empty(total, np.int8)
    opponents = np.empty(total, np.int64)
    end = 0
    for p in range(count):
        end += records[p].collected_count
        row = records[p].collected_last
        for at in range(end - 1, end - 1 - records[p].collected_count, -1):
            scores[at] = collected[row].score
            opponents[at] = collected[row].opponent
            row = collected[row].previous
    return scores, opponents


@numpy_division_njit
def linked_collections(records, count, scores, opponents, room):
    """The inverse of flatten_collections: `collected` holding every player's results (as many
    as each record's collected_count), followed by `room` free rows; sets each record's
    collected_last and collected_score."""
    collected = np.empty(scores.size + room, COLLECTED)
    at = 0
    for p in range(count):
        rec = records[p]
        rec.collected_last = -1
        rec.collected_score = 0
        for _ in range(rec.collected_count):
            row = collected[at]
            row.previous = rec.collected_last
            row.score = scores[at]
            row.opponent = opponents[at]
            rec.collected_last = at
            rec.collected_score += scores[at]
            at += 1
    return collected
