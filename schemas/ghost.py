"""Pandera (Ibis) models of Ghost Rating's outputs (SPEC §3.6, §4)."""

from __future__ import annotations

import datetime

import ibis
import ibis.expr.types as ir
from pandera.ibis import Field, IbisData, dataframe_check

from schemas.outputs import HistoryBase, RankingsBase

CATEGORIES = ("overall", "classic", "gunboat", "live")
RATED_SCORINGS = ("draw_size", "sum_of_squares", "ppsc")
LISTING_MONTHS = 6  # a player is listed while his last game of the category is this recent


class GhostRankings(RankingsBase):
    """A month's Ghost Rating tables, one per category: rank, rank change and peak are per category."""

    rating: float = Field(gt=0.0, description="Ghost Rating in the category, unrounded (shown with two decimals).")
    category: str = Field(
        isin=list(CATEGORIES),
        description="overall (every counted game), classic, gunboat or live: each its own rating over its own games.",
    )
    games: int = Field(ge=1, description="Counted games of the category the player has finished so far.")
    last_game_date: datetime.date = Field(
        description="Finish date of the player's latest game of the category; listed while within 6 months."
    )

    @dataframe_check
    def last_game_within_six_months(cls, data: IbisData) -> ir.BooleanColumn:
        """A listed player finished a game of the category in the 6 months ending at as_of."""
        table = data.table
        since = table.as_of - ibis.interval(months=LISTING_MONTHS)
        return (table.last_game_date > since) & (table.last_game_date <= table.as_of)


class GhostHistory(HistoryBase):
    """One row per player, game and category the game counts in."""

    rating_before: float = Field(gt=0.0, description="Rating in the category before the game (100 for a newcomer).")
    rating_after: float = Field(gt=0.0, description="Rating in the category after the game.")
    category: str = Field(isin=list(CATEGORIES), description="The category this row rates.")
    scoring: str = Field(
        isin=list(RATED_SCORINGS), description="The game's scoring system: draw_size, sum_of_squares or ppsc."
    )
    expected: float = Field(ge=0.0, le=1.0, description="Expected share E of the game, from the ratings before it.")
    actual: float = Field(ge=0.0, le=1.0, description="Actual share A of the game, from its result and scoring.")
