"""The optional players registry (SPEC §2)."""

from __future__ import annotations

from pandera.ibis import Field

from schemas.feed_common import (
    delivered_rows,
)


class PlayersFeed(delivered_rows(("player_id",))):
    """Validated registry entries: names and countries take precedence over feed rows."""

    player_id: str = Field(nullable=True, description="Player identifier (key).")
    name: str = Field(nullable=True, description="Display name, any Unicode.")
    country: str = Field(nullable=True, description="Country used for national rankings.")
