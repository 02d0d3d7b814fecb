"""Argument types of the diprank commands: a bad value is a usage error with a one-line reason."""

from __future__ import annotations

import argparse

from pipeline.core.months import Month


def month_argument(text: str) -> Month:
    """A YYYY-MM value as a Month."""
    try:
        return Month.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a month: {text!r} (expected YYYY-MM)") from None


def whole_number(minimum: int):
    """An argument type for a whole number of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse
