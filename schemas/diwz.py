"""Pandera (Ibis) models of the DiWZ outputs: the monthly list and the per-game evaluation rows."""

from __future__ import annotations

import datetime

import pandera.ibis as pdi
from pandera.ibis import Field

from schemas.outputs import HistoryBase, RankingsBase


class DiWZRankings(RankingsBase):
    """The DiWZ list as of a month: every established player, best rating first."""

    evaluations: int = Field(ge=0, description="Number of evaluations (Zweitzahl), 0 for a 1600-0 rating.")
    display: str = Field(
        str_matches=r"^-?[0-9]+-[0-9]+$",
        description="The rating as published, rating and evaluations joined by a dash, e.g. 1797-5.",
    )
    last_evaluated: datetime.date = Field(
        nullable=True,
        description="finished_on of the game of the latest evaluation; null if none in the data (1600-0 or an initial list entry).",
    )

    @pdi.check("rating", name="whole_number")
    @classmethod
    def rating_is_whole(cls, data):
        """A DiWZ is always rounded to an integer."""
        return data.table[data.key] == data.table[data.key].floor()

    @pdi.dataframe_check(name="display_matches_rating")
    @classmethod
    def display_matches_rating(cls, data):
        """display is exactly rating-evaluations."""
        t = data.table
        return t.display == (t.rating.cast("int64").cast("string") + "-" + t.evaluations.cast("string"))


class DiWZHistory(HistoryBase):
    """One row per responsible player per rated game: the game's DiWZ evaluation or its waiting results."""

    score: float = Field(
        ge=0,
        description="P: points scored; on an evaluation over every result it covers (pooled ones too), otherwise this game's.",
    )
    opponents: int = Field(ge=0, description="n: rated opponents (results) the score covers, as for score.")
    niveau: float = Field(
        nullable=True, description="Niv: mean rating of those opponents, unrounded; null when n is 0."
    )
    expected: float = Field(
        nullable=True,
        ge=0,
        description="We: sum of the expectations W over those results; null for a newcomer without a rating.",
    )
    performance: float = Field(
        nullable=True,
        description="TE: performance rating of the evaluation; null when the row evaluates nothing.",
    )
    pooled: bool = Field(
        description="True when the evaluation includes results that waited from earlier games (the seed's *)."
    )
    evaluations: int = Field(
        nullable=True,
        ge=0,
        description="The player's evaluation count after the game; null while the player has no rating.",
    )

    @pdi.check("rating_before", "rating_after", name="whole_number")
    @classmethod
    def rating_is_whole(cls, data):
        """Ratings before and after are integers."""
        return data.table[data.key] == data.table[data.key].floor()

    @pdi.dataframe_check(name="score_within_opponents")
    @classmethod
    def score_within_opponents(cls, data):
        """P lies between 0 and n."""
        t = data.table
        return t.score <= t.opponents.cast("float64")

    @pdi.dataframe_check(name="performance_iff_evaluated")
    @classmethod
    def performance_iff_evaluated(cls, data):
        """TE is given exactly on the rows that set a new rating."""
        t = data.table
        return t.performance.isnull() == t.rating_after.isnull()

    @pdi.dataframe_check(name="pooled_only_on_evaluations")
    @classmethod
    def pooled_only_on_evaluations(cls, data):
        """Only an evaluation can pool earlier results."""
        t = data.table
        return ~t.pooled | t.rating_after.notnull()

    @pdi.dataframe_check(name="evaluation_needs_three_results")
    @classmethod
    def evaluation_needs_three_results(cls, data):
        """A rating is only ever computed from at least three results (rule 2.5)."""
        t = data.table
        return t.rating_after.isnull() | (t.opponents >= 3)
