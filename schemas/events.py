"""The events feed (SPEC §2): face-to-face tournaments."""

from __future__ import annotations

import datetime

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

END_BEFORE_START = "end_before_start"
BAD_ROUNDS = "rounds_below_one"
BAD_FIELD_SIZE = "num_players_below_two"
NO_RESULTS = "event_without_results"

REQUIRED = ["event_id", "start_date", "end_date", "rounds", "num_players"]


class EventsFeed(delivered_rows(tuple(REQUIRED))):
    """Validated events. `_result_count` is the number of delivered result rows naming the event."""

    event_id: str = Field(nullable=True, description="Event identifier (key).")
    name: str = Field(nullable=True, description="Event name.")
    start_date: datetime.date = Field(nullable=True, description="First day.")
    end_date: datetime.date = Field(nullable=True, description="Last day (>= start_date).")
    location: str = Field(nullable=True, description="City or venue.")
    country: str = Field(nullable=True, description="Host country.")
    rounds: int = Field(nullable=True, description="Number of rounds (>= 1).")
    num_players: int = Field(nullable=True, description="The whole field (>= 2), even where results list fewer.")
    is_world_championship: bool = Field(nullable=True, description="World Championship (tournament value 20).")
    result_count: int = Field(alias="_result_count", description="Delivered result rows for the event.")

    @pdi.dataframe_check(name=END_BEFORE_START)
    def ends_after_start(cls, data):
        t = data.table
        return rowwise((t.end_date >= t.start_date).fill_null(True))

    @pdi.dataframe_check(name=BAD_ROUNDS)
    def rounds_positive(cls, data):
        return rowwise((data.table.rounds >= 1).fill_null(True))

    @pdi.dataframe_check(name=BAD_FIELD_SIZE)
    def field_of_two(cls, data):
        return rowwise((data.table.num_players >= 2).fill_null(True))

    @pdi.dataframe_check(name=DATE_IN_FUTURE)
    def not_future(cls, data):
        t = data.table
        return rowwise(date_not_future(t.start_date) & date_not_future(t.end_date))

    @pdi.dataframe_check(name=DATE_BEFORE_1954)
    def not_ancient(cls, data):
        t = data.table
        return rowwise(date_not_ancient(t.start_date) & date_not_ancient(t.end_date))

    @pdi.dataframe_check(name=NO_RESULTS)
    def has_results(cls, data):
        return rowwise(data.table._result_count > 0)
