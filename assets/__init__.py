"""Dagster assets and checks: thin wrappers that read, call into pipeline/, validate, write."""
