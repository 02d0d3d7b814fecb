"""Writers of one warehouse: advisory file locks (exclusive or shared), re-entrant within a process."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

_held: dict[str, tuple[int, int]] = {}  # lock path -> (file descriptor, depth)


class WarehouseBusy(RuntimeError):
    """Another process is writing to the same warehouse."""


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


@contextmanager
def warehouse_lock(
    path: Path,
    *,
    wait: bool = True,
    poll_seconds: float = 0.5,
    shared: bool = False,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold a lock of the warehouse; wait for it, or raise WarehouseBusy when wait is False.

    Shared holders exclude exclusive ones only (the rating systems read the validated feeds side by
    side; ingest replaces them alone). A process that already holds the path re-enters it.
    """
    key = str(path.resolve())
    if key in _held:
        fd, depth = _held[key]
        _held[key] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _held[key]
            _held[key] = (fd, depth - 1)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    told = False
    try:
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(path)
                if not wait:
                    raise WarehouseBusy(
                        f"another diprank run (pid {holder}) is writing to {path.parent}; "
                        "wait for it to finish or run again with --wait"
                    ) from None
                if on_wait and not told:
                    on_wait(f"waiting for another diprank run (pid {holder}) to release {path.parent}")
                    told = True
                time.sleep(poll_seconds)
        if not shared:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        _held[key] = (fd, 1)
        try:
            yield
        finally:
            _held.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
