"""The warehouse on disk: where every output lives, atomic Parquet writes, state checkpoints."""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import state_codec
from pipeline.months import Month

DUCKDB_FILE = "diprank.duckdb"
PARQUET_OPTIONS = dict(compression="zstd", compression_level=3, write_statistics=True,
                       use_dictionary=True, data_page_version="2.0")


def month_folder(month: Month) -> str:
    """Hive partition path of a month: year=YYYY/month=MM."""
    return f"year={month.year:04d}/month={month.month:02d}"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file whole or not at all: a temporary name in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates owner-only files; outputs are meant to be read by dashboards too.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_parquet(path: Path, table: pa.Table) -> None:
    """Parquet written under a temporary name and renamed into place; same table, same bytes."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


class Warehouse:
    """Paths of the warehouse layout (SPEC §4) under one root folder."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    @property
    def duckdb_path(self) -> Path:
        return self.root / DUCKDB_FILE

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    def validated(self, feed: str) -> Path:
        return self.root / "validated" / f"{feed}.parquet"

    def quarantine(self, feed: str) -> Path:
        return self.root / "quarantine" / f"{feed}.parquet"

    def output(self, kind: str, system: str, month: Month) -> Path:
        """rankings|history|awards file of a system's month."""
        return self.root / kind / system / month_folder(month) / f"{kind}.parquet"

    def rankings(self, system: str, month: Month) -> Path:
        return self.output("rankings", system, month)

    def history(self, system: str, month: Month) -> Path:
        return self.output("history", system, month)

    def checkpoint(self, system: str, month: Month) -> Path:
        return self.root / "state" / system / f"{month}.json"

    def written_months(self, kind: str, system: str) -> list[Month]:
        """Months that have a file of this kind, oldest first."""
        base = self.root / kind / system
        months = []
        for path in base.glob("year=*/month=*/*.parquet"):
            y = re.match(r"year=(\d{4})", path.parent.parent.name)
            m = re.match(r"month=(\d{2})", path.parent.name)
            if y and m:
                months.append(Month(int(y.group(1)), int(m.group(1))))
        return sorted(set(months))

    def checkpoint_months(self, system: str) -> list[Month]:
        folder = self.root / "state" / system
        if not folder.is_dir():
            return []
        return sorted(Month.parse(p.stem) for p in folder.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9].json"))

    def manifest_path(self, system: str) -> Path:
        return self.root / "state" / system / "manifest.json"

    def load_manifest(self, system: str) -> dict[str, str]:
        """Month -> cumulative input fingerprint of the outputs on disk."""
        path = self.manifest_path(system)
        return state_codec.loads(path.read_bytes()) if path.exists() else {}

    def save_manifest(self, system: str, manifest: dict[str, str]) -> None:
        atomic_write_bytes(self.manifest_path(system), state_codec.dumps(manifest))

    def remove_leftovers(self) -> int:
        """Delete temporary files a killed run left behind (only ever `.<name>.tmp`); call under the lock."""
        removed = 0
        if self.root.is_dir():
            for path in self.root.rglob(".*.tmp"):
                if path.is_file():
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    def save_checkpoint(self, system: str, month: Month, payload) -> None:
        atomic_write_bytes(self.checkpoint(system, month), state_codec.dumps(payload))

    def load_checkpoint(self, system: str, month: Month):
        return state_codec.loads(self.checkpoint(system, month).read_bytes())
