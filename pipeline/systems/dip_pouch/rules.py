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

from pipeline.systems.dip_pouch import kernel
from pipeline.systems.kernels.ids import run_starts as string_run_starts, string_buffers
from pipeline.systems.base import (
    MonthInput, MonthOutput, PublishedList, history_schema, model_columns, rankings_schema,
)
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


def tournament_value(num_players: int, rounds: int, is_world_championship: bool,
                     end_date: dt.date, cutoff_year: int = DEFAULT_CUTOFF_YEAR) -> float:
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
    """Per-player arrays indexed by a dense player number (ids[i] is player i)."""

    ids: list[str] = field(default_factory=list)
    rating: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    events: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    last_event: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # days since 1970-01-01
    country: list[str | None] = field(default_factory=list)  # registry country, else latest nationality
    from_registry: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))
    index: dict[str, int] = field(default_factory=dict)  # ids inverted; rebuilt, never checkpointed
    id_array: pa.Array | None = None  # ids as Arrow (see id_array); immutable, so shared by copies
    registry_pending: bool = False  # players from a published list, whose registry countries the first step sets

    def copy(self) -> "DipPouchState":
        return DipPouchState(list(self.ids), self.rating.copy(), self.events.copy(), self.last_event.copy(),
                             list(self.country), self.from_registry.copy(), dict(self.index), self.id_array,
                             self.registry_pending)


EPOCH = dt.date(1970, 1, 1)
NO_EVENT_DAY = np.iinfo(np.int32).min  # a published list's player whose last event the list does not give


class DipPouch:
    """The Dip Pouch Tournament Rating as a monthly system."""

    name: ClassVar[str] = "dip_pouch"
    title: ClassVar[str] = "Dip Pouch Tournament Rating"
    feed: ClassVar[str] = "events"
    ties_share_rank: ClassVar[bool] = True
    rating_bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)  # a weighted mean of percentiles
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
        last = [NO_EVENT_DAY if day is None else (day - EPOCH).days for day in rows.column("last_event_date").to_pylist()]
        return DipPouchState(
            ids, np.asarray(rows.column("rating").to_numpy(zero_copy_only=False), np.float64),
            np.asarray(rows.column("events").to_numpy(zero_copy_only=False), np.int64), np.array(last, np.int32),
            [None] * len(ids), np.zeros(len(ids), np.bool_), {pid: i for i, pid in enumerate(ids)},
            registry_pending=True)

    def step(self, state: DipPouchState, month_input: MonthInput) -> MonthOutput:
        """Apply the month's events in order (one compiled pass over the rows,
        pipeline.systems.dip_pouch.kernel); list everyone with a rated event."""
        state = state.copy()
        rows = month_input.results
        if state.registry_pending:
            apply_registry(state, month_input.registry)
        m = rows.num_rows
        players = player_indices(state, rows.column("player_id").to_pylist(), month_input.registry)
        note_nationalities(state, players, rows.column("nationality").to_pylist())
        n = np.asarray(rows.column("num_players").to_numpy(zero_copy_only=False), np.float64)
        placement = np.asarray(rows.column("placement").to_numpy(zero_copy_only=False), np.float64)
        pct = (n + 0.5 - placement) / n * 100
        end_days = np.asarray(rows.column("end_date").cast(pa.int32()).to_numpy(zero_copy_only=False), np.int32)
        # An event's rows are consecutive; its fields are read from its first row.
        event_start = run_starts(rows.column("event_id"))
        heads = event_start[:-1]
        value = kernel.tournament_values(
            np.asarray(rows.column("num_players").to_numpy(zero_copy_only=False), np.int64)[heads],
            np.asarray(rows.column("rounds").to_numpy(zero_copy_only=False), np.int64)[heads],
            pc.fill_null(rows.column("is_world_championship"), False).to_numpy(zero_copy_only=False)[heads],
            kernel.end_years(end_days[heads]), self.cutoff_year)
        before = np.zeros(m, np.float64)
        after = np.full(m, np.nan)
        kernel.apply_events(event_start, value, players, pct, end_days, state.rating, state.events,
                            state.last_event, before, after, np.empty(m, np.int64))
        history = pa.table({
            "source_id": rows.column("event_id"), "source_date": rows.column("end_date"),
            "player_id": rows.column("player_id"), "rating_before": pa.array(before, pa.float64()),
            "rating_after": pa.array(after, pa.float64(), mask=np.isnan(after)),
            "placement": rows.column("placement"), "num_players": rows.column("num_players"),
            "percentile": pa.array(pct, pa.float64()),
            "tournament_value": pa.array(np.repeat(value, np.diff(event_start)), pa.float64()),
        }, schema=HISTORY_COLUMNS)
        return MonthOutput(state, listed_table(state), history)

    def encode_state(self, state: DipPouchState) -> dict:
        return {"ids": state.ids, "rating": state.rating, "events": state.events, "last_event": state.last_event,
                "country": state.country, "from_registry": state.from_registry}

    def decode_state(self, data: dict) -> DipPouchState:
        ids = list(data["ids"])
        return DipPouchState(ids, data["rating"], data["events"], data["last_event"], list(data["country"]),
                             data["from_registry"], {pid: i for i, pid in enumerate(ids)})


def run_starts(column: pa.ChunkedArray) -> np.ndarray:
    """First row of each run of equal values (event ids, no nulls), then the row count: one
    compiled pass over the strings' bytes (pipeline.systems.kernels.ids)."""
    if len(column) == 0:
        return np.zeros(1, np.int64)
    strings = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if strings.null_count:
        raise ValueError("dip_pouch: an event result without its event_id")
    return string_run_starts(*string_buffers(strings.cast(pa.string())))


def player_indices(state: DipPouchState, player_ids: list[str], registry) -> np.ndarray:
    """Dense indices of the month's players; newcomers start at 40 with their registry country."""
    index = state.index
    out = np.empty(len(player_ids), np.int64)
    added: list[str] = []
    for k, pid in enumerate(player_ids):
        i = index.get(pid)
        if i is None:
            i = index[pid] = len(state.ids) + len(added)
            added.append(pid)
        out[k] = i
    if added:
        state.ids.extend(added)
        state.rating = np.concatenate([state.rating, np.full(len(added), START_RATING)])
        state.events = np.concatenate([state.events, np.zeros(len(added), np.int64)])
        state.last_event = np.concatenate([state.last_event, np.zeros(len(added), np.int32)])
        countries = [registry[p].country if p in registry and registry[p].country else None for p in added]
        state.country.extend(countries)
        state.from_registry = np.concatenate([state.from_registry, np.array([c is not None for c in countries])])
    return out


def apply_registry(state: DipPouchState, registry) -> None:
    """Give every player the registry knows their registry country (players of a published list,
    who arrived before any registry was read)."""
    for i, pid in enumerate(state.ids):
        info = registry.get(pid)
        if info is not None and info.country:
            state.country[i], state.from_registry[i] = info.country, True
    state.registry_pending = False


def note_nationalities(state: DipPouchState, players: np.ndarray, nationalities: list[str | None]) -> None:
    """The latest listed nationality stands in for a country the registry does not give."""
    for i, nationality in zip(players.tolist(), nationalities):
        if nationality and not state.from_registry[i]:
            state.country[i] = nationality


def listed_table(state: DipPouchState) -> pa.Table:
    """Everyone with an event of value above 0, by rating then player_id, with shared and national ranks."""
    listed = np.flatnonzero(state.events > 0)
    unsorted = pa.table({
        "player_id": id_array(state).take(pa.array(listed)), "rating": pa.array(state.rating[listed], pa.float64()),
        "events": pa.array(state.events[listed], pa.int64()),
        "last_event_date": pa.array(state.last_event[listed], pa.int32(),
                                    mask=state.last_event[listed] == NO_EVENT_DAY).cast(pa.date32()),
        "country": pa.array([state.country[i] for i in listed.tolist()], pa.string()),
    })
    table = unsorted.take(pc.sort_indices(unsorted, sort_keys=[("rating", "descending"), ("player_id", "ascending")]))
    ratings = table.column("rating").to_numpy()
    table = table.append_column("national_rank", pa.array(national_rank_array(table), pa.int64(),
                                                          mask=pc.is_null(table.column("country")).to_numpy(zero_copy_only=False)))
    table = table.add_column(0, "rank", pa.array(shared_rank_array(ratings), pa.int64()))
    return table.select(RANKING_COLUMNS.names).cast(RANKING_COLUMNS)


def id_array(state: DipPouchState) -> pa.Array:
    """state.ids as an Arrow array, kept with the state and extended by the ids added since it was
    made (ids are only ever appended): converting every id again each month cost more than the
    month's rating itself."""
    made = state.id_array
    if made is None or len(made) > len(state.ids):
        made = pa.array(state.ids, pa.string())
    elif len(made) < len(state.ids):
        made = pa.concat_arrays([made, pa.array(state.ids[len(made):], pa.string())])
    state.id_array = made
    return made


def shared_rank_array(ratings_in_order: np.ndarray) -> np.ndarray:
    """Competition ranks (1-2-2-4) of ratings already sorted best first."""
    n = len(ratings_in_order)
    positions = np.arange(1, n + 1)
    starts = np.ones(n, np.bool_)
    starts[1:] = ratings_in_order[1:] != ratings_in_order[:-1]
    return np.maximum.accumulate(np.where(starts, positions, 0)) if n else positions


def national_rank_array(table: pa.Table) -> np.ndarray:
    """Shared rank within each country for a table sorted by rating; 0 where there is no country
    (one compiled pass, kernel.national_ranks, over the countries as dictionary codes)."""
    encoded = pc.dictionary_encode(table.column("country")).combine_chunks()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return kernel.national_ranks(codes, table.column("rating").to_numpy(), len(encoded.dictionary))
