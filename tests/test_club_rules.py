"""Club rating (SPEC §3.2): the published golden cases and every decision, through ClubRating.step."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from decimal import Decimal

import ibis
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pandera.errors import SchemaError

from pipeline.core.months import Month, month_range
from pipeline.core.rounding import half_up
from pipeline.systems.base import GAME_COLUMNS, MonthInput, MonthOutput
from pipeline.systems.club import kernel as club_kernel
from pipeline.systems.club.rules import ClubRating
from pipeline.systems.games import rows_to_table
from pipeline.systems.kernels.ids import string_buffers
from schemas.club import ClubHistory, ClubRankings
from tests.fixtures import club_cases

ALL_FIXTURES = (
    club_cases.alice_rows,
    club_cases.pablo_rows,
    club_cases.freddy_tom_rows,
    club_cases.results_rows,
    club_cases.replacement_rows,
    club_cases.legacy_rows,
)


def run_months(rows: list[dict], through: Month | None = None) -> dict[Month, MonthOutput]:
    """Step a fresh ClubRating over every month from the first game's month to `through` (or the last game's)."""
    table = rows_to_table(rows)
    days = table.column("finished_on").to_pylist()
    first, last = Month.of(min(days)), through or Month.of(max(days))
    system = ClubRating()
    state = system.initial_state()
    outputs: dict[Month, MonthOutput] = {}
    for month in month_range(first, last):
        in_month = pc.and_(
            pc.greater_equal(table.column("finished_on"), pa.scalar(month.first_day, pa.date32())),
            pc.less_equal(table.column("finished_on"), pa.scalar(month.last_day, pa.date32())),
        )
        out = system.step(state, MonthInput(month, table.filter(in_month)))
        state = out.state
        outputs[month] = out
    return outputs


def row_of(out: MonthOutput, player: str) -> dict | None:
    """The player's row of a month's table, or None if not listed."""
    for row in out.table.to_pylist():
        if row["player_id"] == player:
            return row
    return None


def published(value: float) -> Decimal:
    """A rating as the seed prints it: half up to two places."""
    return half_up(Decimal(value), 2)


def record(row: dict) -> tuple[int, int, int]:
    """(wins, losses, draws): the seed's W-L-D order."""
    return row["wins"], row["losses"], row["draws"]


# --- the fixtures themselves -----------------------------------------------------------------


def game_problems(rows: list[dict]) -> list[str]:
    """SPEC §2 game rules broken by one game's rows (empty when valid)."""
    problems = []
    first = rows[0]
    for key in ("variant", "supply_centres", "finished_on", "rated"):
        if any(row[key] != first[key] for row in rows):
            problems.append(f"{key} differs")
    if len(rows) < 2:
        problems.append("fewer than 2 powers")
    if len({row["power"] for row in rows}) != len(rows):
        problems.append("power twice")
    results = Counter(row["result"] for row in rows)
    if not ((results["solo"] == 1 and results["draw"] == 0) or (results["solo"] == 0 and results["draw"] >= 2)):
        problems.append("not one solo or a draw of two or more")
    for row in rows:
        if row["result"] not in {"solo", "draw", "survived", "eliminated", "anarchy"}:
            problems.append(f"unknown result {row['result']}")
        if row["result"] == "eliminated" and (row["centres"] != 0 or row["eliminated_year"] is None):
            problems.append("eliminated power with centres or without a year")
        if row["result"] != "eliminated" and row["eliminated_year"] is not None:
            problems.append("elimination year without elimination")
        if row["result"] in {"solo", "draw", "survived"} and row["centres"] < 1:
            problems.append("solo/draw/survivor without centres")
        if not 0 <= row["centres"] <= row["supply_centres"]:
            problems.append("centres out of range")
        if row["replacement_denies"] and not row["original_player_id"]:
            problems.append("denial without an original player")
    if sum(row["centres"] for row in rows) > first["supply_centres"]:
        problems.append("more centres than the map")
    ids = [row["player_id"] for row in rows] + [row["original_player_id"] for row in rows if row["original_player_id"]]
    if len(set(ids)) != len(ids):
        problems.append("a player on two powers")
    dt.date.fromisoformat(first["finished_on"])
    return problems


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda f: f.__name__)
def test_fixture_games_are_valid(fixture):
    rows = fixture()
    optional = {"site", "responsible_player_id", "scoring", "press", "live"}
    assert all(set(row) == set(GAME_COLUMNS.names) - optional for row in rows)
    games: dict[str, list[dict]] = {}
    for row in rows:
        games.setdefault(row["game_id"], []).append(row)
    assert {game_id: game_problems(game) for game_id, game in games.items()} == {game_id: [] for game_id in games}


# --- golden cases ----------------------------------------------------------------------------


def test_alice_two_wins_then_four_wins():
    outputs = run_months(club_cases.alice_rows())
    january = row_of(outputs[Month(2024, 1)], "alice")
    assert record(january) == (2, 0, 0)
    assert january["schedule_strength"] == 0.6
    assert january["win_pct"] == 1.0
    assert published(january["rating"]) == Decimal("38.17")
    february = row_of(outputs[Month(2024, 2)], "alice")
    assert record(february) == (4, 0, 0)
    assert february["schedule_strength"] == 0.6
    assert published(february["rating"]) == Decimal("55.92")


def test_alice_opponents_are_point_six_players():
    outputs = run_months(club_cases.alice_rows())
    for month, opponents in ((Month(2024, 1), ("bob", "carol")), (Month(2024, 2), ("bob", "carol", "dave", "erin"))):
        for player in opponents:
            assert row_of(outputs[month], player)["win_pct"] == 0.6


def test_pablo_seven_six_two():
    rows = club_cases.pablo_rows()
    # The case relies on unrated and non-standard games counting too.
    assert any(not row["rated"] for row in rows if row["player_id"] == "pablo")
    assert any(row["variant"] != "standard" for row in rows if row["player_id"] == "pablo")
    pablo = row_of(run_months(rows)[Month(2024, 3)], "pablo")
    assert record(pablo) == (7, 6, 2)
    assert pablo["games"] == 15
    assert pablo["schedule_strength"] == 0.5
    assert pablo["win_pct"] == 8 / 15
    assert published(pablo["rating"]) == Decimal("49.30")


def test_freddy_and_tom_only_play_each_other():
    may = run_months(club_cases.freddy_tom_rows())[Month(2024, 5)]
    freddy, tom = row_of(may, "freddy"), row_of(may, "tom")
    assert record(freddy) == (8, 2, 0) and record(tom) == (2, 8, 0)
    assert freddy["schedule_strength"] == 0.2 and tom["schedule_strength"] == 0.8
    assert published(freddy["rating"]) == Decimal("47.71")
    assert published(tom["rating"]) == Decimal("23.86")
    assert [row["rank"] for row in may.table.to_pylist()] == [1, 2]


def test_unrounded_computation_not_the_seeds_rounded_one():
    # SPEC §3.2 decision: the seed's 48.9, 47.5 and 23.5 came from rounding P and W% first.
    pablo = row_of(run_months(club_cases.pablo_rows())[Month(2024, 3)], "pablo")
    assert pablo["win_points"] == math.log10(9)
    assert pablo["base_rating"] == pablo["rating"] == math.log10(9) * (8 / 15 + 0.5) / 2 * 100


# The legacy case is stepped into the January after its last year, as the runner would.
LEGACY_THROUGH = Month(2024, 1)


# --- decisions -------------------------------------------------------------------------------


def test_solo_wins_draw_draws_everything_else_loses():
    out = run_months(club_cases.results_rows())[Month(2024, 6)]
    rows = {row["player_id"]: row for row in out.table.to_pylist()}
    assert {player: record(row) for player, row in rows.items()} == {
        "ann": (0, 0, 1),
        "ben": (0, 0, 1),
        "cat": (0, 0, 1),
        "dan": (0, 1, 0),
        "eve": (0, 1, 0),
        "fay": (0, 1, 0),
        "gus": (0, 1, 0),
    }
    assert out.history.column("result").to_pylist() == ["D", "D", "D", "L", "L", "L", "L"]
    # Opponents are the six others: a draw member faces two 0.5 and four 0.0 players.
    assert rows["ann"]["schedule_strength"] == 1 / 6
    assert rows["dan"]["schedule_strength"] == 0.25
    assert rows["ann"]["rating"] == math.log10(1.5) * (0.5 + 1 / 6) / 2 * 100
    assert rows["dan"]["rating"] == 0.0  # P = log10(1) = 0 without wins or draws


def test_result_codes_are_read_exactly():
    # Only "solo" and "draw" themselves win and draw: a string that merely starts like them, or
    # that has their bytes and a zero byte more, is a loss.
    results = ["solo", "draw", "survived", "eliminated", "anarchy", "Solo", "solos", "dra", "draw\x00", "", "drawé"]
    offsets, data = string_buffers(pa.array(results, pa.string()))
    codes = [club_kernel._result_code(offsets, data, r) for r in range(len(results))]
    assert codes == [club_kernel.WIN, club_kernel.DRAW] + [club_kernel.LOSS] * (len(results) - 2)


def test_equal_ratings_share_a_rank_in_player_order():
    out = run_months(club_cases.results_rows())[Month(2024, 6)]
    assert out.table.column("player_id").to_pylist() == ["ann", "ben", "cat", "dan", "eve", "fay", "gus"]
    assert out.table.column("rank").to_pylist() == [1, 1, 1, 4, 4, 4, 4]


def test_results_belong_to_the_responsible_player():
    out = run_months(club_cases.replacement_rows())[Month(2024, 7)]
    # rex denied, so uma keeps England's result; tia accepted, so vic is not rated.
    assert sorted(out.table.column("player_id").to_pylist()) == ["sam", "tia", "uma"]
    assert out.history.column("player_id").to_pylist() == ["uma", "sam", "tia"]
    uma = row_of(out, "uma")
    assert record(uma) == (0, 1, 0) and uma["schedule_strength"] == 0.5  # sam 1.0, tia 0.0


def test_history_uses_month_end_ratings():
    outputs = run_months(club_cases.freddy_tom_rows())
    march, april, may = (outputs[Month(2024, m)] for m in (3, 4, 5))
    march_history = march.history.to_pylist()
    assert [row["source_id"] for row in march_history] == [
        "ft-01",
        "ft-01",
        "ft-02",
        "ft-02",
        "ft-03",
        "ft-03",
        "ft-04",
        "ft-04",
        "ft-05",
        "ft-05",
    ]
    assert all(row["rating_before"] is None for row in march_history)
    assert {row["player_id"]: row["rating_after"] for row in march_history} == {
        "freddy": row_of(march, "freddy")["rating"],
        "tom": row_of(march, "tom")["rating"],
    }
    for before, after in ((march, april), (april, may)):
        for row in after.history.to_pylist():
            assert row["rating_before"] == row_of(before, row["player_id"])["rating"]
            assert row["rating_after"] == row_of(after, row["player_id"])["rating"]
    assert [row["result"] for row in may.history.to_pylist()] == ["W", "L"]  # 5 May: Freddy beats Tom


def test_legacy_compounds_over_three_years():
    outputs = run_months(club_cases.legacy_rows(), through=LEGACY_THROUGH)
    dec_2021 = row_of(outputs[Month(2021, 12)], "lena")
    dec_2022 = row_of(outputs[Month(2022, 12)], "lena")
    dec_2023 = row_of(outputs[Month(2023, 12)], "lena")
    assert dec_2021["legacy"] == 0.0
    assert published(dec_2021["rating"]) == Decimal("15.05")  # 1-0-0, S = 0: log10(2) / 2 × 100
    assert dec_2022["legacy"] == 0.1 * dec_2021["rating"]
    assert dec_2022["rating"] == dec_2022["base_rating"] + 0.1 * dec_2021["rating"]
    assert dec_2023["legacy"] == 0.1 * dec_2022["rating"]
    assert dec_2023["rating"] == dec_2023["base_rating"] + 0.1 * dec_2022["rating"]
    assert published(dec_2022["rating"]) == Decimal("16.56")
    assert published(dec_2023["rating"]) == Decimal("16.71")


def test_legacy_only_player_is_listed_with_base_zero():
    outputs = run_months(club_cases.legacy_rows(), through=LEGACY_THROUGH)
    nina_2021 = row_of(outputs[Month(2021, 12)], "nina")
    assert published(nina_2021["rating"]) == Decimal("8.80")  # draw vs a 0.5 player
    for month in month_range(Month(2022, 1), Month(2022, 12)):
        nina = row_of(outputs[month], "nina")
        assert nina == {
            "rank": nina["rank"],
            "player_id": "nina",
            "rating": 0.1 * nina_2021["rating"],
            "wins": 0,
            "draws": 0,
            "losses": 0,
            "games": 0,
            "win_points": 0.0,
            "win_pct": None,
            "schedule_strength": None,
            "base_rating": 0.0,
            "legacy": 0.1 * nina_2021["rating"],
        }
    # January 2022 has no game at all: the table is the legacy-only one.
    assert outputs[Month(2022, 1)].table.column("player_id").to_pylist() == ["lena", "nina", "oscar", "max"]
    assert outputs[Month(2022, 1)].history.num_rows == 0


def test_a_skipped_year_ends_the_listing_and_the_legacy():
    outputs = run_months(club_cases.legacy_rows(), through=LEGACY_THROUGH)
    for month in month_range(Month(2023, 1), Month(2023, 12)):
        assert row_of(outputs[month], "nina") is None
    assert row_of(outputs[Month(2023, 6)], "oscar") is None
    oscar = row_of(outputs[Month(2023, 7)], "oscar")
    assert oscar["legacy"] == 0.0 and oscar["base_rating"] == oscar["rating"] > 0
    # Everyone who played in 2023 carries a legacy into 2024; Nina does not come back.
    january = outputs[Month(2024, 1)]
    assert sorted(january.table.column("player_id").to_pylist()) == ["lena", "max", "oscar"]
    assert row_of(january, "oscar")["legacy"] == 0.1 * row_of(outputs[Month(2023, 12)], "oscar")["rating"]


def test_empty_months_repeat_the_table():
    outputs = run_months(club_cases.legacy_rows(), through=LEGACY_THROUGH)
    assert outputs[Month(2021, 10)].table.equals(outputs[Month(2021, 9)].table)
    assert outputs[Month(2021, 12)].table.equals(outputs[Month(2021, 9)].table)


def test_games_outside_the_month_are_refused():
    system = ClubRating()
    table = rows_to_table(club_cases.freddy_tom_rows())
    with pytest.raises(ValueError, match="not in 2024-04"):
        system.step(system.initial_state(), MonthInput(Month(2024, 4), table))


def test_system_declares_the_interface():
    assert (ClubRating.name, ClubRating.feed, ClubRating.ties_share_rank, ClubRating.extras) == (
        "club",
        "games",
        True,
        (),
    )
    out = run_months(club_cases.alice_rows())[Month(2024, 1)]
    assert out.table.column_names == ["rank", "player_id", "rating"] + list(ClubRankings.to_schema().columns)[9:]
    assert out.history.column_names == [
        "source_id",
        "source_date",
        "player_id",
        "rating_before",
        "rating_after",
        "result",
    ]
    assert out.extras == {}


# --- schemas ---------------------------------------------------------------------------------


def written_rankings(out: MonthOutput, month: Month) -> pa.Table:
    """The month's table with the writer's common columns added, in the model's order."""
    table = out.table
    n = table.num_rows
    common = {
        "system": pa.array(["club"] * n, pa.string()),
        "as_of": pa.array([month.last_day] * n, pa.date32()),
        "player_name": pa.array([None] * n, pa.string()),
        "rank_change": pa.array([None] * n, pa.int64()),
        "rating_change": pa.array([None] * n, pa.float64()),
        "peak_rating": table.column("rating"),
    }
    columns = list(ClubRankings.to_schema().columns)
    return pa.table({name: common[name] if name in common else table.column(name) for name in columns})


def written_history(out: MonthOutput) -> pa.Table:
    """The month's history with the writer's `system` column in front."""
    return out.history.add_column(0, "system", pa.array(["club"] * out.history.num_rows, pa.string()))


def test_models_accept_real_tables_and_reject_wrong_ones():
    outputs = run_months(club_cases.legacy_rows(), through=LEGACY_THROUGH)
    month = Month(2022, 4)  # a month with a legacy-only row and a game
    rankings, history = written_rankings(outputs[month], month), written_history(outputs[month])
    ClubRankings.validate(ibis.memtable(rankings))
    ClubHistory.validate(ibis.memtable(history))

    wrong_pct = rankings.set_column(
        rankings.column_names.index("win_pct"),
        "win_pct",
        pa.array([1.5 if v is not None else None for v in rankings.column("win_pct").to_pylist()], pa.float64()),
    )
    with pytest.raises(SchemaError, match="less_than_or_equal_to"):
        ClubRankings.validate(ibis.memtable(wrong_pct))
    wrong_games = rankings.set_column(
        rankings.column_names.index("games"),
        "games",
        pa.array([7] * rankings.num_rows, pa.int64()),
    )
    with pytest.raises(SchemaError, match="games_add_up"):
        ClubRankings.validate(ibis.memtable(wrong_games))
    wrong_result = history.set_column(
        history.column_names.index("result"),
        "result",
        pa.array(["X"] * history.num_rows, pa.string()),
    )
    with pytest.raises(SchemaError, match="isin"):
        ClubHistory.validate(ibis.memtable(wrong_result))
