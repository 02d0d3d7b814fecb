"""The one shape every rating system has: state and one month of results in; new state, the
month's table and its history rows out."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol

import pyarrow as pa

from pipeline.core.feed_spec import GAMES
from pipeline.core.months import Month


@dataclass(frozen=True)
class PlayerInfo:
    """A registry entry (players feed)."""

    name: str | None
    country: str | None


@dataclass(frozen=True)
class MonthInput:
    """One month of a system's feed, already validated and in processing order.

    `results` for game systems has the columns of GAME_COLUMNS, sorted by
    (finished_on, game_id, power); for event systems EVENT_RESULT_COLUMNS, sorted by
    (end_date, start_date, event_id, placement, player_id). It may have no rows: the system is
    still stepped, so time-based rules (listing windows, strike-off) apply every month.
    """

    month: Month
    results: pa.Table
    registry: Mapping[str, PlayerInfo] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedList:
    """The table a site published for a system as of a month (the lists feed, SPEC §2), to continue from.

    `rows` has `player_id`, `player_name` and the system's own list columns, one row per player
    in player_id order; Eagle's `recent_points` is a list of decimal texts, oldest first.
    """

    system: str
    as_of: dt.date
    rows: pa.Table

    @property
    def month(self) -> Month:
        """The month the list stands for; the system's first month is the one after it."""
        return Month.of(self.as_of)


@dataclass
class MonthOutput:
    """What a system returns for one month.

    table: the listed players in rank order, columns `rank`, `player_id`, `rating` (float64)
      followed by the system's own columns (exactly those of its rankings model, in order); a
      system with a `list_column` gives its lists one after another, each in rank order.
      The shared writer adds system, as_of, player_name, rank_change, rating_change, peak_rating.
    history: columns `source_id`, `source_date`, `player_id`, `rating_before`, `rating_after`
      followed by the system's own history columns; the writer adds `system`.
    extras: further per-month tables by name (Eagle's "awards"), written to
      `<name>/<system>/year=YYYY/month=MM/<name>.parquet`.
    """

    state: Any
    table: pa.Table
    history: pa.Table
    extras: dict[str, pa.Table] = field(default_factory=dict)


class RatingSystem(Protocol):
    """A monthly rating system. Implementations import no Dagster."""

    name: ClassVar[str]  # "dip_pouch", "club", "eagle", "diwz"
    title: ClassVar[str]  # human title for the UI and reports
    feed: ClassVar[str]  # "games" or "events"
    ties_share_rank: ClassVar[bool]  # True: 1-2-2-4 on equal ratings; False: order breaks ties
    rating_bounds: ClassVar[tuple[float | None, float | None]]  # plausible range, checked on every output
    newcomer_rating: ClassVar[float]  # a player the previous month's table does not list, for quality (SPEC §3.5)
    # The column that divides a month's table into lists ranked apart (Ghost's `category`), each
    # with its own rank change and peak; None for a system with one list.
    list_column: ClassVar[str | None]
    # Its lists by name, the main one first: the list the run summary shows and predictive
    # quality scores (SPEC §3.5); empty for a system with one list.
    lists: ClassVar[tuple[str, ...]]
    extras: ClassVar[tuple[str, ...]]  # names of extra outputs, e.g. ("awards",)
    rankings_model: ClassVar[type]  # Pandera model (schemas/<system>.py) of the rankings table
    history_model: ClassVar[type]  # Pandera model of the history table
    extra_models: ClassVar[dict[str, type]]  # Pandera model per extra output

    def initial_state(self) -> Any:
        """State before the first month."""

    def state_from_list(self, published: PublishedList) -> Any:
        """State at the end of the month a published list stands for, built from the list."""

    def step(self, state: Any, month_input: MonthInput) -> MonthOutput:
        """Apply one month of results; must not mutate `state` in a way the caller relies on."""

    def encode_state(self, state: Any) -> Any:
        """JSON-compatible form of the state (see pipeline.core.state_codec)."""

    def decode_state(self, data: Any) -> Any:
        """Inverse of encode_state."""


# Columns handed to game-based systems (pyarrow types).
GAME_COLUMNS = GAMES.arrow_schema.append(pa.field("responsible_player_id", pa.string()))

# Columns handed to event-based systems: event_results joined with their event.
EVENT_RESULT_COLUMNS = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_name", pa.string()),
        ("start_date", pa.date32()),
        ("end_date", pa.date32()),
        ("rounds", pa.int64()),
        ("num_players", pa.int64()),
        ("is_world_championship", pa.bool_()),
        ("player_id", pa.string()),
        ("player_name", pa.string()),
        ("nationality", pa.string()),
        ("placement", pa.int64()),
    ]
)


# The columns every system's month table and history rows begin with (the writer adds the rest).
RANKING_HEAD = [("rank", pa.int64()), ("player_id", pa.string()), ("rating", pa.float64())]
HISTORY_HEAD = [
    ("source_id", pa.string()),
    ("source_date", pa.date32()),
    ("player_id", pa.string()),
    ("rating_before", pa.float64()),
    ("rating_after", pa.float64()),
]


# The Arrow type of each Python type the Pandera models use.
ARROW_TYPES = {
    "int": pa.int64(),
    "float": pa.float64(),
    "str": pa.string(),
    "bool": pa.bool_(),
    "datetime.date": pa.date32(),
    "date": pa.date32(),
}


def model_columns(model) -> list[tuple[str, pa.DataType]]:
    """The columns a Pandera model adds to the models it extends, with their Arrow types, in the
    model's order: the models in schemas/ are the one place a table's columns and types are
    written down. A column the model declares again (with stricter checks) stays where the base
    model puts it."""
    inherited = {name for cls in model.__mro__[1:] for name in cls.__dict__.get("__annotations__", {})}
    own = model.__dict__.get("__annotations__", {})
    return [
        (name, ARROW_TYPES[kind if isinstance(kind, str) else kind.__name__])
        for name, kind in own.items()
        if name != "Config" and name not in inherited
    ]


def rankings_schema(*own: tuple[str, pa.DataType]) -> pa.Schema:
    """A system's month table: rank, player_id, rating, then its own columns."""
    return pa.schema(RANKING_HEAD + list(own))


def history_schema(*own: tuple[str, pa.DataType]) -> pa.Schema:
    """A system's history rows: the common head, then its own inputs."""
    return pa.schema(HISTORY_HEAD + list(own))
