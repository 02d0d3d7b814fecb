"""Ghost Rating (SPEC §3.6) in plain Python, game by game: the obviously-correct version the
tests hold the compiled kernel to."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pipeline.core.months import Month
from pipeline.systems.ghost.rules import PRESS_FACTORS, START_RATING
from schemas.ghost import CATEGORIES, LISTING_MONTHS

BASE_DIVISOR = 17.5


@dataclass(frozen=True)
class Seat:
    """One responsible player's end of a game."""

    player_id: str
    result: str
    centres: int


@dataclass(frozen=True)
class GhostGame:
    game_id: str
    finished_on: dt.date
    supply_centres: int
    scoring: str
    press: str
    live: bool
    seats: tuple[Seat, ...]


@dataclass
class Standing:
    """A player's rating, counted games and latest game in one category."""

    rating: float = START_RATING
    games: int = 0
    last_game: dt.date | None = None


@dataclass
class ReferenceGhost:
    standings: dict[tuple[str, str], Standing] = field(default_factory=dict)  # (category, player) -> standing
    history: list[dict] = field(default_factory=list)


def categories_of(game: GhostGame) -> list[str]:
    """The categories a counted game belongs to."""
    found = ["overall"]
    if game.press in ("full", "rulebook") and not game.live and game.scoring == "draw_size":
        found.append("classic")
    if game.press == "gunboat" and not game.live:
        found.append("gunboat")
    if game.live:
        found.append("live")
    return found


def expected(ratings: list[float], scoring: str, supply_centres: int) -> list[float]:
    """E_i: the share of the game the ratings before it expect."""
    total = sum(ratings)
    if scoring == "sum_of_squares":
        squares = sum(r * r for r in ratings)
        return [r * r / squares for r in ratings]
    first = [r / total for r in ratings]
    if scoring == "draw_size":
        return first
    victory = supply_centres // 2 + 1
    rest = []
    for m, share in enumerate(first):
        against = 0.0
        for k, other in enumerate(first):
            if k != m:
                against += other * share / (1.0 - other)
        rest.append((1.0 - share) * against)
    rest_total = sum(rest)
    return [
        (victory * first[i] + (supply_centres - victory) * rest[i] / rest_total) / supply_centres
        for i in range(len(first))
    ]


def actual(seats: tuple[Seat, ...], scoring: str, supply_centres: int) -> list[float]:
    """A_i: the share of the game the result gives."""
    if any(s.result == "solo" for s in seats):
        if scoring == "ppsc":
            return [s.centres / supply_centres for s in seats]
        return [1.0 if s.result == "solo" else 0.0 for s in seats]
    members = [s for s in seats if s.result == "draw"]
    squares = 0.0
    for s in members:
        squares += s.centres * s.centres
    if scoring == "sum_of_squares":
        return [s.centres * s.centres / squares if s.result == "draw" else 0.0 for s in seats]
    return [1.0 / len(members) if s.result == "draw" else 0.0 for s in seats]


def rate(reference: ReferenceGhost, game: GhostGame) -> None:
    """Apply one counted game to every category it belongs to."""
    shares = actual(game.seats, game.scoring, game.supply_centres)
    for category in categories_of(game):
        standings = [reference.standings.setdefault((category, s.player_id), Standing()) for s in game.seats]
        ratings = [s.rating for s in standings]
        expect = expected(ratings, game.scoring, game.supply_centres)
        step = sum(ratings) / (BASE_DIVISOR * PRESS_FACTORS[game.press])
        for seat, standing, before, e, a in zip(game.seats, standings, ratings, expect, shares):
            standing.rating = before + step * (a - e)
            standing.games += 1
            standing.last_game = game.finished_on
            reference.history.append(
                {
                    "source_id": game.game_id,
                    "player_id": seat.player_id,
                    "category": category,
                    "expected": e,
                    "actual": a,
                    "rating_before": before,
                    "rating_after": standing.rating,
                }
            )


def table(reference: ReferenceGhost, month: Month) -> list[dict]:
    """Each category's listed players at the month's end, in rank order."""
    since = month.shift(-LISTING_MONTHS).last_day
    rows = []
    for category in CATEGORIES:
        listed = sorted(
            (
                (player, s)
                for (c, player), s in reference.standings.items()
                if c == category and s.last_game is not None and s.last_game > since
            ),
            key=lambda item: (-item[1].rating, item[0]),
        )
        rank = 0
        for position, (player, s) in enumerate(listed, start=1):
            if position == 1 or s.rating != listed[position - 2][1].rating:
                rank = position
            rows.append(
                {
                    "category": category,
                    "rank": rank,
                    "player_id": player,
                    "rating": s.rating,
                    "games": s.games,
                    "last_game_date": s.last_game,
                }
            )
    return rows


def counted_games(rows: list[dict]) -> list[GhostGame]:
    """The counted games (standard map, scoring not `unranked`) of game rows (dicts of
    GAME_COLUMNS, multi-site powers merged, in processing order)."""
    games: dict[str, list[dict]] = {}
    for row in rows:
        if row["variant"] == "standard" and row["scoring"] != "unranked":
            games.setdefault(row["game_id"], []).append(row)
    return [
        GhostGame(
            game_id=game_id,
            finished_on=powers[0]["finished_on"],
            supply_centres=powers[0]["supply_centres"],
            scoring=powers[0]["scoring"],
            press=powers[0]["press"],
            live=bool(powers[0]["live"]),
            seats=tuple(Seat(p["responsible_player_id"], p["result"], p["centres"]) for p in powers),
        )
        for game_id, powers in games.items()
    ]
