"""What the writer carries from month to month per player (last month's rank and rating, the
peak, the latest name) and the common columns of a month's table it gives (SPEC §4)."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.months import Month
from pipeline.rating.carried import carried_columns
from pipeline.systems.base import MonthOutput, PlayerInfo, RatingSystem
from pipeline.systems.kernels.arrays import resized
from pipeline.systems.kernels.ids import array_of
from pipeline.systems.kernels.numbering import PlayerNumbers
from pipeline.systems.kernels.sort import columns_in_order

# The carry's checkpoint form: one row per player seen, in order of first sight.
SEEN = pa.schema(
    [
        ("player_id", pa.string()),
        ("_prev_rank", pa.int64()),
        ("_prev_rating", pa.float64()),
        ("_peak", pa.float64()),
        ("_name", pa.string()),
    ]
)


class Carry:
    """What the writer carries from month to month, per player seen (listed, or named in a
    month's rows): the rank and rating of last month's table (unset when not listed in it), the
    peak rating (unset until listed) and the latest feed name.

    Players are numbered once (PlayerNumbers) and every column is an array by number, so a
    month takes and scatters by number; looking the month's players up in Arrow tables of
    everyone seen rebuilt a hash of them per table and month.
    """

    def __init__(self, players: pa.Table | None = None) -> None:
        players = SEEN.empty_table() if players is None else players.cast(SEEN).combine_chunks()
        self.numbers = PlayerNumbers(players["player_id"].combine_chunks())
        self.prev_rank, self.has_prev_rank = _values(players["_prev_rank"], np.int64)
        self.prev_rating, self.has_prev_rating = _values(players["_prev_rating"], np.float64)
        self.peak, self.has_peak = _values(players["_peak"], np.float64)
        self.names = players["_name"].combine_chunks()
        # Each player's row in the registry's names (-1: not named there), for the registry it
        # was looked up in: an id is hashed into the registry once, when first numbered.
        self._registry: RegistryNames | None = None
        self._registry_rows = np.zeros(0, dtype=np.int64)
        # A system with several lists (its `list_column`) carries ranks, ratings and peaks per
        # list, in a Carry of each; names stay in this one.
        self.lists: dict[str, Carry] = {}

    def of_list(self, name: str) -> "Carry":
        """The carry of one of the system's lists."""
        if name not in self.lists:
            self.lists[name] = Carry()
        return self.lists[name]

    def registry_rows(self, registry: "RegistryNames", numbers: np.ndarray) -> np.ndarray:
        """The registry row of each numbered player (-1 where the registry has no name)."""
        n = self.numbers.count
        if registry is not self._registry:
            self._registry, self._registry_rows = registry, np.zeros(0, dtype=np.int64)
        known = self._registry_rows.shape[0]
        if known < n:
            self._registry_rows = np.concatenate([self._registry_rows, registry.rows(self.numbers.ids()[known:n])])
        return self._registry_rows[numbers]

    def encode(self) -> dict:
        n = self.numbers.count
        lists = {"lists": {name: carry.encode() for name, carry in sorted(self.lists.items())}} if self.lists else {}
        return {
            **lists,
            "players": pa.Table.from_arrays(
                [
                    self.numbers.ids(),
                    _unset_as_null(self.prev_rank[:n], self.has_prev_rank[:n]),
                    _unset_as_null(self.prev_rating[:n], self.has_prev_rating[:n]),
                    _unset_as_null(self.peak[:n], self.has_peak[:n]),
                    self.names,
                ],
                schema=SEEN,
            ),
        }

    @classmethod
    def decode(cls, data: dict) -> "Carry":
        carry = cls(data["players"])
        carry.lists = {name: cls.decode(encoded) for name, encoded in data.get("lists", {}).items()}
        return carry

    def numbered(self, ids: pa.Array) -> np.ndarray:
        """The ids' numbers, with room in every column for players not seen before."""
        numbers = self.numbers.numbers(ids)
        n = self.numbers.count
        if n > len(self.names):
            self.names = pa.concat_arrays([self.names, pa.nulls(n - len(self.names), pa.string())])
            if n > self.prev_rank.shape[0]:
                room = max(n, 2 * self.prev_rank.shape[0])
                for name in ("prev_rank", "has_prev_rank", "prev_rating", "has_prev_rating", "peak", "has_peak"):
                    setattr(self, name, resized(getattr(self, name), room))
        return numbers


def _values(column: pa.ChunkedArray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """A column's values (0 where null) and whether each is set, in arrays of their own."""
    values, is_set = _with_validity(column.combine_chunks(), dtype)
    return values.copy(), is_set.copy()


def _unset_as_null(values: np.ndarray, is_set: np.ndarray) -> pa.Array:
    """The values as Arrow, null where unset, with 0 under each null: a player who left last
    month's table keeps his old rank in the array, and a checkpoint holds the bytes under a null
    too, so they must not depend on where a run started. A new array: Arrow would share numpy's
    memory, which the next months change in place."""
    return pa.array(np.where(is_set, values, 0).astype(values.dtype), mask=~is_set)


def _last_rows(numbers: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The numbers present, ascending, and the last row holding each."""
    last = np.full(count, -1, dtype=np.int64)
    np.maximum.at(last, numbers, np.arange(numbers.shape[0], dtype=np.int64))
    present = np.flatnonzero(last >= 0)
    return present, last[present]


class RegistryNames:
    """The registry's names by player (registry names take precedence over feed names)."""

    def __init__(self, registry: Mapping[str, PlayerInfo]) -> None:
        ids = [pid for pid, info in registry.items() if info.name]
        self.numbers = PlayerNumbers(pa.array(ids, pa.string()))
        self.size = len(ids)
        self.names = pa.array([registry[p].name for p in ids], pa.string())

    def rows(self, ids: pa.Array) -> np.ndarray:
        """Each id's row in `names`, -1 for a player the registry does not name."""
        numbers = self.numbers.numbers(ids).astype(np.int64)  # ids outside the registry get numbers from `size` on
        numbers[numbers >= self.size] = -1
        return numbers

    def named(self, rows: np.ndarray) -> pa.Array:
        """The names at registry rows (null at -1)."""
        return self.names.take(pa.array(rows, mask=rows < 0))


def registry_names(registry: Mapping[str, PlayerInfo]) -> RegistryNames:
    """The registry's names, looked up by player id."""
    return RegistryNames(registry)


def note_names(carry: Carry, results: pa.Table) -> None:
    """Remember the latest feed name of every player in the month's rows (row order = time order)."""
    if results.num_rows == 0 or "player_name" not in results.column_names:
        return
    named = results.select(["player_id", "player_name"])
    if named["player_name"].null_count or named["player_id"].null_count:
        named = named.filter(pc.and_(pc.is_valid(named["player_name"]), pc.is_valid(named["player_id"])))
    if named.num_rows == 0:
        return
    numbers = carry.numbered(named["player_id"].cast(pa.string()).combine_chunks())
    players, rows = _last_rows(numbers, carry.numbers.count)
    mask = np.zeros(carry.numbers.count, dtype=np.bool_)
    mask[players] = True
    latest = named["player_name"].cast(pa.string()).combine_chunks().take(pa.array(rows))
    carry.names = pc.replace_with_mask(carry.names, pa.array(mask), latest)


def finalize_rankings(
    system: RatingSystem, month: Month, out: MonthOutput, carry: Carry, registry: RegistryNames
) -> pa.Table:
    """The month's table with the common columns (SPEC §4) in front; advances the carry. A
    system with a `list_column` has each list's rank change and peak carried apart."""
    if system.list_column is None:
        table = _in_rank_order(out.table)
        numbers = carry.numbered(_ids(table))
        return _with_common_columns(system, month, table, _names(carry, registry, numbers), carry, numbers)
    blocks = list_blocks(out.table, system.list_column)
    table = pa.concat_tables([block for _, block in blocks]) if blocks else out.table
    names = _names(carry, registry, carry.numbered(_ids(table)))  # a player's name is the same in every list
    parts, start = [], 0
    for value, block in blocks:
        listed = carry.of_list(value)
        numbers = listed.numbered(_ids(block))
        parts.append(_with_common_columns(system, month, block, names.slice(start, block.num_rows), listed, numbers))
        start += block.num_rows
    # A list without a player this month still advances: next month nobody has a previous rank in it.
    for value in sorted(set(carry.lists) - {value for value, _ in blocks}):
        empty = table.slice(0, 0)
        _with_common_columns(system, month, empty, names.slice(0, 0), carry.of_list(value), _NO_NUMBERS)
    if not parts:
        return _with_common_columns(system, month, table, names, Carry(), _NO_NUMBERS)
    return pa.concat_tables(parts).combine_chunks()


_NO_NUMBERS = np.zeros(0, np.int32)


def list_blocks(table: pa.Table, column: str) -> list[tuple[str, pa.Table]]:
    """The table's lists, one after another as the system gives them: each list's name and its
    rows (a zero-copy slice), in rank order. ValueError when a list's rows are not together."""
    if table.num_rows == 0:
        return []
    runs = pc.run_end_encode(table[column].combine_chunks())
    values = runs.values.to_pylist()
    if len(set(values)) != len(values):
        raise ValueError(f"the month's table gives the rows of one {column} apart from each other")
    ends = runs.run_ends.to_pylist()
    starts = [0, *ends[:-1]]
    return [(value, _in_rank_order(table.slice(a, b - a))) for value, a, b in zip(values, starts, ends)]


def _in_rank_order(table: pa.Table) -> pa.Table:
    """The table sorted by rank then player_id (itself when it already is)."""
    return table if in_rank_order(table) else table.sort_by([("rank", "ascending"), ("player_id", "ascending")])


def _ids(table: pa.Table) -> pa.Array:
    return table["player_id"].cast(pa.string()).combine_chunks()


def _names(carry: Carry, registry: RegistryNames, numbers: np.ndarray) -> pa.Array:
    """The name of each numbered player: the registry's first, else the latest feed name."""
    return pc.coalesce(registry.named(carry.registry_rows(registry, numbers)), carry.names.take(pa.array(numbers)))


def _with_common_columns(
    system: RatingSystem,
    month: Month,
    table: pa.Table,
    name: pa.Array,
    carry: Carry,
    numbers: np.ndarray,
) -> pa.Table:
    """One list of the month (in rank order; its players' `numbers` in `carry`) with the common
    columns: rank change and peak from `carry`, which advances."""
    n = table.num_rows
    rank = table["rank"].cast(pa.int64()).combine_chunks()
    rating = table["rating"].cast(pa.float64()).combine_chunks()
    rank_change, rating_change, peak, given = carried_columns(
        numbers,
        *_with_validity(rank, np.int64),
        *_with_validity(rating, np.float64),
        carry.prev_rank,
        carry.has_prev_rank,
        carry.prev_rating,
        carry.has_prev_rating,
        carry.peak,
        carry.has_peak,
    )
    common = {
        "system": pa.repeat(pa.scalar(system.name, pa.string()), n),
        "as_of": pa.repeat(pa.scalar(month.last_day, pa.date32()), n),
        "rank": rank,
        "player_id": _ids(table),
        "player_name": name,
        "rating": rating,
        "rank_change": _array(pa.int64(), rank_change, given[0]),
        "rating_change": _array(pa.float64(), rating_change, given[1]),
        "peak_rating": _array(pa.float64(), peak, given[2]),
    }
    own = [c for c in table.column_names if c not in ("rank", "player_id", "rating")]
    return pa.table(
        {
            **{k: (v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v) for k, v in common.items()},
            **{c: table[c] for c in own},
        }
    )


def in_rank_order(table: pa.Table) -> bool:
    """Whether a month's table is already in its published order, rank then player_id. Systems
    list it so, and one compiled pass over it costs less than sorting every month by a string."""
    rank, ids = table["rank"].combine_chunks(), table["player_id"].combine_chunks()
    if not pa.types.is_integer(rank.type) or ids.type != pa.string():
        return False
    return columns_in_order(rank, ids, ids)


def _with_validity(array: pa.Array, dtype) -> tuple[np.ndarray, np.ndarray]:
    """An array's values (0 where null) and whether each is given."""
    if array.null_count == 0:
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype), np.ones(len(array), dtype=np.bool_)
    return (
        np.asarray(array.fill_null(0).to_numpy(zero_copy_only=False), dtype=dtype),
        np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_),
    )


def _array(kind: pa.DataType, values: np.ndarray, given: np.ndarray) -> pa.Array:
    """An Arrow array of the values, null where not given (sharing the values' memory)."""
    return array_of(kind, len(values), values, None if given.all() else np.packbits(given, bitorder="little"))
