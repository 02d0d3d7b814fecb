"""From raw deliveries to validated feeds: staging in DuckDB, Pandera validation, month fingerprints."""
