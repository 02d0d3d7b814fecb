"""How runs execute: the executor and the run tags that keep writers of one warehouse apart.

The executor is chosen by DIPRANK_EXECUTOR, never by code: `in_process` (the embedded default:
every step in the run's own process), `multiprocess` (a process per step) or `celery` (each step a
Celery task picked up by `dagster-celery` workers; broker and result backend from
DIPRANK_CELERY_BROKER and DIPRANK_CELERY_BACKEND).
"""
from __future__ import annotations

import os

from dagster import ExecutorDefinition, in_process_executor, multiprocess_executor

from pipeline import settings as config
from pipeline.systems.registry import SYSTEM_NAMES

ENV_EXECUTOR = "DIPRANK_EXECUTOR"
ENV_CELERY_BROKER = "DIPRANK_CELERY_BROKER"
ENV_CELERY_BACKEND = "DIPRANK_CELERY_BACKEND"
EXECUTORS = ("in_process", "multiprocess", "celery")
DEFAULT_EXECUTOR = "in_process"

# Run tags read by the queued run coordinator's tag_concurrency_limits (deploy/production/dagster.yaml):
# at most one run per value, the value being the warehouse location.
FEEDS_WRITER_TAG = "diprank/writes-feeds"


def system_writer_tag(system: str) -> str:
    return f"diprank/writes-{system}"


WRITER_TAGS = [FEEDS_WRITER_TAG, *(system_writer_tag(s) for s in SYSTEM_NAMES)]


class ExecutorNotAvailable(RuntimeError):
    """DIPRANK_EXECUTOR names an executor that is unknown or whose package is not installed."""


def executor_name(env=os.environ) -> str:
    name = env.get(ENV_EXECUTOR, DEFAULT_EXECUTOR).strip() or DEFAULT_EXECUTOR
    if name not in EXECUTORS:
        raise ExecutorNotAvailable(f"{ENV_EXECUTOR}={name!r}: choose one of {', '.join(EXECUTORS)}")
    return name


def executor_from_env(env=os.environ) -> ExecutorDefinition:
    """The executor every job of the code location runs with."""
    name = executor_name(env)
    if name == "in_process":
        return in_process_executor
    if name == "multiprocess":
        return multiprocess_executor
    try:
        from dagster_celery import celery_executor
    except ImportError as missing:
        raise ExecutorNotAvailable(
            f"{ENV_EXECUTOR}=celery needs the production extra: pip install 'diprank[production]'") from missing
    for variable in (ENV_CELERY_BROKER, ENV_CELERY_BACKEND):
        if not env.get(variable):
            raise ExecutorNotAvailable(f"{ENV_EXECUTOR}=celery needs {variable} (e.g. redis://127.0.0.1:6379/0)")
    # The values stay environment references, so the UI shows where they come from.
    return celery_executor.configured(
        {"broker": {"env": ENV_CELERY_BROKER}, "backend": {"env": ENV_CELERY_BACKEND}},
        name="celery",
    )


def warehouse_location(env=os.environ) -> str:
    return env.get(config.ENV_WAREHOUSE_DIR, config.DEFAULT_WAREHOUSE_DIR)


def ingest_run_tags(env=os.environ) -> dict[str, str]:
    """Ingest replaces the validated feeds every system reads: it excludes every other writer."""
    return {tag: warehouse_location(env) for tag in WRITER_TAGS}


def rating_run_tags(system: str, env=os.environ) -> dict[str, str]:
    """A system writes only its own outputs: systems run side by side, never twice at once."""
    return {system_writer_tag(system): warehouse_location(env)}
