"""Pandera (Ibis) models of the club "Rankings Explained" rating's outputs (SPEC §3.2, §4)."""

from __future__ import annotations

import ibis.expr.types as ir
from pandera.ibis import Field, IbisData, dataframe_check

from schemas.outputs import HistoryBase, RankingsBase


class ClubRankings(RankingsBase):
    """A month's club table: year-to-date records, P, W%, S, base rating and legacy."""

    wins: int = Field(ge=0, description="Games won (solos) in the year so far.")
    draws: int = Field(ge=0, description="Games drawn (draw member) in the year so far.")
    losses: int = Field(ge=0, description="Games lost (survived, eliminated or anarchy) in the year so far.")
    games: int = Field(ge=0, description="Games played in the year so far (wins + draws + losses).")
    win_points: float = Field(ge=0.0, description="Win points P = log10(W + D/2 + 1), unrounded.")
    win_pct: float = Field(
        nullable=True,
        ge=0.0,
        le=1.0,
        description="Winning percentage W% = (W + D/2) / GP as a fraction (0..1); null without a game this year.",
    )
    schedule_strength: float = Field(
        nullable=True,
        ge=0.0,
        le=1.0,
        description=(
            "Strength of schedule S: mean of the opponents' W% (same snapshot) over every (game, "
            "opponent) pair this year; null without a game this year."
        ),
    )
    base_rating: float = Field(ge=0.0, description="P × (W% + S) / 2 × 100 for this year; 0 without a game this year.")
    legacy: float = Field(
        ge=0.0,
        description="0.10 × the player's December rating of the previous year if they played then, else 0.",
    )

    @dataframe_check
    def games_add_up(cls, data: IbisData) -> ir.BooleanColumn:
        """games = wins + draws + losses."""
        table = data.table
        return table.games == table.wins + table.draws + table.losses

    @dataframe_check
    def percentages_null_exactly_without_games(cls, data: IbisData) -> ir.BooleanColumn:
        """win_pct and schedule_strength are null exactly when the player has no game this year."""
        table = data.table
        no_games = table.games == 0
        return (table.win_pct.isnull() == no_games) & (table.schedule_strength.isnull() == no_games)

    @dataframe_check
    def rating_is_base_plus_legacy(cls, data: IbisData) -> ir.BooleanColumn:
        """rating = base_rating + legacy (the float sum, so equality is exact)."""
        table = data.table
        return table.rating == table.base_rating + table.legacy


class ClubHistory(HistoryBase):
    """One row per player per game; rating_before/after are month-end table ratings.

    rating_before is the player's rating in the previous month's table (null if not listed
    then) and rating_after their rating in this month's table: the club rating is recomputed
    from the year so far at each month end, not updated game by game.
    """

    rating_before: float = Field(
        nullable=True,
        description=(
            "The player's rating in the previous month's club table (null if not listed then); "
            "the club rating is recomputed from the year so far at each month end."
        ),
    )
    rating_after: float = Field(
        description="The player's rating in this month's club table (at the month's end, after all its games).",
    )
    result: str = Field(
        isin=["W", "D", "L"],
        description="The game's result for this player: W (solo), D (draw member), L (anything else).",
    )
