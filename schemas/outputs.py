"""Columns every system's rankings and history tables share; each system's module extends them."""

from __future__ import annotations

import datetime

from pandera.ibis import DataFrameModel, Field


class RankingsBase(DataFrameModel):
    """A month's ranking snapshot: one row per listed player, sorted by rank then player_id."""

    system: str = Field(description="Rating system name, e.g. dip_pouch.")
    as_of: datetime.date = Field(description="Last day of the snapshot month.")
    rank: int = Field(ge=1, description="1-based rank; equal ratings share a rank unless the system breaks ties.")
    player_id: str = Field(description="Player identifier from the feeds.")
    player_name: str = Field(
        nullable=True, description="Registry name first, else the latest feed name up to the snapshot."
    )
    rating: float = Field(description="The system's rating (float64).")
    rank_change: int = Field(
        nullable=True, description="Previous month's rank minus this rank (positive = up); null if not listed then."
    )
    rating_change: float = Field(
        nullable=True, description="Rating minus previous month's rating; null if not listed then."
    )
    peak_rating: float = Field(description="Highest month-end rating among the months listed so far.")

    class Config:
        strict = True
        ordered = True
        coerce = False


class HistoryBase(DataFrameModel):
    """One row per player per game or event in the month."""

    system: str = Field(description="Rating system name.")
    source_id: str = Field(description="game_id or event_id.")
    source_date: datetime.date = Field(description="finished_on of the game or end_date of the event.")
    player_id: str = Field(description="The responsible player the row belongs to.")
    rating_before: float = Field(nullable=True, description="Rating before the game or event (null if unrated).")
    rating_after: float = Field(nullable=True, description="Rating after; null where the row does not change a rating.")

    class Config:
        strict = True
        ordered = True
        coerce = False
