"""Dip Pouch Tournament Rating (World Diplomacy Database), SPEC §3.1.

Every player starts at 40; after each event the rating moves TV% of the way toward the
player's percentile in that event.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.systems.base import (
    MonthInput,
    MonthOutput,
    PublishedList,
    history_schema,
    model_columns,
    rankings_schema,
)
from pipeline.systems.dip_pouch import kernel
from pipeline.systems.kernels.ids import array_of, string_buffers, strings_of
from pipeline.systems.kernels.ids import run_starts as string_run_starts
from pipeline.systems.kernels.numbering import PlayerNumbers, distinct_numbers
from schemas.dip_pouch import DipPouchHistory, DipPouchRankings

START_RATING = 40.0
WORLD_CHAMPIONSHIP_VALUE = 20.0
MAX_EVENT_VALUE = 15.0
DEFAULT_CUTOFF_YEAR = 2001

RANKING_COLUMNS = rankings_schema(*model_columns(DipPouchRankings))
HISTORY_COLUMNS = history_schema(*model_columns(DipPouchHistory))


def percentile(num_players: int, placement: int) -> float:
    """(N + 0.5 − placement) / N × 100."""
    return (num_players + 0.5 - placement) / num_players * 100


def tournament_value(
    num_players: int,
    rounds: int,
    is_world_championship: bool,
    end_date: dt.date,
    cutoff_year: int = DEFAULT_CUTOFF_YEAR,
) -> float:
    """TV: 20 for any World Championship; 0 before the cut-off year; else N/7+2 (one round) or N/3.5+2, at most 15."""
    if is_world_championship:
        return WORLD_CHAMPIONSHIP_VALUE
    if end_date.year < cutoff_year:
        return 0.0
    value = num_players / 7 + 2 if rounds == 1 else num_players / 3.5 + 2
    return min(value, MAX_EVENT_VALUE)


def updated_rating(old: float, value: float, pct: float) -> float:
    """new = old + TV/100 × (percentile − old)."""
    return old + value / 100 * (pct - old)


@dataclass
class DipPouchState:
    """Per-player arrays indexed by a dense player number (player i has the i-th id of
    `numbers`), and the listed players in table order."""

    rating: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    events: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    last_event: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # days since 1970-01-01
    # Registry country, else latest nationality: a code into `countries` (-1: none).
    country: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    from_registry: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))
    countries: dict[str, int] = field(default_factory=dict)  # country name -> code, codes in order of first sight
    # The ids, numbered in a compiled hash table: append-only, so shared by the states stepped one
    # from another (a state's players are its first `count` ids; see own_numbers). Only they hold
    # the ids: a list of them, copied with every month's state, cost a twentieth of the month.
    numbers: PlayerNumbers = field(default_factory=PlayerNumbers)
    country_names_array: pa.Array | None = None  # `countries`' names as Arrow (see country_array)
    registry_pending: bool = False  # players from a published list, whose registry countries the first step sets
    # The listed players by rating, best first, then id (kernel.table_order); None until first
    # needed after a decode. Derived, never checkpointed; replaced, never changed in place.
    order: np.ndarray | None = None

    @property
    def count(self) -> int:
        """How many players the state knows."""
        return len(self.rating)

    @property
    def ids(self) -> list[str]:
        """The players' ids by number."""
        return id_array(self).to_pylist()

    def copy(self) -> "DipPouchState":
        return DipPouchState(
            self.rating.copy(),
            self.events.copy(),
            self.last_event.copy(),
            self.country.copy(),
            self.from_registry.copy(),
            dict(self.countries),
            self.numbers,
            self.country_names_array,
            self.registry_pending,
            self.order,
        )

    def country_code(self, name: str | None) -> int:
        """The code of a country name (a new one gets the next code); -1 for none."""
        if not name:
            return -1
        return self.countries.setdefault(name, len(self.countries))

    def country_names(self) -> list[str | None]:
        """Each player's country name (None: none), by player number."""
        names = list(self.countries)
        return [names[c] if c >= 0 else None for c in self.country.tolist()]


EPOCH = dt.date(1970, 1, 1)
NO_EVENT_DAY = np.iinfo(np.int32).min  # a published list's player whose last event the list does not give


class DipPouch:
    """The Dip Pouch Tournament Rating as a monthly system."""

    name: ClassVar[str] = "dip_pouch"
    title: ClassVar[str] = "Dip Pouch Tournament Rating"
    feed: ClassVar[str] = "events"
    ties_share_rank: ClassVar[bool] = True
    # The pre-month rating of a player the previous table does not list (SPEC §3.5).
    newcomer_rating: ClassVar[float] = 40.0
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)  # a weighted mean of percentiles
    list_column: ClassVar[str | None] = None  # one list
    lists: ClassVar[tuple[str, ...]] = ()
    extras: ClassVar[tuple[str, ...]] = ()
    rankings_model: ClassVar[type] = DipPouchRankings
    history_model: ClassVar[type] = DipPouchHistory
    extra_models: ClassVar[dict[str, type]] = {}

    def __init__(self, cutoff_year: int = DEFAULT_CUTOFF_YEAR):
        self.cutoff_year = int(cutoff_year)

    def initial_state(self) -> DipPouchState:
        return DipPouchState()

    def state_from_list(self, published: PublishedList) -> DipPouchState:
        """The published ratings, events and last event dates (SPEC §2); countries come from the
        registry as they arrive, or from the nationality of the player's next event."""
        rows = published.rows
        ids = rows.column("player_id").to_pylist()
        last = [
            NO_EVENT_DAY if day is None else (day - EPOCH).days for day in rows.column("last_event_date").to_pylist()
        ]
        return DipPouchState(
            np.asarray(rows.column("rating").to_numpy(zero_copy_only=False), np.float64),
            np.asarray(rows.column("events").to_numpy(zero_copy_only=False), np.int64),
            np.array(last, np.int32),
            np.full(len(ids), -1, np.int32),
            np.zeros(len(ids), np.bool_),
            numbers=numbered(ids),
            registry_pending=True,
        )

    def step(self, state: DipPouchState, month_input: MonthInput) -> MonthOutput:
        """Apply the month's events in order (one compiled pass over the rows,
        pipeline.systems.dip_pouch.kernel); list everyone with a rated event."""
        state = state.copy()
        rows = month_input.results
        if state.registry_pending:
            apply_registry(state, month_input.registry)
        m = rows.num_rows
        players = player_indices(state, rows.column("player_id"), month_input.registry)
        note_nationalities(state, players, rows.column("nationality"))
        num_players = np.asarray(rows.column("num_players").to_numpy(zero_copy_only=False), np.int64)
        pct = kernel.percentiles(
            num_players, np.asarray(rows.column("placement").to_numpy(zero_copy_only=False), np.int64)
        )
        end_days = np.asarray(rows.column("end_date").cast(pa.int32()).to_numpy(zero_copy_only=False), np.int32)
        # An event's rows are consecutive; its fields are read from its first row.
        event_start = run_starts(rows.column("event_id"))
        heads = event_start[:-1]
        value = kernel.tournament_values(
            num_players[heads],
            np.asarray(rows.column("rounds").to_numpy(zero_copy_only=False), np.int64)[heads],
            pc.fill_null(rows.column("is_world_championship"), False).to_numpy(zero_copy_only=False)[heads],
            kernel.end_years(end_days[heads]),
            self.cutoff_year,
        )
        before = np.zeros(m, np.float64)
        after = np.full(m, np.nan)
        kernel.apply_events(
            event_start,
            value,
            players,
            pct,
            end_days,
            state.rating,
            state.events,
            state.last_event,
            before,
            after,
            np.empty(m, np.int64),
        )
        state.order = table_order(state, players)
        history = pa.table(
            {
                "source_id": rows.column("event_id"),
                "source_date": rows.column("end_date"),
                "player_id": rows.column("player_id"),
                "rating_before": pa.array(before, pa.float64()),
                "rating_after": pa.array(after, pa.float64(), mask=np.isnan(after)),
                "placement": rows.column("placement"),
                "num_players": rows.column("num_players"),
                "percentile": pa.array(pct, pa.float64()),
                "tournament_value": pa.array(np.repeat(value, np.diff(event_start)), pa.float64()),
            },
            schema=HISTORY_COLUMNS,
        )
        return MonthOutput(state, listed_table(state), history)

    def encode_state(self, state: DipPouchState) -> dict:
        return {
            "ids": state.ids,
            "rating": state.rating,
            "events": state.events,
            "last_event": state.last_event,
            "country": state.country_names(),
            "from_registry": state.from_registry,
        }

    def decode_state(self, data: dict) -> DipPouchState:
        state = DipPouchState(
            data["rating"],
            data["events"],
            data["last_event"],
            from_registry=data["from_registry"],
            numbers=numbered(list(data["ids"])),
        )
        state.country = np.array([state.country_code(name) for name in data["country"]], np.int32)
        return state


def run_starts(column: pa.ChunkedArray) -> np.ndarray:
    """First row of each run of equal values (event ids, no nulls), then the row count: one
    compiled pass over the strings' bytes (pipeline.systems.kernels.ids)."""
    if len(column) == 0:
        return np.zeros(1, np.int64)
    strings = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if strings.null_count:
        raise ValueError("dip_pouch: an event result without its event_id")
    return string_run_starts(*string_buffers(strings.cast(pa.string())))


def numbered(ids: list[str]) -> PlayerNumbers:
    """A numbering of distinct ids, in their order."""
    return distinct_numbers(pa.array(ids, pa.string()), "dip_pouch: the state lists a player twice")


def own_numbers(state: DipPouchState) -> PlayerNumbers:
    """A numbering the state may add ids to: the one it shares with the state it was stepped from
    while that holds no more ids than its own, else a copy of its first `count` ids (a state
    stepped a second time), so that what another state sees never changes."""
    numbers = state.numbers = state.numbers.first(state.count)
    return numbers


def player_indices(state: DipPouchState, player_ids: pa.ChunkedArray, registry) -> np.ndarray:
    """Dense indices of the month's players; newcomers start at 40 with their registry country."""
    numbers = own_numbers(state)
    known = numbers.count
    out = numbers.numbers(player_ids.combine_chunks()).astype(np.int64)
    if numbers.count > known:
        added = numbers.ids().slice(known).to_pylist()
        state.rating = np.concatenate([state.rating, np.full(len(added), START_RATING)])
        state.events = np.concatenate([state.events, np.zeros(len(added), np.int64)])
        state.last_event = np.concatenate([state.last_event, np.zeros(len(added), np.int32)])
        codes = np.array([state.country_code(registry[p].country if p in registry else None) for p in added], np.int32)
        state.country = np.concatenate([state.country, codes])
        state.from_registry = np.concatenate([state.from_registry, codes >= 0])
    return out


def apply_registry(state: DipPouchState, registry) -> None:
    """Give every player the registry knows their registry country (players of a published list,
    who arrived before any registry was read)."""
    for i, pid in enumerate(state.ids):
        info = registry.get(pid)
        if info is not None and info.country:
            state.country[i], state.from_registry[i] = state.country_code(info.country), True
    state.registry_pending = False


def note_nationalities(state: DipPouchState, players: np.ndarray, nationalities: pa.ChunkedArray) -> None:
    """The latest listed nationality stands in for a country the registry does not give."""
    names = nationalities.combine_chunks()
    known = pc.index_in(names, value_set=country_array(state))
    if known.null_count > names.null_count:
        # Names not coded yet ("" included, which stays uncoded) get codes in order of first sight.
        count = len(state.countries)
        for name in pc.unique(names.filter(pc.and_(pc.is_null(known), pc.is_valid(names)))).to_pylist():
            state.country_code(name)
        if len(state.countries) > count:
            known = pc.index_in(names, value_set=country_array(state))
    values = pc.fill_null(known, -1).to_numpy(zero_copy_only=False).astype(np.int32)
    named = values >= 0
    if named.any():
        kernel.latest_codes(state.country, players, values, named & ~state.from_registry[players])


def table_order(state: DipPouchState, touched: np.ndarray) -> np.ndarray:
    """The listed players in table order after a month that touched `touched` (kernel.table_order;
    every player when the state has no order yet)."""
    previous = state.order
    if previous is None:
        previous, touched = np.zeros(0, np.int64), np.arange(state.count, dtype=np.int64)
    return kernel.table_order(previous, touched, state.events, state.rating, *string_buffers(id_array(state)))


def listed_table(state: DipPouchState) -> pa.Table:
    """Everyone with an event of value above 0, by rating then player_id, with shared and national ranks."""
    order = state.order  # the step's, after its events
    if order is None:
        raise ValueError("a listed table needs the order of a state a step produced")
    n = len(order)
    rank, ratings, events, last, name_offsets, names, named, national = kernel.listed_columns(
        order,
        state.rating,
        state.events,
        state.last_event,
        state.country,
        len(state.countries),
        *string_buffers(country_array(state)),
    )
    with_country = np.packbits(named, bitorder="little")
    return pa.Table.from_arrays(
        [
            array_of(pa.int64(), n, rank),
            id_array(state).take(array_of(pa.int64(), n, order)),
            array_of(pa.float64(), n, ratings),
            array_of(pa.int64(), n, events),
            array_of(pa.date32(), n, last, np.packbits(last != NO_EVENT_DAY, bitorder="little")),
            pa.StringArray.from_buffers(n, pa.py_buffer(name_offsets), pa.py_buffer(names), pa.py_buffer(with_country)),
            array_of(pa.int64(), n, national, with_country),
        ],
        schema=RANKING_COLUMNS,
    )


def country_array(state: DipPouchState) -> pa.Array:
    """The country names by code as Arrow, made again only when a country was added."""
    made = state.country_names_array
    if made is None or len(made) != len(state.countries):
        made = state.country_names_array = pa.array(list(state.countries), pa.string())
    return made


def id_array(state: DipPouchState) -> pa.Array:
    """The state's ids as an Arrow array: a view of the numbering's bytes (converting every id
    again each month cost more than the month's rating itself)."""
    return strings_of(state.numbers.offsets, state.numbers.pool, state.count)
