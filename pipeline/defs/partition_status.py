"""Making Dagster show as materialized exactly the months whose outputs are on disk."""

from __future__ import annotations

from dagster import AssetKey, AssetMaterialization, DagsterInstance


def forget_partitions(instance: DagsterInstance, asset_key: AssetKey, partition_keys: list[str]) -> None:
    """Dagster no longer shows these partitions of the asset as materialized."""
    if not partition_keys:
        return
    try:
        instance.wipe_asset_partitions(asset_key, partition_keys)
        return
    except NotImplementedError:
        pass
    # Dagster's own SQL storages (SQLite, PostgreSQL) wipe whole assets only: wipe the asset, then
    # record again, as runless materializations, the partitions whose outputs are still on disk.
    removed = set(partition_keys)
    kept = sorted(instance.get_materialized_partitions(asset_key) - removed)
    instance.wipe_assets([asset_key])
    for key in kept:
        instance.report_runless_asset_event(
            AssetMaterialization(
                asset_key=asset_key,
                partition=key,
                description="Recorded again after months outside the system's range were removed.",
            )
        )
