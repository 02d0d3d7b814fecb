"""Rules every feed shares: lineage columns and the row checks that apply to any delivered row."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import ibis
import pandera.ibis as pdi
from pandera.ibis import DataFrameModel, Field

# Reason codes shared by all feeds (the check names double as quarantine reason codes).
BAD_TYPE = "bad_type"
TEXT_TOO_LONG = "text_too_long"
DUPLICATE_KEY = "duplicate_key_in_file"
MISSING_VALUE = "missing_required_value"
DATE_IN_FUTURE = "date_in_future"
DATE_BEFORE_1954 = "date_before_1954"

EARLIEST_DATE = dt.date(1954, 1, 1)


# The day "in the future" is measured from while a validation runs (Settings.today pins it).
_validation_day: ContextVar[dt.date | None] = ContextVar("validation_day", default=None)


@contextmanager
def dates_checked_against(day: dt.date | None) -> Iterator[None]:
    """Within the block, the not-in-the-future rules measure from `day` (None: the real today)."""
    token = _validation_day.set(day)
    try:
        yield
    finally:
        _validation_day.reset(token)


def today() -> dt.date:
    """The day "in the future" is measured from."""
    return _validation_day.get() or dt.date.today()


def all_present(table, columns: list[str]):
    """Boolean expression: every listed column has a value."""
    expr = ibis.literal(True)
    for name in columns:
        expr = expr & table[name].notnull()
    return expr


def rowwise(expr) -> dict:
    """Wrap a row-level boolean expression so window functions in it are evaluated per row.

    Pandera's Ibis backend aggregates a returned column directly, which SQL forbids around a
    window function; a returned mapping is first projected as a column of the table.
    """
    return {"rule": expr}


def date_not_future(column):
    return column.isnull() | (column <= ibis.literal(today()))


def date_not_ancient(column):
    return column.isnull() | (column >= ibis.literal(EARLIEST_DATE))


class DeliveredRow(DataFrameModel):
    """Lineage and ingest flags carried by every staged row."""

    row_id: int = Field(alias="_row_id", description="File number and line: unique over all deliveries of the feed.")
    cast_errors: str = Field(
        alias="_cast_errors", nullable=True, description="Columns whose value could not be converted."
    )
    too_long: bool = Field(alias="_too_long", description="Some text value is longer than the accepted maximum.")
    source_file: str = Field(alias="_source_file", description="Delivery file, relative to the raw folder.")
    source_line: int = Field(
        alias="_source_line", description="Line of the row in its file (header is line 1 for CSV)."
    )
    delivery: int = Field(
        alias="_delivery", description="Number of the file in the working copy (files are ordered by path)."
    )
    duplicate_in_file: bool = Field(
        alias="_duplicate_in_file", description="The key occurs more than once in the same file."
    )
    replaced: bool = Field(alias="_replaced", description="A later delivery carries the same key.")
    valid: bool = Field(
        alias="_valid", description="The last validation found the row valid (the feed's view shows it)."
    )

    class Config:
        strict = True
        coerce = False


def delivered_rows(required: tuple[str, ...]) -> type[DeliveredRow]:
    """A base model with the checks every feed shares, `required` naming the columns that need a value.

    Built afresh for each feed: Pandera loses the names of checks that several models inherit
    from one class, and the names are the quarantine's reason codes.
    """

    class SharedChecks(DeliveredRow):
        @pdi.dataframe_check(name=BAD_TYPE)
        def values_convert(cls, data):
            return rowwise(data.table._cast_errors.isnull())

        @pdi.dataframe_check(name=TEXT_TOO_LONG)
        def text_fits(cls, data):
            return rowwise(~data.table._too_long)

        @pdi.dataframe_check(name=MISSING_VALUE)
        def required_present(cls, data):
            return rowwise(all_present(data.table, list(required)))

        @pdi.dataframe_check(name=DUPLICATE_KEY)
        def key_once_per_file(cls, data):
            return rowwise(~data.table._duplicate_in_file)

    return SharedChecks
