"""Ghost Rating (SPEC §3.6)."""
