"""The local Dagster instance of the embedded profile (`make run`, `make ui`, `diprank run`)."""
from __future__ import annotations

import sys
from pathlib import Path

INSTANCE_FILE = "dagster.yaml"
# Every run is queued through diprank's coordinator, so runs launched from the UI carry their
# writer tags too (pipeline/defs/coordinator.py); `dagster dev` runs the daemon that starts them.
LOCAL_INSTANCE = """\
# Dagster's local instance for diprank's embedded profile (written by diprank when missing).
run_coordinator:
  module: pipeline.defs.coordinator
  class: WriterTagsRunCoordinator
telemetry:
  enabled: false
"""
# What earlier versions wrote; replaced by LOCAL_INSTANCE, any other file is the user's own.
EARLIER_INSTANCE = "telemetry:\n  enabled: false\n"


def prepare_local_instance(home: Path) -> Path:
    """Create the instance folder and its dagster.yaml unless the user has written one."""
    home.mkdir(parents=True, exist_ok=True)
    settings_file = home / INSTANCE_FILE
    if not settings_file.exists() or settings_file.read_text() == EARLIER_INSTANCE:
        settings_file.write_text(LOCAL_INSTANCE)
    return home


if __name__ == "__main__":
    prepare_local_instance(Path(sys.argv[1]))
