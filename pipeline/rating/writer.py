"""The one writer every system shares: each table checked against its model, then atomic Parquet per month."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from pipeline.core.months import Month
from pipeline.rating.checks import CheckOutcome, check_tables, no_outcomes
from pipeline.systems.base import MonthOutput, RatingSystem
from pipeline.warehouse.store import Warehouse, atomic_write_parquet, scratch
from schemas.engine import ModelMismatch, rule_failures

COMMON_HEAD = [
    "system",
    "as_of",
    "rank",
    "player_id",
    "player_name",
    "rating",
    "rank_change",
    "rating_change",
    "peak_rating",
]


FAILURES_SHOWN = 5  # rows named in the message of an output that breaks its model
WRITE_THREADS = 2  # files of a batch written at once


class OutputInvalid(RuntimeError):
    """A computed table broke its Pandera model: a defect in the system, never written."""


def finalize_history(system: RatingSystem, out: MonthOutput) -> pa.Table:
    """History rows with the `system` column in front."""
    history = out.history
    return history.add_column(0, "system", pa.repeat(pa.scalar(system.name, pa.string()), history.num_rows))


def validate_output(model, table: pa.Table, what: str, duckdb_config: dict[str, str] | None = None) -> None:
    """Run the table's Pandera model in DuckDB; a failure is a defect, reported with examples."""
    con = scratch(duckdb_config)
    try:
        con.register("batch", table)  # the Arrow table itself, no copy
        failures = rule_failures(con, model, "batch", table.column_names, limit=FAILURES_SHOWN)
    except ModelMismatch as mismatch:
        raise OutputInvalid(f"{what} does not match its model: {mismatch}") from None
    finally:
        con.close()
    if failures:
        shown = "; ".join(f"{', '.join(rules)}: {dict(zip(table.column_names, row))}" for row, rules in failures)
        raise OutputInvalid(f"{what} failed validation (first {len(failures)} rows): {shown}")


@dataclass
class PendingMonth:
    month: Month
    rankings: pa.Table
    history: pa.Table
    extras: dict[str, pa.Table]


def write_months(warehouse: Warehouse, system: RatingSystem, pending: list[PendingMonth]) -> list[CheckOutcome]:
    """Validate a batch of months per table (one Pandera run each), check it, then write every file
    atomically; returns the output checks' outcomes for the batch."""
    if not pending:
        return no_outcomes("no months written")
    label = f"{system.name} {pending[0].month}..{pending[-1].month}"
    rankings = pa.concat_tables([p.rankings for p in pending])
    history = pa.concat_tables([p.history for p in pending])
    validate_output(system.rankings_model, rankings, f"{label} rankings", warehouse.duckdb_config)
    validate_output(system.history_model, history, f"{label} history", warehouse.duckdb_config)
    for name, model in system.extra_models.items():
        validate_output(
            model, pa.concat_tables([p.extras[name] for p in pending]), f"{label} {name}", warehouse.duckdb_config
        )
    outcomes = check_tables(system, rankings, history)
    files = [
        (path, table)
        for p in pending
        for path, table in (
            (warehouse.rankings(system.name, p.month), p.rankings),
            (warehouse.history(system.name, p.month), p.history),
            *((warehouse.output(name, system.name, p.month), p.extras[name]) for name in system.extra_models),
        )
    ]
    # Compressed and written on WRITE_THREADS threads (Parquet's writer releases the GIL), so a
    # system that has the machine to itself uses a second core for the third of its time spent
    # writing; every file is waited for, so the batch is on disk when this returns.
    with ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="write") as pool:
        for written in [pool.submit(atomic_write_parquet, path, table) for path, table in files]:
            written.result()
    return outcomes
