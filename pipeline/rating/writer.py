"""The one writer every system shares: common columns, validation, atomic Parquet per month."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.rating.checks import CheckOutcome, check_tables, no_outcomes
from pipeline.core.months import Month
from pipeline.warehouse.store import Warehouse, atomic_write_parquet, scratch
from pipeline.systems.base import MonthOutput, PlayerInfo, RatingSystem
from schemas.engine import ModelMismatch, rule_failures

COMMON_HEAD = ["system", "as_of", "rank", "player_id", "player_name", "rating",
               "rank_change", "rating_change", "peak_rating"]


FAILURES_SHOWN = 5  # rows named in the message of an output that breaks its model


class OutputInvalid(RuntimeError):
    """A computed table broke its Pandera model: a defect in the system, never written."""


CARRY_PREVIOUS = pa.schema([("player_id", pa.string()), ("_prev_rank", pa.int64()), ("_prev_rating", pa.float64())])
CARRY_PEAKS = pa.schema([("player_id", pa.string()), ("_peak", pa.float64())])
NAMES = pa.schema([("player_id", pa.string()), ("_name", pa.string())])


@dataclass
class Carry:
    """What the writer carries from month to month: last ranks and ratings, peaks, feed names seen.

    Kept as Arrow tables so each month's common columns come from hash joins, not Python loops.
    """

    previous: pa.Table = field(default_factory=CARRY_PREVIOUS.empty_table)
    peaks: pa.Table = field(default_factory=CARRY_PEAKS.empty_table)
    names: pa.Table = field(default_factory=NAMES.empty_table)

    def encode(self) -> dict:
        return {"previous": self.previous, "peaks": self.peaks, "names": self.names}

    @classmethod
    def decode(cls, data: dict) -> "Carry":
        return cls(data["previous"].cast(CARRY_PREVIOUS), data["peaks"].cast(CARRY_PEAKS), data["names"].cast(NAMES))


def registry_names(registry: Mapping[str, PlayerInfo]) -> pa.Table:
    """The registry's names as a join table (registry names take precedence over feed names)."""
    ids = [pid for pid, info in registry.items() if info.name]
    return pa.table({"player_id": pa.array(ids, pa.string()),
                     "_registry_name": pa.array([registry[p].name for p in ids], pa.string())})


def note_names(carry: Carry, results: pa.Table) -> None:
    """Remember the latest feed name of every player in the month's rows (row order = time order)."""
    if results.num_rows == 0 or "player_name" not in results.column_names:
        return
    named = results.select(["player_id", "player_name"]).filter(pc.is_valid(results["player_name"]))
    if named.num_rows == 0:
        return
    # Ordered (single-threaded) aggregation: "last" is the latest row of each player.
    latest = named.group_by("player_id", use_threads=False).aggregate([("player_name", "last")])
    month = pa.table({"player_id": latest["player_id"].cast(pa.string()),
                      "_name": latest["player_name_last"].cast(pa.string())})
    kept = carry.names.filter(pc.invert(pc.is_in(carry.names["player_id"], value_set=month["player_id"])))
    carry.names = pa.concat_tables([kept, month]).combine_chunks()


def _aligned(ids: pa.Array, right: pa.Table, *columns: str) -> list[pa.Array]:
    """`right`'s columns for each id, in the ids' order (null where `right` has no row): a left join."""
    positions = pc.index_in(ids, value_set=right["player_id"].combine_chunks())
    return [right[column].combine_chunks().take(positions) for column in columns]


def finalize_rankings(system: RatingSystem, month: Month, out: MonthOutput, carry: Carry,
                      registry_table: pa.Table) -> pa.Table:
    """The month's table with the common columns (SPEC §4) in front; advances the carry."""
    table = out.table.sort_by([("rank", "ascending"), ("player_id", "ascending")])
    n = table.num_rows
    rank = table["rank"].cast(pa.int64())
    rating = table["rating"].cast(pa.float64())
    ids = table["player_id"].cast(pa.string()).combine_chunks()
    keys = pa.table({"player_id": ids})
    previous_rank, previous_rating = _aligned(ids, carry.previous, "_prev_rank", "_prev_rating")
    peak = pc.max_element_wise(*_aligned(ids, carry.peaks, "_peak"), rating, skip_nulls=True)
    name = pc.coalesce(*_aligned(ids, registry_table, "_registry_name"), *_aligned(ids, carry.names, "_name"))
    common = {
        "system": pa.repeat(pa.scalar(system.name, pa.string()), n),
        "as_of": pa.repeat(pa.scalar(month.last_day, pa.date32()), n),
        "rank": rank,
        "player_id": keys["player_id"],
        "player_name": name,
        "rating": rating,
        "rank_change": pc.subtract(previous_rank, rank),
        "rating_change": pc.subtract(rating, previous_rating),
        "peak_rating": peak,
    }
    carry.previous = pa.table({"player_id": keys["player_id"], "_prev_rank": rank, "_prev_rating": rating})
    listed_peaks = pa.table({"player_id": keys["player_id"], "_peak": peak})
    others = carry.peaks.filter(pc.invert(pc.is_in(carry.peaks["player_id"], value_set=keys["player_id"])))
    carry.peaks = pa.concat_tables([others, listed_peaks.cast(CARRY_PEAKS)]).combine_chunks()
    own = [c for c in table.column_names if c not in ("rank", "player_id", "rating")]
    return pa.table({**{k: (v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v) for k, v in common.items()},
                     **{c: table[c] for c in own}})


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
        validate_output(model, pa.concat_tables([p.extras[name] for p in pending]), f"{label} {name}",
                        warehouse.duckdb_config)
    outcomes = check_tables(system, rankings, history)
    for p in pending:
        atomic_write_parquet(warehouse.rankings(system.name, p.month), p.rankings)
        atomic_write_parquet(warehouse.history(system.name, p.month), p.history)
        for name in system.extra_models:
            atomic_write_parquet(warehouse.output(name, system.name, p.month), p.extras[name])
    return outcomes
