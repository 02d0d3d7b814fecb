"""Where outputs live: the warehouse store, writer locks, SQL helpers and the DuckDB views."""
