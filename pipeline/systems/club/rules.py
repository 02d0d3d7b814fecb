"""The club "Rankings Explained" rating (SPEC §3.2, seed 002).

Each month's table is the year-to-date rating: P = log10(W + D/2 + 1), W% = (W + D/2) / GP,
S = the mean of the opponents' W% over every (game, opponent) pair, base = P × (W% + S) / 2 × 100,
plus a legacy of 0.10 × last December's rating for players who played last year. A solo is a
win, a draw member draws, any other result is a loss; opponents are the game's other
responsible players.

Computation: players are numbered by the shared pipeline.systems.kernels.numbering, and the
numbers index per-player arrays (year-to-date wins, draws, losses and opponent pairs; legacy;
last month's rating). The year's rows are kept as player numbers grouped by game, and each
month end recomputes the whole year-to-date table in one compiled call
(pipeline.systems.club.kernel), O(rows of the year + players): S is summed exactly over the
year's games and rounded once, so the values equal the from-scratch reference
(pipeline.systems.club.reference) float for float. A step copies the per-player arrays it
changes (O(players) numpy work, never per game, grown by pipeline.systems.kernels.arrays); the
numbering and the year's rows are append-only and shared between successive states, and an
append after a state that is not the newest works on a copy, so a state never changes once
returned and can be stepped again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from pipeline.systems.base import (
    MonthInput,
    MonthOutput,
    PublishedList,
    history_schema,
    model_columns,
    rankings_schema,
)
from pipeline.systems.club import kernel
from pipeline.systems.games import check_finished_in
from pipeline.systems.kernels.arrays import copy_with_room, resized, with_room
from pipeline.systems.kernels.ids import array_of, string_buffers
from pipeline.systems.kernels.numbering import PlayerNumbers, distinct_numbers
from pipeline.systems.kernels.sort import sorted_by_id
from schemas.club import ClubHistory, ClubRankings

LEGACY_SHARE = 0.1
_NO_PLAYERS = np.zeros(0, np.int32)

RANKINGS_SCHEMA = rankings_schema(*model_columns(ClubRankings))

HISTORY_SCHEMA = history_schema(*model_columns(ClubHistory))

_log_points = np.zeros(0)


def log_points(size: int) -> np.ndarray:
    """At least `size` win points: entry 2W + D is P = log10(W + D/2 + 1), by Python's math.log10."""
    global _log_points
    if len(_log_points) < size:
        start, stop = len(_log_points), max(size, 2 * len(_log_points), 4096)
        extra = np.array([math.log10(twice / 2 + 1) for twice in range(start, stop)])
        _log_points = np.concatenate([_log_points, extra])
    return _log_points


def _work_space(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's per-player work arrays, (size, 4) float64 and uint64: the two halves of one
    64-byte row per player, so that a player's work is one cache line."""
    space = np.empty((size, 8), np.uint64)
    return space.view(np.float64)[:, 4:], space[:, :4]


class AppendLog:
    """An append-only numpy buffer shared by successive states.

    Each state remembers how many entries are its own, and entries below that never change:
    appending after a state that is not the newest one first copies that state's entries.
    """

    __slots__ = ("data", "size")

    def __init__(self, values: np.ndarray):
        self.data = values
        self.size = len(values)

    def view(self, length: int) -> np.ndarray:
        """The first `length` entries (a state's own)."""
        return self.data[:length]

    def reserved(self, length: int, extra: int) -> "AppendLog":
        """The log holding the first `length` entries with room for `extra` more after them."""
        log = self if self.size == length else AppendLog(self.data[:length].copy())
        log.data = with_room(log.data, length + extra, used=length)
        return log


def _floats(values: np.ndarray, validity: np.ndarray) -> pa.Array:
    """A float64 array with nulls where the validity bitmap's bit is 0 (no copy)."""
    return array_of(pa.float64(), len(values), values, validity)


def _strings(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array over Arrow-style int32 offsets and UTF-8 bytes (no copy)."""
    return pa.Array.from_buffers(pa.string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _letters(letters: np.ndarray) -> pa.Array:
    """A string array of one-letter strings from their bytes, built straight from buffers."""
    return _strings(np.arange(len(letters) + 1, dtype=np.int32), letters)


@dataclass(frozen=True)
class ClubState:
    """Year-to-date club state; never mutated once returned (steps build a new one).

    Per-player arrays are indexed by the player's number and have room for at least
    `n_players` entries. The year's rows are `year_rows` responsible players in processing
    order; game g owns rows year_starts[g]:year_starts[g + 1]. `members` lists the year's
    players in order of their first game.
    """

    year: int | None
    n_players: int
    players: PlayerNumbers  # shared: the first n_players ids are this state's
    id_order: np.ndarray  # int32: the state's players in id order (the table's last tie-break)
    records: np.ndarray  # (players, 4) int32: wins, draws, losses and (game, opponent) pairs this year
    legacy: np.ndarray  # float64: 0.10 × last December's rating; NaN if the player did not play then
    legacy_players: np.ndarray  # int32: the players with a legacy
    last_rating: np.ndarray  # float64: the previous month's table rating; NaN if not listed then
    table_players: np.ndarray  # int32: the players of the previous month's table
    max_games: int  # the most games any player has this year
    year_rows: int
    year_games: int
    n_members: int
    year_players: AppendLog  # int32
    year_starts: AppendLog  # int64, year_games + 1 entries
    members: AppendLog  # int32


def _empty_year(n: int) -> dict[str, Any]:
    """The year fields of a state with no game yet this year, for n players."""
    return {
        "records": np.zeros((n, 4), np.int32),
        "max_games": 0,
        "year_rows": 0,
        "year_games": 0,
        "n_members": 0,
        "year_players": AppendLog(np.zeros(0, np.int32)),
        "year_starts": AppendLog(np.zeros(1, np.int64)),
        "members": AppendLog(np.zeros(0, np.int32)),
    }


def opened_year(state: ClubState, year: int) -> ClubState:
    """The state at the start of `year`: empty records, legacy 0.10 × the final rating of the
    state's year for players who played in it (none unless `year` follows it directly)."""
    if state.year == year:
        return state
    if state.year is not None and year < state.year:
        raise ValueError(f"club rating stepped backwards from {state.year} to {year}")
    n = state.n_players
    legacy = np.full(n, np.nan)
    if state.year is not None and year == state.year + 1:  # legacy never carries through an empty year
        played = state.records[:n, : kernel.PAIRS].sum(axis=1) > 0
        legacy[played] = LEGACY_SHARE * state.last_rating[:n][played]
    return ClubState(
        year=year,
        n_players=n,
        players=state.players,
        id_order=state.id_order,
        legacy=legacy,
        legacy_players=np.flatnonzero(~np.isnan(legacy)).astype(np.int32),
        last_rating=state.last_rating,
        table_players=state.table_players,
        **_empty_year(n),
    )


def _single(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array (no copy when it has one chunk)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _string_buffers(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 offsets of each row, uint8 bytes they point into) of a string column."""
    return string_buffers(_single(column))


class ClubRating:
    """The club "Rankings Explained" rating: year-to-date P, W% and schedule strength, plus legacy."""

    name: ClassVar[str] = "club"
    title: ClassVar[str] = "Club rating (Rankings Explained)"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = True
    # The pre-month rating of a player the previous table does not list (SPEC §3.5).
    newcomer_rating: ClassVar[float] = 0.0
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (
        0.0,
        None,
    )  # no upper bound: win points grow with volume
    list_column: ClassVar[str | None] = None  # one list
    lists: ClassVar[tuple[str, ...]] = ()
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = ClubRankings
    history_model: ClassVar[type] = ClubHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def initial_state(self) -> ClubState:
        """No year open yet, nobody rated."""
        return ClubState(
            year=None,
            n_players=0,
            players=PlayerNumbers(),
            id_order=_NO_PLAYERS,
            legacy=np.zeros(0),
            legacy_players=_NO_PLAYERS,
            last_rating=np.zeros(0),
            table_players=_NO_PLAYERS,
            **_empty_year(0),
        )

    def state_from_list(self, published: PublishedList) -> ClubState:
        """The end of the list's year (SPEC §2): each listed player's final rating, and a year
        played, so that next year's legacy is 10% of it. The year's games are not known, so
        the state holds one loss per player as the mark of having played; the next year opens
        with empty records."""
        rows = published.rows
        n = rows.num_rows
        offsets, data = _string_buffers(rows.column("player_id"))
        records = np.zeros((n, 4), np.int32)
        records[:, kernel.LOSSES] = 1
        return self.decode_state(
            {
                "year": published.as_of.year,
                "id_offsets": offsets - offsets[0],
                "id_data": data[offsets[0] : offsets[-1]],
                "records": records,
                "legacy": np.full(n, np.nan),
                "last_rating": np.asarray(rows.column("rating").to_numpy(zero_copy_only=False), np.float64),
                "year_players": np.zeros(0, np.int32),
                "year_starts": np.zeros(1, np.int64),
                "members": np.zeros(0, np.int32),
            }
        )

    def step(self, state: ClubState, month_input: MonthInput) -> MonthOutput:
        """Add the month's games to the year so far and recompute the table at the month's end."""
        month, rows = month_input.month, month_input.results
        state = opened_year(state, month.year)
        check_finished_in(rows, month)
        m, n = rows.num_rows, state.n_players
        game_ids = rows.column("game_id")
        year_players = state.year_players.reserved(state.year_rows, m)
        year_starts = state.year_starts.reserved(state.year_games + 1, m)
        members = state.members.reserved(state.n_members, m)
        players = state.players.first(n)
        players.numbers(
            _single(rows.column("responsible_player_id")), out=year_players.data[state.year_rows : state.year_rows + m]
        )
        count = players.count
        id_order = resized(state.id_order, count, keep=n)
        records = copy_with_room(state.records, count)
        last_rating = copy_with_room(state.last_rating, count, np.nan)
        legacy = with_room(state.legacy, count, np.nan, used=n)
        values, limbs = _work_space(count)
        (
            status,
            games,
            n_members,
            (letters, rating_before, listed_before, rating_after),
            order,
            (id_offsets, id_bytes, played),
            counts,
            columns,
            max_games,
        ) = kernel.club_month(
            kernel.MonthRows(*_string_buffers(game_ids), *_string_buffers(rows.column("result"))),
            kernel.Registry(players.offsets, players.pool, id_order, n, count),
            kernel.YearRows(
                year_players.data, state.year_rows, year_starts.data, state.year_games, members.data, state.n_members
            ),
            kernel.PlayerArrays(records, legacy, state.legacy_players, last_rating, state.table_players),
            kernel.WorkSpace(log_points(2 * state.max_games + m + 1), values, limbs),
        )
        year_players.size = state.year_rows + m
        year_starts.size = state.year_games + games + 1
        members.size = n_members
        if status < 0:  # the shared buffers now belong to no state: the next step copies them
            raise ValueError(f"club rating: a player has more than {kernel.MAX_COUNT} opponents in {month.year}")

        rank, won, drawn, lost, games_played = counts
        rating, points, pct, strength, base, carried = columns
        table = pa.Table.from_arrays(
            [
                rank,
                _strings(id_offsets, id_bytes),
                rating,
                won,
                drawn,
                lost,
                games_played,
                points,
                _floats(pct, played),
                _floats(strength, played),
                base,
                carried,
            ],
            schema=RANKINGS_SCHEMA,
        )
        history = pa.Table.from_arrays(
            [
                game_ids,
                rows.column("finished_on"),
                rows.column("responsible_player_id"),
                _floats(rating_before, listed_before),
                rating_after,
                _letters(letters),
            ],
            schema=HISTORY_SCHEMA,
        )
        new_state = ClubState(
            year=state.year,
            n_players=count,
            players=players,
            id_order=id_order,
            records=records,
            legacy=legacy,
            legacy_players=state.legacy_players,
            last_rating=last_rating,
            table_players=order,
            max_games=max_games,
            year_rows=year_players.size,
            year_games=year_starts.size - 1,
            n_members=n_members,
            year_players=year_players,
            year_starts=year_starts,
            members=members,
        )
        return MonthOutput(state=new_state, table=table, history=history)

    def encode_state(self, state: ClubState) -> Any:
        """The state as codec-friendly data: the year, ids as UTF-8 offsets and bytes, exact arrays."""
        n = state.n_players
        id_offsets, id_data = state.players.buffers(n)
        return {
            "year": state.year,
            "id_offsets": id_offsets,
            "id_data": id_data,
            "records": state.records[:n],
            "legacy": state.legacy[:n],
            "last_rating": state.last_rating[:n],
            "year_players": state.year_players.view(state.year_rows),
            "year_starts": state.year_starts.view(state.year_games + 1),
            "members": state.members.view(state.n_members),
        }

    def decode_state(self, data: Any) -> ClubState:
        """Inverse of encode_state."""
        if "id_offsets" not in data:
            raise ValueError("club checkpoint in the format before the compiled kernel: recompute from the start")
        records = np.array(data["records"], np.int32).reshape(-1, 4)
        legacy, last_rating = np.array(data["legacy"], np.float64), np.array(data["last_rating"], np.float64)
        year_players, year_starts = np.array(data["year_players"], np.int32), np.array(data["year_starts"], np.int64)
        members = np.array(data["members"], np.int32)
        offsets = np.array(data["id_offsets"], np.int32)
        id_bytes = np.array(data["id_data"], np.uint8)
        ids = pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(id_bytes))
        players = distinct_numbers(ids, "club rating: the checkpoint lists a player twice")
        return ClubState(
            year=data["year"],
            n_players=players.count,
            players=players,
            id_order=sorted_by_id(np.arange(players.count, dtype=np.int32), players.offsets, players.pool),
            records=records,
            legacy=legacy,
            legacy_players=np.flatnonzero(~np.isnan(legacy)).astype(np.int32),
            last_rating=last_rating,
            table_players=np.flatnonzero(~np.isnan(last_rating)).astype(np.int32),
            max_games=int(records[:, : kernel.PAIRS].sum(axis=1).max(initial=0)),
            year_rows=len(year_players),
            year_games=len(year_starts) - 1,
            n_members=len(members),
            year_players=AppendLog(year_players),
            year_starts=AppendLog(year_starts),
            members=AppendLog(members),
        )
