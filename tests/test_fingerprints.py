"""Month fingerprints of the validated feeds: one per month with rows, blind to row order, changed by
any value of the month's rows and by nothing outside the month; and the chain built on them."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from pipeline.core.feed_spec import FEEDS
from pipeline.core.months import Month
from pipeline.ingest.fingerprints import cumulative_fingerprints, fingerprints_path, month_fingerprints
from pipeline.synthetic.generator import synthetic_games
from pipeline.warehouse.store import Warehouse
from tests.support import validated_warehouse

JAN, FEB, MAR, APR = Month(2020, 1), Month(2020, 2), Month(2020, 3), Month(2020, 4)
KEY = '{"system": "diwz"}'


def games() -> list[dict]:
    rows = [dict(r, multi_site=False) for r in synthetic_games(31, 40, 15, dt.date(2020, 1, 1), dt.date(2020, 4, 30))]
    assert {Month.of(r["finished_on"]) for r in rows} == {JAN, FEB, MAR, APR}
    return rows


def fingerprints(tmp_path, name: str, **feeds) -> dict[Month, str]:
    return month_fingerprints(validated_warehouse(tmp_path / name, **feeds), "events" if "events" in feeds else "games")


def first_row_of(rows: list[dict], month: Month, date_column: str = "finished_on") -> int:
    return next(i for i, r in enumerate(rows) if Month.of(r[date_column]) == month)


def test_no_fingerprint_file_means_no_fingerprints(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    assert not fingerprints_path(warehouse, "games").exists()
    assert month_fingerprints(warehouse, "games") == {}


def test_one_fingerprint_per_month_with_rows_counting_them(tmp_path):
    rows = games()
    found = fingerprints(tmp_path, "w", games=rows)
    assert sorted(found) == [JAN, FEB, MAR, APR]
    for month, fingerprint in found.items():
        count, _, digest = fingerprint.partition(":")
        assert int(count) == sum(Month.of(r["finished_on"]) == month for r in rows)
        assert digest
    assert len(set(found.values())) == 4


def test_same_rows_in_another_order_give_the_same_fingerprints(tmp_path):
    rows = games()
    shuffled = rows[:]
    random.Random(5).shuffle(shuffled)
    assert shuffled != rows
    expected = fingerprints(tmp_path, "ordered", games=rows)
    assert fingerprints(tmp_path, "shuffled", games=shuffled) == expected
    assert fingerprints(tmp_path, "reversed", games=rows[::-1]) == expected


# One changed value per column of the games feed: each must change its month's fingerprint.
GAME_CHANGES = {
    "game_id": lambda v: v + "-corrected",
    "site": lambda v: (v or "") + "-elsewhere",
    "variant": lambda v: "colonial" if v != "colonial" else "standard",
    "supply_centres": lambda v: v + 1,
    "finished_on": lambda v: v.replace(day=28 if v.day != 28 else 27),  # same month, another day
    "rated": lambda v: not v,
    "power": lambda v: v + "-bis",
    "player_id": lambda v: "p99999",
    "player_name": lambda v: (v or "") + " Jr.",
    "original_player_id": lambda v: "p99998" if v is None else None,
    "replacement_denies": lambda v: not v,
    "result": lambda v: "survived" if v != "survived" else "eliminated",
    "centres": lambda v: v + 1,
    "eliminated_year": lambda v: 1905 if v is None else v + 1,
    "multi_site": lambda v: not v,
    "scoring": lambda v: "sum_of_squares" if v != "sum_of_squares" else "draw_size",
    "press": lambda v: "gunboat" if v != "gunboat" else "full",
    "live": lambda v: not v,
}


def test_every_games_column_is_covered():
    assert set(GAME_CHANGES) == set(FEEDS["games"].column_names)


@pytest.mark.parametrize("column", sorted(GAME_CHANGES))
def test_one_changed_value_changes_its_month_only(tmp_path, column):
    rows = games()
    before = fingerprints(tmp_path, "before", games=rows)
    at = first_row_of(rows, FEB)
    changed = [dict(r) for r in rows]
    changed[at][column] = GAME_CHANGES[column](rows[at][column])
    assert changed[at][column] != rows[at][column]
    after = fingerprints(tmp_path, "after", games=changed)
    assert after[FEB] != before[FEB]
    assert {m: f for m, f in after.items() if m != FEB} == {m: f for m, f in before.items() if m != FEB}


def test_swapping_two_players_between_powers_changes_the_month(tmp_path):
    # The same values in every column, in other rows: a per-column digest would not see it.
    rows = games()
    at = first_row_of(rows, MAR)
    nxt = at + 1
    assert rows[nxt]["game_id"] == rows[at]["game_id"] and rows[nxt]["player_id"] != rows[at]["player_id"]
    swapped = [dict(r) for r in rows]
    for column in ("player_id", "player_name"):
        swapped[at][column], swapped[nxt][column] = rows[nxt][column], rows[at][column]
    before, after = fingerprints(tmp_path, "before", games=rows), fingerprints(tmp_path, "after", games=swapped)
    assert after[MAR] != before[MAR]
    assert {m: after[m] for m in (JAN, FEB, APR)} == {m: before[m] for m in (JAN, FEB, APR)}


def test_a_row_moved_to_another_month_changes_both_months(tmp_path):
    rows = games()
    at = first_row_of(rows, FEB)
    moved = [dict(r) for r in rows]
    moved[at]["finished_on"] = dt.date(2020, 4, 15)
    before, after = fingerprints(tmp_path, "before", games=rows), fingerprints(tmp_path, "after", games=moved)
    assert after[FEB] != before[FEB] and after[APR] != before[APR]
    assert (after[JAN], after[MAR]) == (before[JAN], before[MAR])
    assert int(after[FEB].split(":")[0]) == int(before[FEB].split(":")[0]) - 1


def test_a_late_game_in_an_empty_month_adds_only_that_month(tmp_path):
    rows = [r for r in games() if Month.of(r["finished_on"]) != FEB]
    late = [dict(r, game_id="late-1") for r in synthetic_games(32, 1, 15, dt.date(2020, 2, 10), dt.date(2020, 2, 10))]
    before = fingerprints(tmp_path, "before", games=rows)
    after = fingerprints(tmp_path, "after", games=rows + late)
    assert FEB not in before and FEB in after
    assert {m: f for m, f in after.items() if m != FEB} == before


# --- events: results joined with their event, by the event's end date ----------------------------


def events() -> tuple[list[dict], list[dict]]:
    ends = {
        "e1": dt.date(2020, 1, 12),
        "e2": dt.date(2020, 2, 9),
        "e3": dt.date(2020, 2, 23),
        "e4": dt.date(2020, 3, 8),
    }
    event_rows = [
        {
            "event_id": e,
            "name": f"Open {e}",
            "start_date": end - dt.timedelta(days=1),
            "end_date": end,
            "location": "Oslo",
            "country": "NOR",
            "rounds": 3,
            "num_players": 5,
            "is_world_championship": e == "e3",
        }
        for e, end in ends.items()
    ]
    results = [
        {
            "event_id": e,
            "player_id": f"p{k:05d}",
            "player_name": f"Player {k}",
            "nationality": "NOR",
            "placement": k + 1,
        }
        for e in ends
        for k in range(5)
    ]
    return event_rows, results


EVENT_CHANGES = {
    "name": lambda v: v + " (renamed)",
    "start_date": lambda v: v - dt.timedelta(days=1),
    "end_date": lambda v: v + dt.timedelta(days=1),  # still February
    "rounds": lambda v: v + 1,
    "num_players": lambda v: v + 1,
    "is_world_championship": lambda v: not v,
}
RESULT_CHANGES = {
    "player_id": lambda v: "p99999",
    "player_name": lambda v: v + " Jr.",
    "nationality": lambda v: "SWE",
    "placement": lambda v: v + 10,
}


@pytest.mark.parametrize(
    "table,column", [("events", c) for c in EVENT_CHANGES] + [("event_results", c) for c in RESULT_CHANGES]
)
def test_one_changed_event_value_changes_its_month_only(tmp_path, table, column):
    event_rows, results = events()
    before = fingerprints(tmp_path, "before", events=event_rows, event_results=results)
    assert sorted(before) == [JAN, FEB, MAR]
    changed = {"events": [dict(r) for r in event_rows], "event_results": [dict(r) for r in results]}
    row = next(r for r in changed[table] if r["event_id"] == "e2")
    row[column] = (EVENT_CHANGES if table == "events" else RESULT_CHANGES)[column](row[column])
    after = fingerprints(tmp_path, "after", events=changed["events"], event_results=changed["event_results"])
    assert after[FEB] != before[FEB]
    assert (after[JAN], after[MAR]) == (before[JAN], before[MAR])


def test_event_columns_no_system_reads_leave_the_fingerprints_alone(tmp_path):
    # Location and country of an event shape no output (a player's country comes from the
    # registry or their nationality), so correcting them makes no month stale.
    event_rows, results = events()
    before = fingerprints(tmp_path, "before", events=event_rows, event_results=results)
    moved = [dict(r, location="Bergen", country="SWE") if r["event_id"] == "e2" else r for r in event_rows]
    assert fingerprints(tmp_path, "after", events=moved, event_results=results) == before


def test_event_rows_in_another_order_give_the_same_fingerprints(tmp_path):
    event_rows, results = events()
    before = fingerprints(tmp_path, "before", events=event_rows, event_results=results)
    assert fingerprints(tmp_path, "after", events=event_rows[::-1], event_results=results[::-1]) == before


# --- the cumulative chain of a system's months ----------------------------------------------------


def chain(warehouse, key=KEY, first=JAN, last=APR):
    return cumulative_fingerprints(warehouse, "games", key, first, last)


def test_chain_changes_from_the_changed_month_on(tmp_path):
    rows = games()
    base = chain(validated_warehouse(tmp_path / "before", games=rows))
    assert list(base) == [JAN, FEB, MAR, APR]
    corrected = [dict(r) for r in rows]
    at = first_row_of(rows, MAR)
    corrected[at]["centres"] += 1
    after = chain(validated_warehouse(tmp_path / "after", games=corrected))
    assert (after[JAN], after[FEB]) == (base[JAN], base[FEB])
    assert after[MAR] != base[MAR] and after[APR] != base[APR]


def test_chain_covers_months_without_rows(tmp_path):
    rows = [r for r in games() if Month.of(r["finished_on"]) != FEB]
    warehouse = validated_warehouse(tmp_path / "w", games=rows)
    longer = chain(warehouse, last=Month(2020, 6))
    assert list(longer) == [JAN, FEB, MAR, APR, Month(2020, 5), Month(2020, 6)]
    assert len(set(longer.values())) == 6
    assert {m: longer[m] for m in (JAN, FEB, MAR, APR)} == chain(warehouse)


def test_chain_depends_on_configuration_registry_and_first_month(tmp_path):
    rows = games()
    warehouse = validated_warehouse(tmp_path / "w", games=rows)
    base = chain(warehouse)
    assert chain(warehouse) == base
    other_key = chain(warehouse, key='{"system": "diwz", "newcomers": "start_1600"}')
    assert all(other_key[m] != base[m] for m in base)
    earlier_first = chain(warehouse, first=Month(2019, 12))
    assert all(earlier_first[m] != base[m] for m in base)
    players = [{"player_id": "p00001", "name": "Aoife Murphy", "country": "IRL"}]
    with_registry = chain(validated_warehouse(tmp_path / "r1", games=rows, players=players))
    assert all(with_registry[m] != base[m] for m in base)
    renamed = [dict(players[0], country="GBR")]
    assert all(
        chain(validated_warehouse(tmp_path / "r2", games=rows, players=renamed))[m] != with_registry[m] for m in base
    )
