"""Settings from the environment, with the embedded defaults of the sample setup."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from pipeline.core.months import Month

DEFAULT_RAW_DIR = "data/raw"
DEFAULT_WAREHOUSE_DIR = "data/warehouse"
DEFAULT_START_MONTH = "1990-01"

ENV_RAW_DIR = "DIPRANK_RAW_DIR"
ENV_WAREHOUSE_DIR = "DIPRANK_WAREHOUSE_DIR"
ENV_START_MONTH = "DIPRANK_START_MONTH"
ENV_DIP_POUCH_CUTOFF = "DIPRANK_DIP_POUCH_CUTOFF_YEAR"
ENV_EAGLE_VARIANTS = "DIPRANK_EAGLE_VARIANTS"
ENV_EAGLE_POSITIONS = "DIPRANK_EAGLE_POSITIONS"
ENV_DIWZ_NEWCOMERS = "DIPRANK_DIWZ_NEWCOMERS"


@dataclass(frozen=True)
class Settings:
    """Everything a run can be configured with; each field has an environment variable."""

    raw_dir: Path
    warehouse_dir: str  # a folder or an object-storage URL (s3://bucket/prefix)
    start_month: Month
    dip_pouch_cutoff_year: int = 2001
    eagle_variants: tuple[str, ...] = ("standard",)
    eagle_positions: str = "published"
    diwz_newcomers: str = "erstzahl"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Settings":
        variants = tuple(v.strip() for v in env.get(ENV_EAGLE_VARIANTS, "standard").split(",") if v.strip())
        return cls(
            raw_dir=Path(env.get(ENV_RAW_DIR, DEFAULT_RAW_DIR)),
            warehouse_dir=env.get(ENV_WAREHOUSE_DIR, DEFAULT_WAREHOUSE_DIR),
            start_month=Month.parse(env.get(ENV_START_MONTH, DEFAULT_START_MONTH)),
            dip_pouch_cutoff_year=int(env.get(ENV_DIP_POUCH_CUTOFF, "2001")),
            eagle_variants=variants or ("standard",),
            eagle_positions=env.get(ENV_EAGLE_POSITIONS, "published"),
            diwz_newcomers=env.get(ENV_DIWZ_NEWCOMERS, "erstzahl"),
        )
