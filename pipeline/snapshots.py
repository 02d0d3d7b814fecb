"""The one writer every system shares: common columns, validation, atomic Parquet per month."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import ibis
import pandera.ibis as pdi
import pyarrow as pa

from pipeline.months import Month
from pipeline.store import Warehouse, atomic_write_parquet
from pipeline.systems.base import MonthOutput, PlayerInfo, RatingSystem

COMMON_HEAD = ["system", "as_of", "rank", "player_id", "player_name", "rating",
               "rank_change", "rating_change", "peak_rating"]


class OutputInvalid(RuntimeError):
    """A computed table broke its Pandera model: a defect in the system, never written."""


@dataclass
class Carry:
    """What the writer carries from month to month: last ranks and ratings, peaks, names seen."""

    previous: dict[str, tuple[int, float]] = field(default_factory=dict)
    peaks: dict[str, float] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)

    def encode(self) -> dict:
        return {"previous": {k: list(v) for k, v in self.previous.items()},
                "peaks": self.peaks, "names": self.names}

    @classmethod
    def decode(cls, data: dict) -> "Carry":
        return cls({k: (int(v[0]), float(v[1])) for k, v in data["previous"].items()},
                   dict(data["peaks"]), dict(data["names"]))


def note_names(carry: Carry, results: pa.Table) -> None:
    """Remember the latest feed name of every player in the month's rows (row order = time order)."""
    if results.num_rows == 0 or "player_name" not in results.column_names:
        return
    for pid, name in zip(results.column("player_id").to_pylist(), results.column("player_name").to_pylist()):
        if name is not None:
            carry.names[pid] = name


def finalize_rankings(system: RatingSystem, month: Month, out: MonthOutput, carry: Carry,
                      registry: Mapping[str, PlayerInfo]) -> pa.Table:
    """The month's table with the common columns (SPEC §4) in front; advances the carry."""
    table = out.table
    players = table.column("player_id").to_pylist()
    ranks = table.column("rank").to_pylist()
    ratings = table.column("rating").to_pylist()
    order = sorted(range(len(players)), key=lambda i: (ranks[i], players[i]))
    if order != list(range(len(players))):
        table = table.take(pa.array(order, pa.int64()))
        players = [players[i] for i in order]
        ranks = [ranks[i] for i in order]
        ratings = [ratings[i] for i in order]
    names, rank_change, rating_change, peaks = [], [], [], []
    for pid, rank, rating in zip(players, ranks, ratings):
        info = registry.get(pid)
        names.append(info.name if info is not None and info.name else carry.names.get(pid))
        before = carry.previous.get(pid)
        rank_change.append(None if before is None else before[0] - rank)
        rating_change.append(None if before is None else rating - before[1])
        peak = max(carry.peaks.get(pid, rating), rating)
        carry.peaks[pid] = peak
        peaks.append(peak)
    carry.previous = {pid: (rank, rating) for pid, rank, rating in zip(players, ranks, ratings)}
    n = len(players)
    common = {
        "system": pa.array([system.name] * n, pa.string()),
        "as_of": pa.array([month.last_day] * n, pa.date32()),
        "rank": table.column("rank").cast(pa.int64()),
        "player_id": table.column("player_id").cast(pa.string()),
        "player_name": pa.array(names, pa.string()),
        "rating": table.column("rating").cast(pa.float64()),
        "rank_change": pa.array(rank_change, pa.int64()),
        "rating_change": pa.array(rating_change, pa.float64()),
        "peak_rating": pa.array(peaks, pa.float64()),
    }
    own = [c for c in table.column_names if c not in ("rank", "player_id", "rating")]
    return pa.table({**common, **{c: table.column(c) for c in own}})


def finalize_history(system: RatingSystem, out: MonthOutput) -> pa.Table:
    """History rows with the `system` column in front."""
    history = out.history
    return history.add_column(0, "system", pa.array([system.name] * history.num_rows, pa.string()))


def validate_output(model, table: pa.Table, what: str) -> None:
    """Run the table's Pandera model in DuckDB; a failure is a defect, reported with its checks."""
    try:
        model.validate(ibis.memtable(table), lazy=True)
    except pdi.errors.SchemaErrors as errors:
        cases = errors.failure_cases
        summary = "; ".join(
            f"{check}: {case}" for check, case in list(zip(cases["check"], cases["failure_case"]))[:5]
        )
        raise OutputInvalid(f"{what} failed validation ({len(cases)} failures): {summary}") from None


@dataclass
class PendingMonth:
    month: Month
    rankings: pa.Table
    history: pa.Table
    extras: dict[str, pa.Table]


def write_months(warehouse: Warehouse, system: RatingSystem, pending: list[PendingMonth]) -> int:
    """Validate a batch of months per table (one Pandera run each), then write every file atomically."""
    if not pending:
        return 0
    label = f"{system.name} {pending[0].month}..{pending[-1].month}"
    validate_output(system.rankings_model, pa.concat_tables([p.rankings for p in pending]), f"{label} rankings")
    validate_output(system.history_model, pa.concat_tables([p.history for p in pending]), f"{label} history")
    for name, model in system.extra_models.items():
        validate_output(model, pa.concat_tables([p.extras[name] for p in pending]), f"{label} {name}")
    for p in pending:
        atomic_write_parquet(warehouse.rankings(system.name, p.month), p.rankings)
        atomic_write_parquet(warehouse.history(system.name, p.month), p.history)
        for name in system.extra_models:
            atomic_write_parquet(warehouse.output(name, system.name, p.month), p.extras[name])
    return len(pending)
