"""Ghost Rating (SPEC §3.6): the golden cases, the categories, the listing window and the
shares of each scoring system."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.core import state_codec
from pipeline.core.months import Month
from pipeline.systems.base import MonthInput
from pipeline.systems.games import rows_to_table
from pipeline.systems.ghost.reference import expected
from pipeline.systems.ghost.rules import GhostRating

POWERS = ("Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey")
APRIL = Month(2008, 4)


def game(game_id: str, results: dict[str, tuple[str, int]], day=dt.date(2008, 4, 10), **modes) -> list[dict]:
    """A seven-power game: player p1..p7 on the powers in order; results by player."""
    rows = []
    for i, power in enumerate(POWERS, start=1):
        result, centres = results.get(f"p{i}", ("eliminated", 0))
        rows.append(
            {
                "game_id": game_id,
                "finished_on": day,
                "power": power,
                "player_id": f"p{i}",
                "result": result,
                "centres": centres,
                "eliminated_year": 1905 if result == "eliminated" else None,
                **modes,
            }
        )
    return rows


def ratings(rows: list[dict], month: Month = APRIL) -> dict[tuple[str, str], float]:
    """(category, player) -> rating after one month of these rows from a fresh start."""
    out = GhostRating().step(GhostRating().initial_state(), MonthInput(month, rows_to_table(rows)))
    return {(r["category"], r["player_id"]): r["rating"] for r in out.table.to_pylist()}


SOLO = {"p1": ("solo", 18), "p2": ("survived", 9), "p3": ("survived", 7)}
SQUARES_DRAW = {"p1": ("draw", 12), "p2": ("draw", 11), "p3": ("draw", 11)}


def test_draw_size_solo_from_100():
    table = ratings(game("g1", SOLO))
    assert table["classic", "p1"] == pytest.approx(100 + 40 * 6 / 7, abs=5e-5)
    assert round(table["classic", "p1"], 4) == 134.2857
    for player in ("p2", "p3", "p4", "p5", "p6", "p7"):
        assert round(table["classic", player], 4) == 94.2857
    assert table["overall", "p1"] == table["classic", "p1"]


def test_sum_of_squares_three_way_draw():
    table = ratings(game("g1", SQUARES_DRAW, scoring="sum_of_squares"))
    assert [round(table["overall", p], 2) for p in ("p1", "p2", "p3")] == [109.21, 106.82, 106.82]
    assert {round(table["overall", p], 2) for p in ("p4", "p5", "p6", "p7")} == {94.29}
    assert ("classic", "p1") not in table  # classic is draw-size scoring only


def test_gunboat_moves_a_quarter_as_far():
    full = ratings(game("g1", SQUARES_DRAW, scoring="sum_of_squares"))
    gunboat = ratings(game("g1", SQUARES_DRAW, scoring="sum_of_squares", press="gunboat"))
    for player in ("p1", "p2", "p4"):
        assert gunboat["overall", player] - 100 == pytest.approx((full["overall", player] - 100) / 4, rel=1e-12)
        assert gunboat["gunboat", player] == gunboat["overall", player]
    assert ("classic", "p1") not in gunboat


def test_ppsc_solo_gives_every_player_centres_over_34():
    table = ratings(game("g1", SOLO, scoring="ppsc"))
    # From equal ratings every player expects 1/7; the actual share is centres / 34.
    for player, centres in (("p1", 18), ("p2", 9), ("p3", 7), ("p4", 0)):
        assert table["overall", player] == pytest.approx(100 + 40 * (centres / 34 - 1 / 7), rel=1e-12)


def test_ppsc_expected_share_from_equal_ratings_is_equal():
    assert expected([100.0] * 7, "ppsc", 34) == pytest.approx([1 / 7] * 7, rel=1e-12)
    unequal = expected([150.0, 100.0, 50.0], "ppsc", 34)
    assert sum(unequal) == pytest.approx(1.0, rel=1e-12)
    assert unequal[0] > unequal[1] > unequal[2]


def test_live_game_counts_in_live_and_overall_only():
    table = ratings(game("g1", SOLO, live=True))
    assert {c for c, _ in table} == {"overall", "live"}


def test_unranked_and_variant_games_are_not_counted():
    rows = game("g1", SOLO, scoring="unranked") + game("g2", SOLO, variant="fleet_rome")
    assert ratings(rows) == {}


def test_each_category_is_ranked_apart_with_shared_ranks():
    out = GhostRating().step(GhostRating().initial_state(), MonthInput(APRIL, rows_to_table(game("g1", SOLO))))
    for category in ("overall", "classic"):
        rows = [r for r in out.table.to_pylist() if r["category"] == category]
        assert [r["rank"] for r in rows] == [1, 2, 2, 2, 2, 2, 2]
        assert [r["player_id"] for r in rows] == ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    assert out.table.column("category").to_pylist()[:8] == ["overall"] * 7 + ["classic"]
    history = out.history.to_pylist()
    assert len(history) == 14 and history[0]["expected"] == pytest.approx(1 / 7) and history[0]["actual"] == 1.0


def test_players_leave_the_list_after_six_months_and_return_with_their_rating():
    system = GhostRating()
    state = system.initial_state()
    out = system.step(state, MonthInput(APRIL, rows_to_table(game("g1", SOLO))))
    listed = {}
    month = APRIL
    for _ in range(7):
        month = month.next()
        out = system.step(out.state, MonthInput(month, rows_to_table([])))
        listed[month] = out.table.num_rows
    # April's game lists through September (as_of − 6 months < 10 April), not in October.
    assert listed[Month(2008, 9)] == 14 and listed[Month(2008, 10)] == 0
    back = system.step(
        out.state, MonthInput(Month(2008, 12), rows_to_table(game("g2", SOLO, day=dt.date(2008, 12, 1))))
    )
    first = {(r["category"], r["player_id"]): r for r in back.table.to_pylist()}
    assert first["overall", "p1"]["games"] == 2
    assert first["overall", "p1"]["rating"] > 134.2857  # kept the rating, won again


def test_state_round_trips_through_the_checkpoint_codec():
    system = GhostRating()
    out = system.step(system.initial_state(), MonthInput(APRIL, rows_to_table(game("g1", SOLO))))
    restored = system.decode_state(state_codec.loads(state_codec.dumps(system.encode_state(out.state))))
    may = MonthInput(Month(2008, 5), rows_to_table(game("g2", SQUARES_DRAW, day=dt.date(2008, 5, 3))))
    assert system.step(restored, may).table == system.step(out.state, may).table


def test_games_outside_the_month_are_refused():
    with pytest.raises(ValueError, match="game late finished 2008-05-01, not in 2008-04"):
        ratings(game("g", SOLO) + game("late", SOLO, day=dt.date(2008, 5, 1)))
