"""The rating systems: plain code, no Dagster. Each module exposes one RatingSystem."""
