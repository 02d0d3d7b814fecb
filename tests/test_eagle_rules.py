"""Golden cases and decisions of SPEC §3.3 (Eagle points), run through EaglePoints.step month by month."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

import ibis
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.core import state_codec
from pipeline.core.months import Month, month_range
from pipeline.systems.base import GAME_COLUMNS, MonthInput, MonthOutput
from pipeline.systems.eagle.rules import EaglePoints, position_contribution
from pipeline.systems.games import rows_to_table
from schemas.eagle import EagleAwards, EagleHistory, EagleRankings
from tests.fixtures import eagle_cases as cases


def rows_by_month(rows: list[dict]) -> dict[Month, list[dict]]:
    """Feed rows grouped by the month their game finished in."""
    grouped: dict[Month, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[Month.of(dt.date.fromisoformat(row["finished_on"]))].append(row)
    return grouped


def run_months(rows: list[dict], last: Month | None = None, **settings) -> dict[Month, MonthOutput]:
    """Step EaglePoints over every month from the first game's month to `last` (default: the last game's)."""
    system = EaglePoints(**settings)
    state = system.initial_state()
    grouped = rows_by_month(rows)
    outputs = {}
    for month in month_range(min(grouped), last or max(grouped)):
        results = rows_to_table(grouped[month]) if grouped.get(month) else GAME_COLUMNS.empty_table()
        out = system.step(state, MonthInput(month, results))
        state = out.state
        outputs[month] = out
    return outputs


def table_rows(out: MonthOutput) -> dict[str, dict]:
    """The month's table as rows keyed by player_id."""
    return {row["player_id"]: row for row in out.table.to_pylist()}


def history_rows(out: MonthOutput, game_id: str) -> dict[str, dict]:
    """One game's history rows keyed by player_id."""
    return {row["player_id"]: row for row in out.history.to_pylist() if row["source_id"] == game_id}


def awards(out: MonthOutput) -> list[tuple]:
    """The month's awards as (award, period, player_id, value, game_id) tuples."""
    return [tuple(row.values()) for row in out.extras["awards"].to_pylist()]


# ---------------------------------------------------------------------------------------------
# The fixtures are valid games (SPEC §2)
# ---------------------------------------------------------------------------------------------


def game_rule_violations(rows: list[dict]) -> list[str]:
    """What breaks SPEC §2's game rules in the rows of one game (empty when valid)."""
    problems = []
    results = [r["result"] for r in rows]
    if len(rows) < 2:
        problems.append("fewer than 2 powers")
    if not (
        (results.count("solo") == 1 and results.count("draw") == 0)
        or (results.count("solo") == 0 and results.count("draw") >= 2)
    ):
        problems.append("needs one solo and no draw, or two or more draws")
    for field in ("variant", "supply_centres", "finished_on"):
        if len({r[field] for r in rows}) != 1:
            problems.append(f"{field} differs between rows")
    if len({r["power"] for r in rows}) != len(rows):
        problems.append("a power appears twice")
    ids = [r["player_id"] for r in rows] + [r["original_player_id"] for r in rows if r["original_player_id"]]
    if len(set(ids)) != len(ids):
        problems.append("a player appears on two powers")
    for r in rows:
        if r["result"] == "eliminated" and (r["centres"] != 0 or r["eliminated_year"] is None):
            problems.append(f"{r['power']}: eliminated needs 0 centres and a year")
        if r["result"] != "eliminated" and r["eliminated_year"] is not None:
            problems.append(f"{r['power']}: eliminated_year without elimination")
        if r["result"] in ("solo", "draw", "survived") and r["centres"] < 1:
            problems.append(f"{r['power']}: {r['result']} needs a centre")
        if r["replacement_denies"] and not r["original_player_id"]:
            problems.append(f"{r['power']}: denies without an original player")
    if not dt.date(1954, 1, 1) <= dt.date.fromisoformat(rows[0]["finished_on"]) <= dt.date.today():
        problems.append("finished_on before 1954 or in the future")
    if any(r["result"] not in ("solo", "draw", "survived", "eliminated", "anarchy") for r in rows):
        problems.append("unknown result")
    if sum(r["centres"] for r in rows) > rows[0]["supply_centres"]:
        problems.append("more centres than the map")
    return problems


@pytest.mark.parametrize("case", cases.ALL_CASES, ids=lambda f: f.__name__)
def test_every_fixture_game_is_valid(case):
    games: dict[str, list[dict]] = defaultdict(list)
    for row in case():
        games[row["game_id"]].append(row)
    assert games
    for game_id, rows in games.items():
        assert game_rule_violations(rows) == [], game_id


def test_validity_check_catches_a_broken_game():
    rows = cases.game("broken", "2024-01-01", [("a", "solo", 18), ("b", "solo", 10), ("c", "eliminated", 0)])
    assert game_rule_violations(rows) == ["needs one solo and no draw, or two or more draws"]


# ---------------------------------------------------------------------------------------------
# Contribution formula
# ---------------------------------------------------------------------------------------------

GOLDEN_CONTRIBUTIONS = {
    1: "2.00",
    2: "2.00",
    3: "2.00",
    4: "1.99",
    5: "1.99",
    6: "1.99",
    7: "1.99",
    48: "1.88",
    49: "1.88",
    50: "1.88",
    51: "1.88",
    100: "1.75",
    400: "1.00",
    401: "1.00",
    402: "1.00",
    403: "1.00",
    500: "0.75",
    501: "0.75",
    502: "0.75",
    503: "0.75",
    601: "0.50",
    602: "0.50",
    603: "0.50",
    700: "0.50",
    10_000: "0.50",
    # Seed errata (SPEC decision): the seed prints 1.75 for 99 and 1.25 for 199/200; the formula stands.
    99: "1.76",
    199: "1.51",
    200: "1.50",
}


@pytest.mark.parametrize("position, expected", sorted(GOLDEN_CONTRIBUTIONS.items()))
def test_contribution_of_a_position(position, expected):
    assert position_contribution(position) == Decimal(expected)


def test_unlisted_player_contributes_the_minimum():
    assert position_contribution(None) == Decimal("0.50")


def test_ladder_table_places_each_player_and_shows_new_eagles():
    january = run_months(cases.position_ladder_games())[Month(2024, 1)]
    rows = january.table.to_pylist()
    assert len(rows) == cases.LADDER_PLAYERS
    for position, expected in GOLDEN_CONTRIBUTIONS.items():
        if position <= cases.LADDER_PLAYERS:
            row = rows[position - 1]
            assert (row["rank"], row["player_id"]) == (position, cases.ladder_player(position))
            assert row["new_eagles"] == float(expected)


def probe_expectations() -> dict[str, float]:
    """Contribution each February probe player should bring, from the golden list."""
    return {
        cases.LADDER_NEWCOMER if p is None else cases.ladder_player(p): 0.50
        if p is None
        else float(GOLDEN_CONTRIBUTIONS[p])
        for probe in cases.LADDER_PROBES
        for p in probe
    }


def test_published_positions_give_the_golden_contributions():
    february = run_months(cases.position_ladder_games())[Month(2024, 2)]
    expected = probe_expectations()
    seen = {row["player_id"]: row["contribution"] for row in february.history.to_pylist()}
    assert seen == expected
    values = {row["source_id"]: row["game_value"] for row in february.history.to_pylist()}
    # 3 x 2.00 + 4 x 1.99; 4 x 1.88 + 1.76 + 1.75 + 1.51; 1.50 + 4 x 1.00 + 2 x 0.75; 2 x 0.75 + 5 x 0.50
    assert values == {"ladder_probe_1": 13.96, "ladder_probe_2": 12.54, "ladder_probe_3": 7.00, "ladder_probe_4": 4.00}


def test_live_positions_make_positions_one_to_seven_worth_13_96():
    february = run_months(cases.position_ladder_games(), positions="live")[Month(2024, 2)]
    first = history_rows(february, "ladder_probe_1")
    assert {pid: row["contribution"] for pid, row in first.items()} == {
        cases.ladder_player(p): float(GOLDEN_CONTRIBUTIONS[p]) for p in range(1, 8)
    }
    assert {row["game_value"] for row in first.values()} == {13.96}
    assert first[cases.ladder_player(1)]["points"] == 13.96


def test_seven_unlisted_players_make_a_game_worth_3_50():
    out = run_months(cases.unlisted_seven_game())[Month(2024, 1)]
    rows = history_rows(out, "unlisted_seven")
    assert {row["contribution"] for row in rows.values()} == {0.50}
    assert {row["game_value"] for row in rows.values()} == {3.50}
    assert {pid: row["points"] for pid, row in rows.items()} == {
        "u1": 3.50,
        "u2": 0.14,
        "u3": 0.12,
        "u4": 0.01,
        "u5": 0.01,
        "u6": 0.11,
        "u7": 0.01,
    }
    assert all(row["rating_before"] is None for row in rows.values())


# ---------------------------------------------------------------------------------------------
# Points
# ---------------------------------------------------------------------------------------------


def test_draw_shares_round_half_up_and_anarchy_scores_nothing():
    out = run_months(cases.draw_share_games())[Month(2024, 1)]
    three = history_rows(out, "draw_three")
    # 3.50 / 3 = 1.1666... -> 1.17 (the three draws together take 3.51).
    assert [three[p]["points"] for p in ("d3_a", "d3_b", "d3_c")] == [1.17, 1.17, 1.17]
    assert (three["d3_d"]["points"], three["d3_f"]["points"]) == (0.13, 0.01)
    four = history_rows(out, "draw_four")
    # Anarchies contribute 0, so V = 2.50; 2.50 / 4 = 0.625 exactly, half up 0.63 (half-even or
    # float round() would give 0.62).
    assert {four[p]["game_value"] for p in four} == {2.50}
    assert (four["d4_f"]["contribution"], four["d4_g"]["contribution"]) == (0.0, 0.0)
    assert [four[p]["points"] for p in ("d4_a", "d4_b", "d4_c", "d4_d")] == [0.63] * 4
    assert (four["d4_e"]["points"], four["d4_f"]["points"], four["d4_g"]["points"]) == (0.12, 0.0, 0.0)


@pytest.mark.parametrize("positions", ["published", "live"])
def test_top_seven_playing_each_other_reach_the_highest_table(positions):
    outputs = run_months(cases.top_seven_games(), last=Month(2024, 12), positions=positions)
    values = {row["source_id"]: row["game_value"] for out in outputs.values() for row in out.history.to_pylist()}
    assert values == {"top_01": 3.50, **{f"top_{m:02d}": 13.96 for m in range(2, 12)}}
    december = outputs[Month(2024, 12)]
    leader = december.table.to_pylist()[0]
    # The January 3.50 dropped out at the 11th game: ten solos of 13.96.
    assert (leader["player_id"], leader["points"], leader["games"], leader["points_to_defend"]) == (
        "top_w",
        139.60,
        11,
        13.96,
    )
    assert max(p for out in outputs.values() for p in out.table.column("points").to_pylist()) < 140


# ---------------------------------------------------------------------------------------------
# Table order, window and listing
# ---------------------------------------------------------------------------------------------


def test_tie_breaks_points_then_fewer_games_then_later_game_then_player_id():
    table = run_months(cases.tie_break_games())[Month(2024, 1)].table.to_pylist()
    near = [row for row in table if row["player_id"].startswith("tie_") and 0.11 < row["points"] < 0.2]
    assert [(r["player_id"], r["points"], r["games"], r["last_game_date"].isoformat()) for r in near] == [
        ("tie_top", 0.13, 1, "2024-01-20"),
        ("tie_a", 0.12, 1, "2024-01-20"),
        ("tie_d", 0.12, 1, "2024-01-20"),
        ("tie_e", 0.12, 1, "2024-01-20"),
        ("tie_c", 0.12, 1, "2024-01-05"),
        ("tie_b", 0.12, 2, "2024-01-20"),
    ]
    assert [row["rank"] for row in table] == list(range(1, len(table) + 1))


def test_last_ten_games_and_points_to_defend():
    outputs = run_months(cases.last_ten_games())

    def steady(month: int) -> tuple:
        row = table_rows(outputs[Month(2024, month)])["steady"]
        return row["games"], row["points"], row["points_to_defend"]

    assert steady(9) == (9, 1.35, None)  # 0.11 + ... + 0.19
    assert steady(10) == (10, 1.55, 0.11)  # shown from 10 games: game 1 drops at the next game
    assert steady(11) == (11, 1.65, 0.12)  # 0.12 + ... + 0.21: game 1 dropped, game 2 next
    eleventh = history_rows(outputs[Month(2024, 11)], "steady_11")["steady"]
    assert (eleventh["rating_before"], eleventh["points"], eleventh["rating_after"]) == (1.55, 0.21, 1.65)


def test_two_year_listing_and_return_with_old_games():
    outputs = run_months(cases.listing_window_games())
    # Last game 2022-03-31: listed while as_of < 2024-03-31.
    assert "lapsed" in table_rows(outputs[Month(2024, 2)])
    assert "lapsed" not in table_rows(outputs[Month(2024, 3)])
    assert all("lapsed" not in table_rows(outputs[m]) for m in month_range(Month(2024, 3), Month(2025, 5)))
    back = table_rows(outputs[Month(2025, 6)])["lapsed"]
    assert (back["games"], back["points"], back["last_game_date"]) == (2, 0.28, dt.date(2025, 6, 10))
    assert history_rows(outputs[Month(2025, 6)], "lapse_2")["lapsed"]["rating_before"] == 0.15


def test_more_than_seven_years_away_starts_over():
    outputs = run_months(cases.restart_games())
    january = outputs[Month(2022, 1)]
    rows = table_rows(january)
    # keeper returns exactly 7 years later and keeps the 0.16; returner a day later starts over.
    assert (rows["keeper"]["games"], rows["keeper"]["points"]) == (2, 0.28)
    assert (rows["returner"]["games"], rows["returner"]["points"]) == (1, 0.12)
    assert history_rows(january, "restart_2")["keeper"]["rating_before"] == 0.16
    assert history_rows(january, "restart_3")["returner"]["rating_before"] is None


# ---------------------------------------------------------------------------------------------
# Position modes
# ---------------------------------------------------------------------------------------------


def test_published_and_live_positions_differ():
    published = history_rows(run_months(cases.published_vs_live_games())[Month(2024, 2)], "pl_g3")
    live = history_rows(run_months(cases.published_vs_live_games(), positions="live")[Month(2024, 2)], "pl_g3")
    # y1 is not in the January table (0.50) but leads the live table on February 10 (2.00).
    assert (published["pl_y1"]["contribution"], published["pl_z1"]["game_value"]) == (0.50, 3.50)
    assert (live["pl_y1"]["contribution"], live["pl_z1"]["game_value"]) == (2.00, 5.00)
    assert (published["pl_z1"]["points"], live["pl_z1"]["points"]) == (3.50, 5.00)


def test_positions_setting_is_checked():
    with pytest.raises(ValueError, match="positions"):
        EaglePoints(positions="monthly")
    with pytest.raises(ValueError, match="variants"):
        EaglePoints(variants=())


# ---------------------------------------------------------------------------------------------
# Counted games and responsible players
# ---------------------------------------------------------------------------------------------


def test_only_configured_variants_count_and_the_rated_flag_does_not_apply():
    default = run_months(cases.variant_and_responsibility_games())[Month(2024, 1)]
    assert {row["source_id"] for row in default.history.to_pylist()} == {"vf_unrated", "vf_replaced"}
    assert table_rows(default)["vf_v1"]["points"] == 3.50
    assert "vf_w1" not in table_rows(default)
    both = run_months(cases.variant_and_responsibility_games(), variants=("standard", "youngstown"))[Month(2024, 1)]
    assert table_rows(both)["vf_v1"]["games"] == 2
    # January is the first month: no published table yet, so every player brings 0.50 (V 3.50).
    assert history_rows(both, "vf_youngstown")["vf_w1"]["points"] == 3.50


def test_results_belong_to_the_responsible_player():
    out = run_months(cases.variant_and_responsibility_games())[Month(2024, 1)]
    rows = history_rows(out, "vf_replaced")
    assert rows["vf_orig1"]["points"] == 0.13  # the replacement denied: the original is rated
    assert rows["vf_sub2"]["points"] == 0.14  # no denial: the replacement is rated
    assert "vf_sub1" not in rows and "vf_orig2" not in rows


# ---------------------------------------------------------------------------------------------
# Awards
# ---------------------------------------------------------------------------------------------


def test_awards_on_a_small_history():
    outputs = run_months(cases.awards_games(), last=Month(2023, 12))
    assert awards(outputs[Month(2022, 12)]) == [
        ("player_of_the_month", "2022-12", "aw_d1", 3.50, None),
        ("king_of_the_mountain", "2022", "aw_d1", 3.50, None),
        ("most_valuable_victory", "2022", "aw_d1", 3.50, "aw_g0"),
        ("runner_of_the_year", "2022", "aw_d1", 3.50, None),
        ("rookie_of_the_year", "2022", "aw_d1", 3.50, "aw_g0"),
    ]
    # a1 and a2 both gained 1.50 from nothing: shared.
    assert awards(outputs[Month(2023, 1)]) == [
        ("player_of_the_month", "2023-01", "aw_a1", 1.50, None),
        ("player_of_the_month", "2023-01", "aw_a2", 1.50, None),
    ]
    assert awards(outputs[Month(2023, 2)]) == []  # nobody played
    assert awards(outputs[Month(2023, 3)]) == [("player_of_the_month", "2023-03", "aw_b1", 5.00, None)]
    # d1 stands at 6.00 but gained 2.50, as much as the newcomer e1: the change counts, not the total.
    assert awards(outputs[Month(2023, 9)]) == [
        ("player_of_the_month", "2023-09", "aw_d1", 2.50, None),
        ("player_of_the_month", "2023-09", "aw_e1", 2.50, None),
    ]
    assert awards(outputs[Month(2023, 12)]) == [
        # d1: 3.50 from 2022 + 2.50 = 6.00 heads the table, though b1 scored most in 2023.
        ("king_of_the_mountain", "2023", "aw_d1", 6.00, None),
        ("most_valuable_victory", "2023", "aw_b1", 5.00, "aw_g2"),
        ("most_valuable_victory", "2023", "aw_c1", 5.00, "aw_g3"),
        ("runner_of_the_year", "2023", "aw_b1", 5.01, None),
        ("rookie_of_the_year", "2023", "aw_b1", 5.00, "aw_g2"),
        ("rookie_of_the_year", "2023", "aw_c1", 5.00, "aw_g3"),
    ]


def test_awards_game_values_come_from_the_published_positions():
    outputs = run_months(cases.awards_games(), last=Month(2023, 9))
    # a1 is second in the February table, b1 first in May's, d1 third in August's: each 2.00.
    assert history_rows(outputs[Month(2023, 3)], "aw_g2")["aw_a1"]["contribution"] == 2.00
    assert history_rows(outputs[Month(2023, 6)], "aw_g3")["aw_b1"]["contribution"] == 2.00
    assert history_rows(outputs[Month(2023, 9)], "aw_g4")["aw_d1"]["contribution"] == 2.00
    assert history_rows(outputs[Month(2023, 1)], "aw_g1")["aw_a1"]["game_value"] == 3.00


# ---------------------------------------------------------------------------------------------
# Stepping contract and output schemas
# ---------------------------------------------------------------------------------------------


def test_rerunning_a_month_from_the_same_state_gives_the_same_output():
    system = EaglePoints(positions="live")
    grouped = rows_by_month(cases.awards_games())
    state = system.initial_state()
    for month in month_range(Month(2022, 12), Month(2023, 2)):
        results = rows_to_table(grouped[month]) if grouped.get(month) else GAME_COLUMNS.empty_table()
        state = system.step(state, MonthInput(month, results)).state
    march = MonthInput(Month(2023, 3), rows_to_table(grouped[Month(2023, 3)]))
    first, second = system.step(state, march), system.step(state, march)
    assert first.table.equals(second.table) and first.history.equals(second.history)
    assert first.extras["awards"].equals(second.extras["awards"])
    assert state_codec.dumps(system.encode_state(first.state)) == state_codec.dumps(system.encode_state(second.state))


def test_months_must_follow_each_other_and_games_must_fall_in_the_month():
    system = EaglePoints()
    state = system.step(system.initial_state(), MonthInput(Month(2024, 1), GAME_COLUMNS.empty_table())).state
    with pytest.raises(ValueError, match="consecutive"):
        system.step(state, MonthInput(Month(2024, 3), GAME_COLUMNS.empty_table()))
    with pytest.raises(ValueError, match="outside"):
        system.step(state, MonthInput(Month(2024, 2), rows_to_table(cases.unlisted_seven_game())))


def test_a_counted_game_needs_its_finishing_day_and_another_variant_does_not():
    """A row of another variant without a day is left out like any of its rows; the history's
    days are the counted games' own. A counted row without one is refused."""

    def without_days(table: pa.Table, players: set[str]) -> pa.Table:
        column = table.schema.get_field_index("finished_on")
        undated = pa.array([p in players for p in table.column("player_id").to_pylist()])
        return table.set_column(
            column, "finished_on", pc.if_else(undated, pa.scalar(None, pa.date32()), table.column(column))
        )

    system = EaglePoints()
    state = system.step(system.initial_state(), MonthInput(Month(2023, 12), GAME_COLUMNS.empty_table())).state
    other = without_days(
        rows_to_table(cases.game("undated", "2024-01-05", [("x1", "solo", 18)], variant="youngstown")), {"x1"}
    )
    counted = rows_to_table(cases.unlisted_seven_game())
    out = system.step(state, MonthInput(Month(2024, 1), pa.concat_tables([other, counted])))
    assert out.history.column("source_date").to_pylist() == [dt.date(2024, 1, 10)] * counted.num_rows
    with pytest.raises(ValueError, match="without its finishing day"):
        system.step(state, MonthInput(Month(2024, 1), pa.concat_tables([other, without_days(counted, {"u3"})])))


def test_a_game_without_a_variant_is_not_counted():
    """A game whose variant is missing is left out, read from a slice of a larger table (so the
    variant's validity bits start at an offset); the counted game after it is rated."""
    system = EaglePoints()
    state = system.step(system.initial_state(), MonthInput(Month(2023, 12), GAME_COLUMNS.empty_table())).state
    missing = rows_to_table(cases.game("no-variant", "2024-01-05", [("x1", "solo", 18), ("x2", "eliminated", 0)]))
    missing = missing.set_column(
        missing.schema.get_field_index("variant"), "variant", pa.nulls(missing.num_rows, pa.string())
    )
    counted = rows_to_table(cases.unlisted_seven_game())
    before = rows_to_table(cases.game("before", "2024-01-02", [("y1", "solo", 18)]))
    month = pa.concat_tables([before, missing, counted]).combine_chunks().slice(before.num_rows)
    out = system.step(state, MonthInput(Month(2024, 1), month))
    assert out.history.column("source_id").to_pylist() == counted.column("game_id").to_pylist()
    assert "x1" not in out.table.column("player_id").to_pylist()


def with_writer_columns(table: pa.Table, as_of: dt.date) -> pa.Table:
    """The rankings table as the shared writer completes it (RankingsBase columns first)."""
    n = table.num_rows
    common = {
        "system": pa.array(["eagle"] * n, pa.string()),
        "as_of": pa.array([as_of] * n, pa.date32()),
        "rank": table.column("rank"),
        "player_id": table.column("player_id"),
        "player_name": pa.array([None] * n, pa.string()),
        "rating": table.column("rating"),
        "rank_change": pa.array([None] * n, pa.int64()),
        "rating_change": pa.array([None] * n, pa.float64()),
        "peak_rating": table.column("rating"),
    }
    own = {name: table.column(name) for name in table.column_names[3:]}
    return pa.table({**common, **own})


def test_models_accept_the_outputs_and_reject_wrong_values():
    outputs = run_months(cases.top_seven_games(), last=Month(2024, 12))
    december = outputs[Month(2024, 12)]
    rankings = with_writer_columns(december.table, Month(2024, 12).last_day)
    EagleRankings.validate(ibis.memtable(rankings))
    history = outputs[Month(2024, 11)].history
    EagleHistory.validate(ibis.memtable(history.add_column(0, "system", pa.array(["eagle"] * history.num_rows))))
    EagleAwards.validate(ibis.memtable(december.extras["awards"]))

    too_generous = rankings.set_column(
        rankings.column_names.index("new_eagles"), "new_eagles", pa.array([2.5] * rankings.num_rows, pa.float64())
    )
    with pytest.raises(pandera.errors.SchemaError):
        EagleRankings.validate(ibis.memtable(too_generous))
    unknown_award = december.extras["awards"].set_column(
        0, "award", pa.array(["best_dressed"] * december.extras["awards"].num_rows, pa.string())
    )
    with pytest.raises(pandera.errors.SchemaError):
        EagleAwards.validate(ibis.memtable(unknown_award))
