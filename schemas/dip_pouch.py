"""Output tables of the Dip Pouch Tournament Rating (SPEC §3.1)."""

from __future__ import annotations

import datetime

from pandera.ibis import Field

from schemas.outputs import HistoryBase, RankingsBase


class DipPouchRankings(RankingsBase):
    """Players with at least one event of tournament value above 0."""

    rating: float = Field(
        ge=0, le=100, description="Dip Pouch rating: starts at 40, moves toward each event's percentile."
    )
    events: int = Field(ge=1, description="Events with tournament value above 0.")
    last_event_date: datetime.date = Field(
        nullable=True,
        description="End date of the last event with tournament value above 0 (null for a player of a published list that gave none, until their next event).",
    )
    country: str = Field(nullable=True, description="Registry country first, else the latest nationality.")
    national_rank: int = Field(
        ge=1, nullable=True, description="Rank within country (shared on equal ratings); null without a country."
    )


class DipPouchHistory(HistoryBase):
    """One row per player per event."""

    placement: int = Field(ge=1, description="Placement; shared places repeat the number.")
    num_players: int = Field(ge=2, description="The declared field N.")
    percentile: float = Field(ge=0, le=100, description="(N + 0.5 − placement) / N × 100.")
    tournament_value: float = Field(
        ge=0,
        le=20,
        description="TV: 20 for a World Championship, else N/7+2 or N/3.5+2 capped at 15; 0 before the cut-off.",
    )
