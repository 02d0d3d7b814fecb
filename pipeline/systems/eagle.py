"""Dip2000's Eagle points table (SPEC §3.3, seed 003).

A game's value V is the sum of its players' contributions, round_half_up(0.5 + (601 - P)/400, 2)
for table position P up to 602 and 0.50 below or unlisted, 0 for an anarchy. A soloist takes V,
each of k draw members round_half_up(V/k, 2), the others 0.00 (anarchy), 0.01 (eliminated) or
0.10 + 0.01 x centres (survived). Table points are the sum of the last 10 games' points.

Positions: `published` (default) takes P from the table this system returned for the previous
month; `live` takes it from the table as it stands just before the game, listing measured at the
game's date. Points are held as exact integer hundredths; every rounding step goes through
pipeline.rounding.half_up and floats appear only in the output tables.

Efficiency: the listed players' table keys live in an `OrderedKeys` (pipeline.systems.eagle_table:
sorted blocks with a Fenwick tree over the block sizes), so a player's position and a player's
update cost about O(log n) and the month-end table is read in order without a sort. Listing
expiries (last game + 2 years) are queued in game order; since games arrive in date order the
queue is already sorted by expiry, so expiring is a pop from its front. A step copies the state
it changes (O(players) per month, never per game).

Decisions where SPEC §3.3 is silent:
- A result belongs to the power's responsible player (SPEC §2); a power counts once per game.
- A player whose next game comes more than 7 years after the last starts over: that game's
  history row has a null `rating_before`, like a first game.
- Player of the month: the change is the month-end table points minus the table points the
  player carried into the month (listed or not, since an unlisted player keeps their games);
  a player with no games before the month, or whose games restarted in it, counts from 0. The
  change may be negative; the largest wins even then, and ties share.
- The yearly awards count only games of the configured variants; "first-ever game" (rookie)
  is the player's first counted game, never a game after a 7-year restart. King of the
  mountain is rank 1 of the December table, which the order makes unique. Most valuable
  victory and rookie of the year name the game; a player can win them with several games.
- Months must be stepped consecutively, and a counted game must finish in the stepped month;
  anything else is a ValueError rather than a silently wrong table.
"""
from __future__ import annotations

import datetime as dt
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.months import Month, add_years
from pipeline.rounding import half_up
from pipeline.systems.base import MonthInput, MonthOutput
from pipeline.systems.eagle_table import OrderedKeys
from pipeline.systems.games import Game, games_from_rows
from schemas.eagle import EagleAwards, EagleHistory, EagleRankings

POSITION_MODES = ("published", "live")
GAMES_COUNTED = 10          # only the last 10 finished games count
LISTING_YEARS = 2           # listed while the last game is less than 2 years old
RESTART_YEARS = 7           # a next game more than 7 years after the last starts over
LAST_SCORING_POSITION = 602  # below this (or unlisted) a player contributes the minimum
CENTS = Decimal(100)

RANKINGS_SCHEMA = pa.schema([
    ("rank", pa.int64()),
    ("player_id", pa.string()),
    ("rating", pa.float64()),
    ("points", pa.float64()),
    ("games", pa.int64()),
    ("last_game_date", pa.date32()),
    ("points_to_defend", pa.float64()),
    ("new_eagles", pa.float64()),
])

HISTORY_SCHEMA = pa.schema([
    ("source_id", pa.string()),
    ("source_date", pa.date32()),
    ("player_id", pa.string()),
    ("rating_before", pa.float64()),
    ("rating_after", pa.float64()),
    ("contribution", pa.float64()),
    ("game_value", pa.float64()),
    ("points", pa.float64()),
])

AWARDS_SCHEMA = pa.schema([
    ("award", pa.string()),
    ("year", pa.int64()),
    ("month", pa.int64()),
    ("player_id", pa.string()),
    ("value", pa.float64()),
    ("game_id", pa.string()),
])


# ---------------------------------------------------------------------------------------------
# The rule's formulas (exact decimals)
# ---------------------------------------------------------------------------------------------

def position_contribution(position: int | None) -> Decimal:
    """Contribution of a (non-anarchy) player at table position P; None means unlisted."""
    if position is None or position > LAST_SCORING_POSITION:
        return Decimal("0.50")
    if position < 1:
        raise ValueError(f"table positions start at 1, got {position}")
    return half_up(Decimal("0.5") + Decimal(601 - position) / Decimal(400), 2)


def draw_share(game_value: Decimal, draw_size: int) -> Decimal:
    """Points of each of `draw_size` draw members: V / k rounded half up to hundredths."""
    return half_up(game_value / draw_size, 2)


def result_points(result: str, centres: int, game_value: Decimal, draw_size: int) -> Decimal:
    """Points a power takes from a game of value V by its result."""
    if result == "solo":
        return game_value
    if result == "draw":
        return draw_share(game_value, draw_size)
    if result == "survived":
        return Decimal("0.10") + Decimal("0.01") * centres
    if result == "eliminated":
        return Decimal("0.01")
    if result == "anarchy":
        return Decimal("0.00")
    raise ValueError(f"unknown result {result!r}")


def to_cents(value: Decimal) -> int:
    """Exact hundredths of a value that is already rounded to two places."""
    cents = value * CENTS
    if cents != cents.to_integral_value():
        raise ValueError(f"{value} is not a whole number of hundredths")
    return int(cents)


def cents_to_float(cents: int) -> float:
    """Output form of hundredths: the float64 nearest to the exact decimal (int division rounds correctly)."""
    return cents / 100


def hundredths_to_float64(cents: pa.Array) -> pa.Array:
    """cents_to_float over an int64 array (exact int -> float64, one correctly rounded division)."""
    return pc.divide(pc.cast(cents, pa.float64()), 100.0)


def ordinals_to_date32(ordinals: pa.Array) -> pa.Array:
    """Proleptic Gregorian ordinals (date.toordinal) as a date32 array."""
    return pc.cast(pc.subtract(ordinals, UNIX_EPOCH_ORDINAL), pa.int32()).cast(pa.date32())


UNIX_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()

# Contribution in hundredths by position 1..602 (index 0 unused): the formula, evaluated once.
CONTRIBUTION_CENTS = [0] + [to_cents(position_contribution(p)) for p in range(1, LAST_SCORING_POSITION + 1)]
CONTRIBUTION_FLOATS = np.array([cents_to_float(c) for c in CONTRIBUTION_CENTS], dtype=np.float64)
UNLISTED_CENTS = to_cents(position_contribution(None))


def contribution_cents(position: int | None) -> int:
    """position_contribution in hundredths, from the precomputed list."""
    if position is None or position > LAST_SCORING_POSITION:
        return UNLISTED_CENTS
    return CONTRIBUTION_CENTS[position]


def listing_ends(last_game: dt.date) -> dt.date:
    """First date on which a player whose last game finished on `last_game` is no longer listed."""
    return add_years(last_game, LISTING_YEARS)


def listing_over(ends: dt.date, as_of: dt.date) -> bool:
    """Whether a listing that ends on `ends` is over on the snapshot date `as_of`."""
    return as_of >= ends


def is_listed(last_game: dt.date, as_of: dt.date) -> bool:
    """Listed: the last game finished less than 2 years before the snapshot date."""
    return not listing_over(listing_ends(last_game), as_of)


def starts_over(last_game: dt.date, game_date: dt.date) -> bool:
    """A game more than 7 years after the previous one restarts the player with no games."""
    return game_date > add_years(last_game, RESTART_YEARS)


# ---------------------------------------------------------------------------------------------
# Players and the table order
# ---------------------------------------------------------------------------------------------

class PlayerRecord(NamedTuple):
    """A player's Eagle standing: points in hundredths, games since the last restart, last 10 game points."""

    points: int
    games: int
    last_game: dt.date
    recent: tuple[int, ...]  # points of the last (up to) 10 games, oldest first


def carried_record(record: PlayerRecord | None, game_date: dt.date) -> PlayerRecord | None:
    """The record a player brings into a game on `game_date`: None when new or starting over."""
    if record is None or starts_over(record.last_game, game_date):
        return None
    return record


def record_after_game(carried: PlayerRecord | None, game_points: int, game_date: dt.date) -> PlayerRecord:
    """The player's record after one more game, from the carried record (None: from nothing)."""
    if carried is None:
        return PlayerRecord(game_points, 1, game_date, (game_points,))
    recent = (carried.recent + (game_points,))[-GAMES_COUNTED:]
    return PlayerRecord(sum(recent), carried.games + 1, game_date, recent)


def points_to_defend(record: PlayerRecord) -> int | None:
    """Points of the game that drops out at the next game; shown from 10 games (SPEC decision)."""
    if record.games < GAMES_COUNTED:
        return None
    return record.recent[0]


def table_key(player_id: str, record: PlayerRecord) -> tuple[int, int, int, str]:
    """Ascending sort key of the table order: points desc, fewer games, later last game, player_id."""
    return (-record.points, record.games, -record.last_game.toordinal(), player_id)


# ---------------------------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------------------------

Best = tuple[int, tuple[tuple[str, str], ...]]  # a running maximum: (value, ((player, game), ...))


@dataclass(frozen=True)
class YearTally:
    """What the year's awards need, gathered game by game (reset each January)."""

    year: int | None = None
    points_in_year: dict[str, int] = field(default_factory=dict)
    best_victory: Best = (0, ())  # (V, ((player, game), ...))
    best_rookie: Best = (0, ())   # (points, ((player, game), ...))


@dataclass(frozen=True)
class EagleState:
    """Everything carried from month to month.

    `listed` (the table keys of the listed players) and `expiries` (listing ends, in date order)
    are derived from `players` and `month`; they are kept to avoid rebuilding them each month
    and are rebuilt by decode_state.
    """

    month: Month | None
    players: dict[str, PlayerRecord]
    published_positions: dict[str, int]  # player -> rank in the last published table, ranks <= 602
    tally: YearTally
    listed: OrderedKeys
    expiries: deque  # (listing end date, player_id) in non-decreasing date order


def derived_listing(players: dict[str, PlayerRecord], as_of: dt.date | None) -> tuple[OrderedKeys, deque]:
    """The listed players' ordered keys and their expiry queue, as of a snapshot date."""
    if as_of is None:
        return OrderedKeys(), deque()
    listed = [(pid, rec) for pid, rec in players.items() if is_listed(rec.last_game, as_of)]
    keys = OrderedKeys(table_key(pid, rec) for pid, rec in listed)
    expiries = deque(sorted((listing_ends(rec.last_game), pid) for pid, rec in listed))
    return keys, expiries


def expire_listing(listed: OrderedKeys, expiries: deque, players: dict[str, PlayerRecord], day: dt.date) -> None:
    """Remove from `listed` every player whose listing ended on or before `day` (as of that day)."""
    while expiries and listing_over(expiries[0][0], day):
        ends, pid = expiries.popleft()
        record = players[pid]
        # A later game moved the player's listing end on: this queue entry is stale.
        if listing_ends(record.last_game) == ends:
            listed.discard(table_key(pid, record))


def best_entries(best: Best, value: int, entry: tuple[str, str]) -> Best:
    """Running maximum with ties kept: the new best, or the old one with `entry` added on a tie."""
    best_value, entries = best
    if not entries or value > best_value:
        return (value, (entry,))
    if value == best_value:
        return (best_value, entries + (entry,))
    return best


# ---------------------------------------------------------------------------------------------
# Award rows
# ---------------------------------------------------------------------------------------------

def award_row(award: str, month: Month, player_id: str, value_cents: int, game_id: str | None = None) -> dict:
    """One awards-table row."""
    return {"award": award, "year": month.year, "month": month.month, "player_id": player_id,
            "value": cents_to_float(value_cents), "game_id": game_id}


def top_players(values: dict[str, int]) -> list[tuple[str, int]]:
    """Every (player, value) sharing the largest value, by player_id."""
    if not values:
        return []
    best = max(values.values())
    return sorted((pid, v) for pid, v in values.items() if v == best)


def player_of_the_month_rows(month: Month, changes: dict[str, int]) -> list[dict]:
    """Player(s) of the month: the largest change of table points among the month's players."""
    return [award_row("player_of_the_month", month, pid, change) for pid, change in top_players(changes)]


def yearly_award_rows(month: Month, tally: YearTally, leader: tuple[str, int] | None) -> list[dict]:
    """The December titles: king of the mountain, most valuable victory, runner and rookie of the year."""
    rows = []
    if leader is not None:
        rows.append(award_row("king_of_the_mountain", month, leader[0], leader[1]))
    victory_value, victories = tally.best_victory
    rows += [award_row("most_valuable_victory", month, pid, victory_value, gid) for pid, gid in sorted(victories)]
    rows += [award_row("runner_of_the_year", month, pid, pts) for pid, pts in top_players(tally.points_in_year)]
    rookie_value, rookies = tally.best_rookie
    rows += [award_row("rookie_of_the_year", month, pid, rookie_value, gid) for pid, gid in sorted(rookies)]
    return rows


def history_table(rows: list[tuple]) -> pa.Table:
    """The month's history rows (values in hundredths) as the output table."""
    if not rows:
        return HISTORY_SCHEMA.empty_table()
    game_ids, days, pids, before, after, contribution, value, earned = zip(*rows)
    return pa.table([
        pa.array(game_ids, pa.string()),
        pa.array(days, pa.date32()),
        pa.array(pids, pa.string()),
        *(hundredths_to_float64(pa.array(column, pa.int64()))
          for column in (before, after, contribution, value, earned)),
    ], schema=HISTORY_SCHEMA)


# ---------------------------------------------------------------------------------------------
# The system
# ---------------------------------------------------------------------------------------------

class EaglePoints:
    """Dip2000's Eagle points table as a monthly RatingSystem."""

    name: ClassVar[str] = "eagle"
    title: ClassVar[str] = "Dip2000 Eagle points"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = False
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 140.0)  # ten games of at most 14 points (standard board)
    extras: ClassVar[tuple[str, ...]] = ("awards",)
    rankings_model: ClassVar[type] = EagleRankings
    history_model: ClassVar[type] = EagleHistory
    extra_models: ClassVar[dict[str, type]] = {"awards": EagleAwards}

    def __init__(self, variants: tuple[str, ...] = ("standard",), positions: str = "published") -> None:
        # A bare string would otherwise be read as a tuple of its letters.
        self.variants: tuple[str, ...] = (variants,) if isinstance(variants, str) else tuple(variants)
        if not self.variants:
            raise ValueError("eagle: `variants` needs at least one variant name")
        if positions not in POSITION_MODES:
            raise ValueError(f"eagle: `positions` must be 'published' or 'live', got {positions!r}")
        self.positions = positions

    def initial_state(self) -> EagleState:
        """No players, no published table."""
        return EagleState(None, {}, {}, YearTally(), OrderedKeys(), deque())

    def step(self, state: EagleState, month_input: MonthInput) -> MonthOutput:
        """Apply one month's counted games in order, then publish the month-end table and awards."""
        month = month_input.month
        if state.month is not None and month != state.month.next():
            raise ValueError(f"eagle: stepped {month} after {state.month}; months must be consecutive")
        as_of = month.last_day
        players = dict(state.players)
        listed = state.listed.copy()
        expiries = deque(state.expiries)
        tally = state.tally if state.tally.year == month.year else YearTally(year=month.year)
        points_in_year = dict(tally.points_in_year)
        best_victory, best_rookie = tally.best_victory, tally.best_rookie
        live = self.positions == "live"
        month_start_points: dict[str, int] = {}
        history: list[tuple] = []  # (game, date, player, before, after, contribution, V, points); hundredths

        for game in self._counted_games(month_input.results, month):
            day = game.finished_on
            if live:
                expire_listing(listed, expiries, players, day)
            contributions = [
                0 if power.result == "anarchy"
                else contribution_cents(self._position(power.player_id, players, listed, state.published_positions))
                for power in game.powers
            ]
            game_value = sum(contributions)
            draw_size = sum(1 for power in game.powers if power.result == "draw")
            value = Decimal(game_value) / CENTS
            ends = listing_ends(day)
            for power, contribution in zip(game.powers, contributions):
                pid = power.player_id
                earned = to_cents(result_points(power.result, power.centres, value, draw_size))
                record = players.get(pid)
                carried = carried_record(record, day)
                before = None if carried is None else carried.points
                if record is not None:
                    listed.discard(table_key(pid, record))
                updated = record_after_game(carried, earned, day)
                players[pid] = updated
                listed.add(table_key(pid, updated))
                expiries.append((ends, pid))
                month_start_points.setdefault(pid, before or 0)
                points_in_year[pid] = points_in_year.get(pid, 0) + earned
                if power.result == "solo":
                    best_victory = best_entries(best_victory, game_value, (pid, game.game_id))
                if record is None:
                    best_rookie = best_entries(best_rookie, earned, (pid, game.game_id))
                history.append((game.game_id, day, pid, before, updated.points, contribution, game_value, earned))

        expire_listing(listed, expiries, players, as_of)
        table, published_positions, leader = self._month_table(listed, players)
        tally = YearTally(month.year, points_in_year, best_victory, best_rookie)
        changes = {pid: players[pid].points - start for pid, start in month_start_points.items()}
        awards = player_of_the_month_rows(month, changes)
        if month.month == 12:
            awards += yearly_award_rows(month, tally, leader)
        new_state = EagleState(month, players, published_positions, tally, listed, expiries)
        return MonthOutput(
            state=new_state,
            table=table,
            history=history_table(history),
            extras={"awards": pa.Table.from_pylist(awards, schema=AWARDS_SCHEMA)},
        )

    def _counted_games(self, results: pa.Table, month: Month) -> list[Game]:
        """The month's games of a counted variant, in processing order (rated flag ignored)."""
        games = [game for game in games_from_rows(results) if game.variant in self.variants]
        for game in games:
            if Month.of(game.finished_on) != month:
                raise ValueError(f"eagle: game {game.game_id} finished {game.finished_on}, outside {month}")
        return games

    def _position(self, player_id: str, players: dict[str, PlayerRecord], listed: OrderedKeys,
                  published_positions: dict[str, int]) -> int | None:
        """The player's table position under the configured mode; None when unlisted."""
        if self.positions != "live":
            return published_positions.get(player_id)
        record = players.get(player_id)
        if record is None:
            return None
        index = listed.index(table_key(player_id, record))
        return None if index is None else index + 1

    @staticmethod
    def _month_table(listed: OrderedKeys, players: dict[str, PlayerRecord],
                     ) -> tuple[pa.Table, dict[str, int], tuple[str, int] | None]:
        """The month-end table in rank order, the positions that score next month, and the leader."""
        if not len(listed):
            return RANKINGS_SCHEMA.empty_table(), {}, None
        # The keys already hold points, games and last game date; columns are built in bulk.
        neg_points, games, neg_days, pids = zip(*listed)
        n = len(pids)
        points = hundredths_to_float64(pc.negate(pa.array(neg_points, pa.int64())))
        defend = [points_to_defend(players[pid]) for pid in pids]
        new_eagles = np.full(n, cents_to_float(UNLISTED_CENTS))
        scoring = min(n, LAST_SCORING_POSITION)
        new_eagles[:scoring] = CONTRIBUTION_FLOATS[1:scoring + 1]
        table = pa.table([
            pa.array(np.arange(1, n + 1, dtype=np.int64)),
            pa.array(pids, pa.string()),
            points,
            points,
            pa.array(games, pa.int64()),
            ordinals_to_date32(pc.negate(pa.array(neg_days, pa.int64()))),
            hundredths_to_float64(pa.array(defend, pa.int64())),
            pa.array(new_eagles, pa.float64()),
        ], schema=RANKINGS_SCHEMA)
        published_positions = dict(zip(pids[:LAST_SCORING_POSITION], range(1, scoring + 1)))
        return table, published_positions, (pids[0], -neg_points[0])

    def encode_state(self, state: EagleState) -> Any:
        """Checkpoint form: players, published positions and the year's tally (the rest is derived)."""
        return {
            "month": None if state.month is None else (state.month.year, state.month.month),
            "players": {pid: (r.points, r.games, r.last_game, r.recent) for pid, r in state.players.items()},
            "published_positions": dict(state.published_positions),
            "tally": {
                "year": state.tally.year,
                "points_in_year": dict(state.tally.points_in_year),
                "best_victory": state.tally.best_victory,
                "best_rookie": state.tally.best_rookie,
            },
        }

    def decode_state(self, data: Any) -> EagleState:
        """Inverse of encode_state; rebuilds the ordered table and expiry queue from the players."""
        month = None if data["month"] is None else Month(*data["month"])
        players = {pid: PlayerRecord(points, games, last, tuple(recent))
                   for pid, (points, games, last, recent) in data["players"].items()}
        tally_data = data["tally"]
        tally = YearTally(
            year=tally_data["year"],
            points_in_year=dict(tally_data["points_in_year"]),
            best_victory=_entries(tally_data["best_victory"]),
            best_rookie=_entries(tally_data["best_rookie"]),
        )
        listed, expiries = derived_listing(players, None if month is None else month.last_day)
        return EagleState(month, players, dict(data["published_positions"]), tally, listed, expiries)


def _entries(data: Any) -> Best:
    """A (value, ((player, game), ...)) pair back from its checkpoint form."""
    value, entries = data
    return (int(value), tuple((pid, gid) for pid, gid in entries))
