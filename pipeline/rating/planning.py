"""Which months a run must compute for each system: from the first missing or stale month to the end."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.months import Month
from pipeline.rating.ranges import covered_months
from pipeline.rating.runner import first_stale_month
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES, build_system, config_key, system_class
from pipeline.warehouse.store import Warehouse


@dataclass(frozen=True)
class Plan:
    """A system's month range to compute, or why there is none (`note`)."""

    system: str
    first: Month | None = None
    last: Month | None = None
    note: str = ""

    def bounds(self) -> tuple[Month, Month]:
        """The first and last month to compute (a plan with a range only)."""
        if self.first is None or self.last is None:
            raise ValueError(f"{self.system}: nothing to compute ({self.note})")
        return self.first, self.last


def plan_system(
    system: str, warehouse: Warehouse, settings: Settings, first: Month | None = None, last: Month | None = None
) -> Plan:
    """The range for one system: from `first` if given, else from the first month whose outputs are
    missing or stale (late or corrected data); up to `last`, else the latest month with data."""
    covered = covered_months(warehouse, system, system_class(system).feed)
    if covered is None:
        return Plan(system, note="no data")
    data_first, data_last = covered
    hi = last or data_last
    if hi < max(data_first, settings.start_month):
        return Plan(system, note="no data in range")
    if first is None:
        stale = first_stale_month(build_system(system, settings), warehouse, config_key(system, settings), hi)
        if stale is None:
            return Plan(system, note="up to date (no new, late or corrected data)")
        first = stale
    lo = max(first, data_first, settings.start_month)
    if lo > hi:
        return Plan(system, note="no data in range")
    return Plan(system, lo, hi)


def plan_all(
    warehouse: Warehouse,
    settings: Settings,
    first: Month | None = None,
    last: Month | None = None,
    systems: list[str] | None = None,
) -> list[Plan]:
    return [plan_system(name, warehouse, settings, first, last) for name in systems or SYSTEM_NAMES]
