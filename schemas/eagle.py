"""Pandera (Ibis) models of the Eagle points outputs: rankings, history and awards (SPEC §3.3, §4)."""

from __future__ import annotations

import datetime

from pandera.ibis import DataFrameModel, Field

from schemas.outputs import HistoryBase, RankingsBase

PLAYER_OF_THE_MONTH = "player_of_the_month"  # the one monthly award; the others are the year's titles
AWARD_NAMES = (
    PLAYER_OF_THE_MONTH,
    "king_of_the_mountain",
    "most_valuable_victory",
    "runner_of_the_year",
    "rookie_of_the_year",
)

# The largest contribution of one position (positions 1-3) and the smallest of a listed or
# unlisted player who did not anarchy; an anarchy contributes 0.
MAX_CONTRIBUTION = 2.00
MIN_NEW_EAGLES = 0.50


class EagleRankings(RankingsBase):
    """A month's Eagle table: points of the last 10 finished games, one row per listed player.

    No upper bound is declared on `points`: with the default (standard, 7 powers) variant a
    table stays under 140 (10 x 13.96), but a configured variant with more powers may exceed it.
    """

    points: float = Field(
        ge=0,
        description="Eagle points: the sum of the points of the player's last 10 finished games (same value as rating).",
    )
    games: int = Field(
        ge=1,
        description="Finished games counted for the player (all of them, not only the last 10); restarts after a more-than-7-year absence.",
    )
    last_game_date: datetime.date = Field(
        description="Date the player's last counted game finished; listing needs it less than 2 years before as_of."
    )
    points_to_defend: float = Field(
        ge=0,
        nullable=True,
        description="Points of the game that drops out of the last 10 at the player's next game; null under 10 games.",
    )
    new_eagles: float = Field(
        ge=MIN_NEW_EAGLES,
        le=MAX_CONTRIBUTION,
        description="Contribution this table position gives to a game next month: round_half_up(0.5 + (601 - rank)/400, 2) up to rank 602, else 0.50.",
    )


class EagleHistory(HistoryBase):
    """One row per responsible player per counted game, in processing order."""

    contribution: float = Field(
        ge=0,
        le=MAX_CONTRIBUTION,
        description="What this player's table position added to the game value (0 for an anarchy).",
    )
    game_value: float = Field(
        ge=0, description="The game value V: the sum of the contributions of all the game's players."
    )
    points: float = Field(
        ge=0,
        description="Points this player took from the game: V for a solo, V/k rounded half up for a k-way draw, else 0.00/0.01/0.10+0.01 x centres.",
    )


class EagleAwards(DataFrameModel):
    """The month's Eagle awards (player of the month; in December also the year's titles)."""

    award: str = Field(
        isin=list(AWARD_NAMES),
        description="Award name: player_of_the_month, king_of_the_mountain, most_valuable_victory, runner_of_the_year or rookie_of_the_year.",
    )
    period: str = Field(
        str_length={"min_value": 4, "max_value": 7},
        description='What the award stands for: the month ("2019-06") for player_of_the_month, the year ("2019") for the yearly titles, which the December snapshot carries.',
    )
    player_id: str = Field(description="The winner; a shared award has one row per winner.")
    value: float = Field(
        description="The number that won it: change of table points, table points, game value or points."
    )
    game_id: str = Field(
        nullable=True,
        description="The game that earned the award (most valuable victory, rookie of the year); null otherwise.",
    )

    class Config:
        strict = True
        ordered = True
        coerce = False
