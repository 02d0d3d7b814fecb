"""Every setting of diprank, its default and its environment variable: resolved once per process.

The code location resolves them when it loads (pipeline/definitions.py), the CLI when it starts
(pipeline/cli/main.py); everything else receives a `Settings`. No other module reads the
environment for a setting or holds a default of one.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Mapping

from pipeline.core.months import Month

ENV_RAW_DIR = "DIPRANK_RAW_DIR"
ENV_WAREHOUSE_DIR = "DIPRANK_WAREHOUSE_DIR"
ENV_LOCAL_DIR = "DIPRANK_LOCAL_DIR"
ENV_START_MONTH = "DIPRANK_START_MONTH"
ENV_DIP_POUCH_CUTOFF = "DIPRANK_DIP_POUCH_CUTOFF_YEAR"
ENV_EAGLE_VARIANTS = "DIPRANK_EAGLE_VARIANTS"
ENV_EAGLE_POSITIONS = "DIPRANK_EAGLE_POSITIONS"
ENV_DIWZ_NEWCOMERS = "DIPRANK_DIWZ_NEWCOMERS"
ENV_DUCKDB_MEMORY = "DIPRANK_DUCKDB_MEMORY"
ENV_EXECUTOR = "DIPRANK_EXECUTOR"
ENV_CELERY_BROKER = "DIPRANK_CELERY_BROKER"
ENV_CELERY_BACKEND = "DIPRANK_CELERY_BACKEND"
ENV_SYSTEMS_AT_ONCE = "DIPRANK_SYSTEMS_AT_ONCE"
ENV_DAGSTER_HOME = "DAGSTER_HOME"
ENV_TODAY = "DIPRANK_TODAY"
ENV_SETTLE_SECONDS = "DIPRANK_SETTLE_SECONDS"
ENV_DEBUG = "DIPRANK_DEBUG"
ENV_PARTITIONS_END = "DIPRANK_PARTITIONS_END"

EXECUTORS = ("in_process", "multiprocess", "celery")
EAGLE_POSITIONS = ("published", "live")
DIWZ_NEWCOMERS = ("erstzahl", "start_1600")
# Where the monthly partitions end: the current month, or the last month with data when the code
# location loads (see pipeline/defs/partitions.py).
PARTITIONS_ENDS = ("current", "data")


class SettingsError(ValueError):
    """A setting has a value diprank cannot use; the message names the variable."""


def is_url(location: str | os.PathLike) -> bool:
    """True for an object-storage location (`s3://…`), False for a local path."""
    return "://" in str(location)


def canonical_location(location: str | os.PathLike) -> str:
    """One spelling per warehouse: an absolute local path, or a URL with a lower-case scheme and
    no doubled or trailing slashes. Writer tags compare these strings, so every launcher must agree."""
    text = str(location).strip()
    if is_url(text):
        scheme, rest = text.split("://", 1)
        return f"{scheme.lower()}://{re.sub('/+', '/', rest).strip('/')}"
    return Path(text).expanduser().resolve().as_posix()


def _default_systems_at_once() -> int:
    # One system per core: each runs in a process of its own; there are four systems.
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class Settings:
    """Where the feeds and the warehouse are, how the systems are configured, how runs execute."""

    raw_dir: str = "data/raw"
    warehouse_dir: str = "data/warehouse"  # a folder or an object-storage URL (s3://bucket/prefix)
    local_dir: str = "data/local"  # the DuckDB file and locks of a warehouse on object storage
    start_month: Month = Month(1990, 1)
    partitions_end: str = "current"
    dip_pouch_cutoff_year: int = 2001
    eagle_variants: tuple[str, ...] = ("standard",)
    eagle_positions: str = "published"
    diwz_newcomers: str = "erstzahl"
    duckdb_memory: str = "2GB"
    executor: str = "in_process"
    celery_broker: str = ""
    celery_backend: str = ""
    systems_at_once: int = 0  # 0: one per core, at most four
    dagster_home: str = ""  # empty: <warehouse>/.dagster (or <local dir>/… for object storage)
    # A delivery file changed less than this many seconds ago is still being written: not read yet.
    settle_seconds: float = 5.0
    today: str = ""  # YYYY-MM-DD: the day "in the future" is measured from; empty: the real today
    debug: bool = False  # the command line prints the traceback of an internal error

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise SettingsError(f"{ENV_EXECUTOR}={self.executor!r}: choose one of {', '.join(EXECUTORS)}")
        if self.eagle_positions not in EAGLE_POSITIONS:
            raise SettingsError(
                f"{ENV_EAGLE_POSITIONS}={self.eagle_positions!r}: choose one of {', '.join(EAGLE_POSITIONS)}"
            )
        if self.diwz_newcomers not in DIWZ_NEWCOMERS:
            raise SettingsError(
                f"{ENV_DIWZ_NEWCOMERS}={self.diwz_newcomers!r}: choose one of {', '.join(DIWZ_NEWCOMERS)}"
            )
        if self.partitions_end not in PARTITIONS_ENDS:
            raise SettingsError(
                f"{ENV_PARTITIONS_END}={self.partitions_end!r}: choose one of {', '.join(PARTITIONS_ENDS)}"
            )
        if not self.eagle_variants:
            raise SettingsError(f"{ENV_EAGLE_VARIANTS} names no variant")
        if not (self.settle_seconds >= 0 and math.isfinite(self.settle_seconds)):
            raise SettingsError(
                f"{ENV_SETTLE_SECONDS}={self.settle_seconds!r}: expected a number of seconds, 0 or more"
            )
        if self.today:
            try:
                dt.date.fromisoformat(self.today)
            except ValueError:
                raise SettingsError(f"{ENV_TODAY}={self.today!r}: expected YYYY-MM-DD") from None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "Settings":
        """The settings of this process: defaults, then the environment, then `overrides` (the CLI's flags)."""
        env = os.environ if env is None else env
        values: dict = {}
        text = {
            "raw_dir": ENV_RAW_DIR,
            "warehouse_dir": ENV_WAREHOUSE_DIR,
            "local_dir": ENV_LOCAL_DIR,
            "eagle_positions": ENV_EAGLE_POSITIONS,
            "diwz_newcomers": ENV_DIWZ_NEWCOMERS,
            "duckdb_memory": ENV_DUCKDB_MEMORY,
            "celery_broker": ENV_CELERY_BROKER,
            "celery_backend": ENV_CELERY_BACKEND,
            "dagster_home": ENV_DAGSTER_HOME,
            "today": ENV_TODAY,
            "partitions_end": ENV_PARTITIONS_END,
        }
        for field, variable in text.items():
            if env.get(variable, "").strip():
                values[field] = env[variable].strip()
        if env.get(ENV_EXECUTOR, "").strip():
            values["executor"] = env[ENV_EXECUTOR].strip()
        if env.get(ENV_START_MONTH, "").strip():
            try:
                values["start_month"] = Month.parse(env[ENV_START_MONTH].strip())
            except ValueError:
                raise SettingsError(f"{ENV_START_MONTH}={env[ENV_START_MONTH]!r}: expected YYYY-MM") from None
        for field, variable in (
            ("dip_pouch_cutoff_year", ENV_DIP_POUCH_CUTOFF),
            ("systems_at_once", ENV_SYSTEMS_AT_ONCE),
        ):
            if env.get(variable, "").strip():
                try:
                    values[field] = int(env[variable])
                except ValueError:
                    raise SettingsError(f"{variable}={env[variable]!r}: expected a whole number") from None
        if env.get(ENV_SETTLE_SECONDS, "").strip():
            try:
                values["settle_seconds"] = float(env[ENV_SETTLE_SECONDS])
            except ValueError:
                raise SettingsError(
                    f"{ENV_SETTLE_SECONDS}={env[ENV_SETTLE_SECONDS]!r}: expected a number of seconds"
                ) from None
        if env.get(ENV_DEBUG, "").strip() not in ("", "0"):
            values["debug"] = True
        if ENV_EAGLE_VARIANTS in env:
            values["eagle_variants"] = tuple(v.strip() for v in env[ENV_EAGLE_VARIANTS].split(",") if v.strip())
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values).resolved()

    def resolved(self) -> "Settings":
        """The same settings with every location in its one canonical spelling."""
        warehouse = canonical_location(self.warehouse_dir)
        local_dir = canonical_location(self.local_dir)
        if self.dagster_home:
            home = canonical_location(self.dagster_home)
        else:
            base = Path(warehouse) if not is_url(warehouse) else Path(local_dir) / location_folder_name(warehouse)
            home = (base / ".dagster").as_posix()
        return replace(
            self,
            raw_dir=canonical_location(self.raw_dir),
            warehouse_dir=warehouse,
            local_dir=local_dir,
            dagster_home=home,
            systems_at_once=max(1, self.systems_at_once) if self.systems_at_once else _default_systems_at_once(),
        )

    @property
    def raw_path(self) -> Path:
        return Path(self.raw_dir)

    @property
    def validation_day(self) -> dt.date | None:
        """The pinned day dates are checked against, or None for the real today."""
        return dt.date.fromisoformat(self.today) if self.today else None

    def environment(self) -> dict[str, str]:
        """These settings as environment variables: what a process started for this run (a code
        location, a run worker, a system process) needs to resolve the same settings."""
        value = {
            ENV_RAW_DIR: self.raw_dir,
            ENV_WAREHOUSE_DIR: self.warehouse_dir,
            ENV_LOCAL_DIR: self.local_dir,
            ENV_START_MONTH: str(self.start_month),
            ENV_PARTITIONS_END: self.partitions_end,
            ENV_DIP_POUCH_CUTOFF: str(self.dip_pouch_cutoff_year),
            ENV_EAGLE_VARIANTS: ",".join(self.eagle_variants),
            ENV_EAGLE_POSITIONS: self.eagle_positions,
            ENV_DIWZ_NEWCOMERS: self.diwz_newcomers,
            ENV_DUCKDB_MEMORY: self.duckdb_memory,
            ENV_EXECUTOR: self.executor,
            ENV_SYSTEMS_AT_ONCE: str(self.systems_at_once),
            ENV_DAGSTER_HOME: self.dagster_home,
            ENV_SETTLE_SECONDS: repr(self.settle_seconds),
        }
        if self.celery_broker:
            value[ENV_CELERY_BROKER] = self.celery_broker
        if self.celery_backend:
            value[ENV_CELERY_BACKEND] = self.celery_backend
        if self.today:
            value[ENV_TODAY] = self.today
        if self.debug:
            value[ENV_DEBUG] = "1"
        return value


def location_folder_name(location: str) -> str:
    """A folder name for an object-storage location, for its local working files."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", location).strip("_")


SETTING_NAMES = tuple(f.name for f in fields(Settings))
