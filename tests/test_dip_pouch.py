"""Dip Pouch (SPEC §3.1): the published numbers, reproduced through the real pipeline."""

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.systems.dip_pouch.kernel import listed_columns, national_ranks
from pipeline.systems.dip_pouch.reference import dip_pouch_ratings
from pipeline.systems.dip_pouch.rules import percentile, tournament_value
from tests.support import history, make_raw, rankings, run_cli

DIXIE_FIELD = [  # seed 000: 29 of 36 placements listed
    (1, "David MILLER"),
    (2, "Bill HACKENBRACHT"),
    (3, "Brad BLITSTEIN"),
    (4, "Peter YEARGIN"),
    (5, "Jeff LADD"),
    (5, "Edwin TURNAGE"),
    (7, "Tanya GILL"),
    (8, "Brian ECTON"),
    (9, "Michael BINDER"),
    (10, "Todd CRAIG"),
    (11, "Emily TURNAGE"),
    (12, "Derek HANLIN"),
    (13, "Keith WEST"),
    (14, "Emmett WAINWRIGHT"),
    (15, "Mitchell MCCONEGHEY"),
    (16, "Jason MASTBAUM"),
    (17, "Eric ERIKSON"),
    (18, "Alex RONKE"),
    (19, "Hudson DEFOE"),
    (20, "Vince LUTTERBIE"),
    (21, "Dan POLLOCK"),
    (22, "Clem JAYNE"),
    (23, "Scott CROOK"),
    (24, "Alex MASLOW"),
    (25, "Rob KOHR"),
    (26, "Vince AGOSTA"),
    (26, "Christian WEST"),
    (28, "Tim RICHARDSON"),
    (29, "Colin WEST"),
]
SEED_SCORES = [
    98.61,
    95.83,
    93.06,
    90.28,
    87.50,
    87.50,
    81.94,
    79.17,
    76.39,
    73.61,
    70.83,
    68.06,
    65.28,
    62.50,
    59.72,
    56.94,
    54.17,
    51.39,
    48.61,
    45.83,
    43.06,
    40.28,
    37.50,
    34.72,
    31.94,
    29.17,
    29.17,
    23.61,
    20.83,
]


def event(event_id, end, n, rounds, wc=False, start=None, country="USA", name=None):
    return {
        "event_id": event_id,
        "name": name or event_id,
        "start_date": start or end,
        "end_date": end,
        "location": "Somewhere",
        "country": country,
        "rounds": rounds,
        "num_players": n,
        "is_world_championship": wc,
    }


def result(event_id, pid, placement, nationality=None, name=None):
    return {
        "event_id": event_id,
        "player_id": pid,
        "player_name": name or pid,
        "nationality": nationality,
        "placement": placement,
    }


def slug(name):
    return name.lower().replace(" ", "_")


@pytest.fixture(scope="module")
def golden_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("dip_pouch")
    events = [
        # 55 before the 65-player event: two World Championships (TV 20): 40 → 50 → 55 exactly.
        event("wc_a", "2003-06-01", 5, 2, wc=True),
        event("wc_b", "2003-07-01", 2, 2, wc=True),
        event("big65", "2004-03-07", 65, 3, start="2004-03-05"),
        event("dixie33_2019", "2019-05-26", 36, 3, start="2019-05-24", name="Dixie 33 2019"),
        event("wdc8_1998", "1998-08-02", 77, 4, wc=True, start="1998-07-31", name="World DipCon VIII"),
        event("club_1999", "1999-04-11", 12, 1, name="a club event before 2001"),
        event("oneround_2005", "2005-01-09", 21, 1),
        event("euro_2006", "2006-09-03", 90, 5, name="a continental championship"),
    ]
    results = [
        result("wc_a", "p55", 1),
        result("wc_a", "w2", 2),
        result("wc_b", "p55", 1),
        result("wc_b", "w3", 2),
        result("big65", "p55", 8, "USA"),
        *[result("dixie33_2019", slug(n), place, "USA", n) for place, n in DIXIE_FIELD],
        result("wdc8_1998", "wdc_winner", 1, "FRA"),
        result("wdc8_1998", "wdc_last", 77, "GBR"),
        result("club_1999", "club_player", 1, "GER"),
        result("oneround_2005", "one_round", 1, "GER"),
        result("euro_2006", "euro_player", 1, "NOR"),
    ]
    raw = make_raw(root / "raw", events=events, event_results=results)
    warehouse = root / "warehouse"
    code, out, err = run_cli(
        "run", "--raw", str(raw), "--warehouse", str(warehouse), "--systems", "dip_pouch", "--to", "2019-06"
    )
    assert code == 0, out + err
    return warehouse


def test_rating_55_eighth_of_65_multi_round(golden_run):
    rows = {r["player_id"]: r for r in history(golden_run, "dip_pouch", "2004-03")}
    row = rows["p55"]
    assert row["rating_before"] == pytest.approx(55.0, abs=1e-12)
    assert row["percentile"] == pytest.approx(88.4615384615, abs=1e-9)
    assert row["tournament_value"] == 15.0  # 65/3.5 + 2 = 20.57, capped
    assert row["rating_after"] == pytest.approx(60.0192307692, abs=1e-9)


def test_dixie_33_2019(golden_run):
    rows = history(golden_run, "dip_pouch", "2019-05")
    dixie = [r for r in rows if r["source_id"] == "dixie33_2019"]
    assert len(dixie) == 29 and all(r["num_players"] == 36 for r in dixie)
    assert {round(r["tournament_value"], 4) for r in dixie} == {12.2857}
    assert f"{dixie[0]['tournament_value']:.2f}" == "12.29"  # "Coeff 1 12.29"
    by_name = {r["player_id"]: r for r in dixie}
    assert [f"{by_name[slug(n)]['percentile']:.2f}" for _, n in DIXIE_FIELD] == [f"{s:.2f}" for s in SEED_SCORES]
    assert by_name["jeff_ladd"]["placement"] == by_name["edwin_turnage"]["placement"] == 5
    assert by_name["colin_west"]["percentile"] == pytest.approx(20.8333, abs=1e-4)


def test_world_championship_counts_before_2001(golden_run):
    rows = {r["player_id"]: r for r in history(golden_run, "dip_pouch", "1998-08")}
    assert rows["wdc_winner"]["tournament_value"] == 20.0
    assert rows["wdc_winner"]["rating_after"] == pytest.approx(40 + 0.2 * ((77.5 - 1) / 77 * 100 - 40))
    listed = {r["player_id"] for r in rankings(golden_run, "dip_pouch", "1998-08")}
    assert listed == {"wdc_winner", "wdc_last"}


def test_other_events_before_cutoff_have_no_effect(golden_run):
    rows = {r["player_id"]: r for r in history(golden_run, "dip_pouch", "1999-04")}
    assert rows["club_player"]["tournament_value"] == 0.0
    assert rows["club_player"]["rating_after"] is None
    assert "club_player" not in {r["player_id"] for r in rankings(golden_run, "dip_pouch", "1999-04")}


def test_one_round_value_and_continental_cap(golden_run):
    one = {r["player_id"]: r for r in history(golden_run, "dip_pouch", "2005-01")}["one_round"]
    assert one["tournament_value"] == pytest.approx(21 / 7 + 2)
    euro = {r["player_id"]: r for r in history(golden_run, "dip_pouch", "2006-09")}["euro_player"]
    assert euro["tournament_value"] == 15.0  # a continental championship is not a World Championship


def test_snapshot_every_month_with_common_columns(golden_run):
    table = rankings(golden_run, "dip_pouch", "2010-02")  # a month without events still has a snapshot
    assert table and table[0]["as_of"] == dt.date(2010, 2, 28)
    assert list(table[0]) == [
        "system",
        "as_of",
        "rank",
        "player_id",
        "player_name",
        "rating",
        "rank_change",
        "rating_change",
        "peak_rating",
        "events",
        "last_event_date",
        "country",
        "national_rank",
    ]
    assert all(r["rank_change"] == 0 and r["rating_change"] == 0 for r in table)
    months = sorted((golden_run / "rankings" / "dip_pouch").glob("year=*/month=*/rankings.parquet"))
    assert len(months) == (2019 - 1998) * 12 + (6 - 8) + 1


def test_shared_ranks_and_national_ranking(golden_run):
    table = rankings(golden_run, "dip_pouch", "2019-05")
    by_id = {r["player_id"]: r for r in table}
    assert by_id["jeff_ladd"]["rank"] == by_id["edwin_turnage"]["rank"]
    assert by_id["jeff_ladd"]["player_name"] == "Jeff LADD"
    ranks = [r["rank"] for r in table]
    assert ranks == sorted(ranks) and ranks[0] == 1
    usa = sorted((r for r in table if r["country"] == "USA"), key=lambda r: r["national_rank"])
    assert usa[0]["national_rank"] == 1
    assert by_id["wdc_winner"]["country"] == "FRA" and by_id["wdc_winner"]["national_rank"] == 1


def test_formula_functions():
    assert percentile(65, 8) == pytest.approx(88.46153846)
    assert tournament_value(77, 4, True, dt.date(1998, 8, 2)) == 20
    assert tournament_value(77, 4, False, dt.date(1998, 8, 2)) == 0
    assert tournament_value(36, 3, False, dt.date(2019, 5, 26)) == pytest.approx(12.285714)
    assert tournament_value(36, 3, False, dt.date(2019, 5, 26), cutoff_year=2020) == 0
    # Countries as codes (A = 0, B = 1, none = -1), rows in rating order.
    ranks = national_ranks(np.array([0, 0, 1, 0, -1]), np.array([50.0, 50.0, 49.0, 48.0, 48.0]), 2)
    assert ranks.tolist() == [1, 1, 1, 3, 0]
    ranks = national_ranks(np.array([0, 1, 0, 0, 1, 0, 1]), np.array([9.0, 8.0, 8.0, 8.0, 7.0, 7.0, 6.0]), 2)
    assert ranks.tolist() == [1, 1, 2, 2, 2, 4, 3]


def test_listed_columns_share_ranks_and_spell_countries():
    # Players 0..4 by number; the table order is 3, 1, 0, 4, 2. Countries: 0 = "FRA", 1 = "USA".
    rating = np.array([50.0, 50.0, 45.0, 60.0, 48.0])
    country = np.array([1, -1, 0, 1, 1], np.int32)
    names = pa.array(["FRA", "USA"])
    _, name_offsets, name_bytes = names.buffers()
    rank, ratings, events, last, offsets, text, named, national = listed_columns(
        np.array([3, 1, 0, 4, 2]),
        rating,
        np.array([1, 2, 3, 4, 5]),
        np.array([10, 11, 12, 13, 14], np.int32),
        country,
        2,
        np.frombuffer(name_offsets, np.int32, 3),
        np.frombuffer(name_bytes, np.uint8),
    )
    assert rank.tolist() == [1, 2, 2, 4, 5]
    assert ratings.tolist() == [60.0, 50.0, 50.0, 48.0, 45.0]
    assert events.tolist() == [4, 2, 1, 5, 3] and last.tolist() == [13, 11, 10, 14, 12]
    spelled = pa.StringArray.from_buffers(5, pa.py_buffer(offsets), pa.py_buffer(text)).to_pylist()
    assert spelled == ["USA", "", "USA", "USA", "FRA"]
    assert named.tolist() == [True, False, True, True, True]
    assert national.tolist() == [1, 0, 2, 3, 1]


def test_pipeline_matches_reference(golden_run):
    """The asset path's last table equals the plain reference over the same events."""
    import pyarrow.parquet as pq

    events = pq.read_table(golden_run / "validated" / "events.parquet").to_pylist()
    results = pq.read_table(golden_run / "validated" / "event_results.parquet").to_pylist()
    for e in events:
        e["results"] = [r for r in results if r["event_id"] == e["event_id"]]
    expected = dip_pouch_ratings(events)
    table = rankings(golden_run, "dip_pouch", "2019-06")
    assert {r["player_id"]: r["rating"] for r in table} == expected


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_path_matches_reference_month_by_month(tmp_path, seed):
    """The vectorised system against the plain references on generated events, at every month end:
    the whole table (ranks, ratings, events, last event, country, national rank) and the ratings.
    Some nationalities are blank or missing, and the registry names a country for some players
    (and an empty one for another), so that countries come from both places."""
    import pyarrow.parquet as pq

    from pipeline.core.months import Month, month_range
    from pipeline.synthetic.generator import write_feeds
    from pipeline.systems.base import EVENT_RESULT_COLUMNS, MonthInput, PlayerInfo
    from pipeline.systems.dip_pouch.reference import dip_pouch_tables
    from pipeline.systems.dip_pouch.rules import DipPouch

    write_feeds(tmp_path, games=10, players=300, years=5, events=50, seed=seed, end_year=2006)
    events = pq.read_table(next((tmp_path / "events").glob("*.parquet"))).to_pylist()
    results = pq.read_table(next((tmp_path / "event_results").glob("*.parquet"))).to_pylist()
    by_event = {e["event_id"]: e for e in events}
    rows = [
        {
            **{
                k: by_event[r["event_id"]][k]
                for k in ("start_date", "end_date", "rounds", "num_players", "is_world_championship")
            },
            "event_id": r["event_id"],
            "event_name": by_event[r["event_id"]]["name"],
            "player_id": r["player_id"],
            "player_name": r["player_name"],
            "nationality": r["nationality"],
            "placement": r["placement"],
        }
        for r in results
    ]
    for k, row in enumerate(rows):
        row["nationality"] = {0: "", 1: None}.get(k % 9, row["nationality"])
    rows.sort(key=lambda r: (r["end_date"], r["start_date"], r["event_id"], r["placement"], r["player_id"]))
    table = pa.Table.from_pylist(rows, schema=EVENT_RESULT_COLUMNS)
    players = sorted({r["player_id"] for r in rows})
    registry = {
        "nobody": PlayerInfo("No One", "NOR"),
        players[0]: PlayerInfo("First", ""),
        **{pid: PlayerInfo("Registered", "REG") for pid in players[1:40:3]},
    }
    system, state = DipPouch(), DipPouch().initial_state()
    months = month_range(Month.of(rows[0]["end_date"]), Month.of(rows[-1]["end_date"]))
    expected_tables = dict(dip_pouch_tables(rows, months, {pid: info.country for pid, info in registry.items()}))
    assert any(r["country"] == "REG" for r in expected_tables[months[-1]])  # both sources are used
    assert any(r["country"] not in ("REG", None) for r in expected_tables[months[-1]])
    for month in months:
        inside = [i for i, r in enumerate(rows) if Month.of(r["end_date"]) == month]
        month_rows = table.slice(inside[0], len(inside)) if inside else table.slice(0, 0)
        out = system.step(state, MonthInput(month, month_rows, registry))
        state = out.state
        assert out.table.to_pylist() == expected_tables[month], month
        so_far = [e for e in events if e["end_date"] <= month.last_day]
        for e in so_far:
            e["results"] = [r for r in results if r["event_id"] == e["event_id"]]
        expected = dip_pouch_ratings(so_far)
        got = dict(zip(out.table.column("player_id").to_pylist(), out.table.column("rating").to_pylist()))
        assert got == expected, month
        assert_listed_in_order(out.table)
    restored = system.decode_state(system.encode_state(state))
    assert restored.ids == state.ids and np.array_equal(restored.rating, state.rating)


def assert_listed_in_order(table):
    """The table's order, ranks and national ranks as plain Python computes them."""
    rows = table.to_pylist()
    assert [(r["player_id"], r["rating"]) for r in rows] == sorted(
        ((r["player_id"], r["rating"]) for r in rows), key=lambda pr: (-pr[1], pr[0])
    )
    for k, r in enumerate(rows):
        assert r["rank"] == 1 + sum(o["rating"] > r["rating"] for o in rows[: k + 1])
        if r["country"] is None:
            assert r["national_rank"] is None
        else:
            assert r["national_rank"] == 1 + sum(
                o["country"] == r["country"] and o["rating"] > r["rating"] for o in rows[: k + 1]
            )


def test_event_kernel_matches_the_rule_row_by_row():
    """The compiled event pass against updated_rating, a player listed twice in one event included
    (both rows start from the player's rating before the event; the event counts once)."""
    from pipeline.systems.dip_pouch import kernel
    from pipeline.systems.dip_pouch.rules import updated_rating

    players = np.array([0, 1, 2, 1, 0, 2, 2], np.int64)
    event_start = np.array([0, 3, 5, 7], np.int64)
    value = np.array([12.5, 0.0, 20.0])
    pct = np.array([90.0, 50.0, 10.0, 75.0, 25.0, 60.0, 30.0])
    end_day = np.array([10, 10, 10, 11, 11, 12, 12], np.int32)
    rating, events, last = np.full(3, 40.0), np.zeros(3, np.int64), np.zeros(3, np.int32)
    before, after = np.zeros(7), np.full(7, np.nan)
    kernel.apply_events(
        event_start, value, players, pct, end_day, rating, events, last, before, after, np.empty(7, np.int64)
    )
    expected = {0: 40.0, 1: 40.0, 2: 40.0}
    counts = [0, 0, 0]
    for e in range(3):
        rows = range(event_start[e], event_start[e + 1])
        old = {int(players[r]): expected[int(players[r])] for r in rows}
        for r in rows:
            assert before[r] == old[int(players[r])]
            if value[e] > 0:
                assert after[r] == updated_rating(before[r], value[e], pct[r])
                expected[int(players[r])] = after[r]
            else:
                assert np.isnan(after[r])
        if value[e] > 0:
            for p in old:
                counts[p] += 1
    assert rating.tolist() == [expected[p] for p in range(3)]
    assert events.tolist() == counts and last.tolist() == [10, 10, 12]


def test_tournament_values_match_the_rule():
    from pipeline.systems.dip_pouch import kernel

    cases = [
        (n, rounds, wc, year)
        for n in (1, 7, 12, 36, 45, 77, 200)
        for rounds in (1, 2, 5)
        for wc in (False, True)
        for year in (1998, 2000, 2001, 2019)
    ]
    n, rounds, wc, year = (np.array(column) for column in zip(*cases))
    got = kernel.tournament_values(n, rounds, wc, year, 2001)
    assert got.tolist() == [tournament_value(*case[:3], dt.date(case[3], 6, 1)) for case in cases]
    assert kernel.end_years(np.array([-1, 0, 11016, 18262], np.int32)).tolist() == [1969, 1970, 2000, 2020]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_table_order_is_last_months_order_with_the_touched_players_sorted_in(data):
    """kernel.table_order against a plain sort of the listed players by (-rating, id), month after
    month: equal ratings, ids that begin one another, players touched twice or not listed."""
    from pipeline.systems.dip_pouch.kernel import table_order
    from pipeline.systems.kernels.ids import string_buffers

    ids = data.draw(st.lists(st.text(alphabet="abé", min_size=1, max_size=4), min_size=1, max_size=30, unique=True))
    n = len(ids)
    offsets, text = string_buffers(pa.array(ids, pa.string()))
    rating, events = np.full(n, 40.0), np.zeros(n, np.int64)
    order = np.zeros(0, np.int64)
    for _ in range(data.draw(st.integers(1, 6))):
        touched = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n)), np.int64)
        for p in touched.tolist():
            rating[p] = data.draw(st.sampled_from([40.0, 50.0, 55.5, 60.0]))  # few values: many ties
            events[p] += data.draw(st.integers(0, 1))
        order = table_order(order, touched, events, rating, offsets, text)
        expected = sorted((p for p in range(n) if events[p] > 0), key=lambda p: (-rating[p], ids[p].encode()))
        assert order.tolist() == expected


def test_a_state_stepped_again_gives_what_its_checkpoint_gives():
    """States stepped one from another share their players' numbering: stepping an earlier state a
    second time, with other newcomers, must neither see the first branch's players nor change
    that branch, and gives what the same state restored from its checkpoint gives."""
    from pipeline.core.months import Month
    from pipeline.core.state_codec import dumps, loads
    from pipeline.systems.base import EVENT_RESULT_COLUMNS, MonthInput
    from pipeline.systems.dip_pouch.rules import DipPouch

    def month_of(month: Month, event: str, players: list[str]) -> MonthInput:
        day = month.last_day
        rows = [
            {
                "event_id": event,
                "event_name": event,
                "start_date": day,
                "end_date": day,
                "rounds": 3,
                "num_players": len(players),
                "is_world_championship": False,
                "player_id": pid,
                "player_name": pid,
                "nationality": "FRA" if pid.startswith("b") else "",
                "placement": k + 1,
            }
            for k, pid in enumerate(players)
        ]
        return MonthInput(month, pa.Table.from_pylist(rows, schema=EVENT_RESULT_COLUMNS))

    system = DipPouch()
    january, february, march = Month(2020, 1), Month(2020, 2), Month(2020, 3)
    start = system.step(system.initial_state(), month_of(january, "e1", ["p1", "p2", "p3"])).state
    checkpoint = dumps(system.encode_state(start))
    one = system.step(start, month_of(february, "e2", ["a1", "p1", "a2"]))
    other = system.step(start, month_of(february, "e3", ["b1", "p2", "b2", "b3"]))
    restored = system.step(system.decode_state(loads(checkpoint)), month_of(february, "e3", ["b1", "p2", "b2", "b3"]))
    assert other.table.equals(restored.table) and other.history.equals(restored.history)
    assert set(other.table.column("player_id").to_pylist()) == {"p1", "p2", "p3", "b1", "b2", "b3"}
    assert other.state.ids == ["p1", "p2", "p3", "b1", "b2", "b3"]
    # The first branch goes on as if the second had never been stepped.
    later = system.step(one.state, month_of(march, "e4", ["a2", "b1"]))
    alone = system.step(
        system.step(system.decode_state(loads(checkpoint)), month_of(february, "e2", ["a1", "p1", "a2"])).state,
        month_of(march, "e4", ["a2", "b1"]),
    )
    assert later.table.equals(alone.table) and later.history.equals(alone.history)
    assert later.state.ids == ["p1", "p2", "p3", "a1", "a2", "b1"]
    assert dumps(system.encode_state(start)) == checkpoint
