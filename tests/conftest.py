import os

import pytest

# Reproducible "today" for the not-in-the-future rule.
os.environ.setdefault("DIPRANK_TODAY", "2026-11-29")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")


@pytest.fixture
def warehouse(tmp_path):
    return tmp_path / "warehouse"
