"""Published lists (the lists feed) and agreed multi-site games, SPEC §2: validation, each system
continuing its list, and the golden cases end to end through `diprank run` and `diprank report`."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.months import Month
from pipeline.systems.base import MonthInput, PublishedList
from pipeline.systems.club.rules import ClubRating
from pipeline.systems.diwz.rules import START_1600, DiWZ
from pipeline.systems.eagle.rules import EaglePoints
from pipeline.systems.games import rows_to_table
from schemas import lists as rules
from tests.fixtures.diwz_cases import SEED_ONE_RATINGS, seed_table_one_rows
from tests.fixtures.rows import power_row
from tests.support import make_raw, rankings, write_csv
from tests.test_cli import diprank
from tests.test_validation import GOOD_GAME, validate_folder

# --- validation -----------------------------------------------------------------------------

GOOD_LISTS = [
    {
        "system": "dip_pouch",
        "as_of": "2020-01-31",
        "player_id": "d1",
        "rating": 55.0,
        "events": 3,
        "last_event_date": "2020-01-12",
    },
    {"system": "club", "as_of": "2019-12-31", "player_id": "c1", "rating": 40.0},
    {
        "system": "eagle",
        "as_of": "2020-01-31",
        "player_id": "e1",
        "recent_points": "1.00;2.50;0.10",
        "games": 12,
        "last_game_date": "2020-01-20",
    },
    {
        "system": "diwz",
        "as_of": "2020-01-31",
        "player_id": "w1",
        "rating": 1746,
        "evaluations": 4,
        "last_evaluated": "2019-11-02",
    },
    {"system": "diwz", "as_of": "2020-01-31", "player_id": "w2", "rating": 1600, "evaluations": 0},
    {
        "system": "ghost",
        "as_of": "2020-01-31",
        "player_id": "g1",
        "category": "overall",
        "rating": 134.2857,
        "games": 9,
        "last_game_date": "2020-01-20",
    },
    {
        "system": "ghost",
        "as_of": "2020-01-31",
        "player_id": "g1",
        "category": "gunboat",
        "rating": 98.5,
        "games": 2,
        "last_game_date": "2019-12-03",
    },
]


def good(system: str, **changes) -> dict:
    """A copy of the good list row of `system` as player 'bad', changed."""
    row = next(r for r in GOOD_LISTS if r["system"] == system)
    return {**row, "player_id": "bad", **changes}


# case -> (extra rows, the reason of the bad row(s))
LIST_CASES = {
    "unknown_system": (
        [{"system": "elo", "as_of": "2020-01-31", "player_id": "bad", "rating": 1.0}],
        rules.UNKNOWN_SYSTEM,
    ),
    "as_of_not_month_end": ([good("dip_pouch", as_of="2020-01-15", last_event_date=None)], rules.AS_OF_NOT_MONTH_END),
    "two_as_of_in_a_system": ([good("diwz", as_of="2019-12-31", last_evaluated="2019-11-02")], rules.AS_OF_DIFFERS),
    "future_as_of": ([good("club", as_of="2099-12-31")], "date_in_future"),
    "as_of_before_1954": ([good("club", as_of="1950-12-31")], "date_before_1954"),
    "diwz_without_evaluations": ([good("diwz", evaluations=None)], rules.MISSING_SYSTEM_VALUE),
    "eagle_without_points": ([good("eagle", recent_points=None)], rules.MISSING_SYSTEM_VALUE),
    "club_row_with_games": ([good("club", games=3)], rules.OTHER_SYSTEM_VALUE),
    "game_after_as_of": ([good("eagle", last_game_date="2020-02-01")], rules.DATE_AFTER_AS_OF),
    "dip_pouch_over_100": ([good("dip_pouch", rating=100.5)], rules.DIP_POUCH_RATING_RANGE),
    "dip_pouch_no_events": ([good("dip_pouch", events=0)], rules.DIP_POUCH_EVENTS),
    "club_negative": ([good("club", rating=-0.5)], rules.CLUB_RATING_NEGATIVE),
    "eagle_three_places": ([good("eagle", recent_points="1.234;2.00")], rules.EAGLE_POINTS_MALFORMED),
    "eagle_empty_points": ([good("eagle", recent_points="[]")], rules.EAGLE_POINTS_MALFORMED),
    "eagle_negative_points": ([good("eagle", recent_points="1.00;-2.00")], rules.EAGLE_POINTS_MALFORMED),
    "eagle_eleven_points": (
        [good("eagle", recent_points=";".join(["1.00"] * 11), games=20)],
        rules.EAGLE_TOO_MANY_POINTS,
    ),
    "eagle_games_below_points": ([good("eagle", games=2)], rules.EAGLE_GAMES_BELOW_POINTS),
    "diwz_fraction": ([good("diwz", rating=1700.5)], rules.DIWZ_RATING_NOT_WHOLE),
    "diwz_too_low": ([good("diwz", rating=99)], rules.DIWZ_RATING_RANGE),
    "diwz_negative_evaluations": ([good("diwz", evaluations=-1)], rules.DIWZ_EVALUATIONS_NEGATIVE),
    "diwz_unevaluated_not_1600": (
        [good("diwz", rating=1700, evaluations=0, last_evaluated=None)],
        rules.DIWZ_UNEVALUATED_NOT_1600,
    ),
    "diwz_evaluated_undated": ([good("diwz", last_evaluated=None)], rules.DIWZ_EVALUATED_UNDATED),
    "diwz_unevaluated_dated": ([good("diwz", rating=1600, evaluations=0)], rules.DIWZ_UNEVALUATED_DATED),
    "ghost_unknown_category": ([good("ghost", category="blitz")], rules.UNKNOWN_CATEGORY),
    "club_row_with_a_category": ([good("club", category="gunboat")], rules.UNKNOWN_CATEGORY),
    "ghost_rating_zero": ([good("ghost", rating=0)], rules.GHOST_RATING_NOT_POSITIVE),
    "ghost_no_games": ([good("ghost", games=0)], rules.GHOST_GAMES_BELOW_ONE),
    "ghost_without_last_game": ([good("ghost", last_game_date=None)], rules.MISSING_SYSTEM_VALUE),
    "rating_not_a_number": ([good("dip_pouch", rating="high")], "bad_type"),
    "no_player": ([good("club", player_id=None)], "missing_required_value"),
}


def list_reasons(quarantine: list[dict]) -> dict[str, set[str]]:
    """Record key -> the reasons it was quarantined with (first reason of each entry and the detail's)."""
    found: dict[str, set[str]] = {}
    for entry in quarantine:
        if entry["feed"] == "lists":
            found.setdefault(entry["record_key"], set()).update({entry["reason"], *entry["detail"].split(",")})
    return found


@pytest.mark.parametrize("case", sorted(LIST_CASES))
def test_list_rule(tmp_path, case):
    extra, reason = LIST_CASES[case]
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", lists=GOOD_LISTS + extra))
    found = list_reasons(quarantine)
    assert found, f"{case}: nothing quarantined"
    bad_keys = [key for key in found if key.endswith(("/bad", "/∅"))]
    assert bad_keys, found
    assert any(reason in found[key] for key in bad_keys), (case, found)
    assert all(
        q["source_file"] == "lists/lists.csv" and q["source_line"] >= 2 for q in quarantine if q["feed"] == "lists"
    )
    assert counts["lists"].balanced


def test_as_of_conflict_takes_the_whole_system(tmp_path):
    """One as_of per system: a diwz row of another month takes the system's rows with it, no other."""
    rows = GOOD_LISTS + [good("diwz", as_of="2019-12-31", last_evaluated="2019-11-02")]
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", lists=rows))
    found = list_reasons(quarantine)
    assert sorted(found) == ["diwz/overall/bad", "diwz/overall/w1", "diwz/overall/w2"]
    assert all(rules.AS_OF_DIFFERS in reasons for reasons in found.values())
    assert sorted(valid["lists"]) == ["club", "dip_pouch", "eagle", "ghost", "ghost"]
    assert counts["lists"].valid == 5 and counts["lists"].quarantined == 3


def test_the_good_lists_are_valid_in_every_format(tmp_path):
    """CSV with ';' between Eagle's points, Parquet and JSON Lines with real lists."""
    raw = tmp_path / "raw"
    write_csv(raw / "lists" / "a.csv", GOOD_LISTS[:2])
    eagle = GOOD_LISTS[2]
    points = [float(p) for p in eagle["recent_points"].split(";")]
    pq.write_table(
        pa.table(
            {
                "system": ["eagle"],
                "as_of": [dt.date(2020, 1, 31)],
                "player_id": ["e1"],
                "recent_points": pa.array([points], pa.list_(pa.float64())),
                "games": [12],
                "last_game_date": [dt.date(2020, 1, 20)],
            }
        ),
        raw / "lists" / "b.parquet",
    )
    (raw / "lists" / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in GOOD_LISTS[3:]))
    quarantine, counts, valid = validate_folder(raw)
    assert quarantine == [] and counts["lists"].valid == len(GOOD_LISTS)


def test_a_later_delivery_wins_by_key(tmp_path):
    raw = tmp_path / "raw"
    write_csv(raw / "lists" / "2020-02-01.csv", GOOD_LISTS)
    write_csv(raw / "lists" / "2020-02-09_fix.csv", [dict(GOOD_LISTS[0], rating=57.5)])
    quarantine, counts, _ = validate_folder(raw)
    assert quarantine == [] and (counts["lists"].valid, counts["lists"].replaced) == (len(GOOD_LISTS), 1)


# --- multi-site games: validation -------------------------------------------------------------


def multi_site_game(game_id: str = "ms", **changes_by_power) -> list[dict]:
    """Game 'ms' of four powers: 'a' holds England and France, 'b' Germany, 'c' Italy."""
    rows = [
        {
            "game_id": game_id,
            "finished_on": "2020-03-01",
            "power": "England",
            "player_id": "a",
            "result": "solo",
            "centres": 18,
            "multi_site": True,
        },
        {
            "game_id": game_id,
            "finished_on": "2020-03-01",
            "power": "France",
            "player_id": "a",
            "result": "survived",
            "centres": 4,
            "multi_site": True,
        },
        {
            "game_id": game_id,
            "finished_on": "2020-03-01",
            "power": "Germany",
            "player_id": "b",
            "result": "survived",
            "centres": 5,
            "multi_site": True,
        },
        {
            "game_id": game_id,
            "finished_on": "2020-03-01",
            "power": "Italy",
            "player_id": "c",
            "result": "eliminated",
            "centres": 0,
            "eliminated_year": 1905,
            "multi_site": True,
        },
    ]
    for row in rows:
        row.update(changes_by_power.get(row["power"], {}))
    return rows


MULTI_SITE_CASES = {
    "agreed": ({}, None),
    "not_multi_site": (
        {p: {"multi_site": False} for p in ("England", "France", "Germany", "Italy")},
        "player_on_two_powers",
    ),
    "original_holds_another_power": ({"Germany": {"original_player_id": "c"}}, "player_on_two_powers"),
    "original_on_two_powers": (
        {"Germany": {"original_player_id": "z"}, "Italy": {"original_player_id": "z"}},
        "player_on_two_powers",
    ),
    "flag_differs": ({"Italy": {"multi_site": False}}, "game_fields_differ"),
}


@pytest.mark.parametrize("case", sorted(MULTI_SITE_CASES))
def test_multi_site_rule(tmp_path, case):
    changes, reason = MULTI_SITE_CASES[case]
    rows = GOOD_GAME + multi_site_game(**changes)
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", games=rows))
    if reason is None:
        assert quarantine == [] and counts["games"].valid == 7
    else:
        assert {q["record_key"].split("/")[0] for q in quarantine} == {"ms"} and len(quarantine) == 4
        assert reason in {q["reason"] for q in quarantine}


# --- multi-site games: every system rates one merged power ----------------------------------


def test_merged_power_takes_the_sum_and_the_best_result():
    table = rows_to_table(
        [
            dict(
                power_row(
                    "ms", "2020-03-01", r["power"], r["player_id"], r["result"], r["centres"], r.get("eliminated_year")
                ),
                multi_site=True,
            )
            for r in multi_site_game()
        ]
    )
    rows = table.to_pylist()
    assert [(r["power"], r["responsible_player_id"], r["result"], r["centres"]) for r in rows] == [
        ("England+France", "a", "solo", 22),
        ("Germany", "b", "survived", 5),
        ("Italy", "c", "eliminated", 0),
    ]


def test_merged_eliminated_power_keeps_the_latest_year():
    game = [
        power_row("ms", "2020-03-01", "England", "a", "eliminated", 0, 1903, multi_site=True),
        power_row("ms", "2020-03-01", "France", "a", "eliminated", 0, 1906, multi_site=True),
        power_row("ms", "2020-03-01", "Germany", "b", "solo", 18, multi_site=True),
        power_row("ms", "2020-03-01", "Italy", "c", "anarchy", 3, multi_site=True),
    ]
    rows = rows_to_table(game).to_pylist()
    assert [(r["power"], r["result"], r["eliminated_year"]) for r in rows] == [
        ("England+France", "eliminated", 1906),
        ("Germany", "solo", None),
        ("Italy", "anarchy", None),
    ]


def agreed_game() -> list[dict]:
    """Five powers, 'a' on England and France (merged: survived, 9 centres); 'b' solos."""
    return [
        power_row("ms", "2020-03-01", "England", "a", "survived", 4, multi_site=True),
        power_row("ms", "2020-03-01", "France", "a", "survived", 5, multi_site=True),
        power_row("ms", "2020-03-01", "Germany", "b", "solo", 18, multi_site=True),
        power_row("ms", "2020-03-01", "Italy", "c", "survived", 2, multi_site=True),
        power_row("ms", "2020-03-01", "Russia", "d", "eliminated", 0, 1905, multi_site=True),
    ]


def test_diwz_scores_the_merged_power_against_the_other_merged_powers():
    system = DiWZ(newcomers=START_1600)
    out = system.step(system.initial_state(), MonthInput(Month(2020, 3), rows_to_table(agreed_game())))
    history = {r["player_id"]: r for r in out.history.to_pylist()}
    assert sorted(history) == ["a", "b", "c", "d"], "one row per player"
    # N = 4 merged powers: VZ/N = 8.5, so a's 9 centres are in the top survivor group with no one
    # else; b solos, c (2 centres) is in the lowest group with the eliminated d below it.
    assert history["a"]["opponents"] == 3 and history["a"]["score"] == 2.0
    assert history["b"]["score"] == 3.0 and history["c"]["score"] == 1.0 and history["d"]["score"] == 0.0


def test_eagle_and_club_rate_the_player_once():
    rows = rows_to_table(agreed_game())
    eagle = EaglePoints().step(EaglePoints().initial_state(), MonthInput(Month(2020, 3), rows))
    assert sorted(r["player_id"] for r in eagle.history.to_pylist()) == ["a", "b", "c", "d"]
    club = ClubRating().step(ClubRating().initial_state(), MonthInput(Month(2020, 3), rows))
    table = {r["player_id"]: r for r in club.table.to_pylist()}
    assert table["a"]["games"] == 1 and table["a"]["losses"] == 1
    assert sorted(r["player_id"] for r in club.history.to_pylist()) == ["a", "b", "c", "d"]


# --- each system from its list --------------------------------------------------------------


def published(system: str, as_of: str, rows: list[dict]) -> PublishedList:
    from pipeline.rating.published import LIST_SQL

    con = duckdb.connect()
    con.register(
        "rows", pa.Table.from_pylist([{"system": system, "as_of": dt.date.fromisoformat(as_of), **r} for r in rows])
    )
    sql = LIST_SQL[system].replace("read_parquet(?)", "rows")
    table = con.sql(sql, params=[system]).to_arrow_table()
    return PublishedList(system, dt.date.fromisoformat(as_of), table.drop_columns(["as_of"]))


def test_eagle_list_drops_the_oldest_and_shows_the_next_as_points_to_defend():
    system = EaglePoints()
    points = [f"{p}.00" for p in range(1, 11)]  # oldest first: 1.00 … 10.00, 55.00 in all
    state = system.state_from_list(
        published(
            "eagle",
            "1998-04-30",
            [
                {
                    "player_id": "spieler-1",
                    "player_name": "Spieler 1",
                    "recent_points": ";".join(points),
                    "games": 25,
                    "last_game_date": dt.date(1998, 4, 1),
                }
            ],
        )
    )
    out = system.step(state, MonthInput(Month(1998, 5), rows_to_table(seed_table_one_rows())))
    row = next(r for r in out.table.to_pylist() if r["player_id"] == "spieler-1")
    # Position 1 of the list's table contributes 2.00, the six unlisted players 0.50 each: V = 5.00.
    solo = next(r for r in out.history.to_pylist() if r["player_id"] == "spieler-1")
    assert solo["game_value"] == 5.0 and solo["points"] == 5.0
    assert row["points"] == 55.0 - 1.0 + 5.0 and row["games"] == 26
    assert row["points_to_defend"] == 2.0


def test_club_list_gives_next_year_a_legacy_of_ten_percent():
    system = ClubRating()
    state = system.state_from_list(
        published("club", "2019-12-31", [{"player_id": "c40", "player_name": "Cleo Forty", "rating": 40.0}])
    )
    game = [
        power_row("g", "2020-01-10", "England", "c40", "solo", 18),
        power_row("g", "2020-01-10", "France", "x", "survived", 4),
    ]
    out = system.step(state, MonthInput(Month(2020, 1), rows_to_table(game)))
    row = next(r for r in out.table.to_pylist() if r["player_id"] == "c40")
    assert row["legacy"] == 4.0


# --- golden, end to end ---------------------------------------------------------------------

SEED_NAMES = {pid: pid.replace("-", " ").title() for pid in SEED_ONE_RATINGS}
LAST_EVALUATED = {
    "spieler-1": "1998-03-01",
    "spieler-2": "1998-02-11",
    "spieler-3": "1997-11-20",
    "spieler-5": "1997-12-02",
    "spieler-7": "1998-04-12",
}


@pytest.fixture(scope="module")
def listed_run(tmp_path_factory):
    """A raw folder with a list for every system, seed 004's game 0017, an event, a game before the
    lists and an agreed multi-site game; run through `diprank run`."""
    root = tmp_path_factory.mktemp("lists")
    raw = root / "raw"
    diwz = [
        {
            "system": "diwz",
            "as_of": "1998-04-30",
            "player_id": pid,
            "player_name": SEED_NAMES[pid],
            "rating": rating,
            "evaluations": evaluations,
            "last_evaluated": LAST_EVALUATED.get(pid),
        }
        for pid, (rating, evaluations) in SEED_ONE_RATINGS.items()
    ]
    write_csv(
        raw / "lists" / "diwz-1998-04.csv",
        diwz,
        ["system", "as_of", "player_id", "player_name", "rating", "evaluations", "last_evaluated"],
    )
    write_csv(
        raw / "lists" / "eagle-1998-04.csv",
        [
            {
                "system": "eagle",
                "as_of": "1998-04-30",
                "player_id": "spieler-1",
                "player_name": "Spieler 1",
                "recent_points": ";".join(f"{p}.00" for p in range(1, 11)),
                "games": 25,
                "last_game_date": "1998-04-01",
            }
        ],
    )
    write_csv(
        raw / "lists" / "dip_pouch-2019-04.csv",
        [
            {
                "system": "dip_pouch",
                "as_of": "2019-04-30",
                "player_id": "p55",
                "player_name": "Pat Fiftyfive",
                "rating": 55,
                "events": 4,
                "last_event_date": "2019-03-03",
            }
        ],
    )
    write_csv(
        raw / "lists" / "ghost-1998-04.csv",
        [
            {
                "system": "ghost",
                "as_of": "1998-04-30",
                "player_id": "spieler-1",
                "category": category,
                "rating": rating,
                "games": games,
                "last_game_date": "1998-04-01",
            }
            for category, rating, games in (("overall", 150.0, 10), ("classic", 120.0, 4))
        ],
    )
    write_csv(
        raw / "lists" / "club-2019.csv",
        [{"system": "club", "as_of": "2019-12-31", "player_id": "c40", "player_name": "Cleo Forty", "rating": 40.0}],
    )
    games = seed_table_one_rows() + [
        power_row("early", "1998-03-10", "England", "spieler-1", "solo", 18),
        power_row("early", "1998-03-10", "France", "spieler-2", "survived", 4),
        power_row("early", "1998-03-10", "Germany", "spieler-3", "eliminated", 0, 1904),
        power_row("ms-1", "2020-01-15", "England", "m1", "survived", 4, multi_site=True),
        power_row("ms-1", "2020-01-15", "France", "m1", "survived", 5, multi_site=True),
        power_row("ms-1", "2020-01-15", "Germany", "c40", "solo", 18, multi_site=True),
        power_row("ms-1", "2020-01-15", "Italy", "m2", "eliminated", 0, 1905, multi_site=True),
    ]
    write_csv(raw / "games" / "games.csv", games)
    write_csv(
        raw / "events" / "events.csv",
        [
            {
                "event_id": "big",
                "name": "Big Open",
                "start_date": "2019-05-10",
                "end_date": "2019-05-12",
                "rounds": 3,
                "num_players": 65,
                "is_world_championship": False,
            }
        ],
    )
    write_csv(
        raw / "event_results" / "results.csv",
        [
            {"event_id": "big", "player_id": "p55", "player_name": "Pat Fiftyfive", "placement": 8},
            {"event_id": "big", "player_id": "p1", "player_name": "Pia One", "placement": 1},
        ],
    )
    warehouse = root / "warehouse"
    done = diprank("run", "--raw", str(raw), "--warehouse", str(warehouse), env={"DAGSTER_HOME": str(root / "home")})
    return warehouse, done


def test_run_continues_every_list(listed_run):
    warehouse, done = listed_run
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "continuing published lists:" in out
    lines = {line.split()[0]: line for line in out.split("continuing published lists:")[1].strip().splitlines()[:5]}
    assert "first month 1998-05" in lines["diwz"] and "3 valid game rows on or before it" in lines["diwz"]
    assert "first month 1998-05" in lines["eagle"] and "3 valid game rows" in lines["eagle"]
    assert "first month 2020-01" in lines["club"] and "10 valid game rows" in lines["club"]
    assert "first month 2019-05" in lines["dip_pouch"] and "0 valid event results" in lines["dip_pouch"]
    assert "first month 1998-05" in lines["ghost"] and "3 valid game rows" in lines["ghost"]
    assert not (warehouse / "rankings" / "diwz" / "year=1998" / "month=04").exists()
    assert not (warehouse / "rankings" / "club" / "year=1998").exists()


def test_diwz_golden_from_its_list(listed_run):
    warehouse, _ = listed_run
    table = rankings(warehouse, "diwz", "1998-05")
    assert [r["display"] for r in table] == ["1797-5", "1684-2", "1620-3", "1569-1", "1511-2", "1507-1", "1506-8"]
    report = diprank("report", "diwz", "--game", "deac-0017", "--month", "1998-05", "--warehouse", str(warehouse))
    assert report.returncode == 0, report.stderr
    from tests.test_report import SEED_TABLE_ONE, evaluation_lines, table_rows

    rows = table_rows(evaluation_lines(report.stdout))
    assert [row.split() for row in rows] == [line.split() for line in SEED_TABLE_ONE.splitlines()]


def test_eagle_golden_from_its_list(listed_run):
    warehouse, _ = listed_run
    row = next(r for r in rankings(warehouse, "eagle", "1998-05") if r["player_id"] == "spieler-1")
    assert (row["points"], row["games"], row["points_to_defend"]) == (59.0, 26, 2.0)
    assert row["player_name"] == "Spieler 1"


def test_dip_pouch_golden_from_its_list(listed_run):
    warehouse, _ = listed_run
    row = next(r for r in rankings(warehouse, "dip_pouch", "2019-05") if r["player_id"] == "p55")
    assert round(row["rating"], 3) == 60.019 and row["events"] == 5
    assert row["player_name"] == "Pat Fiftyfive"


def test_ghost_continues_each_category_of_its_list(listed_run):
    warehouse, _ = listed_run
    table = {(r["category"], r["player_id"]): r for r in rankings(warehouse, "ghost", "1998-05")}
    # A solo from 150 against six newcomers at 100: G = 750, so the winner gains 750 / 17.5 × (1 − 0.2).
    assert round(table["overall", "spieler-1"]["rating"], 4) == 184.2857
    assert table["overall", "spieler-1"]["games"] == 11
    assert round(table["classic", "spieler-1"]["rating"], 4) == round(120 + 720 / 17.5 * (1 - 120 / 720), 4)
    assert round(table["overall", "spieler-2"]["rating"], 4) == round(100 - 750 / 17.5 * 100 / 750, 4)


def test_club_golden_from_its_list(listed_run):
    warehouse, _ = listed_run
    row = next(r for r in rankings(warehouse, "club", "2020-01") if r["player_id"] == "c40")
    assert row["legacy"] == 4.0


def test_multi_site_game_gives_one_history_row_per_system(listed_run):
    warehouse, _ = listed_run
    for system in ("club", "eagle", "diwz"):
        rows = duckdb.sql(
            f"SELECT player_id, count(*) FROM read_parquet('{warehouse}/history/{system}/*/*/history.parquet', "
            "hive_partitioning = false) WHERE source_id = 'ms-1' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert rows == [("c40", 1), ("m1", 1), ("m2", 1)], system


# --- lifecycle: a late list, then a corrected one ---------------------------------------------


def test_a_late_and_a_corrected_list_leave_the_warehouse_equal_to_a_run_from_scratch(tmp_path):
    """A DiWZ and an Eagle list delivered after the history was rated move the systems' first
    month; a corrected list (another as_of, another rating) recomputes them; every step's
    warehouse, views and Dagster months equal a run from scratch."""
    from pipeline.synthetic.generator import synthetic_games
    from tests.test_lifecycle import assert_equals_a_run_from_scratch, materialized_months, run

    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    games = list(synthetic_games(5, 40, 12, dt.date(2020, 1, 1), dt.date(2020, 8, 31)))
    write_csv(raw / "games" / "a.csv", games)
    run(raw, warehouse)
    players = sorted({r["player_id"] for r in games})[:6]
    diwz = [
        {
            "system": "diwz",
            "as_of": "2020-03-31",
            "player_id": p,
            "rating": 1500 + 20 * i if i else 1600,
            "evaluations": i,
            "last_evaluated": "2020-02-01" if i else None,
        }
        for i, p in enumerate(players)
    ]
    eagle = [
        {
            "system": "eagle",
            "as_of": "2020-03-31",
            "player_id": players[0],
            "recent_points": "1.00;2.00",
            "games": 2,
            "last_game_date": "2020-03-01",
        }
    ]
    write_csv(raw / "lists" / "late.csv", diwz + eagle)
    run(raw, warehouse)
    assert min(materialized_months(warehouse)["diwz"]) == "2020-04-01"
    assert min(materialized_months(warehouse)["club"]) == "2020-01-01"
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch-1")
    corrected = [dict(r, as_of="2020-05-31", rating=r["rating"] + 7 if r["evaluations"] else 1600) for r in diwz]
    write_csv(raw / "lists" / "z-fix.csv", corrected)
    run(raw, warehouse)
    assert min(materialized_months(warehouse)["diwz"]) == "2020-06-01"
    assert min(materialized_months(warehouse)["eagle"]) == "2020-04-01"
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch-2")
