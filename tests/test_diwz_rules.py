"""DiWZ golden cases (seed 004, SPEC §3.4), run month by month through the real system."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from decimal import Decimal

import ibis
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.core.months import Month, month_range
from pipeline.core.rounding import half_up
from pipeline.systems.base import MonthInput, MonthOutput
from pipeline.systems.diwz.finish import finish_keys, pairwise_score
from pipeline.systems.diwz.reference import reference_diwz
from pipeline.systems.diwz.rules import DiWZ
from pipeline.systems.games import games_from_rows, rows_to_table
from schemas.diwz import DiWZHistory, DiWZRankings
from tests.fixtures import diwz_cases as cases

D = dt.date.fromisoformat


def run_months(system: DiWZ, rows: list[dict], last: str | None = None) -> dict[Month, MonthOutput]:
    """Step the system over every month from the first game's month to `last` (or the last game's)."""
    by_month: dict[Month, list[dict]] = defaultdict(list)
    for row in rows:
        by_month[Month.of(D(row["finished_on"]))].append(row)
    final = Month.parse(last) if last else max(by_month)
    state = system.initial_state()
    outputs = {}
    for month in month_range(min(by_month), final):
        out = system.step(state, MonthInput(month, rows_to_table(by_month.get(month, []))))
        state = out.state
        outputs[month] = out
    return outputs


def history_by_player(outputs: dict[Month, MonthOutput], game_id: str) -> dict[str, dict]:
    """The history rows of one game, by player."""
    rows = [row for out in outputs.values() for row in out.history.to_pylist() if row["source_id"] == game_id]
    return {row["player_id"]: row for row in rows}


def listed(out: MonthOutput) -> dict[str, dict]:
    """The month's list, by player."""
    return {row["player_id"]: row for row in out.table.to_pylist()}


def old_display(row: dict) -> str:
    """The seed's DiWZalt column from a history row."""
    before = row["evaluations"] - 1 if row["rating_after"] is not None else row["evaluations"]
    return f"{int(row['rating_before'])}-{before}"


def printed(value: float, places: int) -> Decimal:
    """A value as the seed prints it (rounded half up)."""
    return half_up(Decimal(value), places)


def game_scores(rows: list[dict], game_id: str) -> dict[tuple[str, str], float]:
    """Pairwise scores of a fixture game from the real finish-order rules, by (player, opponent)."""
    game = next(g for g in games_from_rows(rows_to_table(rows)) if g.game_id == game_id)
    keys = finish_keys(game)
    players = [power.player_id for power in game.powers]
    return {
        (players[i], players[j]): pairwise_score(keys[i], keys[j])
        for i in range(len(players))
        for j in range(len(players))
        if i != j
    }


# --- the fixtures are valid games (SPEC §2) ---------------------------------------------------


def game_problems(rows: list[dict]) -> list[str]:
    """Every SPEC §2 game rule a fixture game breaks."""
    problems = []
    by_game: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_game[row["game_id"]].append(row)
    for game_id, powers in by_game.items():
        for column in ("variant", "supply_centres", "finished_on", "rated"):
            if len({p[column] for p in powers}) != 1:
                problems.append(f"{game_id}: {column} differs")
        results = Counter(p["result"] for p in powers)
        if len(powers) < 2:
            problems.append(f"{game_id}: fewer than 2 powers")
        if len({p["power"] for p in powers}) != len(powers):
            problems.append(f"{game_id}: power twice")
        if not ((results["solo"] == 1 and results["draw"] == 0) or (results["solo"] == 0 and results["draw"] >= 2)):
            problems.append(f"{game_id}: needs one solo or a draw of two or more")
        if sum(p["centres"] for p in powers) > powers[0]["supply_centres"]:
            problems.append(f"{game_id}: too many centres")
        ids = [p["player_id"] for p in powers] + [p["original_player_id"] for p in powers if p["original_player_id"]]
        if len(set(ids)) != len(ids):
            problems.append(f"{game_id}: a player on two powers")
        for p in powers:
            if p["result"] not in ("solo", "draw", "survived", "eliminated", "anarchy"):
                problems.append(f"{game_id}/{p['power']}: unknown result")
            if not 0 <= p["centres"] <= p["supply_centres"]:
                problems.append(f"{game_id}/{p['power']}: centres out of range")
            if (p["result"] == "eliminated") != (p["eliminated_year"] is not None):
                problems.append(f"{game_id}/{p['power']}: eliminated_year iff eliminated")
            if p["result"] == "eliminated" and p["centres"] != 0:
                problems.append(f"{game_id}/{p['power']}: eliminated with centres")
            if p["result"] in ("solo", "draw", "survived") and p["centres"] < 1:
                problems.append(f"{game_id}/{p['power']}: no centres")
            if p["replacement_denies"] and not p["original_player_id"]:
                problems.append(f"{game_id}/{p['power']}: deny without original player")
    return problems


ALL_FIXTURES = [
    cases.seed_table_one_rows,
    cases.seed_table_two_rows,
    cases.finish_groups_rows,
    cases.first_rating_rows,
    cases.perfect_newcomer_rows,
    cases.strike_off_rows,
    cases.replacement_rows,
    cases.start_1600_idle_rows,
    cases.bootstrap_rows,
]


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda f: f.__name__)
def test_fixture_games_are_valid(fixture):
    assert game_problems(fixture()) == []


def test_game_checker_catches_a_broken_game():
    broken = cases.seed_table_one_rows()
    broken[1]["result"] = "solo"  # two soloists
    broken[3]["eliminated_year"] = None  # eliminated without a year
    assert len(game_problems(broken)) == 2


# --- seed table 1 -----------------------------------------------------------------------------

# Name, DiWZalt, Pkt/Rd, Niv, We, TE, DiWZneu, TD, exactly as the seed prints them.
SEED_TABLE_ONE = [
    ("spieler-1", "1746-4", "6/6", 1575, "4.35", 1966, "1797-5", 51),
    ("spieler-2", "1632-1", "5/6", 1594, "3.33", 1855, "1684-2", 52),
    ("spieler-3", "1585-2", "4/6", 1601, "2.87", 1735, "1620-3", 35),
    ("spieler-4", "1600-0", "2/6", 1599, "3.02", 1464, "1569-1", -31),
    ("spieler-5", "1518-1", "2/6", 1613, "2.24", 1487, "1511-2", -7),
    ("spieler-6", "1600-0", "0/6", 1599, "3.02", 1198, "1507-1", -93),
    ("spieler-7", "1512-7", "2/6", 1614, "2.18", 1488, "1506-8", -6),
]


def seed_one_start_1600() -> DiWZ:
    """Spieler 4 and 6 are not on the list: start_1600 gives them 1600-0 at the game."""
    known = {pid: value for pid, value in cases.SEED_ONE_RATINGS.items() if pid not in ("spieler-4", "spieler-6")}
    return DiWZ(newcomers="start_1600", initial_ratings=known)


@pytest.mark.parametrize(
    "system",
    [lambda: DiWZ(initial_ratings=cases.SEED_ONE_RATINGS), seed_one_start_1600],
    ids=["erstzahl-list", "start_1600"],
)
def test_seed_table_one(system):
    outputs = run_months(system(), cases.seed_table_one_rows())
    out = outputs[Month(1998, 5)]
    rows = out.history.to_pylist()
    assert [row["player_id"] for row in rows] == [entry[0] for entry in SEED_TABLE_ONE]
    for row, (player, old, points, niveau, expected, performance, new, delta) in zip(rows, SEED_TABLE_ONE):
        assert old_display(row) == old, player
        assert f"{row['score']:g}/{row['opponents']}" == points, player
        assert printed(row["niveau"], 0) == niveau, player
        assert str(printed(row["expected"], 2)) == expected, player
        assert printed(row["performance"], 0) == performance, player
        assert f"{int(row['rating_after'])}-{row['evaluations']}" == new, player
        assert row["rating_after"] - row["rating_before"] == delta, player
        assert row["pooled"] is False
    table = listed(out)
    assert [row["display"] for row in out.table.to_pylist()] == [entry[6] for entry in SEED_TABLE_ONE]
    assert list(out.table.column("rank").to_pylist()) == [1, 2, 3, 4, 5, 6, 7]
    assert table["spieler-6"]["last_evaluated"] == dt.date(1998, 5, 20)


# --- seed table 2 -----------------------------------------------------------------------------


def test_seed_table_two_finish_order_gives_the_printed_scores():
    scores = game_scores(cases.seed_table_two_rows(), "deac-0023")
    p = {i: f"bsp2-spieler-{i}" for i in range(1, 8)}
    printed_results = {  # the seed's "score(opponent rating)" lists
        1: {3: 1, 2: 1},
        2: {1: 0, 3: 1},
        3: {1: 0, 2: 0},
        4: {3: 1, 1: 0, 2: 0},
        5: {1: 0, 2: 0, 3: 0.5},
        6: {1: 0.5, 2: 1, 3: 1},
        7: {1: 1, 3: 1, 2: 1},
    }
    for player, results in printed_results.items():
        for opponent, score in results.items():
            assert scores[(p[player], p[opponent])] == score, (player, opponent)


def test_seed_table_two():
    outputs = run_months(DiWZ(initial_ratings=cases.SEED_TWO_RATINGS), cases.seed_table_two_rows())
    july = outputs[Month(1998, 7)]
    rows = history_by_player(outputs, "deac-0023")

    # Spieler 3: 1514-9, 0 /3*, Niv 1616, We 1.09, TE 1224, 1476-10, -38.
    three = rows["bsp2-spieler-3"]
    assert old_display(three) == "1514-9"
    assert (three["score"], three["opponents"], three["pooled"]) == (0.0, 3, True)
    assert printed(three["niveau"], 0) == 1616
    assert str(printed(three["expected"], 2)) == "1.09"
    assert printed(three["performance"], 0) == 1224
    assert (three["rating_after"], three["evaluations"]) == (1476.0, 10)
    assert three["rating_after"] - three["rating_before"] == -38
    # The pooled result is the one that waited from June.
    june_three = history_by_player(outputs, "deac-0021")["bsp2-spieler-3"]
    assert (june_three["score"], june_three["opponents"], june_three["rating_after"]) == (0.0, 1, None)

    # Spieler 1 and 2 have two rated opponents and wait.
    state = july.state
    for player, old, score, waiting in [
        ("bsp2-spieler-1", "1628-1", 2.0, [(1.0, 1514), (1.0, 1520)]),
        ("bsp2-spieler-2", "1520-1", 1.0, [(0.0, 1628), (1.0, 1514)]),
    ]:
        row = rows[player]
        assert old_display(row) == old
        assert (row["score"], row["opponents"], row["rating_after"], row["performance"], row["pooled"]) == (
            score,
            2,
            None,
            None,
            False,
        )
        assert sorted(state.players[player].pending) == sorted(waiting)
    assert listed(july)["bsp2-spieler-1"]["display"] == "1628-1"

    # Spieler 4-7 are newcomers who collect the printed results.
    for player, results in [
        ("bsp2-spieler-4", [(1.0, 1514), (0.0, 1628), (0.0, 1520)]),
        ("bsp2-spieler-5", [(0.0, 1628), (0.0, 1520), (0.5, 1514)]),
        ("bsp2-spieler-6", [(0.5, 1628), (1.0, 1520), (1.0, 1514)]),
        ("bsp2-spieler-7", [(1.0, 1628), (1.0, 1514), (1.0, 1520)]),
    ]:
        row = rows[player]
        assert row["rating_before"] is None and row["rating_after"] is None and row["evaluations"] is None
        assert (row["score"], row["opponents"]) == (sum(s for s, _ in results), 3)
        assert sorted(state.players[player].collected) == sorted(results)
        assert player not in listed(july)


# --- finish groups ----------------------------------------------------------------------------


def test_simultaneous_eliminations_and_end_of_game_groups():
    outputs = run_months(DiWZ(), cases.finish_groups_rows())
    march = outputs[Month(2001, 3)]
    scores = {row["player_id"]: (row["score"], row["opponents"]) for row in march.history.to_pylist()}
    assert scores == {
        # 7 powers, 34 centres: 18 solo; 10 (70 >= 68) top group; 5 (35 >= 34) middle; anarchy 1 bottom;
        # two eliminated in 1906 (half a point each from the other), one in 1903.
        "g7-solo": (6.0, 6),
        "g7-ten": (5.0, 6),
        "g7-five": (4.0, 6),
        "g7-anarchy-one": (3.0, 6),
        "g7-out-1906-a": (1.5, 6),
        "g7-out-1906-b": (1.5, 6),
        "g7-out-1903": (0.0, 6),
        # 6 powers, 30 centres: VZ/N = 5 exactly, so 5 centres is the middle group and 10 the top one.
        "g6-draw-6": (4.5, 5),
        "g6-draw-5": (4.5, 5),
        "g6-ten": (3.0, 5),
        "g6-five": (2.0, 5),
        "g6-anarchy-four": (1.0, 5),
        "g6-out": (0.0, 5),
    }
    table = listed(march)
    # Equal results from equal ratings: equal new ratings, one shared rank.
    assert table["g7-out-1906-a"]["rating"] == table["g7-out-1906-b"]["rating"]
    assert table["g7-out-1906-a"]["rank"] == table["g7-out-1906-b"]["rank"]
    assert table["g6-draw-6"]["rank"] == table["g6-draw-5"]["rank"]
    ranks = march.table.column("rank").to_pylist()
    assert ranks == sorted(ranks) and len(set(ranks)) < len(ranks)


# --- newcomers --------------------------------------------------------------------------------


def test_first_rating_by_iteration():
    outputs = run_months(DiWZ(initial_ratings=cases.ESTABLISHED_SIX), cases.first_rating_rows())
    february = history_by_player(outputs, "erst-1")["newcomer"]
    assert (february["score"], february["opponents"], february["rating_after"]) == (1.5, 3, None)

    row = history_by_player(outputs, "erst-2")["newcomer"]
    # By hand: results 0 v 1700, ½ v 1650, 1 v 1600, 0 v 1550, 1 v 1500, 1 v 1450; P = 3.5, n = 6.
    # R <- R + (3.5 - We(R)) * 800 / 26 from 1600 gives 1609.13, 1615.98, 1621.13, 1625.01,
    # 1627.93, 1630.13, 1631.79, 1633.04, 1633.99: the last two share the integer part 1633.
    opponents = [1700, 1650, 1600, 1550, 1500, 1450]
    r, steps = 1600.0, []
    while True:
        we = sum(1 / (1 + 10 ** ((o - r) / 400)) for o in opponents)  # 10^(-0.0025 d) = 10^(-d/400)
        following = r + (3.5 - we) * 800 / 26
        steps.append(following)
        if int(following) == int(r):
            break
        r = following
    assert [round(s, 2) for s in steps] == [
        1609.13,
        1615.98,
        1621.13,
        1625.01,
        1627.93,
        1630.13,
        1631.79,
        1633.04,
        1633.99,
    ]
    assert int(steps[-1]) == 1633
    assert row["rating_after"] == 1633.0 and row["rating_before"] is None
    assert (row["score"], row["opponents"], row["niveau"], row["pooled"], row["evaluations"]) == (
        3.5,
        6,
        1575.0,
        True,
        1,
    )
    # expected and performance are those of the first rating.
    assert row["expected"] == pytest.approx(sum(1 / (1 + 10 ** ((o - 1633) / 400)) for o in opponents))
    assert row["performance"] == pytest.approx(1633 + (3.5 - row["expected"]) * 800 / 6)
    entry = listed(outputs[Month(1999, 3)])["newcomer"]
    assert (entry["display"], entry["last_evaluated"]) == ("1633-1", dt.date(1999, 3, 15))
    assert "newcomer" not in listed(outputs[Month(1999, 2)])


def test_newcomer_at_100_or_0_percent_gets_no_first_rating():
    outputs = run_months(DiWZ(initial_ratings=cases.ESTABLISHED_SIX), cases.perfect_newcomer_rows())
    march = outputs[Month(1999, 3)]
    assert len(march.state.players["ace"].collected) == 6
    assert len(march.state.players["zero"].collected) == 6
    for player, score in [("ace", 3.0), ("zero", 0.0)]:
        row = history_by_player(outputs, "perfect-2")[player]
        assert (row["score"], row["opponents"], row["rating_after"]) == (score, 3, None)
        assert player not in listed(march)
    # One draw against the 1700 player ends the perfect record: 7.5 / 8 gives a first rating.
    ace = history_by_player(outputs, "perfect-3")["ace"]
    assert (ace["score"], ace["opponents"], ace["pooled"], ace["evaluations"]) == (7.5, 8, True, 1)
    # By hand: est-1700 and est-1650 still wait with two results each, so they keep 1700 and 1650.
    # Results 1 v 1700, 1650, 1600, 1550, 1500, 1450, then ½ v 1700 and 1 v 1650: P = 7.5, n = 8,
    # Niv 1600. R <- R + (7.5 - We(R)) * 800 / 28 from 1600 gives 1700.23, 1770.04, 1820.69, ...
    # 2076.15, 2077.08, 2077.93 (37 steps): the last two share 2077. At 2077, We = 7.47 and
    # TE = 2077 + 0.03 * 100 = 2080.
    assert (ace["rating_after"], ace["niveau"]) == (2077.0, 1600.0)
    assert (printed(ace["expected"], 2), printed(ace["performance"], 0)) == (Decimal("7.47"), Decimal("2080"))
    assert listed(outputs[Month(1999, 4)])["ace"]["rating"] == ace["rating_after"]
    assert "zero" not in listed(outputs[Month(1999, 4)])


# --- strike-off -------------------------------------------------------------------------------


def test_strike_off_and_return():
    outputs = run_months(DiWZ(initial_ratings=cases.STRIKE_OFF_RATINGS), cases.strike_off_rows(), last="2002-06")
    december = listed(outputs[Month(2001, 12)])
    assert {"keeper", "b-1", "b-2", "b-3", "dormant", "c-1", "c-2", "c-3", "c-4"} <= set(december)
    assert december["b-1"]["last_evaluated"] == dt.date(2000, 1, 15)
    assert december["dormant"]["last_evaluated"] is None

    # Exactly two years after its last evaluation keeper is still rated, and pools its waiting result.
    keeper = history_by_player(outputs, "strike-4")["keeper"]
    # By hand: strike-1, 1650 scores 3/3 v 1600, 1550, 1500: We 0.5715 + 0.6401 + 0.7034 = 1.9149,
    # TE 1650 + 1.0851 * 800/3 = 1939.36, new 1650 + 289.36 * 3/23 = 1687.74 -> 1688. It waits
    # with 1 v b-1, whose 2/3 v 1650, 1550, 1500 took 1600 to 1612.52 -> 1613. strike-3 takes c-1
    # (3/3 from 1620) to 1660 and c-2 (2/3 from 1580) to 1593. strike-4: 1 v 1613, 0 v 1660,
    # 1 v 1593: P 2, Niv 1622, We 0.6063 + 0.5402 + 0.6334 = 1.7799, TE 1688 + 0.2201 * 800/3 =
    # 1746.69, new 1688 + 58.69 * 3/23 = 1695.66 -> 1696.
    assert (keeper["rating_before"], keeper["rating_after"], keeper["niveau"]) == (1688.0, 1696.0, 1622.0)
    assert (printed(keeper["expected"], 2), printed(keeper["performance"], 0)) == (Decimal("1.78"), Decimal("1747"))
    assert (keeper["score"], keeper["opponents"], keeper["pooled"]) == (2.0, 3, True)

    # b-2 is struck off at its game five days after its two years: it plays as a newcomer.
    b2 = history_by_player(outputs, "strike-5")["b-2"]
    assert (b2["rating_before"], b2["rating_after"], b2["evaluations"]) == (None, None, None)
    assert (b2["score"], b2["opponents"]) == (1.5, 3)

    january = listed(outputs[Month(2002, 1)])
    assert "keeper" in january and january["keeper"]["last_evaluated"] == dt.date(2002, 1, 15)
    for gone in ("b-1", "b-2", "b-3", "dormant"):
        assert gone not in january, gone
    assert outputs[Month(2002, 1)].state.players["b-1"].pending == []

    # b-2 returns with a first rating from its six new results.
    b2_back = history_by_player(outputs, "strike-6")["b-2"]
    assert (b2_back["score"], b2_back["opponents"], b2_back["pooled"], b2_back["evaluations"]) == (3.5, 6, True, 1)
    # By hand: ratings before strike-6 are c-1 1716 (4/4 with its strike-4 results in strike-5),
    # c-2 1567 (1/4), c-3 1527, c-4 1460. Results 0 v 1660, ½ v 1593, 1 v 1527 (strike-5), then
    # 0 v 1567, 1 v 1716, 1 v 1460: P 3.5, n 6, Niv 9523 / 6 = 1587.17. R <- R + (3.5 - We(R)) *
    # 800 / 26 from 1600 gives 1612.13, 1621.22, ..., 1647.18, 1647.58: first rating 1647.
    assert (b2_back["rating_after"], printed(b2_back["niveau"], 2)) == (1647.0, Decimal("1587.17"))
    assert listed(outputs[Month(2002, 3)])["b-2"]["display"] == "1647-1"

    # b-1 returns as a newcomer: its waiting result from 2001 was dropped, so it needs two games.
    b1_first = history_by_player(outputs, "strike-7")["b-1"]
    assert (b1_first["rating_before"], b1_first["opponents"], b1_first["rating_after"]) == (None, 3, None)
    b1_back = history_by_player(outputs, "strike-8")["b-1"]
    assert (b1_back["score"], b1_back["opponents"], b1_back["evaluations"]) == (4.0, 6, 1)
    assert "b-1" in listed(outputs[Month(2002, 5)])


# --- replacements -----------------------------------------------------------------------------


def test_replacements_deny_and_no_deny():
    outputs = run_months(DiWZ(initial_ratings=cases.REPLACEMENT_RATINGS), cases.replacement_rows())
    rows = history_by_player(outputs, "replace-1")
    assert set(rows) == {"r-3", "orig-denied", "sub-keep", "r-1", "r-2", "filler-x", "filler-y"}
    # The denying replacement is not rated; the original player takes the result (survived, 6 centres).
    denied = rows["orig-denied"]
    assert (denied["rating_before"], denied["score"], denied["opponents"]) == (1620.0, 2.0, 3)
    # By hand: 0 v r-3 1640 (solo), 1 v r-1 1600 (2 centres), 1 v r-2 1560 (eliminated); sub-keep
    # has no rating and does not count. We = W(-20) + W(20) + W(60) = 1 + 0.5855 = 1.5855,
    # TE 1620 + 0.4145 * 800/3 = 1730.53, new 1620 + 110.53 * 3/23 = 1634.42 -> 1634.
    assert (denied["rating_after"], denied["niveau"]) == (1634.0, 1600.0)
    assert (printed(denied["expected"], 2), printed(denied["performance"], 0)) == (Decimal("1.59"), Decimal("1731"))
    # The accepting replacement takes the result as a newcomer (½ against orig-denied, in the same
    # group); the original player is not rated.
    keep = rows["sub-keep"]
    assert (keep["rating_before"], keep["score"], keep["opponents"]) == (None, 2.5, 4)
    table = listed(outputs[Month(1999, 5)])
    assert "sub-deny" not in table and "sub-keep" not in table
    assert table["orig-replaced"]["display"] == "1580-3"
    assert table["orig-denied"]["display"] == "1634-3"


# --- the numbers pinned above, from the plain reference too ------------------------------------

PINNED = [
    # rows, list it starts from, last month, game, player, (rating_before, rating_after)
    (cases.perfect_newcomer_rows, cases.ESTABLISHED_SIX, None, "perfect-3", "ace", (None, 2077.0)),
    (cases.strike_off_rows, cases.STRIKE_OFF_RATINGS, "2002-06", "strike-4", "keeper", (1688.0, 1696.0)),
    (cases.strike_off_rows, cases.STRIKE_OFF_RATINGS, "2002-06", "strike-6", "b-2", (None, 1647.0)),
    (cases.replacement_rows, cases.REPLACEMENT_RATINGS, None, "replace-1", "orig-denied", (1620.0, 1634.0)),
]


@pytest.mark.parametrize(
    "make_rows,ratings,last,game_id,player,expected",
    PINNED,
    ids=[f"{game}-{player}" for _, _, _, game, player, _ in PINNED],
)
def test_pinned_numbers_are_the_references_and_the_fast_paths(make_rows, ratings, last, game_id, player, expected):
    rows = make_rows()
    first = min(Month.of(D(r["finished_on"])) for r in rows)
    final = Month.parse(last) if last else max(Month.of(D(r["finished_on"])) for r in rows)
    found = [
        row
        for month in reference_diwz(rows, month_range(first, final), initial_ratings=ratings)
        for row in month["history"]
        if (row["source_id"], row["player_id"]) == (game_id, player)
    ]
    assert len(found) == 1
    reference = found[0]
    assert (reference["rating_before"], reference["rating_after"]) == expected
    fast = history_by_player(run_months(DiWZ(initial_ratings=ratings), rows, last), game_id)[player]
    assert {k: fast[k] for k in reference} == reference


# --- start_1600 and the bootstrap -------------------------------------------------------------


def test_start_1600_newcomers_and_strike_off_of_an_unevaluated_1600():
    outputs = run_months(DiWZ(newcomers="start_1600"), cases.start_1600_idle_rows())
    idle = history_by_player(outputs, "idle-1")["idle"]
    assert (idle["rating_before"], idle["rating_after"], idle["opponents"], idle["evaluations"]) == (1600.0, None, 2, 0)
    february_2000 = listed(outputs[Month(2000, 2)])
    assert february_2000["idle"]["display"] == "1600-0"
    assert february_2000["idle"]["last_evaluated"] is None
    # Two years from the day 1600-0 was given (1998-03-05): struck at the end of March 2000, a month without games.
    assert outputs[Month(2000, 3)].history.num_rows == 0
    assert "idle" not in listed(outputs[Month(2000, 3)])
    # Players new in a later month start at 1600-0 too.
    late = history_by_player(outputs, "idle-2")["other-3"]
    assert (late["rating_before"], late["opponents"]) == (1600.0, 2)
    assert listed(outputs[Month(2000, 5)])["other-3"]["display"] == "1600-0"


def test_bootstrap_month_starts_everyone_at_1600():
    outputs = run_months(DiWZ(), cases.bootstrap_rows())
    # The unrated February game is ignored and does not make February the first month.
    assert outputs[Month(2001, 2)].history.num_rows == 0
    assert outputs[Month(2001, 2)].table.num_rows == 0
    march = outputs[Month(2001, 3)]
    for row in march.history.to_pylist():
        assert (row["rating_before"], row["opponents"], row["evaluations"]) == (1600.0, 6, 1)
    assert march.table.column("rank").to_pylist() == [1, 2, 3, 4, 4, 4, 7]
    april = history_by_player(outputs, "boot-2")
    for newcomer in ("new-1", "new-2", "new-3"):
        assert (april[newcomer]["rating_before"], april[newcomer]["opponents"]) == (None, 4)
        assert newcomer not in listed(outputs[Month(2001, 4)])
    for player in ("p-1", "p-2", "p-3", "p-4"):
        assert (april[player]["opponents"], april[player]["evaluations"]) == (3, 2)


def test_no_bootstrap_when_continuing_a_list():
    outputs = run_months(DiWZ(initial_ratings={"p-1": (1600, 0)}), cases.bootstrap_rows())
    march = history_by_player(outputs, "boot-1")
    assert march["p-2"]["rating_before"] is None and march["p-2"]["opponents"] == 1
    assert set(listed(outputs[Month(2001, 3)])) == {"p-1"}


# --- settings and models ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        {"newcomers": "elo"},
        {"initial_ratings": {"x": (1600,)}},
        {"initial_ratings": {"x": (1600.5, 2)}},
        {"initial_ratings": {"x": (1600, -1)}},
    ],
)
def test_bad_settings_are_rejected(settings):
    with pytest.raises(ValueError):
        DiWZ(**settings)


def test_history_days_are_the_rated_games_whether_or_not_an_unrated_game_has_one():
    """The rows of an unrated game are left out, a missing day among them too; a missing day of
    a rated game stays missing in its history rows."""

    def without_days(table: pa.Table, game_id: str) -> pa.Table:
        column = table.schema.get_field_index("finished_on")
        undated = pc.equal(table.column("game_id"), game_id)
        return table.set_column(
            column, "finished_on", pc.if_else(undated, pa.scalar(None, pa.date32()), table.column(column))
        )

    rows = rows_to_table(cases.bootstrap_rows())
    march, days = Month(2001, 3), pc.field("finished_on")
    in_march = rows.filter((days >= march.first_day) & (days <= march.last_day))
    unrated = without_days(rows.filter(pc.field("game_id") == "boot-0"), "boot-0")
    system = DiWZ(initial_ratings={"p-1": (1700, 3)})
    state = system.step(system.initial_state(), MonthInput(Month(2001, 2), unrated.slice(0, 0))).state
    history = system.step(state, MonthInput(march, pa.concat_tables([unrated, in_march]))).history
    assert history.column("source_date").to_pylist() == in_march.column("finished_on").to_pylist()
    undated = without_days(in_march, "boot-1")
    history = system.step(state, MonthInput(march, pa.concat_tables([unrated, undated]))).history
    assert history.column("source_date").null_count == undated.column("finished_on").null_count > 0


@pytest.mark.parametrize("offset", [1, 3, 6])
def test_a_month_sliced_from_a_larger_table_reads_its_own_rated_flags(offset):
    """A month handed as a slice (its rated flags starting mid-byte in the column's bits) gives
    what the same rows give as a table of their own: an unrated game between rated ones."""
    rows = rows_to_table(cases.bootstrap_rows())
    rows = rows.set_column(
        rows.schema.get_field_index("finished_on"),
        "finished_on",  # one day for the three games
        pa.array([D("2001-03-08")] * rows.num_rows, pa.date32()),
    )
    assert rows.column("rated").to_pylist() == [False] * 7 + [True] * 14
    padding = rows.slice(7, offset)  # rated rows before the month's first, unrated, game
    sliced = pa.concat_tables([padding, rows]).combine_chunks().slice(offset)
    own = pa.Table.from_pylist(sliced.to_pylist(), schema=sliced.schema)
    assert sliced.column("rated").chunk(0).offset == offset and own.column("rated").chunk(0).offset == 0
    system = DiWZ(initial_ratings={"p-1": (1700, 3)})
    march = Month(2001, 3)
    from_slice = system.step(system.initial_state(), MonthInput(march, sliced))
    from_own = system.step(system.initial_state(), MonthInput(march, own))
    assert from_slice.history.num_rows == 14
    assert from_slice.history.equals(from_own.history) and from_slice.table.equals(from_own.table)


def with_common_columns(out: MonthOutput, month: Month) -> tuple[pa.Table, pa.Table]:
    """The month's tables with the columns the shared writer adds, in the models' order."""
    table, history = out.table, out.history
    n = table.num_rows
    rankings = pa.table(
        {
            "system": pa.array(["diwz"] * n),
            "as_of": pa.array([month.last_day] * n, pa.date32()),
            "rank": table["rank"],
            "player_id": table["player_id"],
            "player_name": pa.array([None] * n, pa.string()),
            "rating": table["rating"],
            "rank_change": pa.array([None] * n, pa.int64()),
            "rating_change": pa.array([None] * n, pa.float64()),
            "peak_rating": table["rating"],
            **{name: table[name] for name in table.column_names[3:]},
        }
    )
    history = history.add_column(0, "system", pa.array(["diwz"] * history.num_rows))
    return rankings, history


def test_models_accept_the_output_and_reject_a_wrong_one():
    outputs = run_months(DiWZ(initial_ratings=cases.SEED_TWO_RATINGS), cases.seed_table_two_rows())
    month = Month(1998, 7)
    rankings, history = with_common_columns(outputs[month], month)
    DiWZRankings.validate(ibis.memtable(rankings))
    DiWZHistory.validate(ibis.memtable(history))

    wrong_display = rankings.set_column(
        rankings.column_names.index("display"), "display", pa.array(["1700-11"] + rankings["display"].to_pylist()[1:])
    )
    with pytest.raises(pandera.errors.SchemaError):
        DiWZRankings.validate(ibis.memtable(wrong_display))
    pooled_waiting = history.set_column(
        history.column_names.index("pooled"), "pooled", pa.array([True] * history.num_rows)
    )
    with pytest.raises(pandera.errors.SchemaError):
        DiWZHistory.validate(ibis.memtable(pooled_waiting))
    fractional = history.set_column(
        history.column_names.index("rating_after"),
        "rating_after",
        pa.array([None if v is None else v + 0.5 for v in history["rating_after"].to_pylist()], pa.float64()),
    )
    with pytest.raises(pandera.errors.SchemaError):
        DiWZHistory.validate(ibis.memtable(fractional))
