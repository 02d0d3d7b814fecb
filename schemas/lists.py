"""The lists feed (SPEC §2): the table a site published as of a month, to continue from.

Every row belongs to one system and carries only that system's columns. Facts that need more
than one row or a parse (`_as_of_count`, `_recent_count`, `_recent_malformed`, the month-end
flags) are computed in SQL before validation, like the games feed's whole-game facts.
"""

from __future__ import annotations

import datetime

import ibis
import pandera.ibis as pdi
from pandera.ibis import Field

from schemas.feed_common import (
    DATE_BEFORE_1954,
    DATE_IN_FUTURE,
    date_not_ancient,
    date_not_future,
    delivered_rows,
    rowwise,
)
from schemas.ghost import CATEGORIES as GHOST_CATEGORIES

SYSTEMS = ("dip_pouch", "club", "eagle", "diwz", "ghost")
# The columns each system's rows use (beyond system, as_of, player_id, player_name), and which of
# them need a value.
SYSTEM_COLUMNS = {
    "dip_pouch": ("rating", "events", "last_event_date"),
    "club": ("rating",),
    "eagle": ("recent_points", "games", "last_game_date"),
    "diwz": ("rating", "evaluations", "last_evaluated"),
    "ghost": ("rating", "games", "last_game_date"),
}
SYSTEM_REQUIRED = {
    "dip_pouch": ("rating", "events"),
    "club": ("rating",),
    "eagle": ("recent_points", "games", "last_game_date"),
    "diwz": ("rating", "evaluations"),
    "ghost": ("rating", "games", "last_game_date"),
}
# Systems whose list is several lists, by `category` (the feed's default names the only list of the others).
SYSTEM_CATEGORIES = {"ghost": GHOST_CATEGORIES}
ONE_LIST = "overall"  # the category default: the one list of a system without categories
SYSTEM_VALUE_COLUMNS = tuple(sorted({c for cols in SYSTEM_COLUMNS.values() for c in cols}))
MAX_RECENT_POINTS = 10
DIWZ_LOWEST, DIWZ_HIGHEST, DIWZ_UNEVALUATED = 100, 3500, 1600

UNKNOWN_SYSTEM = "unknown_system"
AS_OF_NOT_MONTH_END = "as_of_not_month_end"
AS_OF_DIFFERS = "as_of_differs_within_system"
MISSING_SYSTEM_VALUE = "missing_system_value"
OTHER_SYSTEM_VALUE = "value_of_another_system"
DATE_AFTER_AS_OF = "date_after_as_of"
DIP_POUCH_RATING_RANGE = "dip_pouch_rating_out_of_range"
DIP_POUCH_EVENTS = "dip_pouch_events_below_one"
CLUB_NOT_DECEMBER = "club_list_not_31_december"
CLUB_RATING_NEGATIVE = "club_rating_negative"
EAGLE_POINTS_MALFORMED = "eagle_recent_points_malformed"
EAGLE_TOO_MANY_POINTS = "eagle_more_than_ten_points"
EAGLE_GAMES_BELOW_POINTS = "eagle_games_below_recent_points"
DIWZ_RATING_NOT_WHOLE = "diwz_rating_not_whole"
DIWZ_RATING_RANGE = "diwz_rating_out_of_range"
DIWZ_EVALUATIONS_NEGATIVE = "diwz_evaluations_negative"
DIWZ_UNEVALUATED_NOT_1600 = "diwz_unevaluated_not_1600"
DIWZ_EVALUATED_UNDATED = "diwz_last_evaluated_missing"
DIWZ_UNEVALUATED_DATED = "diwz_last_evaluated_without_evaluation"
UNKNOWN_CATEGORY = "unknown_category"
GHOST_RATING_NOT_POSITIVE = "ghost_rating_not_positive"
GHOST_GAMES_BELOW_ONE = "ghost_games_below_one"

REQUIRED = ["system", "as_of", "player_id"]


def _of(t, system: str):
    """Boolean expression: the row is one of `system`'s."""
    return (t.system == system).fill_null(False)


def holds_for(t, system: str, rule) -> dict:
    """A row check of one system's rows: `rule` holds, or cannot be judged (a null value, which
    the required-value check reports), or the row is another system's."""
    return rowwise(~_of(t, system) | rule.fill_null(True))


class ListsFeed(delivered_rows(tuple(REQUIRED))):
    """Validated published lists: per system one `as_of`, every value in its system's range."""

    system: str = Field(nullable=True, description="dip_pouch, club, eagle or diwz.")
    as_of: datetime.date = Field(nullable=True, description="Last day of the month the list stands for.")
    player_id: str = Field(nullable=True, description="Player identifier; with system the key.")
    player_name: str = Field(nullable=True, description="Name as the list prints it.")
    category: str = Field(
        nullable=True,
        description="ghost: overall, classic, gunboat or live (one row per player and category; default "
        "overall); the other systems' rows leave it at the default.",
    )
    rating: float = Field(
        nullable=True,
        description="dip_pouch 0-100; club >= 0 (the year's final rating); diwz a whole number 100-3500; ghost > 0.",
    )
    events: int = Field(nullable=True, description="dip_pouch: events rated (>= 1).")
    last_event_date: datetime.date = Field(
        nullable=True, description="dip_pouch: end of the last rated event (optional)."
    )
    recent_points: str = Field(
        nullable=True, description="eagle: up to ten game points with two decimals, oldest first, as delivered."
    )
    games: int = Field(
        nullable=True,
        description="eagle: all finished games (>= number of recent points); ghost: counted games of the category (>= 1).",
    )
    last_game_date: datetime.date = Field(
        nullable=True, description="eagle: day of the last game; ghost: of the last game of the category."
    )
    evaluations: int = Field(nullable=True, description="diwz: evaluations (0 = a 1600-0 entry never evaluated).")
    last_evaluated: datetime.date = Field(
        nullable=True, description="diwz: day of the last evaluation (iff evaluations > 0)."
    )
    as_of_count: int = Field(
        alias="_as_of_count", nullable=True, description="Distinct as_of values among the system's rows."
    )
    as_of_month_end: bool = Field(
        alias="_as_of_month_end", nullable=True, description="as_of is the last day of its month."
    )
    as_of_december: bool = Field(alias="_as_of_december", nullable=True, description="as_of is a 31 December.")
    recent_count: int = Field(alias="_recent_count", nullable=True, description="Entries in recent_points.")
    recent_malformed: bool = Field(
        alias="_recent_malformed",
        nullable=True,
        description="An entry of recent_points is no decimal with at most two places.",
    )

    @pdi.dataframe_check(name=UNKNOWN_SYSTEM)
    def system_known(cls, data):
        t = data.table
        return rowwise(t.system.isnull() | t.system.isin(SYSTEMS))

    @pdi.dataframe_check(name=AS_OF_NOT_MONTH_END)
    def as_of_month_end_day(cls, data):
        return rowwise(data.table._as_of_month_end.fill_null(True))

    @pdi.dataframe_check(name=AS_OF_DIFFERS)
    def one_as_of_per_system(cls, data):
        return rowwise((data.table._as_of_count <= 1).fill_null(True))

    @pdi.dataframe_check(name=DATE_IN_FUTURE)
    def not_future(cls, data):
        t = data.table
        return rowwise(date_not_future(t.as_of))

    @pdi.dataframe_check(name=DATE_BEFORE_1954)
    def not_ancient(cls, data):
        t = data.table
        return rowwise(date_not_ancient(t.as_of))

    @pdi.dataframe_check(name=MISSING_SYSTEM_VALUE)
    def system_values_present(cls, data):
        t = data.table
        ok = ibis.literal(True)
        for system, columns in SYSTEM_REQUIRED.items():
            present = ibis.literal(True)
            for column in columns:
                present = present & t[column].notnull()
            ok = ok & (~_of(t, system) | present)
        return rowwise(ok)

    @pdi.dataframe_check(name=OTHER_SYSTEM_VALUE)
    def only_own_columns(cls, data):
        t = data.table
        ok = ibis.literal(True)
        for system, columns in SYSTEM_COLUMNS.items():
            foreign = ibis.literal(False)
            for column in SYSTEM_VALUE_COLUMNS:
                if column not in columns:
                    foreign = foreign | t[column].notnull()
            ok = ok & (~_of(t, system) | ~foreign)
        return rowwise(ok)

    @pdi.dataframe_check(name=UNKNOWN_CATEGORY)
    def category_known(cls, data):
        """A category of the row's system; the one list's name for a system without categories."""
        t = data.table
        ok = ibis.literal(True)
        for system in SYSTEMS:
            ok = ok & (~_of(t, system) | t.category.isin(SYSTEM_CATEGORIES.get(system, (ONE_LIST,))).fill_null(False))
        return rowwise(ok)

    @pdi.dataframe_check(name=DATE_AFTER_AS_OF)
    def dates_not_after_as_of(cls, data):
        t = data.table
        ok = ibis.literal(True)
        for column in ("last_event_date", "last_game_date", "last_evaluated"):
            ok = ok & (t[column] <= t.as_of).fill_null(True)
        return rowwise(ok)

    @pdi.dataframe_check(name=DIP_POUCH_RATING_RANGE)
    def dip_pouch_rating(cls, data):
        t = data.table
        return holds_for(t, "dip_pouch", (t.rating >= 0) & (t.rating <= 100))

    @pdi.dataframe_check(name=DIP_POUCH_EVENTS)
    def dip_pouch_events(cls, data):
        t = data.table
        return holds_for(t, "dip_pouch", t.events >= 1)

    @pdi.dataframe_check(name=CLUB_NOT_DECEMBER)
    def club_december(cls, data):
        t = data.table
        return holds_for(t, "club", t._as_of_december)

    @pdi.dataframe_check(name=CLUB_RATING_NEGATIVE)
    def club_rating(cls, data):
        t = data.table
        # A NaN compares above every number in DuckDB; an infinite rating is no rating either.
        return holds_for(t, "club", (t.rating >= 0) & (t.rating < float("inf")))

    @pdi.dataframe_check(name=EAGLE_POINTS_MALFORMED)
    def eagle_points_decimal(cls, data):
        t = data.table
        return holds_for(t, "eagle", ~t._recent_malformed)

    @pdi.dataframe_check(name=EAGLE_TOO_MANY_POINTS)
    def eagle_at_most_ten(cls, data):
        t = data.table
        return holds_for(t, "eagle", t._recent_count <= MAX_RECENT_POINTS)

    @pdi.dataframe_check(name=EAGLE_GAMES_BELOW_POINTS)
    def eagle_games_cover_points(cls, data):
        t = data.table
        return holds_for(t, "eagle", t.games >= t._recent_count)

    @pdi.dataframe_check(name=DIWZ_RATING_NOT_WHOLE)
    def diwz_whole(cls, data):
        t = data.table
        return holds_for(t, "diwz", t.rating == t.rating.floor())

    @pdi.dataframe_check(name=DIWZ_RATING_RANGE)
    def diwz_range(cls, data):
        t = data.table
        return holds_for(t, "diwz", (t.rating >= DIWZ_LOWEST) & (t.rating <= DIWZ_HIGHEST))

    @pdi.dataframe_check(name=DIWZ_EVALUATIONS_NEGATIVE)
    def diwz_evaluations(cls, data):
        t = data.table
        return holds_for(t, "diwz", t.evaluations >= 0)

    @pdi.dataframe_check(name=DIWZ_UNEVALUATED_NOT_1600)
    def diwz_unevaluated_1600(cls, data):
        t = data.table
        return holds_for(t, "diwz", (t.evaluations != 0) | (t.rating == DIWZ_UNEVALUATED))

    @pdi.dataframe_check(name=DIWZ_EVALUATED_UNDATED)
    def diwz_dated(cls, data):
        t = data.table
        return holds_for(t, "diwz", (t.evaluations <= 0) | t.last_evaluated.notnull())

    @pdi.dataframe_check(name=DIWZ_UNEVALUATED_DATED)
    def diwz_undated(cls, data):
        t = data.table
        return holds_for(t, "diwz", (t.evaluations != 0) | t.last_evaluated.isnull())

    @pdi.dataframe_check(name=GHOST_RATING_NOT_POSITIVE)
    def ghost_rating(cls, data):
        t = data.table
        return holds_for(t, "ghost", (t.rating > 0) & (t.rating < float("inf")))

    @pdi.dataframe_check(name=GHOST_GAMES_BELOW_ONE)
    def ghost_games(cls, data):
        t = data.table
        return holds_for(t, "ghost", t.games >= 1)
