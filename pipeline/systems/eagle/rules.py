"""Dip2000's Eagle points table (SPEC §3.3, seed 003).

A game's value V is the sum of its players' contributions, round_half_up(0.5 + (601 - P)/400, 2)
for table position P up to 602 and 0.50 below or unlisted, 0 for an anarchy. A soloist takes V,
each of k draw members round_half_up(V/k, 2), the others 0.00 (anarchy), 0.01 (eliminated) or
0.10 + 0.01 x centres (survived). Table points are the sum of the last 10 games' points.

Positions: `published` (default) takes P from the table this system returned for the previous
month; `live` takes it from the table as it stands just before the game, listing measured at the
game's date. Points are held as exact integer hundredths; floats appear only in the output tables.

Computation: a month runs as a few compiled kernels (pipeline.systems.eagle.kernel) over
per-player arrays indexed by a dense player number: the ids are numbered through a hash table
over their UTF-8 bytes, the result names become codes, and one kernel call applies the month's
games in order. In `published` mode a game looks its players' contributions up in an array
filled from the previous month's table. In `live` mode the top of the table is counted by
points value (pipeline.systems.eagle.table), so a player's position, removal and reinsertion
cost O(log of the points values) and no game re-sorts the table; a listed player below the
top's points threshold has at least 602 players ahead and needs no exact position. Listings that end
within the month end, earliest first, before the first game on or after their end. The
month-end table sorts the players still listed, by one radix sort of their packed keys
(O(players) per month). A step copies the arrays it changes (O(players) per month,
never per game), so a state can be stepped again.

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
import functools
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from pipeline.core.months import Month
from pipeline.core.rounding import half_up
from pipeline.systems.base import (
    MonthInput,
    MonthOutput,
    PublishedList,
    history_schema,
    model_columns,
    rankings_schema,
)
from pipeline.systems.eagle import kernel
from pipeline.systems.eagle import table as eagle_table
from pipeline.systems.kernels.arrays import resized, room
from pipeline.systems.kernels.ids import (
    array_of,
    kept_rows,
    longest_run,
    validity_bits,
)
from pipeline.systems.kernels.ids import (
    string_buffers as shared_string_buffers,
)
from pipeline.systems.kernels.numbering import PlayerNumbers, distinct_numbers
from schemas.eagle import PLAYER_OF_THE_MONTH, EagleAwards, EagleHistory, EagleRankings

POSITION_MODES = ("published", "live")
GAMES_COUNTED = kernel.GAMES_COUNTED  # only the last 10 finished games count
LISTING_YEARS = kernel.LISTING_YEARS  # listed while the last game is less than 2 years old
RESTART_YEARS = kernel.RESTART_YEARS  # a next game more than 7 years after the last starts over
LAST_SCORING_POSITION = 602  # below this (or unlisted) a player contributes the minimum
CENTS = Decimal(100)

RANKINGS_SCHEMA = rankings_schema(*model_columns(EagleRankings))

HISTORY_SCHEMA = history_schema(*model_columns(EagleHistory))

AWARDS_SCHEMA = pa.schema(model_columns(EagleAwards))


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


def to_cents(value: Decimal) -> int:
    """Exact hundredths of a value that is already rounded to two places."""
    cents = value * CENTS
    if cents != cents.to_integral_value():
        raise ValueError(f"{value} is not a whole number of hundredths")
    return int(cents)


def cents_to_float(cents: int) -> float:
    """Output form of hundredths: the float64 nearest to the exact decimal (int division rounds correctly)."""
    return cents / 100


# Contribution in hundredths by position 1..602 (index 0 unused): the formula, evaluated once.
CONTRIBUTION_CENTS = np.array(
    [0] + [to_cents(position_contribution(p)) for p in range(1, LAST_SCORING_POSITION + 1)], dtype=np.int64
)
CONTRIBUTION_FLOATS = CONTRIBUTION_CENTS.astype(np.float64) / 100.0  # cents_to_float of each
UNLISTED_CENTS = to_cents(position_contribution(None))

EPOCH = dt.date(1970, 1, 1)
UNIX_EPOCH_ORDINAL = EPOCH.toordinal()
MIN_CAPACITY = 64


def day_number(day: dt.date) -> int:
    """Days since 1970-01-01 (the date32 value of a date)."""
    return (day - EPOCH).days


# ---------------------------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------------------------

Best = tuple[int, tuple[tuple[str, str], ...]]  # a running maximum: (value, ((player, game), ...))


@dataclass(frozen=True)
class YearTally:
    """What the year's awards need, gathered game by game (reset when the year changes).

    points / played: per player index (capacity entries), hundredths taken from the year's games
    and whether the player played in the year.
    """

    year: int | None
    points: np.ndarray
    played: np.ndarray
    best_victory: Best = (0, ())  # (V, ((player, game), ...))
    best_rookie: Best = (0, ())  # (points, ((player, game), ...))


@dataclass(frozen=True)
class LiveTable:
    """The listed players in live mode and the counted top of the table (see
    pipeline.systems.eagle.kernel). Player arrays have the capacity of the state stepped from it
    (the step's copy grows them with the state's player arrays)."""

    top: eagle_table.TopCounts  # the top's members by points value (pipeline.systems.eagle.table)
    listed: np.ndarray  # bool per player: listed
    in_top: np.ndarray  # bool per player: counted in the top
    meta: np.ndarray  # int64 [threshold, members of the top]
    game_most: int  # the most hundredths one game has given a player so far

    def copy(self, capacity: int, game_most: int = 0) -> "LiveTable":
        """An independent copy for `capacity` players whose games give at most `game_most`
        hundredths from now on (points values grow to hold ten such games)."""
        game_most = max(self.game_most, game_most)
        values = self.top.head.shape[0]
        if capacity != self.top.next.shape[0] or values < _values_for(game_most):
            top = eagle_table.regrown(self.top, capacity, max(values, _values_for(game_most)))
        else:
            top = eagle_table.TopCounts(*(a.copy() for a in self.top))
        return LiveTable(
            top, resized(self.listed, capacity), resized(self.in_top, capacity), self.meta.copy(), game_most
        )


def _most_game_points(game_start: np.ndarray, centres: np.ndarray) -> int:
    """The most hundredths a game of the month can give one power: the game's value when every
    power contributes the most, or a survivor's share with the most centres."""
    if game_start.shape[0] < 2:
        return 0
    widest = int(longest_run(game_start, game_start.shape[0] - 1))
    survivor = kernel.SURVIVED_BASE_CENTS + kernel.SURVIVED_CENTRE_CENTS * int(centres.max()) if centres.shape[0] else 0
    return max(int(CONTRIBUTION_CENTS.max()) * widest, survivor)


def _values_for(game_most: int) -> int:
    """Points values to count when no game gives more than `game_most` hundredths: table points
    (the last ten games) stay below it; a power of two, so it rarely grows."""
    needed = GAMES_COUNTED * max(game_most, 0) + 1
    return 1 << max(needed - 1, 1).bit_length()


@dataclass(frozen=True)
class EagleState:
    """Everything carried from month to month; arrays are indexed by player number.

    Player arrays have a capacity of at least `count` entries (pipeline.systems.kernels.arrays
    grows them); entries past `count` are zero. Checkpointed: month, ids, points, games, last,
    recent and the tally; the rest (the id hash table, the month-end order, the live table) is
    rebuilt from them. A state is never changed once made.
    """

    month: Month | None
    ids: PlayerNumbers  # shared by successive states: the first `count` are this state's
    count: int
    points: np.ndarray  # int64 table points in hundredths
    games: np.ndarray  # int64 games since the last restart (0: never played)
    last: np.ndarray  # int32 day number of the last game
    recent: np.ndarray  # int32 (capacity, 10) ring of the last 10 games' points
    order: np.ndarray  # int32 the listed players at the month end, in table order
    tally: YearTally
    live: LiveTable | None  # live mode only; built from `order` when missing

    @property
    def listed(self) -> list[tuple[int, int, int, str]]:
        """The month-end table's keys in order: (-points, games, -last game ordinal, player_id)."""
        order = self.order
        return list(
            zip(
                (-self.points[order]).tolist(),
                self.games[order].tolist(),
                (-(self.last[order].astype(np.int64) + UNIX_EPOCH_ORDINAL)).tolist(),
                self.ids.ids(self.count).take(pa.array(order)).to_pylist(),
            )
        )


def _empty_state() -> EagleState:
    zeros = lambda dtype, *shape: np.zeros((MIN_CAPACITY,) + shape, dtype=dtype)  # noqa: E731
    return EagleState(
        month=None,
        ids=PlayerNumbers(expected=MIN_CAPACITY),
        count=0,
        points=zeros(np.int64),
        games=zeros(np.int64),
        last=zeros(np.int32),
        recent=zeros(np.int32, GAMES_COUNTED),
        order=np.empty(0, dtype=np.int32),
        tally=YearTally(None, zeros(np.int64), zeros(np.bool_)),
        live=None,
    )


# Live mode's counted top holds the top of the table: at least the scoring positions, about
# TOP_TARGET players after it is resized, resized when it falls below TOP_LOW or grows past
# TOP_HIGH. Every game of a player in the top costs a lookup, a removal and an insertion there.
# The band's width hardly matters: the resizes a narrow band makes more often stay cheap, and a
# wide one only makes the top larger.
TOP_LOW = LAST_SCORING_POSITION
TOP_TARGET = 21 * LAST_SCORING_POSITION // 20
TOP_HIGH = 9 * LAST_SCORING_POSITION // 8
TOP_SIZES = np.array([TOP_LOW, TOP_TARGET, TOP_HIGH], dtype=np.int64)


def _build_live(state: EagleState, capacity: int, game_most: int = 0) -> LiveTable:
    """The live table holding the listed players of `state` (its month-end order), for games that
    give at most `game_most` hundredths from now on (see LiveTable.copy)."""
    n = state.count
    game_most = max(game_most, int(state.recent[:n].max()) if n else 0)
    values = max(_values_for(game_most), int(state.points[:n].max()) + 1 if n else 0)
    live = LiveTable(
        eagle_table.empty(capacity, values),
        np.zeros(capacity, dtype=np.bool_),
        np.zeros(capacity, dtype=np.bool_),
        np.zeros(2, dtype=np.int64),
        game_most,
    )
    kernel.build_live(state.order, _live_arrays(live), _table_keys(state))
    return live


def _live_arrays(live: LiveTable) -> kernel.LiveArrays:
    """What the kernels read and change of a live table."""
    return kernel.LiveArrays(TOP_SIZES, live.top, live.listed, live.in_top, live.meta)


def _table_keys(state: EagleState) -> kernel.TableKeys:
    """The per-player arrays that order the table."""
    return kernel.TableKeys(state.points, state.games, state.last, state.ids.offsets, state.ids.pool)


_NO_LIVE_TABLE = LiveTable(
    eagle_table.empty(0, 1), np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.bool_), np.zeros(2, dtype=np.int64), 0
)


# ---------------------------------------------------------------------------------------------
# Award rows
# ---------------------------------------------------------------------------------------------


def award_row(award: str, month: Month, player_id: str, value_cents: int, game_id: str | None = None) -> dict:
    """One awards-table row."""
    return {
        "award": award,
        "period": award_period(award, month),
        "player_id": player_id,
        "value": cents_to_float(value_cents),
        "game_id": game_id,
    }


def award_period(award: str, month: Month) -> str:
    """What an award stands for: the month ("2019-06") for player of the month, else the year ("2019")."""
    return str(month) if award == PLAYER_OF_THE_MONTH else str(month.year)


def best_entries(best: Best, value: int, entries: tuple[tuple[str, str], ...]) -> Best:
    """Running maximum with ties kept: `best` updated with entries that all have `value`."""
    if not entries:
        return best
    best_value, held = best
    if not held or value > best_value:
        return (value, entries)
    if value == best_value:
        return (best_value, held + entries)
    return best


def sorted_ids(state: EagleState, players: np.ndarray) -> list[str]:
    """The ids of player numbers, sorted (the order award rows are listed in)."""
    return sorted(state.ids.id_of(p) for p in players.tolist())


def yearly_award_rows(month: Month, state: EagleState) -> list[dict]:
    """The December titles: king of the mountain, most valuable victory, runner and rookie of the year."""
    rows = []
    if state.order.shape[0]:
        leader = int(state.order[0])
        rows.append(award_row("king_of_the_mountain", month, state.ids.id_of(leader), int(state.points[leader])))
    tally = state.tally
    victory_value, victories = tally.best_victory
    rows += [award_row("most_valuable_victory", month, pid, victory_value, gid) for pid, gid in sorted(victories)]
    points, runners = kernel.leading_rows(tally.played[: state.count], tally.points[: state.count])
    rows += [award_row("runner_of_the_year", month, pid, int(points)) for pid in sorted_ids(state, runners)]
    rookie_value, rookies = tally.best_rookie
    rows += [award_row("rookie_of_the_year", month, pid, rookie_value, gid) for pid, gid in sorted(rookies)]
    return rows


def with_month_best(best: Best, value: int, rows: np.ndarray, player_ids: pa.Array, game_ids: pa.Array) -> Best:
    """`best` updated with the month's best `value` (hundredths) and the rows holding it, in game
    order (none: nothing to count)."""
    if rows.shape[0] == 0 or (best[1] and value < best[0]):
        return best
    # The rows sharing the best value are few: read one by one (an Arrow take per month cost more).
    return best_entries(best, int(value), tuple((player_ids[r].as_py(), game_ids[r].as_py()) for r in rows.tolist()))


# ---------------------------------------------------------------------------------------------
# The system
# ---------------------------------------------------------------------------------------------


class EaglePoints:
    """Dip2000's Eagle points table as a monthly RatingSystem."""

    name: ClassVar[str] = "eagle"
    title: ClassVar[str] = "Dip2000 Eagle points"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = False
    # The pre-month rating of a player the previous table does not list (SPEC §3.5).
    newcomer_rating: ClassVar[float] = 0.0
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (
        0.0,
        140.0,
    )  # ten games of at most 14 points (standard board)
    list_column: ClassVar[str | None] = None  # one list
    lists: ClassVar[tuple[str, ...]] = ()
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
        self._variant_buffers = string_buffers(pa.array(self.variants, pa.string()))

    def initial_state(self) -> EagleState:
        """No players, no published table."""
        return _empty_state()

    def step(self, state: EagleState, month_input: MonthInput) -> MonthOutput:
        """Apply one month's counted games in order, then publish the month-end table and awards."""
        month = month_input.month
        if state.month is not None and month != state.month.next():
            raise ValueError(f"eagle: stepped {month} after {state.month}; months must be consecutive")
        live = self.positions == "live"
        as_of = day_number(month.last_day)
        rows, days, game_start = self._counted_rows(month_input.results, month)
        game_ids, finished_on, player_ids = rows["game_id"], rows["finished_on"], rows["responsible_player_id"]
        row_player, state = _with_players(state, player_ids)
        n_rows = len(game_ids)

        # Grown copies of everything the kernel changes; unchanged arrays are shared.
        capacity = state.points.shape[0]
        points, games, last, recent = (
            resized(a, capacity) for a in (state.points, state.games, state.last, state.recent)
        )
        tally = state.tally
        if tally.year == month.year:
            year_points, year_played = resized(tally.points, capacity), resized(tally.played, capacity)
            best_victory, best_rookie = tally.best_victory, tally.best_rookie
        else:
            year_points, year_played = np.zeros(capacity, np.int64), np.zeros(capacity, np.bool_)
            best_victory, best_rookie = (0, ()), (0, ())
        game_day = np.ascontiguousarray(days[game_start[:-1]])
        row_result, row_centres = rows["result"], rows["centres"]
        if live:
            published_cents = np.empty(0, dtype=np.int64)
            game_most = _most_game_points(game_start, row_centres)
            table = (
                state.live.copy(capacity, game_most)
                if state.live is not None
                else _build_live(state, capacity, game_most)
            )
        else:
            published_cents = np.full(capacity, UNLISTED_CENTS, dtype=np.int64)
            top = state.order[:LAST_SCORING_POSITION]
            published_cents[top] = CONTRIBUTION_CENTS[1 : top.shape[0] + 1]
            table = _NO_LIVE_TABLE

        cents = np.empty((5, n_rows), dtype=np.int64)  # the history's amounts, one row each
        before, after, contribution, value, earned = cents
        order, (victory, rookies, changes) = kernel.run_month(
            kernel.MonthGames(
                game_start, game_day, row_player, row_result, row_centres, day_number(month.first_day), as_of
            ),
            state.order,
            kernel.Contributions(live, CONTRIBUTION_CENTS, UNLISTED_CENTS, published_cents),
            kernel.TableKeys(points, games, last, state.ids.offsets, state.ids.pool),
            kernel.Tallies(recent, year_points, year_played),
            _live_arrays(table),
            kernel.RowOutputs(before, after, contribution, value, earned),
        )

        best_victory = with_month_best(best_victory, victory[0], victory[1], player_ids, game_ids)
        best_rookie = with_month_best(best_rookie, rookies[0], rookies[1], player_ids, game_ids)
        new_state = EagleState(
            month=month,
            ids=state.ids,
            count=state.count,
            points=points,
            games=games,
            last=last,
            recent=recent,
            order=order,
            tally=YearTally(month.year, year_points, year_played, best_victory, best_rookie),
            live=table if live else None,
        )

        # Player(s) of the month: month-end points minus the points carried into the month.
        change, players = changes
        awards = [award_row(PLAYER_OF_THE_MONTH, month, pid, int(change)) for pid in sorted_ids(new_state, players)]
        if month.month == 12:
            awards += yearly_award_rows(month, new_state)

        amounts = kernel.hundredths(cents)
        carried = np.packbits(before >= 0, bitorder="little")  # rating_before is null when none is
        history = pa.Table.from_arrays(
            [
                game_ids,
                finished_on,
                player_ids,
                array_of(pa.float64(), n_rows, amounts[0], carried),
                *(array_of(pa.float64(), n_rows, column) for column in amounts[1:]),
            ],
            schema=HISTORY_SCHEMA,
        )
        return MonthOutput(
            state=new_state,
            table=_month_table(new_state),
            history=history,
            extras={"awards": pa.Table.from_pylist(awards, schema=AWARDS_SCHEMA)},
        )

    def _counted_rows(self, results: pa.Table, month: Month) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
        """What the month needs of the rows of a counted variant, in processing order (the rated
        flag is ignored): game_id, finished_on and responsible_player_id as Arrow arrays, the
        result codes and centres as numpy arrays; the rows' day numbers; and each game's first
        row, then the row count. A game's variant is its first row's (validation has a game's
        rows agree). The names are matched in compiled passes over the string bytes
        (kernel.match_names, kernel.counted_games): Arrow calls per month cost more than the
        games' arithmetic."""
        variant = _single(results.column("variant"))
        if variant.type != pa.string():
            variant = variant.cast(pa.string())
        rows = {name: _single(results.column(name)) for name in ("game_id", "responsible_player_id")}
        finished_on = _single(results.column("finished_on"))
        result = _single(results.column("result"))
        codes = kernel.match_names(*string_buffers(result), *RESULT_BUFFERS)
        centres = np.asarray(results.column("centres").to_numpy(), dtype=np.int64)
        counted, game_start, codes, centres, days = kernel.counted_games(
            *shared_string_buffers(variant),
            validity_bits(variant),
            variant.offset,
            *self._variant_buffers,
            *string_buffers(rows["game_id"]),
            codes,
            centres,
            _day_numbers(finished_on),
        )
        every_row = codes.shape[0] == results.num_rows
        if not every_row:
            # The counted rows are those `counted` marks: a filter of each array is cheaper than a take.
            rows = dict(zip(rows, kept_rows(counted, *rows.values())))
        if (codes < 0).any():
            i = int(np.argmax(codes < 0))
            raise ValueError(f"unknown result {result[int(np.flatnonzero(counted)[i])].as_py()!r}")
        if finished_on.null_count == 0:  # the counted rows' days, as counted_games kept them
            rows["finished_on"] = array_of(pa.date32(), days.shape[0], days)
        else:
            rows["finished_on"] = finished_on if every_row else kept_rows(counted, finished_on)[0]
            if rows["finished_on"].null_count:
                raise ValueError("eagle: a counted game without its finishing day")
        rows["result"], rows["centres"] = codes, centres
        if days.shape[0]:
            outside = (days < day_number(month.first_day)) | (days > day_number(month.last_day))
            if outside.any():
                i = int(np.argmax(outside))
                raise ValueError(
                    f"eagle: game {rows['game_id'][i].as_py()} finished "
                    f"{rows['finished_on'][i].as_py()}, outside {month}"
                )
        return rows, days, game_start

    def state_from_list(self, published: PublishedList) -> EagleState:
        """The published table (SPEC §2): each player's last counted games' points (oldest first),
        games and last game day, as the month-end state of the list's month, so the next month's
        positions come from the table the list makes. The year's awards count from the list on."""
        rows = published.rows
        n = rows.num_rows
        games = np.asarray(rows.column("games").to_numpy(zero_copy_only=False), np.int64)
        recent = np.zeros((n, GAMES_COUNTED), np.int32)
        for player, points in enumerate(rows.column("recent_points").to_pylist()):
            # Game number g since the restart is in slot g % 10; the list's last k games are
            # numbers games - k .. games - 1. Slots of games the list does not give hold 0.
            for offset, text in enumerate(points):
                recent[player, (games[player] - len(points) + offset) % GAMES_COUNTED] = to_cents(Decimal(text))
        month = published.month
        zeros = np.zeros(n, np.int64)
        return self.decode_state(
            {
                "month": (month.year, month.month),
                "player_ids": rows.column("player_id").to_pylist(),
                "points": recent.sum(axis=1, dtype=np.int64),
                "games": games,
                "last_game": [day_number(day) for day in rows.column("last_game_date").to_pylist()],
                "recent": recent,
                "tally": {
                    "year": month.year,
                    "points": zeros,
                    "played": zeros.astype(np.bool_),
                    "best_victory": (0, ()),
                    "best_rookie": (0, ()),
                },
            }
        )

    def encode_state(self, state: EagleState) -> Any:
        """Checkpoint form: the ids and the per-player arrays, and the year's tally (the rest is derived)."""
        n = state.count
        return {
            "month": None if state.month is None else (state.month.year, state.month.month),
            "player_ids": state.ids.ids(n),  # the codec copies it into buffers of its exact size
            "points": state.points[:n],
            "games": state.games[:n],
            "last_game": state.last[:n],
            "recent": state.recent[:n],
            "tally": {
                "year": state.tally.year,
                "points": state.tally.points[:n],
                "played": state.tally.played[:n],
                "best_victory": state.tally.best_victory,
                "best_rookie": state.tally.best_rookie,
            },
        }

    def decode_state(self, data: Any) -> EagleState:
        """Inverse of encode_state; rebuilds the id hash table, the month-end order and the live table."""
        month = None if data["month"] is None else Month(*data["month"])
        ids = data["player_ids"]
        ids = ids if isinstance(ids, pa.Array) else pa.array(list(ids), pa.string())
        n = len(ids)
        capacity = max(MIN_CAPACITY, n)

        def column(values: Any, dtype: Any) -> np.ndarray:
            return resized(np.asarray(values, dtype=dtype).reshape((n,) + np.shape(values)[1:]), capacity)

        points, games = column(data["points"], np.int64), column(data["games"], np.int64)
        last, recent = column(data["last_game"], np.int32), column(data["recent"], np.int32)
        numbers = distinct_numbers(ids, "eagle: the checkpoint lists a player twice", expected=capacity)
        order = np.empty(0, dtype=np.int32)
        if month is not None:
            expired_through = kernel.last_day_before(day_number(month.last_day) + 1, LISTING_YEARS)
            listed = np.flatnonzero(last[:n] > expired_through).astype(np.int32)
            order = kernel.sort_players(listed, points, games, last, numbers.offsets, numbers.pool)
        tally_data = data["tally"]
        tally = YearTally(
            year=tally_data["year"],
            points=column(tally_data["points"], np.int64),
            played=column(tally_data["played"], np.bool_),
            best_victory=_entries(tally_data["best_victory"]),
            best_rookie=_entries(tally_data["best_rookie"]),
        )
        state = EagleState(
            month=month,
            ids=numbers,
            count=n,
            points=points,
            games=games,
            last=last,
            recent=recent,
            order=order,
            tally=tally,
            live=None,
        )
        if self.positions == "live":
            state = replace(state, live=_build_live(state, capacity))
        return state


def _entries(data: Any) -> Best:
    """A (value, ((player, game), ...)) pair back from its checkpoint form."""
    value, entries = data
    return (int(value), tuple((pid, gid) for pid, gid in entries))


def string_buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (one more than the rows) and UTF-8 bytes of a string array without nulls."""
    if strings.type != pa.string():
        strings = strings.cast(pa.string())
    if strings.null_count:
        raise ValueError("eagle: a required id or result is missing")
    return shared_string_buffers(strings)


def _with_players(state: EagleState, player_ids: pa.Array) -> tuple[np.ndarray, EagleState]:
    """Each row's player number, and the state with the month's new players numbered (the
    player arrays grown when full). The old state is unchanged."""
    if player_ids.null_count:
        raise ValueError("eagle: a required id or result is missing")
    numbering = state.ids.first(state.count)
    numbers = numbering.numbers(player_ids)
    count = numbering.count
    if count == state.count:
        return numbers, state
    grown: dict[str, Any] = {}
    capacity = room(state.points.shape[0], count)
    if capacity != state.points.shape[0]:
        grown = {name: resized(getattr(state, name), capacity) for name in ("points", "games", "last", "recent")}
        grown["tally"] = replace(
            state.tally, points=resized(state.tally.points, capacity), played=resized(state.tally.played, capacity)
        )
        # The live table keeps its capacity here: the step copies it to the new one.
    return numbers, replace(state, ids=numbering, count=count, **grown)


def _single(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array (no copy when it has one chunk)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _day_numbers(dates: pa.Array) -> np.ndarray:
    """int32 day numbers of a date32 array, read from its buffer (no copy; a null's entry is
    meaningless)."""
    data = dates.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=np.int32)
    return np.frombuffer(data, dtype=np.int32, count=len(dates), offset=4 * dates.offset)


RESULT_BUFFERS = string_buffers(pa.array(kernel.RESULT_NAMES, pa.string()))


def _month_table(state: EagleState) -> pa.Table:
    """The month-end table in rank order."""
    order = state.order
    n = order.shape[0]
    if n == 0:
        return RANKINGS_SCHEMA.empty_table()
    points, games, last, defend, defended, id_offsets, ids = kernel.table_columns(
        order, state.points, state.games, state.last, state.recent, state.ids.offsets, state.ids.pool
    )
    points = array_of(pa.float64(), n, points)
    ranks, new_eagles = _table_constants(1 << max(n - 1, 1023).bit_length())
    return pa.table(
        [
            array_of(pa.int64(), n, ranks),
            pa.StringArray.from_buffers(n, pa.py_buffer(id_offsets), pa.py_buffer(ids)),
            points,
            points,
            array_of(pa.int64(), n, games),
            array_of(pa.date32(), n, last),  # int32 day numbers as they are
            array_of(pa.float64(), n, defend, defended),
            array_of(pa.float64(), n, new_eagles),
        ],
        schema=RANKINGS_SCHEMA,
    )


@functools.lru_cache(maxsize=None)
def _table_constants(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The table's columns that depend on the position alone, for `size` positions: the ranks
    1, 2, ... and the new-eagle contributions. Never written to, so every month's table of at
    most `size` players shares them (_month_table asks for powers of two)."""
    ranks = np.arange(1, size + 1, dtype=np.int64)
    new_eagles = np.full(size, cents_to_float(UNLISTED_CENTS))
    scoring = min(size, LAST_SCORING_POSITION)
    new_eagles[:scoring] = CONTRIBUTION_FLOATS[1 : scoring + 1]
    ranks.flags.writeable = new_eagles.flags.writeable = False
    return ranks, new_eagles
