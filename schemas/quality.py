"""Pandera (Ibis) model of the predictive quality table (SPEC §3.5)."""

from __future__ import annotations

import datetime

import ibis.expr.types as ir
from pandera.ibis import DataFrameModel, Field, IbisData, dataframe_check


class Quality(DataFrameModel):
    """A month's quality table: one row per system whose range holds the month, sorted by system."""

    system: str = Field(description="Rating system name.")
    as_of: datetime.date = Field(description="Last day of the month whose results are scored.")
    games: int = Field(ge=0, description="Games or events of the month with at least one pair.")
    pairs: int = Field(ge=0, description="Pairs of rated players of one game or event whose outcomes differ.")
    concordant: float = Field(
        ge=0.0,
        description="Pairs the previous month's table ordered as they finished; a pair of equal ratings counts 0.5.",
    )
    pairwise_accuracy: float = Field(
        nullable=True, ge=0.0, le=1.0, description="concordant / pairs; null without a pair."
    )
    trailing_pairs: int = Field(ge=0, description="Pairs of the 12 months ending at this one.")
    trailing_concordant: float = Field(ge=0.0, description="Concordant pairs of the 12 months ending at this one.")
    trailing_accuracy: float = Field(
        nullable=True, ge=0.0, le=1.0, description="trailing_concordant / trailing_pairs; null without a pair."
    )
    common_games: int = Field(
        nullable=True, ge=0, description="Games of the month that club, eagle and diwz all rated; null for dip_pouch."
    )
    common_pairs: int = Field(nullable=True, ge=0, description="Pairs of those games; null for dip_pouch.")
    common_accuracy: float = Field(
        nullable=True,
        ge=0.0,
        le=1.0,
        description="Pairwise accuracy on those games; null for dip_pouch or without a pair.",
    )

    class Config:
        strict = True
        ordered = True
        coerce = False

    @dataframe_check
    def concordant_within_pairs(cls, data: IbisData) -> ir.BooleanColumn:
        """concordant <= pairs, in the month and over the trailing months."""
        table = data.table
        return (table.concordant <= table.pairs) & (table.trailing_concordant <= table.trailing_pairs)

    @dataframe_check
    def trailing_holds_the_month(cls, data: IbisData) -> ir.BooleanColumn:
        """The trailing 12 months hold at least the month's own pairs and concordant pairs."""
        table = data.table
        return (table.trailing_pairs >= table.pairs) & (table.trailing_concordant >= table.concordant)

    @dataframe_check
    def accuracy_null_exactly_without_pairs(cls, data: IbisData) -> ir.BooleanColumn:
        """An accuracy is null exactly when its pairs are 0 (or, for the common games, not counted)."""
        table = data.table
        common_ok = table.common_accuracy.isnull() == (table.common_pairs.isnull() | (table.common_pairs == 0))
        return (
            (table.pairwise_accuracy.isnull() == (table.pairs == 0))
            & (table.trailing_accuracy.isnull() == (table.trailing_pairs == 0))
            & common_ok.fill_null(True)
        )
