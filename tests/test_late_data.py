"""Late and corrected deliveries recompute exactly the affected months, equal to a run from scratch."""

import datetime as dt

import pytest

from pipeline.synthetic.generator import synthetic_games
from tests.support import run_cli, tree_bytes, write_csv

OUTPUTS = ("rankings", "history", "awards")


def base_games():
    return list(synthetic_games(11, 150, 25, dt.date(2019, 1, 1), dt.date(2020, 6, 30)))


@pytest.fixture
def raw(tmp_path):
    root = tmp_path / "raw"
    write_csv(root / "games" / "2020-07-01.csv", base_games())
    write_csv(
        root / "events" / "events.csv",
        [
            {
                "event_id": "e1",
                "name": "Open",
                "start_date": "2019-03-01",
                "end_date": "2019-03-02",
                "location": "X",
                "country": "NOR",
                "rounds": 2,
                "num_players": 20,
                "is_world_championship": False,
            }
        ],
    )
    write_csv(
        root / "event_results" / "results.csv",
        [
            {"event_id": "e1", "player_id": "p00001", "player_name": "One", "nationality": "NOR", "placement": 1},
            {"event_id": "e1", "player_id": "p00002", "player_name": "Two", "nationality": "NOR", "placement": 2},
        ],
    )
    return root


def run(raw, warehouse, *extra):
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--to", "2020-06", *extra)
    assert code == 0, out + err
    return out


def test_late_game_recomputes_from_its_month(raw, tmp_path):
    warehouse = tmp_path / "w"
    run(raw, warehouse)
    late = list(synthetic_games(12, 1, 25, dt.date(2019, 9, 10), dt.date(2019, 9, 10)))
    for row in late:
        row["game_id"] = "late-1"
    write_csv(raw / "games" / "2020-08-01_late.csv", late)
    out = run(raw, warehouse)
    for system in ("club", "eagle", "diwz"):
        assert f"{system:<10} 2019-09 … 2020-06" in out, out
    assert "dip_pouch  up to date" in out
    scratch = tmp_path / "scratch"
    run(raw, scratch)
    assert tree_bytes(warehouse, OUTPUTS) == tree_bytes(scratch, OUTPUTS)


def test_corrected_game_recomputes_and_matches_scratch(raw, tmp_path):
    warehouse = tmp_path / "w"
    run(raw, warehouse)
    rows = [r for r in base_games() if r["game_id"] == "g0000100"]
    assert rows
    month = rows[0]["finished_on"].strftime("%Y-%m")
    eliminated = next(r for r in rows if r["result"] == "eliminated")
    survivor = dict(eliminated, result="survived", centres=1, eliminated_year=None)
    winners = [r for r in rows if r["result"] in ("solo", "draw")]
    top = max(winners, key=lambda r: r["centres"])
    write_csv(raw / "games" / "2020-09-01_fix.csv", [survivor, dict(top, centres=top["centres"] - 1)])
    out = run(raw, warehouse)
    assert f"club       {month} … 2020-06" in out, out
    scratch = tmp_path / "scratch"
    run(raw, scratch)
    assert tree_bytes(warehouse, OUTPUTS) == tree_bytes(scratch, OUTPUTS)


def test_ui_range_after_late_data_replays_from_a_current_checkpoint(raw, tmp_path):
    """A partition range that starts after the late month still comes out right (stale checkpoints are skipped)."""
    warehouse = tmp_path / "w"
    run(raw, warehouse)
    late = list(synthetic_games(13, 1, 25, dt.date(2019, 2, 10), dt.date(2019, 2, 10)))
    for row in late:
        row["game_id"] = "late-2"
    write_csv(raw / "games" / "2020-08-02_late.csv", late)
    run(raw, warehouse, "--from", "2020-03", "--systems", "diwz")
    scratch = tmp_path / "scratch"
    run(raw, scratch, "--systems", "diwz")

    def diwz_files(root):
        return {k: v for k, v in tree_bytes(root, ("rankings", "history")).items() if "/diwz/" in k}

    assert diwz_files(warehouse) == diwz_files(scratch)
