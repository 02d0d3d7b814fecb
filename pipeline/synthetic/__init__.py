"""Synthetic result feeds of any size, deterministic for a seed (tests and benchmarks)."""
