"""Ghost Rating's game loop, compiled (SPEC §3.6).

A month's counted games come in as flat arrays: game g owns rows starts[g]:starts[g + 1], each
row a responsible player's number and his result. For every category the game counts in, the
players' ratings before the game give the expected shares, the result gives the actual shares,
and every rating moves by (G / M)·(A − E). The ratings are read before any of them moves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pipeline.systems.kernels import plain_njit

# Result codes of a row (rules.RESULT_CODES).
SOLO, DRAW, OTHER = 0, 1, 2
# Scoring codes of a game (rules.SCORING_CODES).
DRAW_SIZE, SUM_OF_SQUARES, PPSC = 0, 1, 2
CATEGORY_COUNT = 4
BASE_DIVISOR = 17.5  # M = 17.5 × the press factor


class MonthGames(NamedTuple):
    """A month's counted games: game g owns rows starts[g]:starts[g + 1] (int64, one more than
    the games); per row the responsible player's number (int32), result code (int8) and centres
    (int64); per game its day (int32, days since 1970-01-01), supply centres (int64), scoring
    code (int8), press factor (float64) and categories (int8, bit c: counts in category c)."""

    starts: np.ndarray
    players: np.ndarray
    results: np.ndarray
    centres: np.ndarray
    days: np.ndarray
    supply_centres: np.ndarray
    scoring: np.ndarray
    press_factor: np.ndarray
    categories: np.ndarray


class PlayerArrays(NamedTuple):
    """Per player (row = player number) and category (column): rating (float64), counted games
    (int64) and the day of the latest game (int32, -1 before the first)."""

    rating: np.ndarray
    games: np.ndarray
    last_day: np.ndarray


@plain_njit
def expected_shares(ratings, scoring, supply_centres):
    """E_i of each player from the ratings before the game."""
    n = ratings.shape[0]
    total = ratings.sum()
    shares = np.empty(n)
    if scoring == SUM_OF_SQUARES:
        squares = (ratings * ratings).sum()
        for i in range(n):
            shares[i] = ratings[i] * ratings[i] / squares
        return shares
    first = ratings / total  # E1: the draw-size share
    if scoring == DRAW_SIZE:
        return first
    # ppsc: V victory centres shared as E1, the other S − V as SP_m / Σ SP.
    victory = supply_centres // 2 + 1
    rest = np.empty(n)
    for m in range(n):
        against = 0.0
        for k in range(n):
            if k != m:
                against += first[k] * first[m] / (1.0 - first[k])
        rest[m] = (1.0 - first[m]) * against
    rest_total = rest.sum()
    for i in range(n):
        shares[i] = (victory * first[i] + (supply_centres - victory) * rest[i] / rest_total) / supply_centres
    return shares


@plain_njit
def actual_shares(results, centres, scoring, supply_centres):
    """A_i of each player from the game's result: a solo is the winner's (every player's centres
    / S under ppsc); a draw is shared by its members, equally or by squared centres."""
    n = results.shape[0]
    shares = np.zeros(n)
    solo = False
    members = 0
    squares = 0.0
    for i in range(n):
        if results[i] == SOLO:
            solo = True
        elif results[i] == DRAW:
            members += 1
            squares += centres[i] * centres[i]
    for i in range(n):
        if solo and scoring == PPSC:
            shares[i] = centres[i] / supply_centres
        elif solo:
            shares[i] = 1.0 if results[i] == SOLO else 0.0
        elif results[i] == DRAW and scoring == SUM_OF_SQUARES:
            shares[i] = centres[i] * centres[i] / squares
        elif results[i] == DRAW:
            shares[i] = 1.0 / members
    return shares


@plain_njit
def history_rows(starts, categories):
    """How many history rows the month gives: one per player and category of each game."""
    rows = 0
    for g in range(starts.shape[0] - 1):
        for c in range(CATEGORY_COUNT):
            if categories[g] >> c & 1:
                rows += starts[g + 1] - starts[g]
    return rows


@plain_njit
def rate_games(month, arrays):
    """Rate the month's games (MonthGames) in order, updating the PlayerArrays in place.
    Returns the history rows: the month row each stands for, its category, E, A and the
    rating before and after."""
    starts, players, results, centres, days, supply, scoring_of, press_of, categories = month
    rating, games, last_day = arrays
    total_rows = history_rows(starts, categories)
    row = np.empty(total_rows, np.int64)
    category = np.empty(total_rows, np.int8)
    expected = np.empty(total_rows)
    actual = np.empty(total_rows)
    before = np.empty(total_rows)
    after = np.empty(total_rows)
    out = 0
    for g in range(starts.shape[0] - 1):
        first, last = starts[g], starts[g + 1]
        supply_centres, scoring = supply[g], scoring_of[g]
        seats = players[first:last]
        shares = actual_shares(results[first:last], centres[first:last], scoring, supply_centres)
        for c in range(CATEGORY_COUNT):
            if not categories[g] >> c & 1:
                continue
            ratings = np.empty(last - first)
            for i in range(last - first):
                ratings[i] = rating[seats[i], c]
            expect = expected_shares(ratings, scoring, supply_centres)
            step = ratings.sum() / (BASE_DIVISOR * press_of[g])
            for i in range(last - first):
                p = seats[i]
                rating[p, c] = ratings[i] + step * (shares[i] - expect[i])
                games[p, c] += 1
                last_day[p, c] = days[g]
                row[out] = first + i
                category[out] = c
                expected[out] = expect[i]
                actual[out] = shares[i]
                before[out] = ratings[i]
                after[out] = rating[p, c]
                out += 1
    return row, category, expected, actual, before, after
