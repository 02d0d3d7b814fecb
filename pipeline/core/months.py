"""Calendar months as the unit of every snapshot."""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Month:
    """One calendar month; orders chronologically."""

    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> "Month":
        """Month from 'YYYY-MM' or a Dagster partition key 'YYYY-MM-DD'."""
        parts = text.strip().split("-")
        if len(parts) < 2:
            raise ValueError(f"not a month: {text!r} (expected YYYY-MM)")
        year, month = int(parts[0]), int(parts[1])
        if not 1 <= month <= 12:
            raise ValueError(f"not a month: {text!r}")
        return cls(year, month)

    @classmethod
    def of(cls, day: dt.date) -> "Month":
        """Month containing a date."""
        return cls(day.year, day.month)

    @property
    def first_day(self) -> dt.date:
        return dt.date(self.year, self.month, 1)

    @property
    def last_day(self) -> dt.date:
        """The snapshot date ("as of") of the month."""
        return dt.date(self.year, self.month, calendar.monthrange(self.year, self.month)[1])

    @property
    def partition_key(self) -> str:
        """Dagster's monthly partition key for this month."""
        return f"{self.year:04d}-{self.month:02d}-01"

    def shift(self, months: int) -> "Month":
        index = self.year * 12 + (self.month - 1) + months
        return Month(index // 12, index % 12 + 1)

    def next(self) -> "Month":
        return self.shift(1)

    def previous(self) -> "Month":
        return self.shift(-1)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"


def month_range(first: Month, last: Month) -> list[Month]:
    """Every month from first to last, inclusive, oldest first."""
    months = []
    current = first
    while current <= last:
        months.append(current)
        current = current.next()
    return months


def add_years(day: dt.date, years: int) -> dt.date:
    """Same calendar day `years` later; 29 February falls back to the 28th."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)
