"""The Dagster code location: assets, resources and jobs of diprank."""
from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from assets.feeds import raw_feed_assets
from assets.ratings import rating_assets
from assets.validated import validated_feed_assets
from pipeline.resources import diprank_resource

ingest_job = define_asset_job(
    "ingest", selection=AssetSelection.groups("feeds", "validated"),
    description="Stage every raw delivery and validate the four feeds.",
)

defs = Definitions(
    assets=[*raw_feed_assets, *validated_feed_assets, *rating_assets],
    resources={"diprank": diprank_resource()},
    jobs=[ingest_job],
)
