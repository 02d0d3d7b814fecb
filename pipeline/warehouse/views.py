"""DuckDB views over the Parquet snapshots, so the warehouse file answers SQL over every output."""

from __future__ import annotations

import hashlib
from collections.abc import Collection

import duckdb

from pipeline.core.months import Month
from pipeline.warehouse.sql import quote_ident, quote_literal
from pipeline.warehouse.store import Warehouse, file_location, month_files

OUTPUT_KINDS = ("rankings", "history", "awards")
QUALITY_VIEW = "quality"  # one view of the quality tables of every month (no folder per system)


def committed_files(warehouse: Warehouse, kind: str, owner: str, manifest: str) -> list[str]:
    """The locations of the `kind` files of the months `manifest` commits, oldest first."""
    committed = {Month.parse(key) for key in warehouse.load_manifest(manifest)}
    folder = warehouse.root / kind / owner if owner else warehouse.root / kind
    on_disk = month_files(folder, kind)
    return [file_location(on_disk[m]) for m in sorted(committed & on_disk.keys())]


def refresh_views(
    con: duckdb.DuckDBPyConnection, warehouse: Warehouse, systems: Collection[str] | None = None
) -> list[str]:
    """Keep a `<kind>_<system>` view for every output folder of `systems` (default: every system)
    whose manifest commits a month, and none for the others; and the `quality` view while the
    quality manifest commits one (when `systems` is None or names it). Returns the views kept.

    A view lists the files of the months its manifest commits, not the folder's pattern: a query
    while a run writes new months sees the months committed before it, never the new ones before
    the run's manifest takes them. Call it after a manifest changes; a view that already lists the
    same files is left as it is (creating a view binds it, which opens its files)."""
    wanted: dict[str, list[str]] = {}
    for kind in OUTPUT_KINDS:
        base = warehouse.root / kind
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir() and (systems is None or p.name in systems)):
            files = committed_files(warehouse, kind, folder.name, manifest=folder.name)
            if files:
                wanted[f"{kind}_{folder.name}"] = files
    quality_wanted = systems is None or QUALITY_VIEW in systems
    if quality_wanted:
        files = committed_files(warehouse, QUALITY_VIEW, "", manifest=QUALITY_VIEW)  # state/quality/manifest.json
        if files:
            wanted[QUALITY_VIEW] = files
    # Each view's comment is a digest of the files it lists (DuckDB keeps a view's SQL rewritten).
    existing = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    for name, files in wanted.items():
        listed = hashlib.sha256("\n".join(files).encode()).hexdigest()
        if existing.get(name) != listed:
            source = ", ".join(quote_literal(f) for f in files)
            con.execute(
                f"CREATE OR REPLACE VIEW {quote_ident(name)} AS "
                f"SELECT * FROM read_parquet([{source}], hive_partitioning = true)"
            )
            con.execute(f"COMMENT ON VIEW {quote_ident(name)} IS {quote_literal(listed)}")
    # A view whose manifest commits no month (every month of a system left its range) goes too.
    for name in existing:
        kind, _, system = name.partition("_")
        ours = (kind in OUTPUT_KINDS and (systems is None or system in systems)) or (
            name == QUALITY_VIEW and quality_wanted
        )
        if ours and name not in wanted:
            con.execute(f"DROP VIEW {quote_ident(name)}")
    return list(wanted)
