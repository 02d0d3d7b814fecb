"""The partitions of the rating assets: calendar months from each system's first month with data.

A month before a system's first data can never be computed, so it is not offered as work: each
system's partitions start at its first month with data (never before DIPRANK_START_MONTH), read
from the validated feeds when the code location loads. With no data yet, they start at
DIPRANK_START_MONTH.

The last partition is the current month by default: results of this month are valid input, so it
can be computed before the month ends, and a deployment that receives data every month never
needs a reload. With DIPRANK_PARTITIONS_END=data it is the last month with data in any feed, read
when the code location loads like the first months: the UI then offers only months that have
data (the bundled sample ends years ago), and data reaching a later month waits for a reload.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagster import MonthlyPartitionsDefinition

from pipeline.core.months import Month
from pipeline.rating.inputs import last_data_month
from pipeline.rating.ranges import system_ranges
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.store import Warehouse

# The key of the last partition in the job arguments of `PartitionBounds.as_arguments`.
LAST_KEY = "last"


@dataclass(frozen=True)
class PartitionBounds:
    """Each system's first partition, and the last partition of every system (None: the current month)."""

    first: dict[str, Month]
    last: Month | None = None

    def as_arguments(self) -> dict[str, str]:
        """The bounds as strings, for the arguments of a reconstructable job."""
        arguments = {system: str(month) for system, month in self.first.items()}
        return arguments | ({LAST_KEY: str(self.last)} if self.last is not None else {})

    @classmethod
    def from_arguments(cls, arguments: dict[str, str]) -> "PartitionBounds":
        last = arguments.get(LAST_KEY)
        first = {key: Month.parse(value) for key, value in arguments.items() if key != LAST_KEY}
        return cls(first, Month.parse(last) if last else None)


def monthly_partitions(start_month: Month, last_month: Month | None = None) -> MonthlyPartitionsDefinition:
    """Calendar months from `start_month` to `last_month`, else to the current month (end_offset=1)."""
    if last_month is None:
        return MonthlyPartitionsDefinition(start_date=start_month.partition_key, end_offset=1)
    end = max(last_month, start_month).next()  # the end date is exclusive
    return MonthlyPartitionsDefinition(start_date=start_month.partition_key, end_date=end.partition_key)


def partition_bounds(settings: Settings) -> PartitionBounds:
    """The partitions as of the warehouse now: each system's first month with valid data, not
    before the settings' first month (the settings' first month while it has no data), and the
    last month with data when the settings end the partitions there."""
    warehouse = Warehouse.of(settings)
    ranges = system_ranges(warehouse, {s: system_class(s).feed for s in SYSTEM_NAMES})
    first = {s: max(settings.start_month, r[0]) if r else settings.start_month for s, r in ranges.items()}
    return PartitionBounds(first, last_data_month(warehouse) if settings.partitions_end == "data" else None)


def rating_partitions(bounds: PartitionBounds) -> dict[str, MonthlyPartitionsDefinition]:
    return {system: monthly_partitions(month, bounds.last) for system, month in bounds.first.items()}


def quality_partitions(bounds: PartitionBounds) -> MonthlyPartitionsDefinition:
    """The quality table's months: from the earliest system's first month."""
    return monthly_partitions(min(bounds.first.values()), bounds.last)
