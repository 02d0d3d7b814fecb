"""Compiled monthly work of the club rating (SPEC §3.2, seed 002 "Rankings Explained") over integer-coded arrays.

The rule text's steps, and the functions that take them (club_month calls them in this order):
  W, D, GP ("W = Wins, D = Draws, GP = Games Played"; a solo is a win, a draw member
      draws, anything else a loss: SPEC §3.2)                         _result_code, _count_results
  "Winning Percentage W% = (W + ½D) / GP"                             scaled_win_pct, _schedule_sums
  "Strength of Schedule S = (average of all opponents' W%)"           _schedule_sums, exact_ratio
  "Win points P = (log10 (W + ½D + 1))" and
  "R = (P * (W% + S)/2) * 100", plus the "legacy points"             _rating, _rate_listed
  the table, by rating and then player id (SPEC §3.2)                 _listed_by_id, _by_rating,
                                                                      _ids_in_order, _table_columns
The legacy itself, 10% of last year's final rating, is set when a year opens (rules.opened_year).

Players are the dense numbers of pipeline.systems.kernels.numbering, their ids Arrow-style
offsets and bytes, and every player in id order (pipeline.systems.kernels.sort), so the table
is ordered without a Python object per row. The year's rows are kept as player numbers grouped
by game (game g owns rows starts[g]:starts[g + 1]), and every month end recomputes the
year-to-date table in one call, O(rows of the year + players).

Exactness. W% is the float (2W + D) / 2GP, rounded once, as the reference computes it. S is the
mean of the opponents' W% floats over every (game, opponent) pair, summed exactly and rounded
once (the reference sums them as fractions). Every W% float with GP < 2**31 is a whole multiple
of 2**-SCALE_BITS, so the sum T is an exact unsigned 128-bit integer (two uint64 limbs), and
S = T / (pairs × 2**SCALE_BITS) is rounded to nearest, ties to even, from the exact integer
quotient and remainder (a float estimate, corrected in integer arithmetic). A player holds one
power per game, so T_i = Σ over i's games of the game's total W%, minus GP_i × W%_i: two passes
over the year's rows. P = log10(W + D/2 + 1) comes from a table
filled by Python's math.log10, and base = P × (W% + S) / 2 × 100 is evaluated in that order, so
every float equals the reference's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from pipeline.systems.kernels.ids import is_name, name_words, run_end, string_words
from pipeline.systems.kernels.sort import extend_id_order, stable_order

WIN, DRAW, LOSS = 0, 1, 2  # result codes: solo, draw member, anything else (SPEC §3.2 decision)
WINS, DRAWS, LOSSES, PAIRS = 0, 1, 2, 3  # columns of a player's record (a result code counts in its column)
SCALE_BITS = 96  # W% floats as integers in units of 2**-96 (exact for any W% >= 2**-43)
MAX_COUNT = 2**31 - 1  # opponent pairs (so also games) of one player in one year: T stays below 2**128

# Limbs of the 128-bit arithmetic: 0, 1, the low half's mask, and the shifts.
_ZERO, _ONE, _LOW32 = np.uint64(0), np.uint64(1), np.uint64(0xFFFFFFFF)
_B32, _B64, _B56 = np.uint64(32), np.uint64(64), np.uint64(56)
_SCALE = 2.0**SCALE_BITS
_TWO64 = 2.0**64
_TWO_M64 = 2.0**-64
_LOWEST_POWER = -SCALE_BITS - 90  # exact_ratio scales its result by 2**(-179..-21)
_POWERS_OF_TWO = np.array([2.0**k for k in range(_LOWEST_POWER, 0)])
_SOLO_NAME, _DRAW_NAME = name_words("solo"), name_words("draw")
_LETTERS = np.frombuffer(b"WDL", np.uint8)  # the history's `result` letter of each result code


# --- exact arithmetic --------------------------------------------------------------------------


@njit(cache=True)
def scaled_win_pct(points2: int, games2: int) -> tuple[float, np.uint64, np.uint64]:
    """W% = points2 / games2 as a float, and that float × 2**SCALE_BITS exactly as (high, low) limbs.

    Scaling by a power of two is exact, and so is splitting the (integral) result at 2**64.
    """
    pct = points2 / games2
    scaled = pct * _SCALE
    high = np.uint64(scaled * _TWO_M64)
    return pct, high, np.uint64(scaled - float(high) * _TWO64)


@njit(cache=True)
def _add(high: np.uint64, low: np.uint64, add_high: np.uint64, add_low: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(high, low) + (add_high, add_low) in 128 bits."""
    total = low + add_low
    high = high + add_high
    if total < low:
        high += _ONE
    return high, total


@njit(cache=True)
def _sub(high: np.uint64, low: np.uint64, sub_high: np.uint64, sub_low: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(high, low) - (sub_high, sub_low) in 128 bits (never negative here)."""
    rest = low - sub_low
    high = high - sub_high
    if low < sub_low:
        high -= _ONE
    return high, rest


@njit(cache=True)
def _mul_small(high: np.uint64, low: np.uint64, factor: int) -> tuple[np.uint64, np.uint64]:
    """(high, low) × factor for factor < 2**31 and a product below 2**128."""
    k = np.uint64(factor)
    below = (low & _LOW32) * k
    above = (low >> _B32) * k
    product_low = below + (above << _B32)
    carry = above >> _B32
    if product_low < below:
        carry += _ONE
    return high * k + carry, product_low


@njit(cache=True)
def _bit_length(value: np.uint64) -> int:
    """Number of bits of a uint64 (0 for 0)."""
    return 64 - leading_zeros(value)  # type: ignore[call-arg]  # a numba intrinsic, typed when compiled


@njit(cache=True)
def exact_ratio(high: np.uint64, low: np.uint64, count: int) -> float:
    """(high × 2**64 + low) / (count × 2**SCALE_BITS) correctly rounded (to nearest, ties to even).

    count is 1..MAX_COUNT. The dividend is scaled by 2**shift so the quotient q lies in
    [2**55, 2**57); bits shifted out and the division's remainder only matter as "sticky".
    """
    if high == _ZERO and low == _ZERO:
        return 0.0
    divisor = np.uint64(count)
    dividend_bits = 64 + _bit_length(high) if high else _bit_length(low)
    shift = 56 + _bit_length(divisor) - dividend_bits  # -71..86
    sticky = False
    if shift >= 64:
        high, low = low << np.uint64(shift - 64), _ZERO
    elif shift > 0:
        s = np.uint64(shift)
        high, low = (high << s) | (low >> (_B64 - s)), low << s
    elif shift < 0 and shift > -64:
        s = np.uint64(-shift)
        sticky = (low & ((_ONE << s) - _ONE)) != _ZERO
        high, low = high >> s, (low >> s) | (high << (_B64 - s))
    elif shift <= -64:
        s = np.uint64(-shift - 64)
        sticky = low != _ZERO or (high & ((_ONE << s) - _ONE)) != _ZERO
        high, low = _ZERO, high >> s
    # The dividend D now has at most 87 bits and q = D // divisor < 2**57. A float estimate is
    # within 40 of q, so D - estimate × divisor is below 2**63 in size: its low 64 bits, read as
    # a signed number, are exact; a float division of that remainder corrects the estimate to
    # within one, and a last step settles it.
    quotient = np.int64((float(high) * _TWO64 + float(low)) / float(divisor))
    step = np.int64(divisor)
    remainder = np.int64(low - np.uint64(quotient) * divisor)
    correction = np.int64(np.floor(float(remainder) / float(step)))
    quotient += correction
    remainder -= correction * step
    if remainder < 0:
        remainder += step
        quotient -= 1
    elif remainder >= step:
        remainder -= step
        quotient += 1
    quotient = np.uint64(quotient)  # type: ignore[assignment]  # numba gives the name its new type
    sticky = sticky or remainder != 0
    dropped = 4 if quotient >> _B56 else 3  # bits below the 53 kept
    mantissa = quotient >> np.uint64(dropped)
    rest = quotient & ((_ONE << np.uint64(dropped)) - _ONE)
    half = _ONE << np.uint64(dropped - 1)
    if rest > half or (rest == half and (sticky or (mantissa & _ONE) == _ONE)):
        mantissa += _ONE
    return float(mantissa) * _POWERS_OF_TWO[dropped - shift - SCALE_BITS - _LOWEST_POWER]


# --- the month, in the rule's steps --------------------------------------------------------------


@njit(cache=True)
def _result_code(offsets: np.ndarray, data: np.ndarray, r: int) -> np.int64:
    """W, D or L of a result (SPEC §3.2): WIN for "solo", DRAW for "draw", LOSS for anything
    else (no branch on the bytes: kernels.ids.string_words)."""
    words = string_words(data, offsets[r], offsets[r + 1])
    return (
        LOSS
        - np.int64(is_name(words, _SOLO_NAME)) * (LOSS - WIN)
        - np.int64(is_name(words, _DRAW_NAME)) * (LOSS - DRAW)
    )


@njit(cache=True)
def _group_games(
    offsets: np.ndarray, data: np.ndarray, rows: int, row_base: int, starts: np.ndarray, first: int
) -> int:
    """Write the year offsets of the month's games from starts[first + 1] on, from the rows'
    game ids (Arrow string buffers; a game's rows are consecutive); returns the number of games."""
    games, r = 0, 0
    while r < rows:
        r = run_end(offsets, data, r, rows)
        games += 1
        starts[first + games] = row_base + r
    return games


@njit(cache=True)
def _ratings_of(players: np.ndarray, rating: np.ndarray) -> np.ndarray:
    """Each row's player's rating (NaN: not in the table)."""
    out = np.empty(players.shape[0])
    for r in range(players.shape[0]):
        out[r] = rating[players[r]]
    return out


@njit(cache=True)
def _count_results(month, players, starts, row_base, records, members, n_members, letters):
    """W, D and GP: each row's result (as its letter) added to its player's record with the
    game's other players as opponent pairs, the games being year rows starts[g]:starts[g + 1]
    (the month's rows from row_base on); a player's first game of the year makes them a
    member. Returns (members, whether a record passed MAX_COUNT: it stops there)."""
    result_offsets, result_data = month.result_offsets, month.result_data
    for g in range(starts.shape[0] - 1):
        first, stop = starts[g], starts[g + 1]
        for r in range(first - row_base, stop - row_base):
            player = players[r]
            if records[player, WINS] == 0 and records[player, DRAWS] == 0 and records[player, LOSSES] == 0:
                members[n_members] = player
                n_members += 1
            result = _result_code(result_offsets, result_data, r)
            letters[r] = _LETTERS[result]
            records[player, result] += 1
            opponents = np.int64(records[player, PAIRS]) + (stop - first - 1)
            if opponents > MAX_COUNT:
                return n_members, True
            records[player, PAIRS] = opponents
    return n_members, False


@njit(cache=True)
def _schedule_sums(
    year_players: np.ndarray,
    year_starts: np.ndarray,
    records: np.ndarray,
    members: np.ndarray,
    values: np.ndarray,
    limbs: np.ndarray,
) -> None:
    """W% and the sums behind S, for the year's players (members): values[:, 0] = W%
    ("Winning Percentage W% = (W + ½D) / GP"); limbs[:, 0:2] = the scaled W% and limbs[:, 2:4]
    = U, the exact Σ over the player's games of the game's total scaled W%."""
    for player in members:
        wins, draws, losses = np.int64(records[player, WINS]), records[player, DRAWS], records[player, LOSSES]
        values[player, 0], limbs[player, 0], limbs[player, 1] = scaled_win_pct(
            2 * wins + draws, 2 * (wins + draws + losses)
        )
        limbs[player, 2] = _ZERO
        limbs[player, 3] = _ZERO
    for g in range(len(year_starts) - 1):
        first, stop = year_starts[g], year_starts[g + 1]
        game_high, game_low = _ZERO, _ZERO
        for r in range(first, stop):
            player = year_players[r]
            game_high, game_low = _add(game_high, game_low, limbs[player, 0], limbs[player, 1])
        for r in range(first, stop):
            player = year_players[r]
            limbs[player, 2], limbs[player, 3] = _add(limbs[player, 2], limbs[player, 3], game_high, game_low)


@njit(cache=True)
def _rating(player: int, records: np.ndarray, legacy: np.ndarray, work) -> float:
    """One player's rating: "R = (P * (W% + S)/2) * 100" plus the legacy points ("10% of your
    rating from last year"). "Win points P = log10(W + ½D + 1)" and "Strength of Schedule S =
    average of all opponents' W%", S exact from the sums of _schedule_sums. Sets
    work.values[player, 1:4] = P, S, base (W% and S NaN without a game)."""
    log_points, values, limbs = work
    wins, draws = np.int64(records[player, WINS]), records[player, DRAWS]
    games = wins + draws + records[player, LOSSES]
    values[player, 1] = log_points[2 * wins + draws]
    carried = 0.0 if np.isnan(legacy[player]) else legacy[player]
    if games == 0:
        values[player, 0], values[player, 2], values[player, 3] = np.nan, np.nan, 0.0
        return carried
    # T = U − GP × the player's own scaled W%: the opponents' part of the player's games.
    own_high, own_low = _mul_small(limbs[player, 0], limbs[player, 1], games)
    total_high, total_low = _sub(limbs[player, 2], limbs[player, 3], own_high, own_low)
    strength = exact_ratio(total_high, total_low, records[player, PAIRS])
    base = values[player, 1] * (values[player, 0] + strength) / 2 * 100
    values[player, 2], values[player, 3] = strength, base
    return base + carried


@njit(cache=True)
def _rate_listed(year_members: np.ndarray, people, work) -> tuple[int, int]:
    """The month-end ratings: every listed player's (played last year, so holding legacy
    points, or this year) into last_rating, the previous table's players unlisted first.
    Returns (listed players, the most games a player has this year)."""
    records, legacy, legacy_players, last_rating, table_players = people
    for player in table_players:
        last_rating[player] = np.nan
    listed = 0
    for player in legacy_players:
        last_rating[player] = _rating(player, records, legacy, work)
        listed += 1
    max_games = 0
    for player in year_members:
        max_games = max(max_games, np.int64(records[player, WINS]) + records[player, DRAWS] + records[player, LOSSES])
        if np.isnan(legacy[player]):
            last_rating[player] = _rating(player, records, legacy, work)
            listed += 1
    return listed, max_games


@njit(cache=True)
def _listed_by_id(id_order: np.ndarray, n_players: int, rating: np.ndarray, listed: int) -> np.ndarray:
    """The `listed` players with a rating, in id order."""
    out = np.empty(listed, np.int32)
    k = 0
    for position in range(n_players):
        player = id_order[position]
        if not np.isnan(rating[player]):
            out[k] = player
            k += 1
    return out


@njit(cache=True)
def _by_rating(players: np.ndarray, rating: np.ndarray) -> np.ndarray:
    """The table order (SPEC §3.2): players (in id order) stably sorted by rating descending.

    Ratings are >= 0, whose float bit patterns order like the numbers; complemented, ascending
    patterns are descending ratings. The players are sorted by the patterns' high 32 bits, then
    runs that tie there (equal ratings, in practice) by the low 32 bits, stably.
    """
    n = len(players)
    floats = np.empty(n)
    for k in range(n):
        floats[k] = rating[players[k]] + 0.0  # no -0.0
    patterns = floats.view(np.uint64)
    high = np.empty(n, np.int64)
    for k in range(n):
        patterns[k] = ~patterns[k]
        high[k] = np.int64(patterns[k] >> _B32)
    order = stable_order(high)
    src = players[order]
    keys = patterns[order]
    first = 0
    while first < n:
        stop, mixed = first + 1, False
        while stop < n and (keys[stop] >> _B32) == (keys[first] >> _B32):
            mixed = mixed or keys[stop] != keys[first]
            stop += 1
        if mixed:
            run = stable_order((keys[first:stop] & _LOW32).astype(np.int64))
            src[first:stop] = src[first:stop][run]
        first = stop
    return src


@njit(cache=True)
def _ids_in_order(order: np.ndarray, id_offsets: np.ndarray, id_data: np.ndarray):
    """The ids of the players in `order` as Arrow string offsets and bytes."""
    ids = np.empty(order.shape[0] + 1, np.int32)
    ids[0] = 0
    for position in range(order.shape[0]):
        player = order[position]
        ids[position + 1] = ids[position] + id_offsets[player + 1] - id_offsets[player]
    id_bytes = np.empty(ids[order.shape[0]], np.uint8)
    for position in range(order.shape[0]):
        start = id_offsets[order[position]]
        for k in range(ids[position], ids[position + 1]):
            id_bytes[k] = id_data[start]
            start += 1
    return ids, id_bytes


@njit(cache=True)
def _table_columns(order: np.ndarray, people, values: np.ndarray):
    """The table's columns in `order`: counts (rank, wins, draws, losses, games; equal ratings
    share the better rank) and columns (rating, win points, W%, S, base, legacy)."""
    records, legacy, last_rating = people.records, people.legacy, people.last_rating
    listed = order.shape[0]
    counts = np.empty((5, listed), np.int64)
    columns = np.empty((6, listed))
    for position in range(listed):
        player = order[position]
        if position > 0 and last_rating[player] == last_rating[order[position - 1]]:
            counts[0, position] = counts[0, position - 1]
        else:
            counts[0, position] = position + 1
        counts[1, position] = records[player, WINS]
        counts[2, position] = records[player, DRAWS]
        counts[3, position] = records[player, LOSSES]
        counts[4, position] = counts[1, position] + counts[2, position] + counts[3, position]
        columns[0, position] = last_rating[player]
        columns[1, position] = values[player, 1]
        columns[2, position] = values[player, 0]
        columns[3, position] = values[player, 2]
        columns[4, position] = values[player, 3]
        columns[5, position] = 0.0 if np.isnan(legacy[player]) else legacy[player]
    return counts, columns


@njit(cache=True)
def _validity(values: np.ndarray) -> np.ndarray:
    """An Arrow validity bitmap (least significant bit first) of the values that are not NaN."""
    bits = np.zeros((len(values) + 7) // 8, np.uint8)
    for k in range(len(values)):
        if not np.isnan(values[k]):
            bits[k >> 3] |= np.uint8(1 << (k & 7))
    return bits


# club_month's arguments, grouped.
# The month's rows: game_id and result as Arrow string buffers.
MonthRows = namedtuple("MonthRows", "game_offsets game_data result_offsets result_data")
# The players' ids (pipeline.systems.kernels.numbering: offsets and bytes), the `known` players
# before the month in id order (order[:known]; room for `count`, every player after the month).
Registry = namedtuple("Registry", "offsets data order known count")
# The year so far: the rows' players (`rows` of them) grouped by game (game g owns rows
# starts[g]:starts[g + 1], `games` games), and the year's players in order of first game.
YearRows = namedtuple("YearRows", "players rows starts games members n_members")
# Per player: records, (players, 4) int32: wins, draws, losses, opponent pairs this year, updated;
# legacy, float64: 0.10 × last December's rating, NaN if the player did not play then;
# legacy_players, int32: the players who played last year; last_rating, float64: the previous
# table's rating (NaN: not listed), set to this one's; table_players, int32: the previous table's players.
PlayerArrays = namedtuple("PlayerArrays", "records legacy legacy_players last_rating table_players")
# log_points[2W + D] = log10(W + D/2 + 1), long enough; work space: (players, 4) float64 and uint64.
WorkSpace = namedtuple("WorkSpace", "log_points values limbs")


@njit(cache=True)
def club_month(month, registry, year, people, work):
    """Add the month's games to the year and compute the month-end table.

    The year's rows hold the month's players after its `rows` entries; its starts and members
    get the month appended and must have room for as many more entries as the month has rows;
    every per-player array (work space included) must have room for registry.count players.
    Returns (status, games, n_members, history, order, ids, counts, columns, max_games).
    status 0; -1 when a record passed MAX_COUNT. history follows the month's rows: letters (W,
    D or L as bytes), rating_before (NaN: not in the previous table) with its validity bitmap,
    and rating_after. order is the listed players in rank order; ids their ids (Arrow string
    offsets and bytes) and the validity bitmap of W% and S (null without a game); counts and
    columns as _table_columns gives them.
    """
    id_offsets, id_data, id_order, known, n_players = registry
    year_players, year_rows, year_starts, year_games, members, n_members = year
    rows = month.game_offsets.shape[0] - 1
    players = year_players[year_rows : year_rows + rows]
    extend_id_order(id_order, known, n_players, id_offsets, id_data)
    games = _group_games(month.game_offsets, month.game_data, rows, year_rows, year_starts, year_games)
    rating_before = _ratings_of(players, people.last_rating)
    letters = np.empty(rows, np.uint8)
    n_members, overflow = _count_results(
        month,
        players,
        year_starts[year_games : year_games + games + 1],
        year_rows,
        people.records,
        members,
        n_members,
        letters,
    )
    if overflow:
        return _failed(games, n_members)
    year_members = members[:n_members]
    _schedule_sums(
        year_players[: year_rows + rows],
        year_starts[: year_games + games + 1],
        people.records,
        year_members,
        work.values,
        work.limbs,
    )
    listed, max_games = _rate_listed(year_members, people, work)
    order = _by_rating(_listed_by_id(id_order, n_players, people.last_rating, listed), people.last_rating)
    ids, id_bytes = _ids_in_order(order, id_offsets, id_data)
    counts, columns = _table_columns(order, people, work.values)
    history = (letters, rating_before, _validity(rating_before), _ratings_of(players, people.last_rating))
    return 0, games, n_members, history, order, (ids, id_bytes, _validity(columns[2])), counts, columns, max_games


@njit(cache=True)
def _failed(games: int, n_members: int):
    """club_month's result when a record passed MAX_COUNT."""
    no_bytes, no_floats = np.empty(0, np.uint8), np.empty(0)
    return (
        -1,
        games,
        n_members,
        (no_bytes, no_floats, no_bytes, no_floats),
        np.empty(0, np.int32),
        (np.zeros(1, np.int32), no_bytes, no_bytes),
        np.empty((5, 0), np.int64),
        np.empty((6, 0)),
        0,
    )
