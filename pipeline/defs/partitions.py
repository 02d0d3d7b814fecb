"""The partitions of the rating assets: calendar months from each system's first month with data.

A month before a system's first data can never be computed, so it is not offered as work: each
system's partitions start at its first month with data (never before DIPRANK_START_MONTH), read
from the validated feeds when the code location loads. With no data yet, they start at
DIPRANK_START_MONTH. The last partition is the current month: results of this month are valid
input, so it can be computed before the month ends.
"""

from __future__ import annotations

from dagster import MonthlyPartitionsDefinition

from pipeline.core.months import Month
from pipeline.rating.ranges import system_ranges
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.store import Warehouse


def monthly_partitions(start_month: Month) -> MonthlyPartitionsDefinition:
    """Calendar months from `start_month` to the current month (end_offset=1)."""
    return MonthlyPartitionsDefinition(start_date=start_month.partition_key, end_offset=1)


def first_partitions(settings: Settings) -> dict[str, Month]:
    """Each system's first partition: its first month with valid data, not before the settings'
    first month; the settings' first month while it has no data."""
    ranges = system_ranges(Warehouse.of(settings), {s: system_class(s).feed for s in SYSTEM_NAMES})
    return {s: max(settings.start_month, r[0]) if r else settings.start_month for s, r in ranges.items()}


def rating_partitions(first: dict[str, Month]) -> dict[str, MonthlyPartitionsDefinition]:
    return {system: monthly_partitions(month) for system, month in first.items()}


def quality_partitions(first: dict[str, Month]) -> MonthlyPartitionsDefinition:
    """The quality table's months: from the earliest system's first month."""
    return monthly_partitions(min(first.values()))
