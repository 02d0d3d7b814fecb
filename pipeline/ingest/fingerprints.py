"""Fingerprints of each month's inputs, so late or corrected data marks exactly the months it changes.

A month's fingerprint is the row count and an order-independent hash of its rows; the cumulative
fingerprint of month M chains every month up to M with the system's configuration and the player
registry, so "month M's outputs are current" is one string comparison.
"""

from __future__ import annotations

import hashlib

import duckdb

from pipeline.core.months import Month, month_range
from pipeline.warehouse.store import Warehouse, atomic_write_parquet, file_location, read_parquet

# Over the validated tables (named `games`, `events`, `event_results`); run once per ingest. The
# games' months may be limited to those an ingest rewrote ({where}); the other months keep theirs.
GAMES_SQL = """
SELECT year(finished_on) AS year, month(finished_on) AS month, count(*) AS rows,
       bit_xor(hash(game_id, site, variant, supply_centres, finished_on, rated, power, player_id,
                    player_name, original_player_id, replacement_denies, result, centres, eliminated_year,
                    multi_site, scoring, press, live)) AS hash
FROM games {where} GROUP BY 1, 2 ORDER BY 1, 2
"""
# The range first (parameters: its first and last day) lets DuckDB skip the row groups of other months.
OF_MONTHS = (
    "WHERE finished_on BETWEEN ? AND ? AND date_trunc('month', finished_on) IN (SELECT month FROM _fingerprint_months)"
)
EVENTS_SQL = """
SELECT year(e.end_date) AS year, month(e.end_date) AS month, count(*) AS rows,
       bit_xor(hash(e.event_id, e.name, e.start_date, e.end_date, e.rounds, e.num_players,
                    e.is_world_championship, r.player_id, r.player_name, r.nationality, r.placement)) AS hash
FROM event_results r JOIN events e USING (event_id) GROUP BY 1, 2 ORDER BY 1, 2
"""
FEED_SQL = {"games": GAMES_SQL.format(where=""), "events": EVENTS_SQL}
# Stored with the fingerprints: the order of the rows in the month files they describe, for
# anyone reading the files.
MONTH_ORDER = {b"diprank.month_rows": b"by date, then key"}
REGISTRY_SQL = "SELECT count(*), bit_xor(hash(player_id, name, country)) FROM read_parquet(?)"


def fingerprints_path(warehouse: Warehouse, feed: str):
    return warehouse.root / "validated" / f"{feed}_month_fingerprints.parquet"


def write_month_fingerprints(
    con: duckdb.DuckDBPyConnection, warehouse: Warehouse, feed: str, months: list[Month] | None = None
) -> None:
    """Compute a feed kind's month fingerprints from the validated tables and store them beside them,
    so that rating runs read a few hundred rows instead of hashing the whole history again.

    With `months` (games only), only those months are hashed again and the stored file keeps the
    others' rows: each month's fingerprint depends on its own rows alone, so the file is the same
    as one computed over everything."""
    path = fingerprints_path(warehouse, feed)
    if months is None or not path.exists():
        table = con.sql(FEED_SQL[feed]).to_arrow_table()
    else:
        if not months:
            return
        con.execute("CREATE OR REPLACE TEMP TABLE _fingerprint_months (month DATE)")
        con.executemany("INSERT INTO _fingerprint_months VALUES (?)", [[m.first_day] for m in months])
        con.register("_stored_fingerprints", read_parquet(path))  # read whole first: it is replaced below
        table = con.sql(
            f"""SELECT * FROM _stored_fingerprints WHERE make_date(year, month, 1)
                    NOT IN (SELECT month FROM _fingerprint_months)
                UNION ALL ({GAMES_SQL.format(where=OF_MONTHS)})
                ORDER BY year, month""",
            params=[min(months).first_day, max(months).last_day],
        ).to_arrow_table()
        con.unregister("_stored_fingerprints")
        con.execute("DROP TABLE _fingerprint_months")
    atomic_write_parquet(path, table.replace_schema_metadata(MONTH_ORDER))


def month_fingerprints(warehouse: Warehouse, feed: str) -> dict[Month, str]:
    """Fingerprint of the validated rows of each month that has any, for a feed kind."""
    path = fingerprints_path(warehouse, feed)
    if not path.exists():
        return {}
    rows = warehouse.query("SELECT year, month, rows, hash FROM read_parquet(?)", [file_location(path)])
    return {Month(int(y), int(m)): f"{n}:{h}" for y, m, n, h in rows}


def registry_fingerprint(warehouse: Warehouse) -> str:
    path = warehouse.validated("players")
    if not path.exists():
        return "none"
    ((n, h),) = warehouse.query(REGISTRY_SQL, [file_location(path)])
    return f"{n}:{h}"


def cumulative_fingerprints(
    warehouse: Warehouse, feed: str, config_key: str, first: Month, last: Month
) -> dict[Month, str]:
    """For each month from the system's first month to `last`: a hash of everything that shapes it."""
    per_month = month_fingerprints(warehouse, feed)
    running = hashlib.sha256(f"{config_key}|{registry_fingerprint(warehouse)}|{first}".encode()).hexdigest()
    chain = {}
    for month in month_range(first, last):
        running = hashlib.sha256(f"{running}|{month}|{per_month.get(month, '0:0')}".encode()).hexdigest()
        chain[month] = running
    return chain
