"""Step a rating system over a range of months, carrying state in memory, and write each month."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa

from pipeline.core.months import Month, month_range
from pipeline.ingest.fingerprints import cumulative_fingerprints
from pipeline.rating.carry import Carry, finalize_rankings, note_names, registry_names
from pipeline.rating.checks import CheckOutcome, merge_outcomes
from pipeline.rating.inputs import read_registry, read_results, split_by_month
from pipeline.rating.published import list_fingerprint, list_names, published_list
from pipeline.rating.ranges import covered_months
from pipeline.rating.writer import PendingMonth, finalize_history, write_months
from pipeline.systems.base import MonthInput, RatingSystem
from pipeline.warehouse.store import Warehouse

# Bumped whenever the checkpoint layout changes; older checkpoints are then not reused.
CHECKPOINT_FORMAT = 6

# Months of input read at once.
READ_MONTHS = 12

# Rows buffered before a batch is validated and written (bounds memory on long backfills: a batch
# is computed while the one before it is written, so two are held).
FLUSH_ROWS = 1_000_000


class NothingToRate(Exception):
    """The system's feed has no valid data at all."""


@dataclass
class RunResult:
    """What one run of a system did."""

    system: str
    months: list[Month] = field(default_factory=list)
    replayed_from: Month | None = None
    history_rows: int = 0
    last_table: pa.Table | None = None
    seconds: float = 0.0
    checks: list[CheckOutcome] = field(default_factory=list)


def _checkpoint_payload(system: RatingSystem, state, carry: Carry, config_key: str, fingerprint: str) -> dict:
    return {
        "format": CHECKPOINT_FORMAT,
        "config": config_key,
        "fingerprint": fingerprint,
        "state": system.encode_state(state),
        "carry": carry.encode(),
    }


def resume_point(
    warehouse: Warehouse,
    system: RatingSystem,
    first: Month,
    data_first: Month,
    config_key: str,
    chain: dict[Month, str],
) -> tuple[Month, object, Carry]:
    """Where to start for a run that must cover `first`: the latest checkpoint before it whose inputs
    are still the current ones (late data makes later checkpoints stale), else the system's first
    month with data, from the initial state."""
    usable = [m for m in warehouse.checkpoint_months(system.name) if data_first <= m < first]
    for month in reversed(usable):
        payload = warehouse.load_checkpoint(system.name, month)
        if (
            payload.get("format") == CHECKPOINT_FORMAT
            and payload.get("config") == config_key
            and payload.get("fingerprint") == chain.get(month)
        ):
            return month.next(), system.decode_state(payload["state"]), Carry.decode(payload["carry"])
    state, carry = starting_point(warehouse, system)
    return data_first, state, carry


def starting_point(warehouse: Warehouse, system: RatingSystem) -> tuple[object, Carry]:
    """The state and carry before a system's first month: from its published list if it has one
    (the list's names count as names seen), else from nothing."""
    published = published_list(warehouse, system.name)
    if published is None:
        return system.initial_state(), Carry()
    carry = Carry()
    note_names(carry, list_names(published))
    return system.state_from_list(published), carry


def input_chain(
    warehouse: Warehouse, system: RatingSystem, config_key: str, first: Month, last: Month
) -> dict[Month, str]:
    """Each month's cumulative input fingerprint: the system's feed, configuration and list."""
    start_key = f"{config_key}|list:{list_fingerprint(warehouse, system.name)}"
    return cumulative_fingerprints(warehouse, system.feed, start_key, first, last)


def first_stale_month(
    system: RatingSystem, warehouse: Warehouse, config_key: str, last: Month | None = None
) -> Month | None:
    """The earliest month whose outputs are missing or were computed from other inputs; None if current."""
    covered = covered_months(warehouse, system.name, system.feed)
    if covered is None:
        return None
    data_first, data_last = covered
    last = last or data_last
    chain = input_chain(warehouse, system, config_key, data_first, last)
    manifest = warehouse.load_manifest(system.name)
    for month, fingerprint in chain.items():
        if manifest.get(str(month)) != fingerprint or not warehouse.rankings(system.name, month).exists():
            return month
    # A run from scratch to the end of the data leaves a checkpoint of that month; a range that
    # shrank (the last month's data removed) ends on a month that may have none: it is computed
    # again to write it. A run bounded earlier (`--to`) leaves the months after its bound alone.
    if chain and last == data_last and not warehouse.checkpoint(system.name, last).exists():
        return last
    return None


def run_system(
    system: RatingSystem,
    warehouse: Warehouse,
    first: Month | None,
    last: Month | None,
    *,
    config_key: str = "",
    progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Compute and write every month from `first` to `last` (defaults: the data's first and last month)."""
    started = time.perf_counter()
    covered = covered_months(warehouse, system.name, system.feed)
    if covered is None:
        raise NothingToRate(f"{system.name}: no valid {system.feed} to rate")
    data_first, data_last = covered
    last = last or data_last
    first = max(first or data_first, data_first)
    result = RunResult(system.name)
    if first > last:
        result.seconds = time.perf_counter() - started
        return result
    chain = input_chain(warehouse, system, config_key, data_first, last)
    start, state, carry = resume_point(warehouse, system, first, data_first, config_key, chain)
    if start < first:
        result.replayed_from = start
    months = month_range(start, last)
    registry = read_registry(warehouse)
    registry_lookup = registry_names(registry)
    by_month: dict[Month, object] = {}
    pending: list[PendingMonth] = []
    checkpoints: list[tuple[Month, dict]] = []
    buffered = 0

    def save(batch: list[PendingMonth], batch_checkpoints: list[tuple[Month, dict]]) -> list[CheckOutcome]:
        """Validate, check and write a batch of months, then its checkpoints and the manifest:
        those are saved only once the files they stand for are on disk."""
        outcomes = write_months(warehouse, system, batch)
        for cp_month, payload in batch_checkpoints:
            warehouse.save_checkpoint(system.name, cp_month, payload)
        manifest = warehouse.load_manifest(system.name)
        manifest.update({str(p.month): chain[p.month] for p in batch})
        warehouse.save_manifest(system.name, manifest)
        return outcomes

    def saved(batch: tuple[Future, Month, Month, int]) -> None:
        """Wait for a batch handed to the saver; its outcomes join the run's, and its progress line
        is told here, on the run's own thread."""
        future, batch_first, batch_last, done = batch
        result.checks = merge_outcomes(result.checks, future.result())
        if progress:
            progress(f"{system.name}: wrote {batch_first}..{batch_last} ({done}/{len(months)} months)")

    # A batch is saved on a thread of its own while the next one is computed (the writing is
    # mostly Parquet and DuckDB work, which releases the GIL). One batch at a time, in order: a
    # batch is handed over only after the one before it is saved, so a failure stops the run
    # before any later month is written, and memory holds at most two batches.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="save") as saver:
        saving: tuple[Future, Month, Month, int] | None = None
        for index, month in enumerate(months):
            if month not in by_month:
                # Read a year of rows at a time: memory follows the busiest year, not the whole history.
                chunk = months[index : index + READ_MONTHS]
                rows = read_results(warehouse, system.feed, chunk[0], chunk[-1])
                by_month = split_by_month(rows, system.feed, chunk)
            results = by_month[month]
            out = system.step(state, MonthInput(month, results, registry))
            state = out.state
            note_names(carry, results)
            rankings = finalize_rankings(system, month, out, carry, registry_lookup)
            history = finalize_history(system, out)
            pending.append(PendingMonth(month, rankings, history, dict(out.extras)))
            buffered += rankings.num_rows + history.num_rows
            result.history_rows += history.num_rows
            is_last = index == len(months) - 1
            if month.month == 12 or is_last:
                checkpoints.append((month, _checkpoint_payload(system, state, carry, config_key, chain[month])))
            if buffered >= FLUSH_ROWS or is_last:
                if saving is not None:
                    saved(saving)
                saving = (saver.submit(save, pending, checkpoints), pending[0].month, month, index + 1)
                pending, checkpoints, buffered = [], [], 0
            result.months.append(month)
            result.last_table = rankings
        if saving is not None:
            saved(saving)
    remove_superseded_checkpoints(warehouse, system.name, last)
    result.seconds = time.perf_counter() - started
    return result


def remove_superseded_checkpoints(warehouse: Warehouse, system: str, last: Month) -> None:
    """Keep the checkpoints a run from scratch leaves: each December's and the last month's.
    An earlier run's last month, when it was no December, is superseded by this run's."""
    for month in warehouse.checkpoint_months(system):
        if month < last and month.month != 12:
            warehouse.checkpoint(system, month).unlink(missing_ok=True)
