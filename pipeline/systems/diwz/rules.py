"""DiWZ, the German Diplomacy-Wertungszahl (seed 004, SPEC §3.4).

An Elo variant for whole games: every rated game gives each responsible player one pairwise
result (1, 0.5 or 0, from the finish order in pipeline.systems.diwz.finish) against every
opponent who already holds a rating. A rated player is evaluated once at least three such
results are at hand; fewer wait and are pooled with the player's next game. Newcomers either
collect results until an iterated first rating (Erstzahl, rule 2.6) or start at 1600-0.

The month's work runs in compiled kernels (pipeline.systems.diwz.kernel) over arrays: one
reads the month's rows straight from the Arrow buffers (games, finish keys), one rates every
game of the month and applies the strike-off, one orders the list. This module numbers the
players (the shared pipeline.systems.kernels.numbering, one numbering shared by successive
states), keeps their records in numpy arrays indexed by those numbers, each month's state a
copy of the last one's, and turns the kernels' arrays into the month's Arrow tables.
pipeline.systems.diwz.reference states the same rules in plain Python;
pipeline.systems.diwz.finish states the finish order.

History rows, one per responsible player per rated game (the non-responsible half of a
replacement gets none):
  evaluation       rating_before R, rating_after the new rating, score/opponents/niveau/
                   expected over every result evaluated (earlier waiting ones included),
                   performance TE, pooled true iff earlier results were included,
                   evaluations the new count.
  waiting          (rated player, fewer than three results so far) rating_before R,
                   rating_after null, score/opponents/niveau/expected over this game's own
                   results only, performance null, pooled false, evaluations unchanged.
  newcomer         rating_before null, rating_after null, score/opponents/niveau over this
                   game's results, expected/performance/evaluations null, pooled false.
  first rating     rating_before null, rating_after the Erstzahl, score/opponents/niveau over
                   every collected result, expected and performance computed at the first
                   rating, pooled true iff results from earlier games were included,
                   evaluations 1.

Where the rules are silent:
  - start_1600 (and the bootstrap month) gives a newcomer 1600-0 before the game is evaluated,
    so they are rated opponents in it and evaluated by it, as in the seed's first example.
  - The bootstrap applies only when no initial list is given; a list being continued keeps
    rule 2.6 for its newcomers from the first game on.
  - An entry of `initial_ratings` starts its strike-off clock on the first day of the first month with a
    rated game (the day it was "given" as far as the data knows).
  - A rating stands through exactly two years after its last evaluation (or the day a
    never-evaluated rating was given) and is struck off at the first game or month end after
    that day.
  - Sums of W run in the order the results were gathered (waiting ones first, then the game's
    opponents in power order), so the float result is reproducible.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Mapping, Sequence

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
from pipeline.systems.diwz import kernel
from pipeline.systems.diwz.kernel import (  # noqa: F401  (the rule constants, re-exported)
    DEVELOPMENT,
    MAX_FIRST_RATING_STEPS,
    MIN_FIRST_RESULTS,
    MIN_RESULTS,
    SCALE,
    SLOPE,
    START_RATING,
    STRIKE_OFF_YEARS,
)
from pipeline.systems.kernels.arrays import resized
from pipeline.systems.kernels.ids import array_of, boolean_bits, kept_rows, string_buffers, validity_bits
from pipeline.systems.kernels.numbering import PlayerNumbers, distinct_numbers
from pipeline.systems.kernels.sort import extend_id_order
from schemas.diwz import DiWZHistory, DiWZRankings

ERSTZAHL = "erstzahl"
START_1600 = "start_1600"
NEWCOMER_MODES = (ERSTZAHL, START_1600)

Result = tuple[float, int]  # (pairwise score, the opponent's rating before the game)

RANKINGS_SCHEMA = rankings_schema(*model_columns(DiWZRankings))

HISTORY_SCHEMA = history_schema(*model_columns(DiWZHistory))

EPOCH = dt.date(1970, 1, 1)
NO_DAY = kernel.NO_DAY

# The record fields a checkpoint stores as they are; keeps_until and the collections' rows are
# derived again on decoding, and the collected results are stored flat.
STORED_FIELDS = (
    "rated",
    "rating",
    "evaluations",
    "last_evaluated",
    "rated_since",
    "pending_count",
    "pending_score",
    "pending_opponent",
    "collected_count",
)


@functools.cache
def w_table() -> np.ndarray:
    """W for every whole rating difference the kernel reads from a table."""
    return kernel.expectation_table(kernel.TEN)


def day_number(day: dt.date) -> int:
    return (day - EPOCH).days


def day_of(number: int) -> dt.date | None:
    return None if number == NO_DAY else EPOCH + dt.timedelta(days=int(number))


# --- state ----------------------------------------------------------------------------------


class PlayerIndex:
    """The players' numbers (a PlayerNumbers) and `order`, every number in id order (the list
    breaks rating ties with it). Successive states share one index; each state knows how many
    of its ids are its own (`DiWZState.count`), so numbering new ids never changes what an
    earlier state sees."""

    def __init__(self, numbers: PlayerNumbers | None = None, order: np.ndarray | None = None) -> None:
        self.numbers = PlayerNumbers() if numbers is None else numbers
        self.order = np.zeros(0, dtype=np.int64) if order is None else order  # the numbers in id order
        self.rank = np.zeros(0, dtype=np.int64)  # each number's place in `order`
        self._extend_order(len(self.order))

    @classmethod
    def of(cls, ids: Sequence[str] | pa.Array) -> "PlayerIndex":
        """An index of distinct ids, numbered in their order."""
        ids = ids if isinstance(ids, pa.Array) else pa.array(list(ids), pa.string())
        return cls(distinct_numbers(ids, "DiWZ: a player id comes twice among the state's players"))

    @property
    def count(self) -> int:
        return self.numbers.count

    def number(self, ids: pa.Array) -> np.ndarray:
        """Each id's number; ids not seen before get the next ones."""
        known = self.count
        numbers = self.numbers.numbers(ids)
        if self.count > known:
            self._extend_order(known)
        return numbers

    def _extend_order(self, known: int) -> None:
        """`order` and `rank` with the ids from number `known` on merged in."""
        order = np.empty(self.count, dtype=np.int64)
        order[:known] = self.order[:known]
        extend_id_order(order, known, self.count, *self.buffers())
        self.order = order
        self.rank = np.empty(self.count, dtype=np.int64)
        self.rank[order] = np.arange(self.count)

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """Every id as Arrow string offsets and bytes, in number order."""
        return string_buffers(self.numbers.ids())

    def ids(self, count: int) -> list[str]:
        """The first `count` ids, in number order."""
        return self.arrow(count).to_pylist()

    def fork(self, count: int) -> "PlayerIndex":
        """An index of the first `count` ids only (for a state that is stepped a second time)."""
        return PlayerIndex(self.numbers.first(count), self.order[self.order < count])

    def arrow(self, count: int) -> pa.StringArray:
        """The first `count` ids as an Arrow array (a view: take from it, do not keep it)."""
        return self.numbers.ids().slice(0, count)


def values(array: pa.Array) -> np.ndarray:
    """The values of a fixed-width Arrow array without copying (undefined where null)."""
    dtype = np.dtype(array.type.to_pandas_dtype()) if not pa.types.is_date32(array.type) else np.dtype(np.int32)
    if len(array) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=dtype.itemsize * array.offset)


@dataclass(frozen=True)
class PlayerArrays:
    """Every player's record (kernel.RECORD) by player number, and the newcomers' collected
    results (kernel.COLLECTED rows, the first `collected_rows` in use, the rest room for the
    month's)."""

    records: np.ndarray  # kernel.RECORD [players]
    collected: np.ndarray  # kernel.COLLECTED [rows]
    collected_rows: int

    @classmethod
    def empty(cls, players: int = 0) -> "PlayerArrays":
        records = np.empty(players, dtype=kernel.RECORD)
        records[:] = kernel.UNKNOWN_PLAYER
        return cls(records, np.zeros(0, dtype=kernel.COLLECTED), 0)

    def copy_with_room(self, known: int, players: int, results: int) -> "PlayerArrays":
        """An independent copy of the first `known` records, the next up to `players` those of
        players never seen, the collected results kept by their players only, with room for
        `results` more."""
        records = resized(self.records, players, kernel.UNKNOWN_PLAYER, keep=known)
        scores, opponents = kernel.flatten_collections(self.records, known, self.collected)
        collected = kernel.linked_collections(records, known, scores, opponents, results)
        return PlayerArrays(records, collected, len(scores))

    def collected_results(self, player: int) -> list[Result]:
        """A player's collected results, in order."""
        results: list[Result] = []
        row = int(self.records[player]["collected_last"])
        for _ in range(int(self.records[player]["collected_count"])):
            results.append((int(self.collected[row]["score"]) / 2, int(self.collected[row]["opponent"])))
            row = int(self.collected[row]["previous"])
        return results[::-1]


@dataclass(frozen=True)
class PlayerRecord:
    """One player's standing, read from the arrays: a rating (None for a newcomer) and the
    results not yet used."""

    rating: int | None
    evaluations: int
    last_evaluated: dt.date | None
    rated_since: dt.date | None  # the day a never-evaluated rating was given
    pending: list[Result]  # rated player: results waiting (n < 3)
    collected: list[Result]  # newcomer: results toward the Erstzahl


@dataclass(frozen=True)
class DiWZState:
    """Everything the next month needs: the bootstrap month, the player numbering (the first
    `count` players of `index` are this state's) and every player's record."""

    first_month: Month | None
    index: PlayerIndex
    count: int
    arrays: PlayerArrays

    @property
    def players(self) -> "PlayerRecords":
        """The records by player id (read-only)."""
        return PlayerRecords(self)


class PlayerRecords(Mapping[str, PlayerRecord]):
    """A state's player records by id, built on access (for inspection, not for the step)."""

    def __init__(self, state: DiWZState) -> None:
        self._state = state
        self._numbers = {player_id: number for number, player_id in enumerate(state.index.ids(state.count))}

    def __getitem__(self, player_id: str) -> PlayerRecord:
        number = self._numbers[player_id]
        arrays = self._state.arrays
        record = arrays.records[number]
        return PlayerRecord(
            rating=int(record["rating"]) if record["rated"] else None,
            evaluations=int(record["evaluations"]),
            last_evaluated=day_of(record["last_evaluated"]),
            rated_since=day_of(record["rated_since"]),
            pending=[
                (int(record["pending_score"][slot]) / 2, int(record["pending_opponent"][slot]))
                for slot in range(int(record["pending_count"]))
            ],
            collected=arrays.collected_results(number),
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return self._state.count


# --- the month's games as arrays ------------------------------------------------------------


@dataclass(frozen=True)
class MonthGames:
    """The month's rated games: per game its first row and day; per row (power, in processing
    order) the responsible player's number and its finish value."""

    game_start: np.ndarray  # int64 [games + 1]
    game_day: np.ndarray  # int64 [games]
    finish: np.ndarray  # int64 [rows], finish values (kernel.parse_month)
    players: np.ndarray  # int32 [rows]
    results_needed: int  # the most results the month's newcomers could collect
    game_id: pa.Array
    finished_on: pa.Array
    player_id: pa.Array

    @property
    def games(self) -> int:
        return len(self.game_day)


def month_games(results: pa.Table, index: PlayerIndex) -> MonthGames:
    """The month's rows (GAME_COLUMNS in processing order) as the rated games' arrays; numbers
    the players the index does not know yet."""

    def array(name: str) -> pa.Array:
        column = results.column(name)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()

    def numbers(name: str, fill: int) -> np.ndarray:
        column = array(name)
        return values(pc.fill_null(column, fill) if column.null_count else column)

    game_id, player_id, finished_on = array("game_id"), array("responsible_player_id"), array("finished_on")
    rated = array("rated")
    if rated.null_count:
        rated = pc.fill_null(rated, False)
    year = array("eliminated_year")
    game_start, game_day, keep, finish, results_needed, kept_games, kept_players, kept_days = kernel.parse_month(
        string_buffers(game_id),
        string_buffers(array("result")),
        string_buffers(player_id),
        (boolean_bits(rated), rated.offset),
        values(finished_on.view(pa.int32())),
        numbers("supply_centres", 34),
        numbers("centres", 0),
        (values(year), validity_bits(year), year.offset),
    )
    kept = len(finish)
    if kept < results.num_rows:
        if game_id.null_count or player_id.null_count or finished_on.null_count:
            game_id, finished_on, player_id = kept_rows(keep, game_id, finished_on, player_id)
        else:  # the kernel copied the kept rows' ids and days
            game_id = pa.StringArray.from_buffers(kept, *(pa.py_buffer(buffer) for buffer in kept_games))
            player_id = pa.StringArray.from_buffers(kept, *(pa.py_buffer(buffer) for buffer in kept_players))
            finished_on = array_of(pa.date32(), kept, kept_days)
    players = index.number(player_id)
    return MonthGames(game_start, game_day, finish, players, results_needed, game_id, finished_on, player_id)


# --- the system -----------------------------------------------------------------------------


class DiWZ:
    """The DiWZ list, month by month (SPEC §3.4)."""

    name: ClassVar[str] = "diwz"
    title: ClassVar[str] = "DiWZ (Diplomacy-Wertungszahl)"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = True
    # The pre-month rating of a player the previous table does not list (SPEC §3.5).
    newcomer_rating: ClassVar[float] = 1600.0
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (
        100.0,
        3500.0,
    )  # plausible Elo-style numbers; outside means a defect
    list_column: ClassVar[str | None] = None  # one list
    lists: ClassVar[tuple[str, ...]] = ()
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = DiWZRankings
    history_model: ClassVar[type] = DiWZHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def __init__(
        self,
        newcomers: str = ERSTZAHL,
        initial_ratings: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        """newcomers: "erstzahl" or "start_1600"; initial_ratings: an existing list, player_id -> (rating, evaluations)."""
        if newcomers not in NEWCOMER_MODES:
            raise ValueError(f"DiWZ newcomers must be one of {NEWCOMER_MODES}, not {newcomers!r}")
        self.newcomers = newcomers
        self.initial_ratings = checked_initial_ratings(initial_ratings or {})

    def initial_state(self) -> DiWZState:
        """The existing list (if any): established players whose clock starts with the data."""
        ids = list(self.initial_ratings)
        arrays = PlayerArrays.empty(len(ids))
        if ids:
            entries = np.array(list(self.initial_ratings.values()), dtype=np.int64)
            arrays.records["rated"][: len(ids)] = True
            arrays.records["rating"][: len(ids)] = entries[:, 0]
            arrays.records["evaluations"][: len(ids)] = entries[:, 1]
        return DiWZState(first_month=None, index=PlayerIndex.of(ids), count=len(ids), arrays=arrays)

    def state_from_list(self, published: PublishedList) -> DiWZState:
        """The published list as established players (SPEC §2): each rating with its evaluations
        and last evaluation; a 1600-0 entry's strike-off clock starts at the list's day. The
        list's month counts as the first month, so no bootstrap follows (rule 2.6 from the start)."""
        rows = published.rows
        ids = rows.column("player_id").to_pylist()
        records = np.empty(len(ids), dtype=kernel.RECORD)
        records[:] = kernel.UNKNOWN_PLAYER
        records["rated"] = True
        records["rating"] = np.asarray(rows.column("rating").to_numpy(zero_copy_only=False), np.float64).astype(
            np.int64
        )
        records["evaluations"] = rows.column("evaluations").to_numpy(zero_copy_only=False)
        last = [NO_DAY if day is None else day_number(day) for day in rows.column("last_evaluated").to_pylist()]
        records["last_evaluated"] = last
        records["rated_since"] = np.where(records["evaluations"] == 0, day_number(published.as_of), NO_DAY)
        month = published.month
        return self.decode_state(
            {
                "first_month": (month.year, month.month),
                "ids": ids,
                **{name: records[name] for name in STORED_FIELDS},
                "collected_score": np.zeros(0, np.int8),
                "collected_opponent": np.zeros(0, np.int64),
            }
        )

    def step(self, state: DiWZState, month_input: MonthInput) -> MonthOutput:
        """Evaluate the month's rated games in order, strike off expired ratings, list the rest."""
        month = month_input.month
        index = state.index if state.index.count == state.count else state.index.fork(state.count)
        games = month_games(month_input.results, index)
        count = index.count
        arrays = state.arrays.copy_with_room(state.count, count, games.results_needed)

        first_month = state.first_month
        clock_day = NO_DAY
        if first_month is None and games.games:
            first_month = month
            clock_day = day_number(month.first_day)
        bootstrap = self.newcomers == ERSTZAHL and not self.initial_ratings and month == first_month
        history = kernel.rate_month(
            (games.game_start, games.game_day, games.finish, games.players),
            arrays.records,
            arrays.collected,
            arrays.collected_rows,
            (self.newcomers == START_1600 or bootstrap, clock_day, day_number(month.last_day)),
            (w_table(), kernel.TEN),
        )
        return MonthOutput(
            state=DiWZState(first_month=first_month, index=index, count=count, arrays=arrays),
            table=rankings_table(index, count, arrays),
            history=history_table(games, history),
        )

    def encode_state(self, state: DiWZState) -> Any:
        """The state as codec-friendly data (pipeline.core.state_codec): ids and numpy arrays."""
        n = state.count
        records = state.arrays.records[:n]
        scores, opponents = kernel.flatten_collections(state.arrays.records, n, state.arrays.collected)
        return {
            "first_month": None if state.first_month is None else (state.first_month.year, state.first_month.month),
            "ids": state.index.arrow(n),
            **{name: np.ascontiguousarray(records[name]) for name in STORED_FIELDS},
            "collected_score": scores,
            "collected_opponent": opponents,
        }

    def decode_state(self, data: Any) -> DiWZState:
        """Inverse of encode_state."""
        if "players" in data:
            data = _from_records(data)
        first_month = data["first_month"]
        ids = data["ids"]
        n = len(ids)
        records = PlayerArrays.empty(n).records
        for name in STORED_FIELDS:
            records[name] = np.asarray(data[name]).reshape(records[name].shape)
        kernel.set_keeps_until(records, n)
        scores = np.asarray(data["collected_score"], dtype=np.int8)
        collected = kernel.linked_collections(
            records, n, scores, np.asarray(data["collected_opponent"], dtype=np.int64), 0
        )
        return DiWZState(
            first_month=None if first_month is None else Month(*first_month),
            index=PlayerIndex.of(ids),
            count=n,
            arrays=PlayerArrays(records, collected, len(scores)),
        )


def _from_records(data: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint written with one record per player (rating, evaluations, last_evaluated,
    rated_since, pending, collected) in the form encode_state writes now."""
    players = data["players"]
    records = np.empty(len(players), dtype=kernel.RECORD)
    records[:] = kernel.UNKNOWN_PLAYER
    scores: list[int] = []
    opponents: list[int] = []
    for record, (rating, evaluations, last_evaluated, rated_since, pending, collected) in zip(
        records, players.values()
    ):
        record["rated"] = rating is not None
        record["rating"] = 0 if rating is None else rating
        record["evaluations"] = evaluations
        record["last_evaluated"] = NO_DAY if last_evaluated is None else day_number(last_evaluated)
        record["rated_since"] = NO_DAY if rated_since is None else day_number(rated_since)
        record["pending_count"] = len(pending)
        for slot, (score, opponent) in enumerate(pending):
            record["pending_score"][slot] = round(2 * score)
            record["pending_opponent"][slot] = opponent
        record["collected_count"] = len(collected)
        scores.extend(round(2 * score) for score, _ in collected)
        opponents.extend(int(opponent) for _, opponent in collected)
    return {
        "first_month": data["first_month"],
        "ids": list(players),
        **{name: records[name] for name in STORED_FIELDS},
        "collected_score": np.array(scores, dtype=np.int8),
        "collected_opponent": np.array(opponents, dtype=np.int64),
    }


# --- month-level helpers --------------------------------------------------------------------


def checked_initial_ratings(initial: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The existing list as {player_id: (rating, evaluations)}, rejecting malformed entries."""
    checked: dict[str, tuple[int, int]] = {}
    for player_id in sorted(initial):
        entry = initial[player_id]
        if not isinstance(player_id, str) or not player_id:
            raise ValueError(f"DiWZ initial_ratings: player id must be a non-empty string, not {player_id!r}")
        if (
            not isinstance(entry, (tuple, list))
            or len(entry) != 2
            or not all(isinstance(value, int) and not isinstance(value, bool) for value in entry)
            or entry[1] < 0
        ):
            raise ValueError(
                f"DiWZ initial_ratings[{player_id!r}] must be (rating, evaluations) as integers "
                f"with evaluations >= 0, not {entry!r}"
            )
        checked[player_id] = (entry[0], entry[1])
    return checked


def history_table(games: MonthGames, columns: tuple[np.ndarray, np.ndarray, np.ndarray]) -> pa.Table:
    """The month's history rows from the kernel's columns (see kernel.rate_month), in
    processing order."""
    floats, integers, flags = columns
    rows = floats.shape[1]
    pooled, before_ok, after_ok, niveau_ok, expected_ok, performance_ok, evaluations_ok = np.packbits(
        flags, axis=1, bitorder="little"
    )

    def column(kind: pa.DataType, data: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
        return array_of(kind, rows, data, valid)

    return pa.Table.from_arrays(
        [
            games.game_id,
            games.finished_on,
            games.player_id,
            column(pa.float64(), floats[0], before_ok),
            column(pa.float64(), floats[1], after_ok),
            column(pa.float64(), floats[2]),
            column(pa.int64(), integers[0]),
            column(pa.float64(), floats[3], niveau_ok),
            column(pa.float64(), floats[4], expected_ok),
            column(pa.float64(), floats[5], performance_ok),
            column(pa.bool_(), pooled),
            column(pa.int64(), integers[1], evaluations_ok),
        ],
        schema=HISTORY_SCHEMA,
    )


def rankings_table(index: PlayerIndex, count: int, arrays: PlayerArrays) -> pa.Table:
    """The list: established players by rating desc, then player_id; equal ratings share a rank."""
    columns, rating, last_evaluated, id_offsets, ids, offsets, text = kernel.rankings(
        arrays.records, count, index.rank, *index.buffers()
    )
    listed = len(rating)
    dated = np.packbits(last_evaluated != NO_DAY, bitorder="little")
    return pa.Table.from_arrays(
        [
            array_of(pa.int64(), listed, columns[0]),
            pa.StringArray.from_buffers(listed, pa.py_buffer(id_offsets), pa.py_buffer(ids)),
            array_of(pa.float64(), listed, rating),
            array_of(pa.int64(), listed, columns[1]),
            pa.StringArray.from_buffers(listed, pa.py_buffer(offsets), pa.py_buffer(text)),
            array_of(pa.date32(), listed, last_evaluated, dated),
        ],
        schema=RANKINGS_SCHEMA,
    )


def display(rating: int, evaluations: int) -> str:
    """The published form of a DiWZ, e.g. 1797-5."""
    return f"{rating}-{evaluations}"
