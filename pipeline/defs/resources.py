"""The one Dagster resource: the resolved settings of the code location, and the warehouse's locks."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Iterator

import duckdb
from dagster import ConfigurableResource

from pipeline.core.months import Month
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.locks import warehouse_lock
from pipeline.warehouse.store import Warehouse, connect

QUALITY_LOCK = "quality"  # the writer of the quality tables


class DiprankResource(ConfigurableResource):
    """Raw folder, warehouse and rating settings of a deployment, as resolved when the code location loaded."""

    raw_dir: str
    warehouse_dir: str
    local_dir: str
    start_month: str
    dip_pouch_cutoff_year: int
    eagle_variants: str
    eagle_positions: str
    diwz_newcomers: str
    duckdb_memory: str
    settle_seconds: float = Settings.settle_seconds

    @classmethod
    def from_settings(cls, settings: Settings) -> "DiprankResource":
        return cls(
            raw_dir=settings.raw_dir,
            warehouse_dir=settings.warehouse_dir,
            local_dir=settings.local_dir,
            start_month=str(settings.start_month),
            dip_pouch_cutoff_year=settings.dip_pouch_cutoff_year,
            eagle_variants=",".join(settings.eagle_variants),
            eagle_positions=settings.eagle_positions,
            diwz_newcomers=settings.diwz_newcomers,
            duckdb_memory=settings.duckdb_memory,
            settle_seconds=settings.settle_seconds,
        )

    def settings(self) -> Settings:
        return Settings(
            raw_dir=self.raw_dir,
            warehouse_dir=self.warehouse_dir,
            local_dir=self.local_dir,
            start_month=Month.parse(self.start_month),
            dip_pouch_cutoff_year=int(self.dip_pouch_cutoff_year),
            eagle_variants=tuple(v.strip() for v in self.eagle_variants.split(",") if v.strip()),
            eagle_positions=self.eagle_positions,
            diwz_newcomers=self.diwz_newcomers,
            duckdb_memory=self.duckdb_memory,
            settle_seconds=float(self.settle_seconds),
        ).resolved()

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse.of(self.settings())

    @contextmanager
    def changing_feeds(self, log=None) -> Iterator[None]:
        """Hold the warehouse alone while the validated feeds change (waits for readers to finish)."""
        with warehouse_lock(self.warehouse.lock_path, wait=True, on_wait=log):
            yield

    @contextmanager
    def rating(self, system: str, log=None) -> Iterator[None]:
        """Read the feeds beside the other systems and write one system's outputs alone."""
        warehouse = self.warehouse
        with (
            warehouse_lock(warehouse.lock_path, wait=True, shared=True, on_wait=log),
            warehouse_lock(warehouse.system_lock_path(system), wait=True, on_wait=log),
        ):
            yield

    @contextmanager
    def scoring(self, log=None) -> Iterator[None]:
        """Read every system's outputs while none of them writes, and write the quality tables alone."""
        warehouse = self.warehouse
        with ExitStack() as held:
            held.enter_context(warehouse_lock(warehouse.lock_path, wait=True, shared=True, on_wait=log))
            for system in SYSTEM_NAMES:
                held.enter_context(warehouse_lock(warehouse.system_lock_path(system), wait=True, on_wait=log))
            held.enter_context(warehouse_lock(warehouse.system_lock_path(QUALITY_LOCK), wait=True, on_wait=log))
            yield

    @contextmanager
    def duckdb(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the warehouse's DuckDB file; a DuckDB file has one writer at a time."""
        warehouse = self.warehouse
        with warehouse_lock(warehouse.duckdb_lock_path, wait=True):
            warehouse.local_dir.mkdir(parents=True, exist_ok=True)
            con = connect(str(warehouse.duckdb_path), config=warehouse.duckdb_config)
            if warehouse.remote:
                con.register_filesystem(warehouse.filesystem())
            try:
                yield con
            finally:
                con.close()
