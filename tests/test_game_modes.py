"""The game modes of SPEC §3.6 (`scoring`, `press`, `live`): optional game-level columns of the
games feed, with their defaults filled in the validated games and in the rows the systems take."""

from __future__ import annotations

import copy
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.core.feed_spec import GAMES
from pipeline.core.months import Month
from pipeline.rating.inputs import read_results
from pipeline.systems.games import rows_to_table
from pipeline.warehouse.store import Warehouse
from schemas.games import PRESS_KINDS, SCORINGS
from tests.support import ingest_in_process, write_csv
from tests.test_validation import GOOD_GAME, write_delivery

MODES = ["scoring", "press", "live"]
DEFAULTS = {"scoring": "draw_size", "press": "full", "live": False}


def game_with(game_id: str, **modes) -> list[dict]:
    """The good game of the validation tests as `game_id`, every row carrying `modes`."""
    rows = copy.deepcopy(GOOD_GAME)
    for row in rows:
        row.update(game_id=game_id, **modes)
    return rows


def modes_by_game(table) -> dict[str, set[tuple]]:
    """game_id -> the distinct (scoring, press, live) of its rows."""
    found: dict[str, set[tuple]] = {}
    for row in table.select(["game_id", *MODES]).to_pylist():
        found.setdefault(row["game_id"], set()).add(tuple(row[m] for m in MODES))
    return found


def validated_and_handed(root: Path) -> tuple:
    """The validated month file of the games and the rows a game system is handed for that month."""
    stored = pq.read_table(root / "validated" / "games" / "2020-03.parquet")
    handed = read_results(Warehouse(root), "games", Month(2020, 3), Month(2020, 3))
    return stored, handed


def test_the_defaults_are_the_first_values_of_the_lists():
    defaults = {c.name: c.default for c in GAMES.columns if c.name in MODES}
    assert defaults == {"scoring": f"'{SCORINGS[0]}'", "press": f"'{PRESS_KINDS[0]}'", "live": "false"}
    assert GAMES.column_names[-4:] == ["multi_site", *MODES]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_a_file_without_the_columns_gets_the_defaults(tmp_path, fmt):
    raw, root = tmp_path / "raw", tmp_path / "w"
    delivery = write_delivery(raw / "games", "games", GOOD_GAME, fmt, column="")
    counts = ingest_in_process(raw, root)
    assert (counts["games"].valid, counts["games"].quarantined) == (3, 0)
    delivered = pq.read_schema(delivery).names if fmt == "parquet" else delivery.read_text()
    assert not [m for m in MODES if m in delivered]
    stored, handed = validated_and_handed(root)
    for table in (stored, handed):
        assert modes_by_game(table) == {"ok": {tuple(DEFAULTS.values())}}
        assert [str(table.schema.field(m).type) for m in MODES] == ["string", "string", "bool"]


def test_valid_values_are_kept_and_empty_ones_take_the_defaults(tmp_path):
    raw, root = tmp_path / "raw", tmp_path / "w"
    rows = (
        game_with("sos", scoring="sum_of_squares", press="gunboat", live=True)
        + game_with("ppsc", scoring="ppsc", press="public", live=False)
        + game_with("unranked", scoring="unranked", press="rulebook", live=None)
        + game_with("empty", scoring=None, press=None, live=None)
    )
    write_csv(raw / "games" / "games.csv", rows)
    counts = ingest_in_process(raw, root)
    assert (counts["games"].valid, counts["games"].quarantined) == (12, 0)
    stored, handed = validated_and_handed(root)
    for table in (stored, handed):
        assert modes_by_game(table) == {
            "sos": {("sum_of_squares", "gunboat", True)},
            "ppsc": {("ppsc", "public", False)},
            "unranked": {("unranked", "rulebook", False)},
            "empty": {tuple(DEFAULTS.values())},
        }


def test_a_game_in_two_files_that_disagree_on_its_mode_is_quarantined_whole(tmp_path):
    """The mode is a fact of the game: a correction of one power that changes it splits the game."""
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game_with("g", scoring="ppsc"))
    write_csv(raw / "games" / "b_fix.csv", [dict(game_with("g", scoring="draw_size")[1], centres=6)])
    counts = ingest_in_process(raw, root)
    assert (counts["games"].valid, counts["games"].quarantined, counts["games"].replaced) == (0, 3, 1)
    assert counts["games"].reasons == {"game_fields_differ": 3}


def test_rows_built_in_code_take_the_defaults():
    table = rows_to_table(GOOD_GAME + game_with("gunboat", press="gunboat", live=True))
    assert modes_by_game(table) == {
        "ok": {tuple(DEFAULTS.values())},
        "gunboat": {("draw_size", "gunboat", True)},
    }
