"""Exact decimal rounding, half up, for the places where the rules round."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ONE = Decimal("1")


def half_up(value: Decimal | int | str, places: int = 2) -> Decimal:
    """Value rounded half up ("0.005 rounds up") to `places` decimals, exactly."""
    quantum = ONE.scaleb(-places)
    return Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP)


def half_up_int(value: float | Decimal) -> int:
    """Nearest integer, halves away from zero, computed on the exact decimal value of a float."""
    return int(Decimal(value).quantize(ONE, rounding=ROUND_HALF_UP))
