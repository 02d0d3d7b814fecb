"""Progress lines of long work: one logger, shown on stderr by the CLI and kept by Dagster's log."""
from __future__ import annotations

import logging
import sys

PROGRESS_LOGGER = "diprank.progress"


def progress_log() -> logging.Logger:
    return logging.getLogger(PROGRESS_LOGGER)


def show_progress(enabled: bool) -> None:
    """Print progress lines on stderr, indented, when enabled (once per process)."""
    log = progress_log()
    log.setLevel(logging.INFO)
    log.propagate = False
    if enabled and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("  %(message)s"))
        log.addHandler(handler)
