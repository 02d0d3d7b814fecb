"""The local Dagster instance of the embedded profile (`make run`, `make ui`, `diprank run`)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

INSTANCE_FILE = "dagster.yaml"
MARKER = "# Dagster's local instance for diprank's embedded profile (written by diprank when missing)."
# Every run is queued through diprank's coordinator, so runs launched from the UI carry their
# writer tags too (pipeline/defs/coordinator.py); `dagster dev` runs the daemon that starts them.
# The event log is Dagster's SQLite one, at its usual place under the home, writing a batch of
# events at once (pipeline/defs/event_log.py).
LOCAL_INSTANCE = MARKER + """
# diprank rewrites this file when it changes; delete the first line to keep edits of your own.
run_coordinator:
  module: pipeline.defs.coordinator
  class: WriterTagsRunCoordinator
event_log_storage:
  module: pipeline.defs.event_log
  class: BatchingSqliteEventLogStorage
  config:
    base_dir: {event_logs}
telemetry:
  enabled: false
"""
# Dagster's switch for writing a batch of events in one call of the event log's store_event_batch
# (off unless set). `diprank run` sets it for its runs and `make ui` for `dagster dev`'s processes:
# a 240-month range run plans and materializes 240 partitions, 480 events.
EVENT_BATCH_SIZE_VARIABLE = "DAGSTER_EVENT_BATCH_SIZE"
EVENT_BATCH_SIZE = 1000
# What the first versions wrote; replaced like a file with the marker, any other file is the user's own.
EARLIER_INSTANCE = "telemetry:\n  enabled: false\n"


def local_instance(home: Path) -> str:
    """The dagster.yaml of a local instance at `home` (the event log's folder is absolute: Dagster
    resolves a relative one from the working directory)."""
    return LOCAL_INSTANCE.format(event_logs=json.dumps(str(home.resolve() / "history" / "runs")))


def prepare_local_instance(home: Path) -> Path:
    """Create the instance folder and its dagster.yaml unless the user has written one; a file
    diprank wrote is brought up to date (a newer version, a home that moved)."""
    home.mkdir(parents=True, exist_ok=True)
    settings_file = home / INSTANCE_FILE
    wanted = local_instance(home)
    current = settings_file.read_text() if settings_file.exists() else None
    if current != wanted and (current is None or current == EARLIER_INSTANCE or current.startswith(MARKER)):
        settings_file.write_text(wanted)
    return home


if __name__ == "__main__":
    prepare_local_instance(Path(sys.argv[1]))
