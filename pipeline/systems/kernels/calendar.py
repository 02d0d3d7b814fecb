"""Calendar arithmetic on day numbers (days since 1970-01-01, proleptic Gregorian like datetime.date)
for the compiled kernels; pipeline.core.months holds the same rules for Python dates."""

from __future__ import annotations

import numpy as np

from pipeline.systems.kernels import plain_njit


@plain_njit
def civil_from_days(days):
    """(year, month, day) of a day number."""
    z = np.int64(days) + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


@plain_njit
def days_from_civil(year, month, day):
    """Day number of a calendar date."""
    y = np.int64(year) - (1 if month <= 2 else 0)
    era = y // 400
    yoe = y - era * 400
    mp = month - 3 if month > 2 else month + 9
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@plain_njit
def add_years(days, years):
    """The same calendar day `years` later; 29 February falls back to the 28th (pipeline.core.months.add_years)."""
    year, month, day = civil_from_days(days)
    year += years
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        day = 28
    return days_from_civil(year, month, day)
