"""DuckDB views over the Parquet snapshots, so the warehouse file answers SQL over every output."""
from __future__ import annotations

import duckdb

from pipeline.warehouse.sql import quote_ident, quote_literal
from pipeline.warehouse.store import Warehouse, file_location

OUTPUT_KINDS = ("rankings", "history", "awards")


def refresh_views(con: duckdb.DuckDBPyConnection, warehouse: Warehouse) -> list[str]:
    """(Re)create `<kind>_<system>` views for every output folder that has files, drop the others;
    returns their names."""
    created = []
    for kind in OUTPUT_KINDS:
        base = warehouse.root / kind
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            if not any(folder.glob("year=*/month=*/*.parquet")):
                continue
            name = f"{kind}_{folder.name}"
            pattern = f"{file_location(folder)}/year=*/month=*/{kind}.parquet"
            con.execute(
                f"CREATE OR REPLACE VIEW {quote_ident(name)} AS "
                f"SELECT * FROM read_parquet({quote_literal(pattern)}, hive_partitioning = true)"
            )
            created.append(name)
    # A view whose files are all gone (every month of a system left its range) goes too.
    for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall():
        if name.startswith(tuple(f"{kind}_" for kind in OUTPUT_KINDS)) and name not in created:
            con.execute(f"DROP VIEW {quote_ident(name)}")
    return created
