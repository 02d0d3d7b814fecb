"""The warehouse: where every output lives, atomic Parquet writes, state checkpoints.

The root is a local folder (the embedded default) or an object-storage URL such as
`s3://bucket/prefix`, reached through fsspec (s3fs); the layout is the same either way.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import state_codec
from pipeline.core.months import Month
from pipeline.settings import Settings, is_url, location_folder_name
from pipeline.warehouse.sql import quote_literal

DUCKDB_FILE = "diprank.duckdb"
SPILL_FOLDER = ".duckdb-spill"  # DuckDB's temporary files beyond its memory limit


def connect(database: str = ":memory:", **options) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with its progress bar off (see quiet)."""
    return quiet(duckdb.connect(database, **options))


def quiet(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """`con` with DuckDB's progress bar off: a long query would otherwise draw it on the terminal,
    which ends up in run logs. It is a per-connection setting (DuckDB refuses it in the config
    given at connect time as a global option), so every connection the project opens goes here."""
    con.execute("SET enable_progress_bar = false")
    return con


_SCRATCH_DATABASES: dict[tuple, duckdb.DuckDBPyConnection] = {}
_SCRATCH_LOCK = threading.Lock()


def scratch(config: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection (close it after use) to this process's in-memory DuckDB database of that
    configuration, for queries over files and Arrow tables. Opening a database costs far more than
    a connection to an open one, and a run makes a hundred such queries. Temporary tables
    and registered Arrow tables belong to the connection; the database holds nothing else."""
    key = (os.getpid(), *sorted((config or {}).items()))  # a forked worker opens its own
    with _SCRATCH_LOCK:
        database = _SCRATCH_DATABASES.get(key)
        if database is None:
            database = _SCRATCH_DATABASES[key] = connect(":memory:", config=dict(sorted((config or {}).items())))
        return quiet(database.cursor())


# Validated feeds stored one file per month of this date column (`validated/<feed>/YYYY-MM.parquet`),
# so that a delivery rewrites only the months it changes; the other feeds are small and stay whole.
MONTHLY_FEEDS = {"games": "finished_on"}
PARQUET_OPTIONS = dict(
    compression="zstd", compression_level=3, write_statistics=True, use_dictionary=True, data_page_version="2.0"
)


def month_folder(month: Month) -> str:
    """Hive partition path of a month: year=YYYY/month=MM."""
    return f"year={month.year:04d}/month={month.month:02d}"


def warehouse_path(location: str | os.PathLike):
    """A pathlib-style path for a local folder or an object-storage URL."""
    if not is_url(location):
        return Path(location)
    from upath import UPath

    # Listings are never cached: other processes (workers) write to the same prefix.
    return UPath(str(location), use_listings_cache=False)


def is_local(path) -> bool:
    return isinstance(path, Path) and not is_url(path)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write a file whole or not at all.

    Locally: a temporary name in the same folder, then a rename. On object storage an object
    appears only when its upload completes (single PUT or completed multipart upload), so the
    object is written directly.
    """
    if not is_local(path):
        path.write_bytes(data)
        return
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


def atomic_write_parquet(path, table: pa.Table) -> None:
    """Parquet written whole or not at all; same table, same bytes."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def publish_file(local_file: Path, path) -> None:
    """Move a finished local file to its place in the warehouse (a rename locally, an upload remotely)."""
    if is_local(path):
        os.replace(local_file, path)
        return
    try:
        path.fs.put_file(str(local_file), path.path)
    finally:
        local_file.unlink(missing_ok=True)


def export_parquet(con: duckdb.DuckDBPyConnection, warehouse: "Warehouse", query: str, path) -> None:
    """COPY a query to a temporary local Parquet file, then publish it whole (COPY takes no parameters)."""
    # Locally the same folder, so that the rename is atomic.
    staging = warehouse.local_dir if warehouse.remote else path.parent
    staging.mkdir(parents=True, exist_ok=True)
    tmp = staging / f".{path.name}.{os.getpid()}.tmp"
    con.execute(f"COPY ({query}) TO {quote_literal(str(tmp))} (FORMAT parquet, COMPRESSION zstd)")
    publish_file(tmp, path)


def read_parquet(path, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file of the warehouse as an Arrow table."""
    if is_local(path):
        return pq.read_table(path, columns=columns)
    return pq.read_table(path.path, columns=columns, filesystem=path.fs)


def file_location(path) -> str:
    """The location DuckDB reads a warehouse file from (an absolute path or the object URL)."""
    return str(path.resolve()) if is_local(path) else str(path)


MEMORY_PER_THREAD = 1e9  # DuckDB's guidance for aggregation- and join-heavy work: 1-4 GB per thread
_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]i?b|b|bytes)?", re.I)


def memory_bytes(limit: str) -> float | None:
    """Bytes of a DuckDB memory limit such as `256MB` (powers of 1000) or `2GiB` (of 1024);
    None when it is not one."""
    match = _MEMORY.fullmatch(limit.strip())
    if match is None:
        return None
    unit = (match.group(2) or "b").lower()
    if unit in ("b", "bytes"):
        return float(match.group(1))
    power = "kmgt".index(unit[0]) + 1
    return float(match.group(1)) * (1024**power if "i" in unit else 1000**power)


def threads_for_memory(limit: str, cores: int) -> int | None:
    """DuckDB threads for a memory limit: one per MEMORY_PER_THREAD, at least one, at most the
    cores (None when the limit is not a size DuckDB would read)."""
    size = memory_bytes(limit)
    return None if size is None else max(1, min(cores, int(size // MEMORY_PER_THREAD)))


def month_files(base, name: str = "*") -> dict[Month, Any]:
    """The files named `name`.parquet in `base`'s year=YYYY/month=MM folders, by month."""
    pattern = re.compile(rf"year=(\d{{4}})/month=(\d{{2}})/{'[^/]+' if name == '*' else re.escape(name)}\.parquet")
    found = {}
    for relative in relative_files(base):
        match = pattern.fullmatch(relative)
        if match:
            found[Month(int(match.group(1)), int(match.group(2)))] = base.joinpath(*relative.split("/"))
    return found


def relative_files(base) -> list[str]:
    """Every file under `base`, as paths relative to it with `/` between the parts. Object
    storage is listed in one recursive listing, not one request per folder."""
    if is_local(base):
        if not base.is_dir():
            return []
        return [p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()]
    prefix = base.path.rstrip("/") + "/"
    return [p[len(prefix) :] for p in base.fs.find(base.path) if p.startswith(prefix)]


def months_under(base) -> list[Month]:
    """Months that have a file in `base`'s year=YYYY/month=MM folders, oldest first."""
    return sorted(month_files(base))


class Warehouse:
    """Paths of the warehouse layout (SPEC §4) under one root (a folder or an object-storage URL).

    The DuckDB file and the lock files always live on local disk: in the root itself when it is a
    folder, else in a folder named after the URL under the settings' local folder.
    """

    def __init__(self, root: str | os.PathLike, settings: Settings | None = None):
        settings = settings or Settings()
        self.root = warehouse_path(root)
        self.remote = not is_local(self.root)
        self.local_dir = Path(settings.local_dir) / location_folder_name(str(self.root)) if self.remote else self.root
        # Every DuckDB connection is bounded (DuckDB spills large sorts to disk beyond it) instead of
        # DuckDB's default of most of the machine's memory per connection, with the threads that
        # memory can feed: an aggregation's per-thread state does not spill, so a small limit
        # shared by every core runs out where one thread completes.
        # Spilled to the warehouse's local disk, not DuckDB's default of `.tmp` in whatever folder
        # the command runs in.
        self.duckdb_config = {
            "memory_limit": settings.duckdb_memory,
            "temp_directory": str(self.local_dir / SPILL_FOLDER),
        }
        threads = threads_for_memory(settings.duckdb_memory, os.cpu_count() or 1)
        if threads is not None:
            self.duckdb_config["threads"] = str(threads)

    @classmethod
    def of(cls, settings: Settings) -> "Warehouse":
        """The warehouse the settings name."""
        return cls(settings.warehouse_dir, settings)

    @property
    def location(self) -> str:
        """The root as users write it: a folder path or a URL."""
        return str(self.root)

    @property
    def duckdb_path(self) -> Path:
        return self.local_dir / DUCKDB_FILE

    @property
    def run_lock_path(self) -> Path:
        """Held by a whole `diprank run`: one CLI run per warehouse at a time."""
        return self.local_dir / ".lock-run"

    @property
    def lock_path(self) -> Path:
        """Held exclusively while the validated feeds change, shared while a system reads them."""
        return self.local_dir / ".lock"

    def system_lock_path(self, system: str) -> Path:
        return self.local_dir / f".lock-{system}"

    @property
    def duckdb_lock_path(self) -> Path:
        return self.local_dir / ".lock-duckdb"

    def filesystem(self):
        """The fsspec filesystem of a remote root (None for a local one)."""
        return self.root.fs if self.remote else None

    def scan(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection that can read the warehouse's files; close it after use."""
        if not self.remote:
            return scratch(self.duckdb_config)
        # DuckDB reads object storage through the same fsspec filesystem as the writers: a
        # database of its own, since a filesystem is registered with the database.
        con = connect(":memory:", config=self.duckdb_config)
        con.register_filesystem(self.root.fs)
        return con

    @contextmanager
    def readable(self, paths: list) -> Iterator[list[str]]:
        """The locations DuckDB reads these warehouse files from, in order, while the context is
        open. Locally the files themselves. From object storage, local copies fetched
        concurrently: DuckDB's reads through the registered filesystem fetch one object at a
        time, which dominates a query over hundreds of small monthly files."""
        if not self.remote:
            yield [file_location(p) for p in paths]
            return
        self.local_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".fetched-", dir=self.local_dir) as folder:
            copies = [os.path.join(folder, f"{n}.parquet") for n in range(len(paths))]
            if paths:
                self.root.fs.get([p.path for p in paths], copies)
            yield copies

    def query(self, sql: str, parameters: list) -> list[tuple]:
        """The rows of one query over the warehouse's files, on a connection of its own."""
        con = self.scan()
        try:
            return con.execute(sql, parameters).fetchall()
        finally:
            con.close()

    def validated(self, feed: str) -> Path:
        """The validated feed's one file (a feed not stored by month, see `MONTHLY_FEEDS`)."""
        return self.root / "validated" / f"{feed}.parquet"

    def validated_month(self, feed: str, month: Month) -> Path:
        """One month of a feed stored by month: the valid rows dated in that month."""
        return self.root / "validated" / feed / f"{month}.parquet"

    def validated_months(self, feed: str) -> list[Month]:
        """Months that have a file of a feed stored by month, oldest first."""
        folder = self.root / "validated" / feed
        if not folder.is_dir():
            return []
        return sorted(Month.parse(p.stem) for p in folder.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9].parquet"))

    def validated_files(self, feed: str, first: Month | None = None, last: Month | None = None) -> list:
        """The files holding a validated feed's rows (of the months first..last, for a feed stored by month)."""
        if feed not in MONTHLY_FEEDS:
            single = self.validated(feed)
            return [single] if single.exists() else []
        return [
            self.validated_month(feed, m)
            for m in self.validated_months(feed)
            if (first is None or m >= first) and (last is None or m <= last)
        ]

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

    def quality(self, month: Month) -> Path:
        """The quality table of a month (SPEC §3.5): one file for every system."""
        return self.root / "quality" / month_folder(month) / "quality.parquet"

    def quality_months(self) -> list[Month]:
        """Months that have a quality table, oldest first."""
        return months_under(self.root / "quality")

    def written_months(self, kind: str, system: str) -> list[Month]:
        """Months that have a file of this kind, oldest first."""
        return months_under(self.root / kind / system)

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
        """Write the manifest; an empty one is no file, as a run from scratch that wrote no month
        of the system leaves none (load_manifest reads a missing file as empty)."""
        path = self.manifest_path(system)
        if manifest:
            atomic_write_bytes(path, state_codec.dumps(manifest))
        elif path.exists():
            path.unlink()

    def remove_leftovers(self) -> int:
        """Delete temporary files a killed run left behind (only ever `.<name>.tmp`); call under the lock."""
        removed = 0
        if not self.remote and self.root.is_dir():
            for path in self.root.rglob(".*.tmp"):
                if path.is_file():
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    def save_checkpoint(self, system: str, month: Month, payload) -> None:
        atomic_write_bytes(self.checkpoint(system, month), state_codec.dumps(payload))

    def load_checkpoint(self, system: str, month: Month):
        return state_codec.loads(self.checkpoint(system, month).read_bytes())
