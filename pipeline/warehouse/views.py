"""DuckDB views over the Parquet snapshots, so the warehouse file answers SQL over every output."""

from __future__ import annotations

from collections.abc import Collection

import duckdb

from pipeline.warehouse.sql import quote_ident, quote_literal
from pipeline.warehouse.store import Warehouse, file_location

OUTPUT_KINDS = ("rankings", "history", "awards")
QUALITY_VIEW = "quality"  # one view of the quality tables of every month (no folder per system)


def refresh_views(
    con: duckdb.DuckDBPyConnection, warehouse: Warehouse, systems: Collection[str] | None = None
) -> list[str]:
    """Keep a `<kind>_<system>` view for every output folder of `systems` (default: every system)
    that has files, and none for the others; and the `quality` view while quality tables exist
    (when `systems` is None or names it). Returns the names of the views kept.

    A view reads its folder's files when it is queried, so one that already reads the folder's
    pattern is left as it is: creating a view binds it, which lists and opens the folder's files
    (a tenth of a second for the nine views of a 240-month warehouse, on every system's run)."""
    wanted: dict[str, str] = {}
    for kind in OUTPUT_KINDS:
        base = warehouse.root / kind
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir() and (systems is None or p.name in systems)):
            if any(folder.glob("year=*/month=*/*.parquet")):
                wanted[f"{kind}_{folder.name}"] = f"{file_location(folder)}/year=*/month=*/{kind}.parquet"
    quality_wanted = systems is None or QUALITY_VIEW in systems
    if quality_wanted and any((warehouse.root / QUALITY_VIEW).glob("year=*/month=*/quality.parquet")):
        wanted[QUALITY_VIEW] = f"{file_location(warehouse.root / QUALITY_VIEW)}/year=*/month=*/quality.parquet"
    existing = dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())
    for name, pattern in wanted.items():
        source = f"read_parquet({quote_literal(pattern)}"
        if source not in existing.get(name, "") or "hive_partitioning = true" not in existing[name]:
            con.execute(
                f"CREATE OR REPLACE VIEW {quote_ident(name)} AS SELECT * FROM {source}, hive_partitioning = true)"
            )
    # A view whose files are all gone (every month of a system left its range) goes too.
    for name in existing:
        kind, _, system = name.partition("_")
        ours = (kind in OUTPUT_KINDS and (systems is None or system in systems)) or (
            name == QUALITY_VIEW and quality_wanted
        )
        if ours and name not in wanted:
            con.execute(f"DROP VIEW {quote_ident(name)}")
    return list(wanted)
