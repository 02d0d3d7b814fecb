"""Imported by the server the systems' processes are forked from (pipeline.orchestrate), before it
forks any: what a system's run imports, then the objects of those imports frozen out of the
garbage collector.

- Every module here was imported anew in each system's process before (0.7-0.8 s of a core in
  each): the systems' modules with numba, Dagster's SQLite storage of the local instance, the
  in-process executor, and Ibis's SQL compilers with Pandera's Ibis backend for the output checks.
  Imported once in the server, beside ingest, they are in every process from its start.
- Frozen (gc.freeze, as Python's documentation advises before forking), the objects of the
  imports are never walked by a process's collections, which otherwise pass over them all again
  in every full collection, nor copied by the writes a collection makes to them.

The compiled kernels are not loaded here: a process forked from a server holding them ran its
months no faster and started later (1M games, club's run in a process of its own: 6.9-8.0 s
with the kernels loaded in the server, 6.6-7.1 s without).
"""
import gc

import dagster._core.executor.in_process  # noqa: F401 - the executor of a system's run
import dagster._core.storage.local_compute_log_manager  # noqa: F401 - the local instance's parts
import dagster._core.storage.sqlite_storage  # noqa: F401
import ibis.backends.duckdb  # noqa: F401 - the output checks' SQL (schemas.engine)
import pandera.backends.ibis.components  # noqa: F401 - Pandera's checks of an Ibis table
import pandera.backends.ibis.container  # noqa: F401

import pipeline.defs.coordinator  # noqa: F401 - the classes the local instance names
import pipeline.defs.event_log  # noqa: F401
import pipeline.definitions  # noqa: F401 - the code location a system's job is built from
import pipeline.orchestrate  # noqa: F401 - what a system's process runs
from pipeline.systems.registry import SYSTEM_NAMES, system_class

for _name in SYSTEM_NAMES:
    system_class(_name)

gc.freeze()
