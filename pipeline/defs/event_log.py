"""The embedded profile's event log: Dagster's SQLite storage, with one engine per database file and
a batch of events written in one transaction per database.

Dagster's SQLite storage builds a new SQLAlchemy engine for every connection, so every statement is
compiled again, and it stores a batch of events (the planned and the materialized months of a range
run, one per month) one event and two commits at a time. Dagster hands a storage batches only when
DAGSTER_EVENT_BATCH_SIZE is set (pipeline/defs/instance.py). A 240-month backfill spent most of its
Dagster time there. The rows written are the same as Dagster's, event by event.

Three more costs of a range run are paid once here: a batch's rows go in as one executemany per
table (one statement per event made SQLAlchemy build a cache key of every value: 0.25 s of a
240-month run's planned events); a run's new database is a copy of one Dagster initialised, where
Dagster checks its migration scripts for every run (80 ms); and a table found in the index database
is not looked up again through a new engine on every asset and check event.
"""
from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, EVENT_TYPE_TO_PIPELINE_RUN_STATUS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
from dagster._core.storage.event_log.schema import AssetCheckExecutionsTable, SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.sqlalchemy_compat import db_result
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData, serialize_value
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

# Engines kept at once: the index database and the latest runs' databases. A webserver reads many
# runs; an engine past this many is disposed (it holds no connection: every use opens its own).
ENGINES_KEPT = 64


class BatchingSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage that reuses its engines and writes a batch in one transaction per database."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._tables_found: set[str] = set()
        self._run_database: bytes | None = None  # a run database as Dagster initialises it
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value) -> "BatchingSqliteEventLogStorage":
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> Engine:
        """The shard's engine (NullPool, as Dagster's: a connection per use, so processes share the file)."""
        engine = self._engines.pop(shard, None)
        if engine is None:
            engine = create_engine(self.conn_string_for_shard(shard), poolclass=NullPool,
                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        self._engines[shard] = engine  # most recently used last
        while len(self._engines) > ENGINES_KEPT:
            self._engines.popitem(last=False)[1].dispose()
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                if shard == INDEX_SHARD_NAME or not self._new_run_database(shard):
                    self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _new_run_database(self, shard: str) -> bool:
        """Create a run's database as a copy of a freshly initialised one; False if its file exists
        (another process made it, or an earlier run of the id): Dagster's own check then runs."""
        if self._run_database is None:
            with tempfile.TemporaryDirectory() as folder:
                template = Path(folder) / "run.db"
                engine = create_engine(f"sqlite:///{template}", poolclass=NullPool)
                self._initdb(engine)
                engine.dispose()
                self._run_database = template.read_bytes()
        # Written aside, then linked into place: the database appears whole, and never over one
        # that another process made meanwhile. Created as SQLite creates a file (0644, less the umask).
        path = Path(self.path_for_shard(shard))
        aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one writer per process: the lock is held
        descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(self._run_database)
            os.link(aside, path)
        except FileExistsError:
            return False
        finally:
            aside.unlink(missing_ok=True)
        return True

    def has_table(self, table_name: str) -> bool:
        """Whether the index database has the table; one found stays there (a wipe keeps the tables)."""
        if table_name in self._tables_found:
            return True
        found = super().has_table(table_name)
        if found:
            self._tables_found.add(table_name)
        return found

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """store_event of every event, in one transaction per database instead of two per event."""
        for run_id in dict.fromkeys(event.run_id for event in events):
            self._store_run_batch([event for event in events if event.run_id == run_id])

    def _store_run_batch(self, events: list[EventLogEntry]) -> None:
        # The rows of Dagster's prepare_insert_event, inserted in order: the ids come out as one by one.
        rows = [self._event_to_row(event) for event in events]
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)

        def of_types(types) -> list[tuple[EventLogEntry, dict]]:
            return [(e, row) for e, row in zip(events, rows) if e.is_dagster_event and e.dagster_event_type in types]

        asset_events, check_events = of_types(ASSET_EVENTS), of_types(ASSET_CHECK_EVENTS)
        status_events = of_types(EVENT_TYPE_TO_PIPELINE_RUN_STATUS)
        if asset_events or status_events:
            # Mirrored in the cross-run index database, as store_event does.
            with self.index_transaction() as conn:
                event_ids = []
                if asset_events:
                    inserted = conn.execute(
                        SqlEventLogStorageTable.insert().returning(SqlEventLogStorageTable.c.id, sort_by_parameter_order=True),
                        [row for _, row in asset_events])
                    event_ids = [event_id for (event_id,) in inserted]
                    self._store_asset_event_tags(conn, [e for e, _ in asset_events], event_ids)
                for event, event_id in latest_per_asset_and_type([e for e, _ in asset_events], event_ids):
                    self._store_asset_event(conn, event, event_id)
                if status_events:
                    conn.execute(SqlEventLogStorageTable.insert(), [row for _, row in status_events])
        for event, row in check_events:  # a handful per run; store_asset_check_event connects itself
            with self.index_connection() as conn, db_result(conn, SqlEventLogStorageTable.insert().values(**row)) as result:
                event_id = result.inserted_primary_key[0]
            self.store_asset_check_event(event, event_id)

    def _store_asset_check_evaluation_planned(self, event: EventLogEntry, event_id: int | None) -> None:
        """Dagster's rows (one per planned partition), the event serialized once and inserted as one
        executemany: Dagster serializes it again for each of a range run's months and compiles one
        statement of all their rows."""
        planned = event.dagster_event.event_specific_data
        partition_keys = planned.partitions_subset.get_partition_keys() if planned.partitions_subset else [None]
        row = dict(asset_key=planned.asset_key.to_string(), check_name=planned.check_name, run_id=event.run_id,
                   execution_status=AssetCheckExecutionRecordStatus.PLANNED.value,
                   evaluation_event=serialize_value(event),
                   evaluation_event_timestamp=self._event_insert_timestamp(event),
                   evaluation_event_storage_id=event_id)
        with self.index_connection() as conn:
            conn.execute(AssetCheckExecutionsTable.insert(), [{**row, "partition": key} for key in partition_keys])

    def dispose(self) -> None:
        super().dispose()
        while self._engines:
            self._engines.popitem()[1].dispose()


def latest_per_asset_and_type(events: list[EventLogEntry], event_ids: list[int]) -> list[tuple[EventLogEntry, int]]:
    """The events whose asset-table update survives the batch, in order: an event's update writes the
    same columns as a later event of the same asset and type, which overwrites them all."""
    seen, kept = set(), []
    for event, event_id in zip(reversed(events), reversed(event_ids)):
        kind = (event.dagster_event.asset_key, event.dagster_event_type)
        if kind not in seen:
            seen.add(kind)
            kept.append((event, event_id))
    return kept[::-1]
