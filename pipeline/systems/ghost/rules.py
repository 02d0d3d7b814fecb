"""Ghost Rating (SPEC §3.6): webDiplomacy's monthly rating, in four categories.

Every player starts at 100 in each category. A counted game (standard map, not `unranked`)
moves each of its players' ratings by (G / M)·(A − E): G the sum of the players' ratings
before the game, M = 17.5 × the press factor, E the expected share of the game from those
ratings and A the actual share from its result, both by the game's scoring system. A game
counts in `overall` and in each category its press and pace belong to, and each category is
its own rating over its own games. A category lists the players with a game of it in the six
months ending at the snapshot.

Computation: players are numbered by pipeline.systems.kernels.numbering, and the numbers index
per-player arrays with a column per category (rating, games, day of the latest game). Each
month copies them, grown for new players, and one compiled pass (pipeline.systems.ghost.kernel)
rates the month's games in order; the pure-Python reference (pipeline.systems.ghost.reference)
gives the same floats. A state never changes once returned.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.months import Month
from pipeline.systems.base import (
    MonthInput,
    MonthOutput,
    PublishedList,
    history_schema,
    model_columns,
    rankings_schema,
)
from pipeline.systems.games import check_finished_in
from pipeline.systems.ghost import kernel
from pipeline.systems.kernels.arrays import copy_with_room, resized
from pipeline.systems.kernels.numbering import PlayerNumbers, distinct_numbers
from pipeline.systems.kernels.sort import extend_id_order, sorted_by_id
from schemas.ghost import CATEGORIES, LISTING_MONTHS, GhostHistory, GhostRankings

START_RATING = 100.0
# Press factor of M = 17.5 × factor: a game without press moves ratings a quarter as far.
PRESS_FACTORS = {"full": 1.0, "rulebook": 1.0, "public": 2.0, "gunboat": 4.0}
SCORING_CODES = ("draw_size", "sum_of_squares", "ppsc")  # kernel.DRAW_SIZE, SUM_OF_SQUARES, PPSC
RESULT_CODES = ("solo", "draw")  # kernel.SOLO, DRAW; any other result is kernel.OTHER
OVERALL, CLASSIC, GUNBOAT, LIVE = (1 << CATEGORIES.index(c) for c in ("overall", "classic", "gunboat", "live"))

RANKINGS_SCHEMA = rankings_schema(*model_columns(GhostRankings))
HISTORY_SCHEMA = history_schema(*model_columns(GhostHistory))
_EPOCH = dt.date(1970, 1, 1)
_NO_PLAYERS = np.zeros(0, np.int32)
CATEGORY_NAMES = pa.array(CATEGORIES)


@dataclass(frozen=True)
class GhostState:
    """Ratings so far; never mutated once returned. Per-player arrays have a row per player
    number (room for at least `n_players`) and a column per category."""

    n_players: int
    players: PlayerNumbers  # shared: the first n_players ids are this state's
    id_order: np.ndarray  # int32: the players in id order (the tie-break within a rank)
    rating: np.ndarray  # float64 (players, 4); 100 before a player's first game of a category
    games: np.ndarray  # int64 (players, 4): counted games of each category
    last_day: np.ndarray  # int32 (players, 4): days since 1970-01-01 of the latest game, -1 before any


# The columns of a month's rows the rating reads.
RATED_COLUMNS = [
    "game_id",
    "finished_on",
    "supply_centres",
    "responsible_player_id",
    "result",
    "centres",
    "scoring",
    "press",
    "live",
]


def counted_games(rows: pa.Table) -> pa.Table:
    """The month's rows of counted games (the standard map, scoring not `unranked`), in the
    columns the rating reads."""
    counted = pc.and_(pc.equal(rows.column("variant"), "standard"), pc.not_equal(rows.column("scoring"), "unranked"))
    return rows.select(RATED_COLUMNS).filter(counted)


def game_starts(game_ids: pa.Array) -> np.ndarray:
    """Where each game's rows begin (rows are grouped by game), and the number of rows last."""
    n = len(game_ids)
    if n == 0:
        return np.zeros(1, np.int64)
    changes = pc.not_equal(game_ids.slice(1), game_ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    return np.concatenate([[0], np.flatnonzero(changes) + 1, [n]]).astype(np.int64)


def game_categories(press: pa.Array, live: pa.Array, scoring: pa.Array) -> np.ndarray:
    """The categories each game counts in, as bits: every game in overall; classic with full or
    rulebook press, not live, draw-size scoring; gunboat without press, not live; live games."""
    full = pc.is_in(press, pa.array(["full", "rulebook"])).to_numpy(zero_copy_only=False)
    gunboat = pc.equal(press, "gunboat").to_numpy(zero_copy_only=False)
    is_live = live.to_numpy(zero_copy_only=False).astype(bool)
    draw_size = pc.equal(scoring, "draw_size").to_numpy(zero_copy_only=False)
    bits = np.full(len(press), OVERALL, np.int8)
    bits[full & ~is_live & draw_size] |= CLASSIC
    bits[gunboat & ~is_live] |= GUNBOAT
    bits[is_live] |= LIVE
    return bits


def month_games(rows: pa.Table, numbers: np.ndarray) -> kernel.MonthGames:
    """The counted rows as the kernel's arrays."""
    ids = rows.column("game_id").combine_chunks()
    starts = game_starts(ids)
    per_game = rows.select(["finished_on", "supply_centres", "scoring", "press", "live"]).take(pa.array(starts[:-1]))
    press = per_game.column("press").combine_chunks()
    scoring = per_game.column("scoring").combine_chunks()
    factors = np.array([PRESS_FACTORS[p] for p in ("full", "rulebook", "public", "gunboat")])
    press_codes = pc.index_in(press, pa.array(list(PRESS_FACTORS))).to_numpy(zero_copy_only=False)
    return kernel.MonthGames(
        starts=starts,
        players=numbers,
        results=np.asarray(
            pc.fill_null(pc.index_in(rows.column("result"), pa.array(RESULT_CODES)), kernel.OTHER), np.int8
        ),
        centres=np.asarray(rows.column("centres").to_numpy(), np.int64),
        days=np.asarray(per_game.column("finished_on").cast(pa.int32()).to_numpy(), np.int32),
        supply_centres=np.asarray(per_game.column("supply_centres").to_numpy(), np.int64),
        scoring=np.asarray(pc.index_in(scoring, pa.array(SCORING_CODES)).to_numpy(zero_copy_only=False), np.int8),
        press_factor=factors[press_codes],
        categories=game_categories(press, per_game.column("live").combine_chunks(), scoring),
    )


def ranked(players: np.ndarray, ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Players (in id order) sorted by rating, highest first, ids breaking ties; with their
    ranks, equal ratings sharing one (1-2-2-4)."""
    order = players[np.argsort(-ratings[players], kind="stable")]
    sorted_ratings = ratings[order]
    positions = np.arange(1, len(order) + 1, dtype=np.int64)
    starts_rank = np.ones(len(order), np.bool_)
    starts_rank[1:] = sorted_ratings[1:] != sorted_ratings[:-1]
    return order, np.maximum.accumulate(np.where(starts_rank, positions, 0))


def _day_number(day: dt.date) -> int:
    return (day - _EPOCH).days


class GhostRating:
    """webDiplomacy's Ghost Rating: a share of the pot against the share the ratings expected."""

    name: ClassVar[str] = "ghost"
    title: ClassVar[str] = "Ghost Rating (webDiplomacy)"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = True
    newcomer_rating: ClassVar[float] = START_RATING
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)  # a loss takes a share, never all
    list_column: ClassVar[str | None] = "category"
    lists: ClassVar[tuple[str, ...]] = CATEGORIES  # overall first: the one predictive quality scores
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = GhostRankings
    history_model: ClassVar[type] = GhostHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def initial_state(self) -> GhostState:
        """Nobody rated yet."""
        return GhostState(
            n_players=0,
            players=PlayerNumbers(),
            id_order=_NO_PLAYERS,
            rating=np.zeros((0, len(CATEGORIES))),
            games=np.zeros((0, len(CATEGORIES)), np.int64),
            last_day=np.zeros((0, len(CATEGORIES)), np.int32),
        )

    def state_from_list(self, published: PublishedList) -> GhostState:
        """Each listed player's rating, games and last game date in each category listed."""
        rows = published.rows
        ids = rows.column("player_id").combine_chunks()
        players = PlayerNumbers()
        numbers = players.numbers(ids) if len(ids) else _NO_PLAYERS
        n = players.count
        rating = np.full((n, len(CATEGORIES)), START_RATING)
        games = np.zeros((n, len(CATEGORIES)), np.int64)
        last_day = np.full((n, len(CATEGORIES)), -1, np.int32)
        category = np.asarray(pc.index_in(rows.column("category"), pa.array(CATEGORIES)).to_numpy(), np.int64)
        rating[numbers, category] = rows.column("rating").to_numpy()
        games[numbers, category] = rows.column("games").to_numpy()
        last_day[numbers, category] = rows.column("last_game_date").cast(pa.int32()).to_numpy()
        return GhostState(
            n_players=n,
            players=players,
            id_order=sorted_by_id(np.arange(n, dtype=np.int32), players.offsets, players.pool),
            rating=rating,
            games=games,
            last_day=last_day,
        )

    def step(self, state: GhostState, month_input: MonthInput) -> MonthOutput:
        """Rate the month's counted games in order, then list each category at the month's end."""
        rows = counted_games(month_input.results)
        check_finished_in(rows, month_input.month)
        n = state.n_players
        players = state.players.first(n)
        numbers = (
            players.numbers(rows.column("responsible_player_id").combine_chunks()) if rows.num_rows else _NO_PLAYERS
        )
        count = players.count
        arrays = kernel.PlayerArrays(
            copy_with_room(state.rating, count, START_RATING, used=n),
            copy_with_room(state.games, count, 0, used=n),
            copy_with_room(state.last_day, count, -1, used=n),
        )
        id_order = resized(state.id_order, count, keep=n)
        extend_id_order(id_order, n, count, players.offsets, players.pool)
        row, category, expected, actual, before, after = kernel.rate_games(month_games(rows, numbers), arrays)
        new_state = GhostState(count, players, id_order, *arrays)
        return MonthOutput(
            state=new_state,
            table=self.month_table(new_state, month_input.month),
            history=_history(rows, row, category, expected, actual, before, after),
        )

    def month_table(self, state: GhostState, month: Month) -> pa.Table:
        """Each category's listed players in rank order, the categories one after another."""
        since = _day_number(month.shift(-LISTING_MONTHS).last_day)
        order = state.id_order[: state.n_players]
        listed = (state.games[order] > 0) & (state.last_day[order] > since)  # (players in id order, category)
        players, ranks = zip(*(ranked(order[listed[:, c]], state.rating[:, c]) for c in range(len(CATEGORIES))))
        category = np.repeat(np.arange(len(CATEGORIES), dtype=np.int8), [len(p) for p in players])
        player = np.concatenate(players)
        return pa.Table.from_arrays(
            [
                pa.array(np.concatenate(ranks)),
                state.players.ids(state.n_players).take(pa.array(player)),
                pa.array(state.rating[player, category]),
                CATEGORY_NAMES.take(pa.array(category)),
                pa.array(state.games[player, category]),
                pa.array(state.last_day[player, category], pa.int32()).cast(pa.date32()),
            ],
            schema=RANKINGS_SCHEMA,
        )

    def encode_state(self, state: GhostState) -> Any:
        """The state as codec-friendly data: ids as UTF-8 offsets and bytes, exact arrays."""
        n = state.n_players
        id_offsets, id_data = state.players.buffers(n)
        return {
            "id_offsets": id_offsets,
            "id_data": id_data,
            "rating": state.rating[:n],
            "games": state.games[:n],
            "last_day": state.last_day[:n],
        }

    def decode_state(self, data: Any) -> GhostState:
        """Inverse of encode_state."""
        offsets = np.array(data["id_offsets"], np.int32)
        id_bytes = np.array(data["id_data"], np.uint8)
        ids = pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(id_bytes))
        players = distinct_numbers(ids, "ghost rating: the checkpoint lists a player twice")
        columns = len(CATEGORIES)
        return GhostState(
            n_players=players.count,
            players=players,
            id_order=sorted_by_id(np.arange(players.count, dtype=np.int32), players.offsets, players.pool),
            rating=np.array(data["rating"], np.float64).reshape(-1, columns),
            games=np.array(data["games"], np.int64).reshape(-1, columns),
            last_day=np.array(data["last_day"], np.int32).reshape(-1, columns),
        )


def _history(rows: pa.Table, row, category, expected, actual, before, after) -> pa.Table:
    """The month's history rows: per game, category and player, in the order rated."""
    game = rows.select(["game_id", "finished_on", "responsible_player_id", "scoring"]).take(pa.array(row))
    return pa.Table.from_arrays(
        [
            game.column("game_id"),
            game.column("finished_on"),
            game.column("responsible_player_id"),
            pa.array(before),
            pa.array(after),
            CATEGORY_NAMES.take(pa.array(category)),
            game.column("scoring"),
            pa.array(expected),
            pa.array(actual),
        ],
        schema=HISTORY_SCHEMA,
    )
