"""EaglePoints against the slow reference on generated games, checkpoint round trips, and the
compiled pieces (the counted top of the table, calendar arithmetic, integer rounding) against plain Python."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core import state_codec
from pipeline.core.months import Month, add_years, month_range
from pipeline.core.rounding import half_up
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.base import GAME_COLUMNS, MonthInput, MonthOutput
from pipeline.systems.eagle import kernel as eagle_kernel
from pipeline.systems.eagle import rules as eagle_module
from pipeline.systems.eagle import table as eagle_table
from pipeline.systems.eagle.reference import as_rows, eagle_reference
from pipeline.systems.eagle.rules import EPOCH, EaglePoints, string_buffers
from pipeline.systems.games import games_from_rows, rows_to_table
from tests.fixtures.eagle_cases import listing_window_games

TABLE_COLUMNS = ["rank", "player_id", "rating", "points", "games", "last_game_date", "points_to_defend", "new_eagles"]
HISTORY_COLUMNS = [
    "source_id",
    "source_date",
    "player_id",
    "rating_before",
    "rating_after",
    "contribution",
    "game_value",
    "points",
]
AWARD_COLUMNS = ["award", "period", "player_id", "value", "game_id"]


def monthly_inputs(rows: list[dict]) -> list[MonthInput]:
    """One MonthInput per month from the first game's month to the last's, empty months included."""
    grouped: dict[Month, list[dict]] = defaultdict(list)
    for row in rows:
        day = row["finished_on"]
        grouped[Month.of(dt.date.fromisoformat(day) if isinstance(day, str) else day)].append(row)
    return [
        MonthInput(month, rows_to_table(grouped[month]) if grouped.get(month) else GAME_COLUMNS.empty_table())
        for month in month_range(min(grouped), max(grouped))
    ]


def run_fast(system: EaglePoints, inputs: list[MonthInput], state=None) -> list[MonthOutput]:
    """Step the system over the inputs (from its initial state unless one is given)."""
    state = system.initial_state() if state is None else state
    outputs = []
    for month_input in inputs:
        out = system.step(state, month_input)
        state = out.state
        outputs.append(out)
    return outputs


def assert_matches_reference(rows: list[dict], variants: tuple[str, ...], positions: str) -> list[MonthOutput]:
    """Fast path and reference give equal tables, history and awards every month."""
    inputs = monthly_inputs(rows)
    fast = run_fast(EaglePoints(variants=variants, positions=positions), inputs)
    games = games_from_rows(rows_to_table(rows))
    slow = eagle_reference(games, [i.month for i in inputs], variants=variants, positions=positions)
    for out, ref in zip(fast, slow, strict=True):
        assert out.table.to_pylist() == as_rows(ref.table, TABLE_COLUMNS), ref.month
        assert out.history.to_pylist() == as_rows(ref.history, HISTORY_COLUMNS), ref.month
        assert out.extras["awards"].to_pylist() == as_rows(ref.awards, AWARD_COLUMNS), ref.month
    return fast


def generated_rows(
    seed: int, n_games: int, n_players: int, first: dt.date, last: dt.date, prefix: str = "g"
) -> list[dict]:
    """synthetic_games rows with game ids prefixed (so batches can be combined)."""
    rows = list(synthetic_games(seed, n_games, n_players, first, last))
    for row in rows:
        row["game_id"] = prefix + row["game_id"]
    return rows


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_players=st.integers(8, 40),
    n_games=st.integers(1, 60),
    years=st.integers(1, 9),
    positions=st.sampled_from(["published", "live"]),
    with_youngstown=st.booleans(),
)
def test_fast_path_matches_reference(seed, n_players, n_games, years, positions, with_youngstown):
    rows = generated_rows(seed, n_games, n_players, dt.date(2001, 1, 1), dt.date(2001 + years, 12, 31))
    variants = ("standard", "youngstown") if with_youngstown else ("standard",)
    outputs = assert_matches_reference(rows, variants, positions)
    # Seven-player games: never worth more than 13.96, and no table reaches 140.
    assert max((r["game_value"] for o in outputs for r in o.history.to_pylist()), default=0) <= 13.96
    assert max((p for o in outputs for p in o.table.column("points").to_pylist()), default=0) < 140


def gap_rows() -> list[dict]:
    """Two bursts of games among the same players 8 years apart, so listing ends and restarts happen."""
    return (
        generated_rows(11, 40, 25, dt.date(2000, 1, 1), dt.date(2000, 12, 31), "a")
        + generated_rows(12, 25, 25, dt.date(2003, 1, 1), dt.date(2003, 3, 31), "b")
        + generated_rows(13, 40, 25, dt.date(2008, 6, 1), dt.date(2009, 6, 30), "c")
    )


def test_listing_ends_and_restarts_match_reference_in_both_modes():
    for positions in ("published", "live"):
        outputs = assert_matches_reference(gap_rows(), ("standard",), positions)
        restarted = [
            row
            for out in outputs
            for row in out.history.to_pylist()
            if row["source_id"].startswith("c") and row["rating_before"] is None
        ]
        assert restarted, "the 8-year gap must restart some players"
        assert any(out.table.num_rows == 0 for out in outputs), "everyone must drop off the list at some point"


def test_a_table_longer_than_602_positions_matches_reference():
    rows = generated_rows(5, 260, 900, dt.date(2010, 1, 1), dt.date(2010, 4, 30))
    for positions in ("published", "live"):
        outputs = assert_matches_reference(rows, ("standard",), positions)
        assert max(out.table.num_rows for out in outputs) > 602
        # Some game must have had a player at a scoring position and one below it.
        contributions = {row["contribution"] for out in outputs[1:] for row in out.history.to_pylist()}
        assert {0.50, 2.00} <= contributions


def test_checkpoint_round_trip_gives_identical_later_months():
    inputs = monthly_inputs(gap_rows())
    for positions in ("published", "live"):
        system = EaglePoints(positions=positions)
        straight = run_fast(system, inputs)
        for cut in (5, 30, len(inputs) - 8):  # mid-year (year tally in flight), during the gap, near the end
            data = state_codec.loads(state_codec.dumps(system.encode_state(straight[cut].state)))
            restored = system.decode_state(data)
            assert list(restored.listed) == list(straight[cut].state.listed)
            assert state_codec.dumps(system.encode_state(restored)) == state_codec.dumps(
                system.encode_state(straight[cut].state)
            )
            resumed = run_fast(system, inputs[cut + 1 :], restored)
            for a, b in zip(straight[cut + 1 :], resumed, strict=True):
                assert a.table.equals(b.table) and a.history.equals(b.history)
                assert a.extras["awards"].equals(b.extras["awards"])


def test_checkpoint_on_the_day_a_listing_ends():
    # lapsed's listing ends on 2024-03-31, the as_of of the checkpointed month.
    inputs = monthly_inputs(listing_window_games())
    system = EaglePoints()
    straight = run_fast(system, inputs)
    cut = [i.month for i in inputs].index(Month(2024, 3))
    restored = system.decode_state(state_codec.loads(state_codec.dumps(system.encode_state(straight[cut].state))))
    assert list(restored.listed) == list(straight[cut].state.listed)
    assert not any(key[-1] == "lapsed" for key in restored.listed)
    resumed = run_fast(system, inputs[cut + 1 :], restored)
    assert [o.table for o in resumed] == [o.table for o in straight[cut + 1 :]]


def test_initial_state_round_trips():
    system = EaglePoints()
    data = state_codec.loads(state_codec.dumps(system.encode_state(system.initial_state())))
    inputs = monthly_inputs(generated_rows(3, 20, 15, dt.date(2005, 1, 1), dt.date(2005, 6, 30)))
    fresh = run_fast(system, inputs)
    decoded = run_fast(system, inputs, system.decode_state(data))
    assert [o.table for o in fresh] == [o.table for o in decoded]


# ---------------------------------------------------------------------------------------------
# Larger histories: every time rule, many players
# ---------------------------------------------------------------------------------------------


def three_eras(seed: int, n_games: int, n_players: int) -> list[dict]:
    """Games among one pool of players in three bursts: the second comes back after more than 2
    years (listings end, games are kept), the third after more than 7 (everyone starts over)."""
    return (
        generated_rows(seed, n_games * 3 // 5, n_players, dt.date(2001, 1, 1), dt.date(2004, 6, 30), "a")
        + generated_rows(seed + 1, n_games // 5, n_players, dt.date(2006, 9, 1), dt.date(2007, 12, 31), "b")
        + generated_rows(seed + 2, n_games // 5, n_players, dt.date(2015, 1, 1), dt.date(2016, 2, 29), "c")
    )


def assert_live_table_holds_the_top(outputs: list[MonthOutput]) -> None:
    """In live mode the counted top holds the top of the month-end table: everyone with at least
    the threshold's points, at least the scoring positions unless the threshold is 0; its
    Fenwick sums count its members."""
    for out in outputs:
        live, order, points = out.state.live, out.state.order, out.state.points
        meta = live.meta
        held = eagle_table.members(live.top)
        size = held.shape[0]
        assert sorted(held.tolist()) == sorted(order[:size].tolist()) and meta[eagle_kernel.ABOVE] == size
        threshold = meta[eagle_kernel.THRESHOLD]
        assert (points[order[size:]] < threshold).all() and (points[held] >= threshold).all()
        assert threshold == 0 or size >= 602
        assert np.flatnonzero(live.listed).tolist() == sorted(order.tolist())
        assert np.flatnonzero(live.in_top).tolist() == sorted(held.tolist())
        for value in {*points[held].tolist(), int(threshold) - 1}:
            assert eagle_table.at_most(live.top, value) == int((points[held] <= value).sum())


@settings(max_examples=3, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_players=st.integers(150, 450),
    positions=st.sampled_from(["published", "live"]),
)
def test_years_of_generated_games_match_reference(seed, n_players, positions):
    # The slow reference re-sorts the whole table for every game in live mode: fewer games there.
    n_games = 2500 if positions == "published" else 1200
    rows = three_eras(seed, n_games, n_players)
    outputs = assert_matches_reference(rows, ("standard", "youngstown"), positions)
    history = [row for out in outputs for row in out.history.to_pylist()]
    tables = [out.table.to_pylist() for out in outputs]
    # Every time rule fired: the ten-game window, listings ending, returns with old games, restarts.
    assert any(row["games"] > 10 and row["points_to_defend"] is not None for table in tables for row in table)
    assert any(not table for table in tables)
    assert any(row["source_id"].startswith("b") and row["rating_before"] is not None for row in history)
    assert any(
        row["source_id"].startswith("c")
        and row["rating_before"] is None
        and any(r["player_id"] == row["player_id"] for r in history if r["source_id"].startswith("a"))
        for row in history
    )
    assert sum(1 for out in outputs if out.extras["awards"].num_rows > 1) >= 4  # the Decembers' titles
    if positions == "live":
        assert_live_table_holds_the_top(outputs)


def test_many_players_grow_the_arrays():
    rows = generated_rows(21, 400, 4000, dt.date(2010, 1, 1), dt.date(2011, 6, 30))
    for positions in ("published", "live"):
        outputs = assert_matches_reference(rows, ("standard", "youngstown"), positions)
        capacities = [out.state.points.shape[0] for out in outputs]
        assert capacities == sorted(capacities) and len(set(capacities)) >= 4
        assert outputs[-1].state.count > 1024 and capacities[-1] >= outputs[-1].state.count
        if positions == "live":
            assert_live_table_holds_the_top(outputs)
            assert any(out.state.live.meta[eagle_kernel.THRESHOLD] > 0 for out in outputs)


def test_live_threshold_comes_down_when_the_top_expires(monkeypatch):
    # A small top (602..640 players) over a table of about a thousand: its threshold goes up as
    # the table grows, and comes down to players below it when the first burst's listings end.
    monkeypatch.setattr(eagle_module, "TOP_SIZES", np.array([602, 620, 640], dtype=np.int64))
    rows = generated_rows(41, 300, 1500, dt.date(2010, 1, 1), dt.date(2010, 3, 31), "a") + generated_rows(
        141, 200, 1500, dt.date(2011, 1, 1), dt.date(2012, 6, 30), "b"
    )
    outputs = assert_matches_reference(rows, ("standard",), "live")
    assert_live_table_holds_the_top(outputs)
    thresholds = [int(out.state.live.meta[eagle_kernel.THRESHOLD]) for out in outputs]
    assert any(0 < after < before for before, after in zip(thresholds, thresholds[1:]))


def test_stepping_an_earlier_state_again_leaves_it_as_it_was():
    inputs = monthly_inputs(generated_rows(8, 120, 60, dt.date(2005, 1, 1), dt.date(2005, 12, 31)))
    other = monthly_inputs(generated_rows(9, 40, 300, dt.date(2005, 4, 1), dt.date(2005, 4, 30), "x"))
    assert other[0].month == inputs[3].month
    for positions in ("published", "live"):
        system = EaglePoints(positions=positions)
        straight = run_fast(system, inputs)
        # Another April (with players never seen before) from the same March state...
        system.step(straight[2].state, other[0])
        # ...and the real April onwards from it give the same months as the straight run.
        again = run_fast(system, inputs[3:], straight[2].state)
        for a, b in zip(straight[3:], again, strict=True):
            assert a.table.equals(b.table) and a.history.equals(b.history)
            assert a.extras["awards"].equals(b.extras["awards"])


# ---------------------------------------------------------------------------------------------
# The compiled pieces
# ---------------------------------------------------------------------------------------------


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_counted_top_agrees_with_a_sorted_list(seed):
    rng = np.random.default_rng(seed)
    n = 300
    # Few distinct values, so that every tie-break of the table order is needed.
    points = rng.integers(0, 5, n).astype(np.int64)
    games = rng.integers(1, 4, n).astype(np.int64)
    last = rng.integers(0, 3, n).astype(np.int32)
    # Ids of different lengths, some prefixes of others, some beyond ASCII.
    ids = [
        ("p" + "é" * int(rng.integers(0, 2)) + str(int(v)))[: int(rng.integers(2, 6))] + f"#{i}"
        for i, v in enumerate(rng.permutation(n))
    ]
    id_offsets, id_bytes = (a.copy() for a in string_buffers(pa.array(ids, pa.string())))
    top = eagle_table.empty(n, 5)
    keys = (points, games, last, id_offsets, id_bytes)

    def key(p: int) -> tuple:
        return (-points[p], games[p], -last[p], ids[p])

    members: set[int] = set()
    for step in range(4000):
        growing = (step // 1000) % 2 == 0  # grow to most of the players, shrink, grow, shrink
        p = int(rng.integers(n))
        if p in members and (not growing or rng.random() < 0.2):
            eagle_table.remove(top, p, points)
            members.discard(p)
            if rng.random() < 0.5:  # a player's key changes only while out of the top
                points[p], games[p], last[p] = rng.integers(0, 5), rng.integers(1, 4), rng.integers(0, 3)
        elif p not in members and (growing or rng.random() < 0.2):
            eagle_table.insert(top, p, points)
            members.add(p)
        probe = int(rng.integers(n))
        before = sum(1 for q in members if q != probe and key(q) < key(probe))
        assert eagle_table.rank(top, len(members), probe, n, *keys) == before
        assert eagle_table.rank(top, len(members), probe, 20, *keys) == min(before, 20)
        value = int(rng.integers(0, 5))
        assert eagle_table.at_most(top, value) == sum(1 for q in members if points[q] <= value)
        if members:
            assert eagle_table.lowest_points(top) == min(points[q] for q in members)
        if step % 250 == 0:
            assert sorted(eagle_table.members(top).tolist()) == sorted(members)
    # Grown to more players and points values, the top counts the same members.
    grown = eagle_table.regrown(top, n + 7, 37)
    assert sorted(eagle_table.members(grown).tolist()) == sorted(members)
    for value in range(37):
        assert eagle_table.at_most(grown, value) == sum(1 for q in members if points[q] <= value)
    probe = int(rng.integers(n))
    assert eagle_table.rank(grown, len(members), probe, n, *keys) == sum(
        1 for q in members if q != probe and key(q) < key(probe)
    )
    # Points the arrays do not count are refused, not written past them.
    outside = int(next(q for q in range(n) if q not in members)) if len(members) < n else None
    if outside is not None:
        points[outside] = 5
        with pytest.raises(ValueError, match="points outside"):
            eagle_table.insert(top, outside, points)
    # The month-end sort (packed keys with ties by id, or one stable sort per key) agrees too.
    everyone = rng.permutation(n).astype(np.int32)
    assert eagle_kernel.sort_players(everyone, *keys).tolist() == sorted(everyone.tolist(), key=key)
    assert eagle_kernel._sort_by_each_key(everyone, *keys).tolist() == sorted(everyone.tolist(), key=key)


def test_calendar_arithmetic_matches_the_python_dates():
    first, last = dt.date(1954, 1, 1), dt.date(2030, 12, 31)
    samples = list(range((first - EPOCH).days, (last - EPOCH).days + 1, 13))
    samples += [
        (dt.date(y, 2, d) - EPOCH).days + shift for y in (1996, 2000, 2004) for d in (28, 29) for shift in (-1, 0, 1)
    ]
    for d in samples:
        day = EPOCH + dt.timedelta(days=d)
        assert eagle_kernel.civil_from_days(d) == (day.year, day.month, day.day)
        assert eagle_kernel.days_from_civil(day.year, day.month, day.day) == d
        for years in (2, 7):
            assert eagle_kernel.add_years(d, years) == (add_years(day, years) - EPOCH).days
            # The last days from which `years` later is before d: exactly those up to last_day_before.
            latest = eagle_kernel.last_day_before(d, years)
            assert add_years(EPOCH + dt.timedelta(days=latest), years) < day
            assert add_years(EPOCH + dt.timedelta(days=latest + 1), years) >= day


def test_integer_game_points_round_half_up_like_decimals():
    by_result = np.empty(len(eagle_kernel.RESULT_NAMES), dtype=np.int64)
    for value in range(0, 3000):
        exact = Decimal(value) / 100
        for k in range(2, 8):
            eagle_kernel.result_points(value, k, by_result)
            expected = int(half_up(exact / k, 2) * 100)
            assert eagle_kernel.game_points(eagle_kernel.DRAW, 0, by_result) == expected
        assert eagle_kernel.game_points(eagle_kernel.SOLO, 18, by_result) == value
    eagle_kernel.result_points(700, 0, by_result)
    assert [
        eagle_kernel.game_points(r, 5, by_result)
        for r in (eagle_kernel.SURVIVED, eagle_kernel.ELIMINATED, eagle_kernel.ANARCHY)
    ] == [15, 1, 0]
