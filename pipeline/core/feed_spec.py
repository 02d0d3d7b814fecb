"""The input feeds of SPEC §2: their columns, types, defaults and keys."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "DATE": pa.date32(),
    "BOOLEAN": pa.bool_(),
}


@dataclass(frozen=True)
class FeedColumn:
    """One column of a feed as delivered."""

    name: str
    sql_type: str  # VARCHAR, BIGINT, DOUBLE, DATE, BOOLEAN
    required: bool = False  # the file must have the column (a file without it is rejected whole)
    default: str | None = None  # SQL literal used when the value is missing


@dataclass(frozen=True)
class Feed:
    """A feed folder under the raw directory."""

    name: str
    columns: tuple[FeedColumn, ...]
    key: tuple[str, ...]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def arrow_schema(self) -> pa.Schema:
        """The feed's columns as Arrow types, in file order."""
        return pa.schema([(c.name, ARROW_TYPES[c.sql_type]) for c in self.columns])

    @property
    def required_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.required]


GAMES = Feed(
    "games",
    (
        FeedColumn("game_id", "VARCHAR", required=True),
        FeedColumn("site", "VARCHAR"),
        FeedColumn("variant", "VARCHAR", default="'standard'"),
        FeedColumn("supply_centres", "BIGINT", default="34"),
        FeedColumn("finished_on", "DATE", required=True),
        FeedColumn("rated", "BOOLEAN", default="true"),
        FeedColumn("power", "VARCHAR", required=True),
        FeedColumn("player_id", "VARCHAR", required=True),
        FeedColumn("player_name", "VARCHAR"),
        FeedColumn("original_player_id", "VARCHAR"),
        FeedColumn("replacement_denies", "BOOLEAN", default="false"),
        FeedColumn("result", "VARCHAR", required=True),
        FeedColumn("centres", "BIGINT", required=True),
        FeedColumn("eliminated_year", "BIGINT"),
        FeedColumn("multi_site", "BOOLEAN", default="false"),
        # Game modes (SPEC §3.6): the scoring system, the press rules, and whether phases were
        # shorter than an hour. A file without them reads as before.
        FeedColumn("scoring", "VARCHAR", default="'draw_size'"),
        FeedColumn("press", "VARCHAR", default="'full'"),
        FeedColumn("live", "BOOLEAN", default="false"),
    ),
    key=("game_id", "power"),
)

EVENTS = Feed(
    "events",
    (
        FeedColumn("event_id", "VARCHAR", required=True),
        FeedColumn("name", "VARCHAR"),
        FeedColumn("start_date", "DATE", required=True),
        FeedColumn("end_date", "DATE", required=True),
        FeedColumn("location", "VARCHAR"),
        FeedColumn("country", "VARCHAR"),
        FeedColumn("rounds", "BIGINT", required=True),
        FeedColumn("num_players", "BIGINT", required=True),
        FeedColumn("is_world_championship", "BOOLEAN", default="false"),
    ),
    key=("event_id",),
)

EVENT_RESULTS = Feed(
    "event_results",
    (
        FeedColumn("event_id", "VARCHAR", required=True),
        FeedColumn("player_id", "VARCHAR", required=True),
        FeedColumn("player_name", "VARCHAR"),
        FeedColumn("nationality", "VARCHAR"),
        FeedColumn("placement", "BIGINT", required=True),
    ),
    key=("event_id", "player_id"),
)

PLAYERS = Feed(
    "players",
    (
        FeedColumn("player_id", "VARCHAR", required=True),
        FeedColumn("name", "VARCHAR"),
        FeedColumn("country", "VARCHAR"),
    ),
    key=("player_id",),
)

# A table a site published as of a month, to continue from (one system's columns per row; a file
# may hold only the columns its system uses). `recent_points` is Eagle's list of up to ten game
# points, oldest first, kept as delivered text ("5.00;3.25" in CSV, a list in Parquet or JSON).
LISTS = Feed(
    "lists",
    (
        FeedColumn("system", "VARCHAR", required=True),
        FeedColumn("as_of", "DATE", required=True),
        FeedColumn("player_id", "VARCHAR", required=True),
        FeedColumn("player_name", "VARCHAR"),
        # Ghost's lists, one per category; a key column, so every row has one (other systems' rows
        # leave it at the default and are one list).
        FeedColumn("category", "VARCHAR", default="'overall'"),
        FeedColumn("rating", "DOUBLE"),
        FeedColumn("events", "BIGINT"),
        FeedColumn("last_event_date", "DATE"),
        FeedColumn("recent_points", "VARCHAR"),
        FeedColumn("games", "BIGINT"),
        FeedColumn("last_game_date", "DATE"),
        FeedColumn("evaluations", "BIGINT"),
        FeedColumn("last_evaluated", "DATE"),
    ),
    key=("system", "category", "player_id"),
)

FEEDS: dict[str, Feed] = {f.name: f for f in (GAMES, EVENTS, EVENT_RESULTS, PLAYERS, LISTS)}

# Lineage columns every staged row carries.
SOURCE_FILE = "_source_file"
SOURCE_LINE = "_source_line"
ROW_ID = "_row_id"

FILE_EXTENSIONS = {".csv": "csv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}

# Longest accepted text value; longer ones are quarantined (guards against runaway fields).
MAX_TEXT_LENGTH = 1000


def recent_points_sql(column: str) -> str:
    """SQL: the entries of a delivered `recent_points` text as a VARCHAR[] ("5.00;3.25" in CSV,
    "[5.0, 3.25]" from a Parquet or JSON list), NULL when the value is. One parse for validation
    and for reading, so what was validated is what is rated."""
    return (
        f"CASE WHEN {column} IS NULL THEN NULL ELSE string_split_regex("
        f"regexp_replace(trim({column}), '^\\[\\s*|\\s*\\]$', '', 'g'), '\\s*[;,]\\s*') END"
    )


# An entry of recent_points: a non-negative decimal with at most two places.
RECENT_POINT_PATTERN = "[0-9]+([.][0-9]{1,2})?"
