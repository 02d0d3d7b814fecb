"""DiWZ, the German Diplomacy-Wertungszahl (seed 004, SPEC §3.4).

An Elo variant for whole games: every rated game gives each responsible player one pairwise
result (1, 0.5 or 0, from the finish order in pipeline.systems.diwz_finish) against every
opponent who already holds a rating. A rated player is evaluated once at least three such
results are at hand; fewer wait and are pooled with the player's next game. Newcomers either
collect results until an iterated first rating (Erstzahl, rule 2.6) or start at 1600-0.

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
  - An initial list entry's strike-off clock starts on the first day of the first month with a
    rated game (the day it was "given" as far as the data knows).
  - A rating stands through exactly two years after its last evaluation (or the day a
    never-evaluated rating was given) and is struck off at the first game or month end after
    that day.
  - Sums of W run in the order the results were gathered (waiting ones first, then the game's
    opponents in power order), so the float result is reproducible.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

import pyarrow as pa

from pipeline.months import Month, add_years
from pipeline.rounding import half_up_int
from pipeline.systems.base import MonthInput, MonthOutput, shared_ranks
from pipeline.systems.diwz_finish import finish_keys, pairwise_score
from pipeline.systems.games import Game, games_from_rows
from schemas.diwz import DiWZHistory, DiWZRankings

ERSTZAHL = "erstzahl"
START_1600 = "start_1600"
NEWCOMER_MODES = (ERSTZAHL, START_1600)

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

Result = tuple[float, int]   # (pairwise score, the opponent's rating before the game)

RANKINGS_SCHEMA = pa.schema(
    [
        ("rank", pa.int64()),
        ("player_id", pa.string()),
        ("rating", pa.float64()),
        ("evaluations", pa.int64()),
        ("display", pa.string()),
        ("last_evaluated", pa.date32()),
    ]
)

HISTORY_SCHEMA = pa.schema(
    [
        ("source_id", pa.string()),
        ("source_date", pa.date32()),
        ("player_id", pa.string()),
        ("rating_before", pa.float64()),
        ("rating_after", pa.float64()),
        ("score", pa.float64()),
        ("opponents", pa.int64()),
        ("niveau", pa.float64()),
        ("expected", pa.float64()),
        ("performance", pa.float64()),
        ("pooled", pa.bool_()),
        ("evaluations", pa.int64()),
    ]
)


# --- the formulas ---------------------------------------------------------------------------


def expectation(rating: float, opponent_rating: float) -> float:
    """W: the share of a point a player of `rating` is expected to take off one opponent (rule 2.1)."""
    return 1.0 / (1.0 + 10.0 ** (-SLOPE * (rating - opponent_rating)))


def expected_score(rating: float, results: Sequence[Result]) -> float:
    """We: the sum of W over the results, in the order they were played."""
    total = 0.0
    for _score, opponent_rating in results:
        total += expectation(rating, opponent_rating)
    return total


def total_score(results: Sequence[Result]) -> float:
    """P: the points of the results."""
    total = 0.0
    for score, _opponent_rating in results:
        total += score
    return total


def mean_opponent_rating(results: Sequence[Result]) -> float | None:
    """Niv: the opponents' mean rating, unrounded; None without opponents."""
    if not results:
        return None
    return sum(opponent_rating for _score, opponent_rating in results) / len(results)


def performance_rating(rating: float, score: float, expected: float, count: int) -> float:
    """TE = R + (P - We) * 800 / n (rule 2.4)."""
    return rating + (score - expected) * SCALE / count


def evaluated_rating(rating: int, performance: float, count: int) -> int:
    """New DiWZ = R + (TE - R) * n / (20 + n), rounded half up to an integer (rule 2.5)."""
    return half_up_int(rating + (performance - rating) * count / (DEVELOPMENT + count))


def first_rating(results: Sequence[Result]) -> int | None:
    """The Erstzahl from collected results (rule 2.6), or None while the rule does not allow one."""
    count = len(results)
    score = total_score(results)
    if count < MIN_FIRST_RESULTS or score == 0 or score == count:
        return None
    rating = float(START_RATING)
    for _ in range(MAX_FIRST_RATING_STEPS):
        following = rating + (score - expected_score(rating, results)) * SCALE / (DEVELOPMENT + count)
        # "bis die Zahl vor dem Komma sich nicht mehr ändert": unrounded steps, integer parts compared.
        if math.floor(following) == math.floor(rating):
            return math.floor(following)
        rating = following
    return math.floor(rating)


# --- state ----------------------------------------------------------------------------------


@dataclass(slots=True)
class PlayerRecord:
    """One player's standing: a rating (or None for a newcomer) and the results not yet used."""

    rating: int | None = None
    evaluations: int = 0
    last_evaluated: dt.date | None = None
    rated_since: dt.date | None = None     # the day a never-evaluated rating was given
    pending: list[Result] = field(default_factory=list)    # rated player: results waiting (n < 3)
    collected: list[Result] = field(default_factory=list)  # newcomer: results toward the Erstzahl
    keeps_until: dt.date | None = None     # last day the rating stands without a new evaluation
    collected_score: float = 0.0           # P of `collected` (scores are halves: sums are exact)

    def copy(self) -> "PlayerRecord":
        """An independent copy (the step copies before it changes a record)."""
        return PlayerRecord(
            self.rating, self.evaluations, self.last_evaluated, self.rated_since,
            list(self.pending), list(self.collected), self.keeps_until, self.collected_score,
        )


@dataclass(frozen=True)
class DiWZState:
    """Everything the next month needs: the bootstrap month and every player's record."""

    first_month: Month | None
    players: Mapping[str, PlayerRecord]


def rating_keeps_until(last_evaluated: dt.date | None, rated_since: dt.date | None) -> dt.date | None:
    """The last day a rating stays valid: two years after its last evaluation, or after it was given."""
    anchor = last_evaluated if last_evaluated is not None else rated_since
    return None if anchor is None else add_years(anchor, STRIKE_OFF_YEARS)


def strike_off(record: PlayerRecord) -> None:
    """Remove the rating: the player is a newcomer again, with nothing waiting or collected."""
    record.rating = None
    record.evaluations = 0
    record.last_evaluated = None
    record.rated_since = None
    record.pending = []
    record.collected = []
    record.collected_score = 0.0
    record.keeps_until = None


def establish_at_start(record: PlayerRecord, day: dt.date) -> None:
    """Give a newcomer the start rating 1600-0 on `day` (start_1600 and the bootstrap month)."""
    record.rating = START_RATING
    record.evaluations = 0
    record.last_evaluated = None
    record.rated_since = day
    record.pending = []
    record.collected = []
    record.collected_score = 0.0
    record.keeps_until = rating_keeps_until(None, day)


# --- one player's update in one game --------------------------------------------------------

HistoryFields = tuple[
    float | None, float | None, float, int, float | None, float | None, float | None, bool, int | None
]  # rating_before, rating_after, score, opponents, niveau, expected, performance, pooled, evaluations


def rate_established(record: PlayerRecord, results: list[Result], day: dt.date) -> HistoryFields:
    """Evaluate a rated player's waiting and new results, or let them wait (rule 2.5)."""
    # `record` is the step's own copy, so it is updated in place; the return is the history row.
    rating = record.rating
    waiting = record.pending
    combined = waiting + results
    count = len(combined)
    if count < MIN_RESULTS:
        record.pending = combined
        return (
            float(rating), None, total_score(results), len(results), mean_opponent_rating(results),
            expected_score(rating, results), None, False, record.evaluations,
        )
    score = total_score(combined)
    expected = expected_score(rating, combined)
    performance = performance_rating(rating, score, expected, count)
    record.rating = evaluated_rating(rating, performance, count)
    record.evaluations += 1
    record.last_evaluated = day
    record.pending = []
    record.keeps_until = rating_keeps_until(day, record.rated_since)
    return (
        float(rating), float(record.rating), score, count, mean_opponent_rating(combined),
        expected, performance, bool(waiting), record.evaluations,
    )


def rate_newcomer(record: PlayerRecord, results: list[Result], day: dt.date) -> HistoryFields:
    """Collect a newcomer's results and give the Erstzahl once the rule allows (rule 2.6)."""
    had_earlier = bool(record.collected)
    # The record is this month's own copy: extending in place keeps a long 0% / 100% record cheap.
    record.collected.extend(results)
    record.collected_score += total_score(results)
    collected = record.collected
    count = len(collected)
    mixed = 0 < record.collected_score < count
    rating = first_rating(collected) if results and count >= MIN_FIRST_RESULTS and mixed else None
    if rating is None:
        return (None, None, total_score(results), len(results), mean_opponent_rating(results), None, None, False, None)
    score = record.collected_score
    expected = expected_score(rating, collected)
    record.rating = rating
    record.evaluations = 1
    record.last_evaluated = day
    record.rated_since = day
    record.collected = []
    record.collected_score = 0.0
    record.pending = []
    record.keeps_until = rating_keeps_until(day, day)
    return (
        None, float(rating), score, count, mean_opponent_rating(collected), expected,
        performance_rating(rating, score, expected, count), had_earlier, 1,
    )


# --- the system -----------------------------------------------------------------------------


class DiWZ:
    """The DiWZ list, month by month (SPEC §3.4)."""

    name: ClassVar[str] = "diwz"
    title: ClassVar[str] = "DiWZ (Diplomacy-Wertungszahl)"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = True
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (100.0, 3500.0)  # plausible Elo-style numbers; outside means a defect
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
        players = {
            player_id: PlayerRecord(rating=rating, evaluations=evaluations)
            for player_id, (rating, evaluations) in self.initial_ratings.items()
        }
        return DiWZState(first_month=None, players=players)

    def step(self, state: DiWZState, month_input: MonthInput) -> MonthOutput:
        """Evaluate the month's rated games in order, strike off expired ratings, list the rest."""
        month = month_input.month
        games = [game for game in games_from_rows(month_input.results) if game.rated]
        players: dict[str, PlayerRecord] = dict(state.players)
        owned: set[str] = set()

        def own(player_id: str) -> PlayerRecord:
            # Copy on first change this month so the caller's state stays as it was.
            if player_id not in owned:
                record = players.get(player_id)
                players[player_id] = record.copy() if record is not None else PlayerRecord()
                owned.add(player_id)
            return players[player_id]

        first_month = state.first_month
        if first_month is None and games:
            first_month = month
            start_initial_clocks(players, own, month.first_day)
        bootstrap = self.newcomers == ERSTZAHL and not self.initial_ratings and month == first_month

        history = {name: [] for name in HISTORY_SCHEMA.names}
        for game in games:
            self.rate_game(game, own, bootstrap, history)
        strike_off_expired(players, own, month.last_day)

        return MonthOutput(
            state=DiWZState(first_month=first_month, players=players),
            table=rankings_table(players),
            history=pa.table(history, schema=HISTORY_SCHEMA),
        )

    def rate_game(
        self,
        game: Game,
        own: Callable[[str], PlayerRecord],
        bootstrap: bool,
        history: dict[str, list],
    ) -> None:
        """Apply one rated game to its responsible players and append their history rows."""
        day = game.finished_on
        player_ids = [power.player_id for power in game.powers]
        records = [own(player_id) for player_id in player_ids]
        for record in records:
            if record.keeps_until is not None and day > record.keeps_until:
                strike_off(record)
            if record.rating is None and (self.newcomers == START_1600 or bootstrap):
                # Established before the game is evaluated, so they are rated opponents in it
                # (seed example 1: the 1600-0 players count and are evaluated).
                establish_at_start(record, day)
        ratings_before = [record.rating for record in records]
        keys = finish_keys(game)
        for index, record in enumerate(records):
            own_key = keys[index]
            results = [
                (pairwise_score(own_key, keys[other]), ratings_before[other])
                for other in range(len(records))
                if other != index and ratings_before[other] is not None
            ]
            if ratings_before[index] is None:
                fields = rate_newcomer(record, results, day)
            else:
                fields = rate_established(record, results, day)
            append_history_row(history, game, player_ids[index], fields)

    def encode_state(self, state: DiWZState) -> Any:
        """The state as codec-friendly data (pipeline.state_codec)."""
        return {
            "first_month": None if state.first_month is None else (state.first_month.year, state.first_month.month),
            "players": {
                player_id: (
                    record.rating, record.evaluations, record.last_evaluated, record.rated_since,
                    [list(result) for result in record.pending],
                    [list(result) for result in record.collected],
                )
                for player_id, record in state.players.items()
            },
        }

    def decode_state(self, data: Any) -> DiWZState:
        """Inverse of encode_state."""
        first_month = data["first_month"]
        players = {}
        for player_id, (rating, evaluations, last_evaluated, rated_since, pending, collected) in data["players"].items():
            collected_results = [(float(score), int(opponent)) for score, opponent in collected]
            players[player_id] = PlayerRecord(
                rating=rating,
                evaluations=evaluations,
                last_evaluated=last_evaluated,
                rated_since=rated_since,
                pending=[(float(score), int(opponent)) for score, opponent in pending],
                collected=collected_results,
                keeps_until=None if rating is None else rating_keeps_until(last_evaluated, rated_since),
                collected_score=total_score(collected_results),
            )
        return DiWZState(first_month=None if first_month is None else Month(*first_month), players=players)


# --- month-level helpers --------------------------------------------------------------------


def checked_initial_ratings(initial: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The existing list as {player_id: (rating, evaluations)}, rejecting malformed entries."""
    checked: dict[str, tuple[int, int]] = {}
    for player_id in sorted(initial):
        entry = initial[player_id]
        if not isinstance(player_id, str) or not player_id:
            raise ValueError(f"DiWZ initial_ratings: player id must be a non-empty string, not {player_id!r}")
        if (
            not isinstance(entry, (tuple, list)) or len(entry) != 2
            or not all(isinstance(value, int) and not isinstance(value, bool) for value in entry)
            or entry[1] < 0
        ):
            raise ValueError(
                f"DiWZ initial_ratings[{player_id!r}] must be (rating, evaluations) as integers "
                f"with evaluations >= 0, not {entry!r}"
            )
        checked[player_id] = (entry[0], entry[1])
    return checked


def start_initial_clocks(
    players: Mapping[str, PlayerRecord], own: Callable[[str], PlayerRecord], day: dt.date
) -> None:
    """Start the strike-off clock of the initial list's entries on the first day of the data."""
    for player_id, record in list(players.items()):
        if record.rating is not None and record.keeps_until is None:
            changed = own(player_id)
            changed.rated_since = day
            changed.keeps_until = rating_keeps_until(None, day)


def strike_off_expired(
    players: Mapping[str, PlayerRecord], own: Callable[[str], PlayerRecord], day: dt.date
) -> None:
    """Strike off every rating not evaluated for two years as of the month end `day`."""
    expired = [
        player_id for player_id, record in players.items()
        if record.keeps_until is not None and day > record.keeps_until
    ]
    for player_id in expired:
        strike_off(own(player_id))


def rankings_table(players: Mapping[str, PlayerRecord]) -> pa.Table:
    """The list: established players by rating desc, then player_id; equal ratings share a rank."""
    listed = sorted(
        ((record.rating, player_id, record) for player_id, record in players.items() if record.rating is not None),
        key=lambda entry: (-entry[0], entry[1]),
    )
    ratings = [float(rating) for rating, _player_id, _record in listed]
    return pa.table(
        {
            "rank": shared_ranks(ratings),
            "player_id": [player_id for _rating, player_id, _record in listed],
            "rating": ratings,
            "evaluations": [record.evaluations for _rating, _player_id, record in listed],
            "display": [display(record.rating, record.evaluations) for _rating, _player_id, record in listed],
            "last_evaluated": [record.last_evaluated for _rating, _player_id, record in listed],
        },
        schema=RANKINGS_SCHEMA,
    )


def display(rating: int, evaluations: int) -> str:
    """The published form of a DiWZ, e.g. 1797-5."""
    return f"{rating}-{evaluations}"


def append_history_row(history: dict[str, list], game: Game, player_id: str, fields: HistoryFields) -> None:
    """Add one player's row for a game to the month's history columns."""
    rating_before, rating_after, score, opponents, niveau, expected, performance, pooled, evaluations = fields
    history["source_id"].append(game.game_id)
    history["source_date"].append(game.finished_on)
    history["player_id"].append(player_id)
    history["rating_before"].append(rating_before)
    history["rating_after"].append(rating_after)
    history["score"].append(score)
    history["opponents"].append(opponents)
    history["niveau"].append(niveau)
    history["expected"].append(expected)
    history["performance"].append(performance)
    history["pooled"].append(pooled)
    history["evaluations"].append(evaluations)
