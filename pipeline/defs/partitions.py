"""The one partitioning every rating asset uses: calendar months from the settings' first month."""
from __future__ import annotations

from dagster import MonthlyPartitionsDefinition

from pipeline.core.months import Month


def monthly_partitions(start_month: Month) -> MonthlyPartitionsDefinition:
    """Calendar months from `start_month`; end_offset=1 keeps the current month materializable,
    since results of this month are valid input."""
    return MonthlyPartitionsDefinition(start_date=start_month.partition_key, end_offset=1)
