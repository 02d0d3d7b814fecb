"""How the kernel benchmarks time a compiled path against its peers: the same clock, the same
number of runs, taking turns.

A ratio of two speeds measured minutes apart on a shared machine measures the machine as much as
the code; so every path of a comparison runs once per round, the rounds repeat, and each path's
best round counts. Times are this process's CPU seconds (every path runs on one thread), which
other work on the machine disturbs less than wall time.
"""
from __future__ import annotations

import time
from typing import Callable

Timing = Callable[[], float]   # runs a path once and returns the CPU seconds to count


def cpu_seconds(run: Callable[[], object]) -> Timing:
    """A timing of the whole of `run`."""

    def timing() -> float:
        started = time.process_time()
        run()
        return time.process_time() - started

    return timing


def best_seconds(repeats: int, timings: dict[str, Timing]) -> dict[str, float]:
    """Each path's best time over `repeats` rounds in which every path runs once, in turn."""
    best = {name: float("inf") for name in timings}
    for _ in range(max(1, repeats)):
        for name, timing in timings.items():
            best[name] = min(best[name], timing())
    return best
