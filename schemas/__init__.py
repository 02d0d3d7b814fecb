"""Pandera models (Ibis backend) of every feed and every output table: one model per table."""
