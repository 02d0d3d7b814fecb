"""Values as table cells: numbers, dates and free text written the way each community prints them.

Shared by the report model, which fills its rows with these strings, and by the renderers, which
print a few values (a month's name, a chart legend's rating) outside the rows.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from decimal import Decimal

from pipeline.core.months import Month
from pipeline.core.rounding import half_up

# Explicit bidi embeddings, overrides and isolates: in plain text they would reorder the rest of
# the line, so text output drops them (HTML isolates names in <bdi> instead).
_BIDI_CONTROLS = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def clean_text(value: object) -> str:
    """A value as one printable line: control characters become spaces, bidi controls vanish."""
    text = "" if value is None else str(value)
    out = []
    for char in text:
        if char in _BIDI_CONTROLS:
            continue
        if unicodedata.category(char) == "Cc":
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def decimal_text(value: float | None, places: int = 2) -> str:
    """A number rounded half up as the communities print it; blank for null."""
    if value is None:
        return ""
    return str(half_up(Decimal(value), places))


def whole_text(value: float | None) -> str:
    """A number rounded half up to a whole number; blank for null."""
    return "" if value is None else str(int(half_up(Decimal(value), 0)))


def fraction_text(value: float | None) -> str:
    """The club page's style for P, W% and S: two decimals without the leading zero (.53, 1.00)."""
    if value is None:
        return "-"
    text = decimal_text(value)
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text


def accuracy_text(value: float | None) -> str:
    """A pairwise accuracy with three decimals rounded half up (0.634); "-" for null."""
    return "-" if value is None else decimal_text(value, 3)


def count_text(value: int | None) -> str:
    """A count as a whole number; "-" for null."""
    return "-" if value is None else str(value)


def iso(day: dt.date | None) -> str:
    """A date as 2020-12-31; blank for null."""
    return "" if day is None else day.isoformat()


def german_date(day: dt.date | None) -> str:
    """A date as the DiWZ list prints it: 31.12.2020; blank for null."""
    return "" if day is None else f"{day.day:02d}.{day.month:02d}.{day.year:04d}"


def seed_date(day: dt.date) -> str:
    """The DiWZ-Auswertung's end date: 20.5.98."""
    return f"{day.day}.{day.month}.{day.year % 100:02d}"


def half_points(score: float) -> str:
    """A DiWZ score with its half point as the seed prints it: 4½, ½, 6."""
    whole = int(score)
    half = abs(score - whole) >= 0.25
    if half:
        return f"{whole}½" if whole else "½"
    return str(int(round(score)))


def tendency(delta: float) -> str:
    """TD as the seed prints it: +51, -93, - 7."""
    value = int(round(delta))
    return f"{'+' if value >= 0 else '-'}{abs(value):>2}"


def month_name(month: Month) -> str:
    """A month in words: December 2020."""
    return f"{dt.date(month.year, month.month, 1):%B} {month.year}"
