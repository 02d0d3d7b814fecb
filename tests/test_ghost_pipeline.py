"""Ghost Rating end to end: SPEC §3.6's golden cases through `diprank run`, the report in
webDiplomacy's layout, and the predictive quality row."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.support import rankings, write_csv
from tests.test_cli import diprank

POWERS = ("Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey")
COLUMNS = [
    "game_id",
    "finished_on",
    "power",
    "player_id",
    "player_name",
    "result",
    "centres",
    "eliminated_year",
    "scoring",
    "press",
    "live",
]


def seven(game_id: str, day: str, prefix: str, results: list[tuple[str, int]], **modes) -> list[dict]:
    """A seven-power game of fresh players <prefix>1..7; powers without a result are eliminated."""
    rows = []
    for i, power in enumerate(POWERS):
        result, centres = results[i] if i < len(results) else ("eliminated", 0)
        rows.append(
            {
                "game_id": game_id,
                "finished_on": day,
                "power": power,
                "player_id": f"{prefix}{i + 1}",
                "player_name": f"{prefix.upper()} {i + 1}",
                "result": result,
                "centres": centres,
                "eliminated_year": 1906 if result == "eliminated" else None,
                "scoring": modes.get("scoring", "draw_size"),
                "press": modes.get("press", "full"),
                "live": modes.get("live", False),
            }
        )
    return rows


SOLO = [("solo", 18), ("survived", 9), ("survived", 7)]
DRAW = [("draw", 12), ("draw", 11), ("draw", 11)]
# April's solo players meet again in May: the last seat solos, the winner of April survives.
RETURN = [("survived", 7), ("survived", 9)] + [("eliminated", 0)] * 4 + [("solo", 18)]


@pytest.fixture(scope="module")
def ghost_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ghost")
    games = (
        seven("solo", "2008-04-10", "s", SOLO)
        + seven("squares", "2008-04-11", "q", DRAW, scoring="sum_of_squares")
        + seven("gunboat", "2008-04-12", "b", DRAW, scoring="sum_of_squares", press="gunboat")
        + seven("ppsc", "2008-04-13", "p", SOLO, scoring="ppsc")
        + seven("unranked", "2008-04-14", "u", SOLO, scoring="unranked")
        + seven("return", "2008-05-02", "s", RETURN)
    )
    write_csv(root / "raw" / "games" / "2008.csv", games, COLUMNS)
    warehouse = root / "warehouse"
    done = diprank("run", "--raw", str(root / "raw"), "--warehouse", str(warehouse), env={"DAGSTER_HOME": str(root)})
    return warehouse, done


def ratings_of(warehouse, month: str, category: str = "overall") -> dict[str, float]:
    return {r["player_id"]: r["rating"] for r in rankings(warehouse, "ghost", month) if r["category"] == category}


def test_the_run_rates_ghost(ghost_run):
    warehouse, done = ghost_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ghost top 5 as of 2008-05-31:" in done.stdout


def test_draw_size_solo_from_100(ghost_run):
    table = ratings_of(ghost_run[0], "2008-04", "classic")
    assert round(table["s1"], 4) == 134.2857
    assert {round(table[f"s{i}"], 4) for i in range(2, 8)} == {94.2857}


def test_sum_of_squares_draw_and_its_gunboat_twin(ghost_run):
    table = ratings_of(ghost_run[0], "2008-04")
    assert [round(table[p], 2) for p in ("q1", "q2", "q3", "q4")] == [109.21, 106.82, 106.82, 94.29]
    for i in range(1, 8):
        assert table[f"b{i}"] - 100 == pytest.approx((table[f"q{i}"] - 100) / 4, rel=1e-12)
    gunboat = ratings_of(ghost_run[0], "2008-04", "gunboat")
    assert sorted(gunboat) == [f"b{i}" for i in range(1, 8)]


def test_ppsc_solo_shares_the_centres(ghost_run):
    table = ratings_of(ghost_run[0], "2008-04")
    assert table["p1"] == pytest.approx(100 + 40 * (18 / 34 - 1 / 7), rel=1e-12)
    assert table["p4"] == pytest.approx(100 - 40 / 7, rel=1e-12)


def test_unranked_games_are_not_counted(ghost_run):
    assert not any(p.startswith("u") for p in ratings_of(ghost_run[0], "2008-04"))


def test_rank_change_and_peak_are_per_category(ghost_run):
    warehouse = ghost_run[0]
    may = {(r["category"], r["player_id"]): r for r in rankings(warehouse, "ghost", "2008-05")}
    april = {(r["category"], r["player_id"]): r for r in rankings(warehouse, "ghost", "2008-04")}
    for key in (("overall", "s1"), ("classic", "s1"), ("overall", "s7")):
        assert may[key]["rank_change"] == april[key]["rank"] - may[key]["rank"], key
        assert may[key]["peak_rating"] == max(april[key]["rating"], may[key]["rating"]), key
    assert ("classic", "q1") not in may  # q1 never played a classic game


def test_history_rows_carry_the_shares(ghost_run):
    warehouse = ghost_run[0]
    rows = pq.read_table(warehouse / "history" / "ghost" / "year=2008" / "month=04" / "history.parquet").to_pylist()
    solo = [r for r in rows if r["source_id"] == "solo"]
    assert sorted({r["category"] for r in solo}) == ["classic", "overall"]
    winner = next(r for r in solo if r["player_id"] == "s1" and r["category"] == "overall")
    assert (winner["expected"], winner["actual"], winner["rating_before"]) == (pytest.approx(1 / 7), 1.0, 100.0)
    assert {r["scoring"] for r in rows} == {"draw_size", "sum_of_squares", "ppsc"}


def test_report_prints_webdiplomacy_layout(ghost_run):
    warehouse = ghost_run[0]
    done = diprank("report", "ghost", "--month", "2008-04", "--category", "classic", "--warehouse", str(warehouse))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Ghost Ratings, Classic, April 2008"
    header = next(line for line in lines if line.startswith("Rank"))
    assert header.split() == ["Rank", "Name", "GR", "Peak", "Games"]
    first = lines[lines.index(header) + 2].split()
    assert first == ["1", "S", "1", "134.29", "134.29", "1"]
    wrong = diprank("report", "ghost", "--category", "blitz", "--warehouse", str(warehouse))
    assert wrong.returncode == 2 and "unknown category 'blitz'" in wrong.stderr


def test_quality_scores_ghost_on_its_overall_table(ghost_run):
    warehouse = ghost_run[0]
    rows = pq.read_table(warehouse / "quality" / "year=2008" / "month=05" / "quality.parquet").to_pylist()
    ghost = next(r for r in rows if r["system"] == "ghost")
    # May's one game, scored once (not once per category): 21 pairs less the 6 among the four
    # powers eliminated in the same year.
    assert ghost["games"] == 1 and ghost["pairs"] == 15
    # April's overall table: s1 134.29 above s2..s7 at 94.29. s1 beat the eliminated four and lost
    # to s2 and s7; the pairs among s2..s7 are ties of rating (0.5 each): 4 + 9 × 0.5.
    assert ghost["concordant"] == 4 + 9 * 0.5
    assert ghost["common_games"] is None


def test_the_dashboard_query_lists_each_category(ghost_run):
    from tests.test_report import block_name, doc_blocks

    warehouse = ghost_run[0]
    code = next(code for code in doc_blocks("sql") if block_name(code) == "ghost-categories")
    rows = duckdb.sql(code.replace("data/warehouse", str(warehouse))).fetchall()
    categories = [r[0] for r in rows]
    assert categories == sorted(categories, key=["overall", "classic", "gunboat", "live"].index)
    # May's table: the April players of every category are still listed; overall has 28 (the
    # unranked game's players are not counted), so its top 10 and the players sharing rank 10.
    overall_ranks = [r[1] for r in rows if r[0] == "overall"]
    assert len(overall_ranks) >= 10 and max(overall_ranks) == 10
    assert set(categories) == {"overall", "classic", "gunboat"}
    assert rows[0][:3] == ("overall", 1, "s7")  # May's solo: 94.29 + 40 × (1 − 94.29 / 700)
