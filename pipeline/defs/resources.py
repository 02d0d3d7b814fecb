"""Dagster resources: where the raw feeds and the warehouse are, and how the systems are set."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
from dagster import ConfigurableResource, EnvVar

from pipeline import settings as config
from pipeline.settings import Settings
from pipeline.warehouse.locks import warehouse_lock
from pipeline.core.months import Month
from pipeline.warehouse.store import Warehouse, duckdb_settings


class DiprankResource(ConfigurableResource):
    """Raw folder, warehouse folder and rating settings of a deployment."""

    raw_dir: str = config.DEFAULT_RAW_DIR
    warehouse_dir: str = config.DEFAULT_WAREHOUSE_DIR
    dip_pouch_cutoff_year: int = 2001
    eagle_variants: str = "standard"
    eagle_positions: str = "published"
    diwz_newcomers: str = "erstzahl"

    @property
    def raw_path(self) -> Path:
        return Path(self.raw_dir)

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse(self.warehouse_dir)

    def settings(self) -> Settings:
        return Settings(
            raw_dir=self.raw_path,
            warehouse_dir=self.warehouse_dir,
            start_month=Month.parse(os.environ.get(config.ENV_START_MONTH, config.DEFAULT_START_MONTH)),
            dip_pouch_cutoff_year=int(self.dip_pouch_cutoff_year),
            eagle_variants=tuple(v.strip() for v in self.eagle_variants.split(",") if v.strip()),
            eagle_positions=self.eagle_positions,
            diwz_newcomers=self.diwz_newcomers,
        )

    @contextmanager
    def changing_feeds(self, log=None) -> Iterator[None]:
        """Hold the warehouse alone while the validated feeds change (waits for readers to finish)."""
        with warehouse_lock(self.warehouse.lock_path, wait=True, on_wait=log):
            yield

    @contextmanager
    def rating(self, system: str, log=None) -> Iterator[None]:
        """Read the feeds beside the other systems and write one system's outputs alone."""
        warehouse = self.warehouse
        with warehouse_lock(warehouse.lock_path, wait=True, shared=True, on_wait=log), \
                warehouse_lock(warehouse.system_lock_path(system), wait=True, on_wait=log):
            yield

    @contextmanager
    def duckdb(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the warehouse's DuckDB file; a DuckDB file has one writer at a time."""
        warehouse = self.warehouse
        with warehouse_lock(warehouse.duckdb_lock_path, wait=True):
            warehouse.local_dir.mkdir(parents=True, exist_ok=True)
            con = duckdb.connect(str(warehouse.duckdb_path), config=duckdb_settings())
            if warehouse.remote:
                con.register_filesystem(warehouse.filesystem())
            try:
                yield con
            finally:
                con.close()


def _env(name: str, default: str):
    """EnvVar where the variable is set (the UI shows where the value comes from), else the default."""
    return EnvVar(name) if name in os.environ else default


def diprank_resource() -> DiprankResource:
    return DiprankResource(
        raw_dir=_env(config.ENV_RAW_DIR, config.DEFAULT_RAW_DIR),
        warehouse_dir=_env(config.ENV_WAREHOUSE_DIR, config.DEFAULT_WAREHOUSE_DIR),
        dip_pouch_cutoff_year=EnvVar.int(config.ENV_DIP_POUCH_CUTOFF) if config.ENV_DIP_POUCH_CUTOFF in os.environ else 2001,
        eagle_variants=_env(config.ENV_EAGLE_VARIANTS, "standard"),
        eagle_positions=_env(config.ENV_EAGLE_POSITIONS, "published"),
        diwz_newcomers=_env(config.ENV_DIWZ_NEWCOMERS, "erstzahl"),
    )
