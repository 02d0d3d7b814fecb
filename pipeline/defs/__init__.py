"""Dagster wiring: resources, partitions, jobs, executors, the schedule and the sensors."""
