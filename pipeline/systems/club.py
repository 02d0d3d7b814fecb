"""The club "Rankings Explained" rating (SPEC §3.2, seed 002).

Each month's table is the year-to-date rating: P = log10(W + D/2 + 1), W% = (W + D/2) / GP,
S = the mean of the opponents' W% over every (game, opponent) pair, base = P × (W% + S) / 2 × 100,
plus a legacy of 0.10 × last December's rating for players who played last year.

The month's cost is O(players + month rows + opponents of the players who played this month):
the state keeps, per player, the year-to-date record, the count of games against each opponent
and the exact sum Σ count × W%(opponent) as an integer scaled by 2**SCALE_BITS. When a player's
W% changes, only the sums of that player's opponents move, by count × the change.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

import pyarrow as pa

from pipeline.months import Month
from pipeline.systems.base import MonthInput, MonthOutput, shared_ranks
from pipeline.systems.games import Game, games_from_rows
from schemas.club import ClubHistory, ClubRankings

# Every W% float is (W + D/2) / GP rounded to float64, so it is a multiple of 2**-(52 + bits of
# 2·GP); 128 bits keep it an exact integer for any GP below 2**70, making S's sum exact.
SCALE_BITS = 128
LEGACY_SHARE = 0.1
RESULT_LETTER = {"solo": "W", "draw": "D"}  # SPEC §3.2 decision: everything else is a loss.

RANKINGS_SCHEMA = pa.schema(
    [
        ("rank", pa.int64()),
        ("player_id", pa.string()),
        ("rating", pa.float64()),
        ("wins", pa.int64()),
        ("draws", pa.int64()),
        ("losses", pa.int64()),
        ("games", pa.int64()),
        ("win_points", pa.float64()),
        ("win_pct", pa.float64()),
        ("schedule_strength", pa.float64()),
        ("base_rating", pa.float64()),
        ("legacy", pa.float64()),
    ]
)

HISTORY_SCHEMA = pa.schema(
    [
        ("source_id", pa.string()),
        ("source_date", pa.date32()),
        ("player_id", pa.string()),
        ("rating_before", pa.float64()),
        ("rating_after", pa.float64()),
        ("result", pa.string()),
    ]
)

# A record is (wins, draws, losses, opponent pairs) for the year so far.
Record = tuple[int, int, int, int]
NO_RECORD: Record = (0, 0, 0, 0)


@dataclass(frozen=True)
class ClubState:
    """Year-to-date club state; never mutated once returned (steps build a new one)."""

    year: int | None
    records: dict[str, Record]
    opponents: dict[str, dict[str, int]]  # player -> opponent -> games together this year
    schedule_sums: dict[str, int]  # player -> Σ count × W%(opponent) × 2**SCALE_BITS
    legacy: dict[str, float]  # players who played last year -> 0.10 × their December rating
    last_ratings: dict[str, float]  # the previous month's table


@dataclass(frozen=True)
class ClubRow:
    """One listed player's values at a month end."""

    player_id: str
    rating: float
    wins: int
    draws: int
    losses: int
    games: int
    win_points: float
    win_pct: float | None
    schedule_strength: float | None
    base_rating: float
    legacy: float


def result_letter(result: str) -> str:
    """W for a solo, D for a draw member, L for survived, eliminated or anarchy."""
    return RESULT_LETTER.get(result, "L")


def recorded(record: Record, letter: str, opponent_count: int) -> Record:
    """The record after one more game with this result against this many opponents."""
    wins, draws, losses, pairs = record
    return (
        wins + (letter == "W"),
        draws + (letter == "D"),
        losses + (letter == "L"),
        pairs + opponent_count,
    )


def win_points(wins: int, draws: int) -> float:
    """P = log10(W + D/2 + 1)."""
    return math.log10(wins + draws / 2 + 1)


def win_pct(wins: int, draws: int, games: int) -> float:
    """W% = (W + D/2) / GP."""
    return (wins + draws / 2) / games


def scaled_win_pct(record: Record) -> int:
    """The record's W% float as an exact integer multiple of 2**-SCALE_BITS (0 with no game)."""
    wins, draws, losses, _ = record
    games = wins + draws + losses
    if games == 0:
        return 0
    numerator, denominator = win_pct(wins, draws, games).as_integer_ratio()
    scaled, remainder = divmod(numerator << SCALE_BITS, denominator)
    if remainder:
        raise ValueError(f"W% of a {games}-game record is too fine for SCALE_BITS={SCALE_BITS}")
    return scaled


def schedule_strength(schedule_sum: int, pairs: int) -> float:
    """S = Σ opponents' W% / pairs, rounded once from the exact sum (int / int is correctly rounded)."""
    return schedule_sum / (pairs << SCALE_BITS)


def base_rating(points: float, pct: float, strength: float) -> float:
    """base = P × (W% + S) / 2 × 100, in the seed's order of operations."""
    return points * (pct + strength) / 2 * 100


def club_row(player_id: str, record: Record, schedule_sum: int, legacy: float) -> ClubRow:
    """A player's table values from their year-to-date record, S sum and legacy."""
    wins, draws, losses, pairs = record
    games = wins + draws + losses
    points = win_points(wins, draws)
    if games == 0:
        return ClubRow(player_id, legacy, 0, 0, 0, 0, points, None, None, 0.0, legacy)
    pct = win_pct(wins, draws, games)
    strength = schedule_strength(schedule_sum, pairs)
    base = base_rating(points, pct, strength)
    return ClubRow(player_id, base + legacy, wins, draws, losses, games, points, pct, strength, base, legacy)


def year_table(state: ClubState) -> list[ClubRow]:
    """Every listed player (played this year, or played last year) in rank order."""
    listed = set(state.records) | set(state.legacy)
    rows = [
        club_row(
            player,
            state.records.get(player, NO_RECORD),
            state.schedule_sums.get(player, 0),
            state.legacy.get(player, 0.0),
        )
        for player in listed
    ]
    rows.sort(key=lambda row: (-row.rating, row.player_id))
    return rows


def next_year_legacy(state: ClubState, year: int) -> dict[str, float]:
    """Legacy for `year`: 0.10 × the final rating of the state's year, for players who played in it."""
    if state.year is None or year != state.year + 1:
        return {}  # legacy never carries through an empty year
    return {
        row.player_id: LEGACY_SHARE * row.rating
        for row in year_table(state)
        if row.player_id in state.records
    }


def opened_year(state: ClubState, year: int) -> ClubState:
    """The state at the start of `year`: empty records, legacy from the year before."""
    if state.year == year:
        return state
    if state.year is not None and year < state.year:
        raise ValueError(f"club rating stepped backwards from {state.year} to {year}")
    return ClubState(
        year=year,
        records={},
        opponents={},
        schedule_sums={},
        legacy=next_year_legacy(state, year),
        last_ratings=state.last_ratings,
    )


def responsible_players(game: Game) -> list[str]:
    """The game's responsible players, one per power, in feed order."""
    return [power.player_id for power in game.powers]


def with_month_games(state: ClubState, games: Iterable[Game]) -> ClubState:
    """The state after adding a month's games (all in the state's year) to the year so far."""
    start_records = state.records
    records = dict(start_records)
    opponents = dict(state.opponents)
    sums = dict(state.schedule_sums)
    copied: set[str] = set()  # inner opponent dicts already copied in this step
    start_pct: dict[str, int] = {}  # W% in the sums so far, computed once per player

    def counted_pct(player: str) -> int:
        """The player's start-of-month W%, scaled: the value the sums currently hold for them."""
        if player not in start_pct:
            start_pct[player] = scaled_win_pct(start_records.get(player, NO_RECORD))
        return start_pct[player]

    for game in games:
        players = responsible_players(game)
        for power in game.powers:
            player = power.player_id
            records[player] = recorded(
                records.get(player, NO_RECORD), result_letter(power.result), len(players) - 1
            )
            if player not in copied:
                opponents[player] = dict(opponents.get(player, {}))
                copied.add(player)
            faced = opponents[player]
            added = 0
            for opponent in players:
                if opponent != player:
                    faced[opponent] = faced.get(opponent, 0) + 1
                    # Counted at the W% already in the sums; corrected below with the rest.
                    added += counted_pct(opponent)
            sums[player] = sums.get(player, 0) + added
    # Only players who played this month changed W%; move their opponents' sums by the change.
    for player in copied:
        change = scaled_win_pct(records[player]) - counted_pct(player)
        if change:
            for opponent, count in opponents[player].items():
                sums[opponent] += count * change
    return ClubState(
        year=state.year,
        records=records,
        opponents=opponents,
        schedule_sums=sums,
        legacy=state.legacy,
        last_ratings=state.last_ratings,
    )


def rankings_table(rows: list[ClubRow]) -> pa.Table:
    """The month's table in rank order, equal ratings sharing a rank."""
    ratings = [row.rating for row in rows]
    return pa.table(
        {
            "rank": shared_ranks(ratings),
            "player_id": [row.player_id for row in rows],
            "rating": ratings,
            "wins": [row.wins for row in rows],
            "draws": [row.draws for row in rows],
            "losses": [row.losses for row in rows],
            "games": [row.games for row in rows],
            "win_points": [row.win_points for row in rows],
            "win_pct": [row.win_pct for row in rows],
            "schedule_strength": [row.schedule_strength for row in rows],
            "base_rating": [row.base_rating for row in rows],
            "legacy": [row.legacy for row in rows],
        },
        schema=RANKINGS_SCHEMA,
    )


def history_table(games: list[Game], before: Mapping[str, float], after: Mapping[str, float]) -> pa.Table:
    """One row per responsible player per game, in processing order, with month-end ratings."""
    source_id: list[str] = []
    source_date: list[dt.date] = []
    player_id: list[str] = []
    result: list[str] = []
    for game in games:
        for power in game.powers:
            source_id.append(game.game_id)
            source_date.append(game.finished_on)
            player_id.append(power.player_id)
            result.append(result_letter(power.result))
    return pa.table(
        {
            "source_id": source_id,
            "source_date": source_date,
            "player_id": player_id,
            "rating_before": [before.get(player) for player in player_id],
            "rating_after": [after[player] for player in player_id],
            "result": result,
        },
        schema=HISTORY_SCHEMA,
    )


def check_games_in_month(games: list[Game], month: Month) -> None:
    """Refuse games outside the stepped month: a year-to-date table would silently go wrong."""
    for game in games:
        if Month.of(game.finished_on) != month:
            raise ValueError(f"game {game.game_id} finished {game.finished_on}, not in {month}")


class ClubRating:
    """The club "Rankings Explained" rating: year-to-date P, W% and schedule strength, plus legacy."""

    name: ClassVar[str] = "club"
    title: ClassVar[str] = "Club rating (Rankings Explained)"
    feed: ClassVar[str] = "games"
    ties_share_rank: ClassVar[bool] = True
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)  # no upper bound: win points grow with volume
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = ClubRankings
    history_model: ClassVar[type] = ClubHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def initial_state(self) -> ClubState:
        """No year open yet, nobody rated."""
        return ClubState(year=None, records={}, opponents={}, schedule_sums={}, legacy={}, last_ratings={})

    def step(self, state: ClubState, month_input: MonthInput) -> MonthOutput:
        """Add the month's games to the year so far and recompute the table at the month's end."""
        month = month_input.month
        games = games_from_rows(month_input.results)
        check_games_in_month(games, month)
        new_state = with_month_games(opened_year(state, month.year), games)
        rows = year_table(new_state)
        ratings = {row.player_id: row.rating for row in rows}
        history = history_table(games, state.last_ratings, ratings)
        final_state = ClubState(
            year=new_state.year,
            records=new_state.records,
            opponents=new_state.opponents,
            schedule_sums=new_state.schedule_sums,
            legacy=new_state.legacy,
            last_ratings=ratings,
        )
        return MonthOutput(state=final_state, table=rankings_table(rows), history=history)

    def encode_state(self, state: ClubState) -> Any:
        """The state as codec-friendly plain data (dicts, lists, ints, floats)."""
        return {
            "year": state.year,
            "records": {player: list(record) for player, record in state.records.items()},
            "opponents": state.opponents,
            "schedule_sums": state.schedule_sums,
            "legacy": state.legacy,
            "last_ratings": state.last_ratings,
        }

    def decode_state(self, data: Any) -> ClubState:
        """Inverse of encode_state."""
        return ClubState(
            year=data["year"],
            records={player: tuple(record) for player, record in data["records"].items()},
            opponents={player: dict(faced) for player, faced in data["opponents"].items()},
            schedule_sums=dict(data["schedule_sums"]),
            legacy=dict(data["legacy"]),
            last_ratings=dict(data["last_ratings"]),
        )
