"""The optional players registry (SPEC §2)."""
from __future__ import annotations

import pandera.ibis as pa
from pandera.ibis import Field

from schemas.feed_common import (
    BAD_TYPE, DUPLICATE_KEY, MISSING_VALUE, TEXT_TOO_LONG, DeliveredRow, all_present, rowwise,
)


class PlayersFeed(DeliveredRow):
    """Validated registry entries: names and countries take precedence over feed rows."""

    player_id: str = Field(nullable=True, description="Player identifier (key).")
    name: str = Field(nullable=True, description="Display name, any Unicode.")
    country: str = Field(nullable=True, description="Country used for national rankings.")

    @pa.dataframe_check(name=BAD_TYPE)
    def values_convert(cls, data):
        return rowwise(data.table._cast_errors.isnull())

    @pa.dataframe_check(name=TEXT_TOO_LONG)
    def text_fits(cls, data):
        return rowwise(~data.table._too_long)

    @pa.dataframe_check(name=MISSING_VALUE)
    def required_present(cls, data):
        return rowwise(all_present(data.table, ["player_id"]))

    @pa.dataframe_check(name=DUPLICATE_KEY)
    def key_once_per_file(cls, data):
        return rowwise(~data.table._duplicate_in_file)
