"""The executor every job of the code location runs with, chosen by the settings (DIPRANK_EXECUTOR).

`in_process` (the embedded default: every step in the run's own process), `multiprocess` (a process
per step) or `celery` (each step a Celery task picked up by `dagster-celery` workers; broker and
result backend from DIPRANK_CELERY_BROKER and DIPRANK_CELERY_BACKEND).
"""

from __future__ import annotations

from dagster import ExecutorDefinition, in_process_executor, multiprocess_executor

from pipeline.settings import ENV_CELERY_BACKEND, ENV_CELERY_BROKER, ENV_EXECUTOR, Settings


class ExecutorNotAvailable(RuntimeError):
    """The settings name an executor whose package or configuration is missing."""


def executor_for(settings: Settings) -> ExecutorDefinition:
    """The executor the settings name."""
    if settings.executor == "in_process":
        return in_process_executor
    if settings.executor == "multiprocess":
        return multiprocess_executor
    try:
        from dagster_celery import celery_executor
    except ImportError as missing:
        raise ExecutorNotAvailable(
            f"{ENV_EXECUTOR}=celery needs the production extra: pip install 'diprank[production]'"
        ) from missing
    for variable, value in ((ENV_CELERY_BROKER, settings.celery_broker), (ENV_CELERY_BACKEND, settings.celery_backend)):
        if not value:
            raise ExecutorNotAvailable(f"{ENV_EXECUTOR}=celery needs {variable} (e.g. redis://127.0.0.1:6379/0)")
    # The values stay environment references: the UI shows where they come from, and no secret in
    # a broker URL is written into the run's configuration.
    return celery_executor.configured(
        {"broker": {"env": ENV_CELERY_BROKER}, "backend": {"env": ENV_CELERY_BACKEND}},
        name="celery",
    )
