"""Progress lines of long work: one logger, shown on stderr by the CLI and kept by Dagster's log."""

from __future__ import annotations

import logging
import sys
import time
from typing import Callable

PROGRESS_LOGGER = "diprank.progress"
# A piece of work quicker than this gets no line of its own: a small run stays quiet, and a long
# one (a 10M-game ingest spends minutes in a handful of phases) shows where it is.
PROGRESS_SECONDS = 5.0

Progress = Callable[[str], None]


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


def due(started: float) -> bool:
    """Whether PROGRESS_SECONDS have passed since `started` (time.perf_counter)."""
    return time.perf_counter() - started >= PROGRESS_SECONDS


class ProgressLines:
    """The lines of one long piece of work told as it goes, at most one per PROGRESS_SECONDS, so
    that a step of minutes (a 10M-game working copy loads for two) is not silent until its end."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.last = time.perf_counter()

    def tell(self, message: str) -> None:
        """Tell `message` when PROGRESS_SECONDS have passed since the work began or its last line."""
        if self.progress is not None and due(self.last):
            self.progress(message)
            self.last = time.perf_counter()


def report_if_slow(progress: Progress | None, started: float, message: str) -> None:
    """Tell `progress` that a piece of work begun at `started` (time.perf_counter) is done, with its
    seconds, when it took PROGRESS_SECONDS or more."""
    if progress is not None and due(started):
        progress(f"{message} in {time.perf_counter() - started:.1f} s")
