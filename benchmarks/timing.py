"""How the kernel benchmarks time a compiled path against its peers: the same clock, the same
number of runs, taking turns.

A ratio of two speeds measured minutes apart on a shared machine measures the machine as much as
the code; so every path of a comparison runs once per round, the rounds repeat, and each path's
best round counts. Times are this process's CPU seconds (every path runs on one thread), which
other work on the machine disturbs less than wall time. A path shorter than MIN_ROUND_SECONDS runs
again within its round until the round has lasted that long, and counts its mean: a single run
of a few milliseconds is at the mercy of one interruption or cache flush, and its best of three
varied by a third between two runs of the harness.
"""

from __future__ import annotations

import time
from typing import Callable

Timing = Callable[[], float]  # runs a path (once or more) and returns the CPU seconds of one run

MIN_ROUND_SECONDS = 0.1


def cpu_seconds(run: Callable[[], object], min_round: float = MIN_ROUND_SECONDS) -> Timing:
    """A timing of the whole of `run`: the mean CPU seconds of as many runs as last `min_round`."""

    def timing() -> float:
        runs, started = 0, time.process_time()
        while True:
            run()
            runs += 1
            spent = time.process_time() - started
            if spent >= min_round:
                return spent / runs

    return timing


def best_seconds(repeats: int, timings: dict[str, Timing]) -> dict[str, float]:
    """Each path's best time over `repeats` rounds in which every path runs once, in turn."""
    best = {name: float("inf") for name in timings}
    for _ in range(max(1, repeats)):
        for name, timing in timings.items():
            best[name] = min(best[name], timing())
    return best
