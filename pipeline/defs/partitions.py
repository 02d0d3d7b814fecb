"""The one partitioning every rating asset uses: calendar months."""
from __future__ import annotations

from dagster import MonthlyPartitionsDefinition

from pipeline.settings import Settings

# end_offset=1 keeps the current month materializable: results of this month are valid input.
monthly_partitions = MonthlyPartitionsDefinition(
    start_date=Settings.from_env().start_month.partition_key,
    end_offset=1,
)
