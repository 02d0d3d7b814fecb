"""A warehouse of another format is rebuilt from the raw folder, with one message, never upgraded file by file."""

import datetime as dt
import json

import pytest

from pipeline.ingest.warehouse_format import FORMAT_FILE, WAREHOUSE_FORMAT, current_format, format_problem
from pipeline.synthetic.generator import synthetic_games
from pipeline.warehouse.store import Warehouse
from tests.support import run_cli, tree_bytes, write_csv

OUTPUTS = ("rankings", "history", "awards", "validated", "quarantine", "state")
REBUILT = "its outputs were removed and are written again from the raw folder"


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A raw folder and the warehouse a first run writes from it."""
    root = tmp_path_factory.mktemp("format")
    raw = root / "raw"
    write_csv(raw / "games" / "g.csv", list(synthetic_games(41, 60, 20, dt.date(2019, 1, 1), dt.date(2019, 6, 30))))
    warehouse = root / "first"
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    assert REBUILT not in out + err  # a new warehouse is simply written
    return raw, warehouse


def test_a_run_records_the_format_it_wrote(first_run):
    _, warehouse = first_run
    assert json.loads((warehouse / FORMAT_FILE).read_text()) == current_format()
    assert format_problem(Warehouse(warehouse)) is None


def test_a_new_warehouse_has_no_format_problem(tmp_path):
    assert format_problem(Warehouse(tmp_path / "new")) is None


@pytest.mark.parametrize(
    "stored",
    [None, {"format": WAREHOUSE_FORMAT - 1}, "feeds with another column", "not json"],
    ids=["no format file", "earlier number", "other feed columns", "unreadable"],
)
def test_a_warehouse_of_another_format_is_rebuilt_from_the_raw_folder(first_run, tmp_path, stored):
    raw, first = first_run
    warehouse = tmp_path / "warehouse"
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    # What an earlier layout left: a one-file validated feed and a month no raw file has.
    (warehouse / "validated" / "games.parquet").write_bytes(b"an earlier layout")
    stale = warehouse / "rankings" / "club" / "year=2011" / "month=01" / "rankings.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes((warehouse / "rankings" / "club" / "year=2019" / "month=01" / "rankings.parquet").read_bytes())
    path = warehouse / FORMAT_FILE
    if stored is None:
        path.unlink()
    elif stored == "not json":
        path.write_text("{")
    elif stored == "feeds with another column":
        other = current_format()
        other["feeds"]["games"] = [*other["feeds"]["games"], "press:VARCHAR"]
        path.write_text(json.dumps(other))
    else:
        path.write_text(json.dumps(stored))
    assert format_problem(Warehouse(warehouse)) is not None

    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err
    assert (out + err).count(REBUILT) == 1
    assert tree_bytes(warehouse, OUTPUTS) == tree_bytes(first, OUTPUTS)
    assert not stale.exists() and not (warehouse / "validated" / "games.parquet").exists()
    assert path.read_bytes() == (first / FORMAT_FILE).read_bytes()

    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0 and REBUILT not in out + err, out + err  # once
