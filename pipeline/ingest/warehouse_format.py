"""The warehouse's format: one small file naming the layout its files were written in.

A warehouse is never upgraded file by file. When its format differs from this version's (files
of an earlier layout, or validated feeds with other columns), ingest removes every file derived
from the raw folder and the run writes them again from it: the raw folder is the truth. The
feeds' columns are part of the format, so a feed that gains a column rebuilds the warehouse
without anyone remembering to raise the number.
"""

from __future__ import annotations

import json
import shutil

from pipeline.core.feed_spec import FEEDS
from pipeline.warehouse.store import Warehouse, atomic_write_bytes, is_local

# Raise when the files' layout changes in a way the feeds' columns do not show.
WAREHOUSE_FORMAT = 1
FORMAT_FILE = "format.json"
# The warehouse's folders of files derived from the raw folder (SPEC §4), and the DuckDB working copy.
DERIVED_FOLDERS = ("ingest", "validated", "quarantine", "rankings", "history", "awards", "state")


def current_format() -> dict:
    """This version's format: its number and every feed's columns with their types."""
    return {
        "format": WAREHOUSE_FORMAT,
        "feeds": {name: [f"{c.name}:{c.sql_type}" for c in feed.columns] for name, feed in sorted(FEEDS.items())},
    }


def stored_format(warehouse: Warehouse) -> dict | None:
    """The format the warehouse's files were written in; None for a warehouse without the file."""
    path = warehouse.root / FORMAT_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_bytes())
    except ValueError:
        return {}


def holds_derived_files(warehouse: Warehouse) -> bool:
    """Whether the warehouse holds any file a run writes (a new warehouse holds none)."""
    return warehouse.duckdb_path.exists() or any((warehouse.root / name).exists() for name in DERIVED_FOLDERS)


def format_problem(warehouse: Warehouse) -> str | None:
    """Why the warehouse's files cannot be read by this version, or None when they can."""
    stored = stored_format(warehouse)
    if stored == current_format() or (stored is None and not holds_derived_files(warehouse)):
        return None
    if stored is None:
        return f"the warehouse {warehouse.location} has no {FORMAT_FILE}: its files come from an earlier diprank"
    if stored.get("format") != WAREHOUSE_FORMAT:
        return (
            f"the warehouse {warehouse.location} is in format {stored.get('format')!r}, "
            f"this diprank writes format {WAREHOUSE_FORMAT}"
        )
    return f"the warehouse {warehouse.location} holds feeds with other columns than this diprank's"


def rebuild_if_other_format(warehouse: Warehouse) -> str | None:
    """Remove the derived files of a warehouse of another format, so that this run writes them
    again from the raw folder, and record the current format; returns the message saying so, or
    None when the warehouse was already current. Call holding the warehouse alone, before the
    DuckDB file is opened."""
    problem = format_problem(warehouse)
    if problem is not None:
        for name in DERIVED_FOLDERS:
            _remove_tree(warehouse.root / name)
        for path in (warehouse.duckdb_path, warehouse.duckdb_path.with_name(warehouse.duckdb_path.name + ".wal")):
            path.unlink(missing_ok=True)
    if stored_format(warehouse) != current_format():
        atomic_write_bytes(warehouse.root / FORMAT_FILE, format_bytes())
    if problem is None:
        return None
    return f"{problem}; its outputs were removed and are written again from the raw folder"


def format_bytes() -> bytes:
    return json.dumps(current_format(), sort_keys=True, indent=1).encode("utf-8") + b"\n"


def _remove_tree(path) -> None:
    if is_local(path):
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.fs.rm(path.path, recursive=True)
