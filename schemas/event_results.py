"""The event_results feed (SPEC §2): placements of players in events."""

from __future__ import annotations

import pandera.ibis as pdi
from pandera.ibis import Field

from schemas.feed_common import (
    delivered_rows,
    rowwise,
)

UNKNOWN_EVENT = "unknown_event"
EVENT_REJECTED = "event_rejected"
PLACEMENT_OUT_OF_RANGE = "placement_out_of_range"

REQUIRED = ["event_id", "player_id", "placement"]


class EventResultsFeed(delivered_rows(tuple(REQUIRED))):
    """Validated results; `_event_status` and `_event_num_players` come from the events feed."""

    event_id: str = Field(nullable=True, description="Event (must exist and be valid).")
    player_id: str = Field(nullable=True, description="Player; appears once per event.")
    player_name: str = Field(nullable=True, description="Player name as listed.")
    nationality: str = Field(nullable=True, description="Player's nationality as listed.")
    placement: int = Field(nullable=True, description="1..num_players; shared places repeat the number.")
    event_status: str = Field(alias="_event_status", description="valid, rejected or unknown.")
    event_num_players: int = Field(alias="_event_num_players", nullable=True, description="The event's field size.")

    @pdi.dataframe_check(name=UNKNOWN_EVENT)
    def event_exists(cls, data):
        t = data.table
        return rowwise(t.event_id.isnull() | (t._event_status != "unknown"))

    @pdi.dataframe_check(name=EVENT_REJECTED)
    def event_valid(cls, data):
        return rowwise(data.table._event_status != "rejected")

    @pdi.dataframe_check(name=PLACEMENT_OUT_OF_RANGE)
    def placement_in_field(cls, data):
        t = data.table
        inside = (t.placement >= 1) & (t.placement <= t._event_num_players.fill_null(t.placement))
        return rowwise(inside.fill_null(True))
