"""The local Dagster instance of the embedded profile (`make run`, `make ui`, `diprank run`).

diprank ships its instance file (pipeline/defs/dagster.yaml) and copies it into a Dagster home
that has none; a dagster.yaml already there is the user's and is never changed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

INSTANCE_FILE = "dagster.yaml"
SHIPPED_INSTANCE = Path(__file__).resolve().parent / INSTANCE_FILE


def prepare_local_instance(home: Path) -> Path:
    """The Dagster home, created with the shipped instance file when it has no dagster.yaml."""
    home.mkdir(parents=True, exist_ok=True)
    settings_file = home / INSTANCE_FILE
    if not settings_file.exists():
        shutil.copyfile(SHIPPED_INSTANCE, settings_file)
    return home


if __name__ == "__main__":
    prepare_local_instance(Path(sys.argv[1]))
