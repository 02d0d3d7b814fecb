"""Dip Pouch Tournament Rating (World Diplomacy Database), SPEC §3.1.

Every player starts at 40; after each event the rating moves TV% of the way toward the
player's percentile in that event.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import ClassVar

import pyarrow as pa

from pipeline.systems.base import MonthInput, MonthOutput, shared_ranks
from schemas.dip_pouch import DipPouchHistory, DipPouchRankings

START_RATING = 40.0
WORLD_CHAMPIONSHIP_VALUE = 20.0
MAX_EVENT_VALUE = 15.0
DEFAULT_CUTOFF_YEAR = 2001

RANKING_COLUMNS = pa.schema([
    ("rank", pa.int64()), ("player_id", pa.string()), ("rating", pa.float64()),
    ("events", pa.int64()), ("last_event_date", pa.date32()), ("country", pa.string()),
    ("national_rank", pa.int64()),
])
HISTORY_COLUMNS = pa.schema([
    ("source_id", pa.string()), ("source_date", pa.date32()), ("player_id", pa.string()),
    ("rating_before", pa.float64()), ("rating_after", pa.float64()),
    ("placement", pa.int64()), ("num_players", pa.int64()), ("percentile", pa.float64()),
    ("tournament_value", pa.float64()),
])


def percentile(num_players: int, placement: int) -> float:
    """(N + 0.5 − placement) / N × 100."""
    return (num_players + 0.5 - placement) / num_players * 100


def tournament_value(num_players: int, rounds: int, is_world_championship: bool,
                     end_date: dt.date, cutoff_year: int = DEFAULT_CUTOFF_YEAR) -> float:
    """TV: 20 for any World Championship; 0 before the cut-off year; else N/7+2 (one round) or N/3.5+2, at most 15."""
    if is_world_championship:
        return WORLD_CHAMPIONSHIP_VALUE
    if end_date.year < cutoff_year:
        return 0.0
    value = num_players / 7 + 2 if rounds == 1 else num_players / 3.5 + 2
    return min(value, MAX_EVENT_VALUE)


def updated_rating(old: float, value: float, pct: float) -> float:
    """new = old + TV/100 × (percentile − old)."""
    return old + value / 100 * (pct - old)


@dataclass
class DipPouchState:
    """Ratings of everyone who played, and the listing facts of rated events."""

    ratings: dict[str, float] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)
    last_event: dict[str, dt.date] = field(default_factory=dict)
    nationality: dict[str, str] = field(default_factory=dict)


class DipPouch:
    """The Dip Pouch Tournament Rating as a monthly system."""

    name: ClassVar[str] = "dip_pouch"
    title: ClassVar[str] = "Dip Pouch Tournament Rating"
    feed: ClassVar[str] = "events"
    ties_share_rank: ClassVar[bool] = True
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)  # a weighted mean of percentiles
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = DipPouchRankings
    history_model: ClassVar[type] = DipPouchHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def __init__(self, cutoff_year: int = DEFAULT_CUTOFF_YEAR):
        self.cutoff_year = int(cutoff_year)

    def initial_state(self) -> DipPouchState:
        return DipPouchState()

    def step(self, state: DipPouchState, month_input: MonthInput) -> MonthOutput:
        """Apply the month's events in order; list everyone with a rated event."""
        state = DipPouchState(dict(state.ratings), dict(state.events), dict(state.last_event),
                              dict(state.nationality))
        history = {name: [] for name in HISTORY_COLUMNS.names}
        rows = month_input.results.to_pylist()
        for row in rows:
            pid = row["player_id"]
            value = tournament_value(row["num_players"], row["rounds"], row["is_world_championship"],
                                     row["end_date"], self.cutoff_year)
            pct = percentile(row["num_players"], row["placement"])
            old = state.ratings.get(pid, START_RATING)
            new = updated_rating(old, value, pct) if value > 0 else None
            if new is not None:
                state.ratings[pid] = new
                state.events[pid] = state.events.get(pid, 0) + 1
                state.last_event[pid] = row["end_date"]
            elif pid not in state.ratings:
                state.ratings[pid] = START_RATING
            if row["nationality"]:
                state.nationality[pid] = row["nationality"]
            for key, val in (("source_id", row["event_id"]), ("source_date", row["end_date"]),
                             ("player_id", pid), ("rating_before", old), ("rating_after", new),
                             ("placement", row["placement"]), ("num_players", row["num_players"]),
                             ("percentile", pct), ("tournament_value", value)):
                history[key].append(val)
        table = self._table(state, month_input)
        return MonthOutput(state, table, pa.table(history, schema=HISTORY_COLUMNS))

    def _table(self, state: DipPouchState, month_input: MonthInput) -> pa.Table:
        listed = sorted(state.events, key=lambda p: (-state.ratings[p], p))
        ratings = [state.ratings[p] for p in listed]
        countries = [country_of(p, month_input.registry, state.nationality) for p in listed]
        return pa.table({
            "rank": shared_ranks(ratings),
            "player_id": listed,
            "rating": ratings,
            "events": [state.events[p] for p in listed],
            "last_event_date": [state.last_event[p] for p in listed],
            "country": countries,
            "national_rank": national_ranks(ratings, countries),
        }, schema=RANKING_COLUMNS)

    def encode_state(self, state: DipPouchState) -> dict:
        return {"ratings": state.ratings, "events": state.events, "last_event": state.last_event,
                "nationality": state.nationality}

    def decode_state(self, data: dict) -> DipPouchState:
        return DipPouchState(dict(data["ratings"]), dict(data["events"]), dict(data["last_event"]),
                             dict(data["nationality"]))


def country_of(player_id: str, registry, nationality: dict[str, str]) -> str | None:
    """Registry country first, else the latest nationality listed in event results."""
    info = registry.get(player_id)
    if info is not None and info.country:
        return info.country
    return nationality.get(player_id)


def national_ranks(ratings_in_order: list[float], countries: list[str | None]) -> list[int | None]:
    """Shared rank (1-2-2-4) within each country for players already in rating order; None without a country."""
    seen: dict[str, int] = {}
    last: dict[str, tuple[float, int]] = {}
    ranks: list[int | None] = []
    for rating, country in zip(ratings_in_order, countries):
        if country is None:
            ranks.append(None)
            continue
        seen[country] = seen.get(country, 0) + 1
        previous = last.get(country)
        rank = previous[1] if previous is not None and previous[0] == rating else seen[country]
        last[country] = (rating, rank)
        ranks.append(rank)
    return ranks
