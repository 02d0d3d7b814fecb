"""The writer's common columns: previous rank and rating, peak and names, carried from month to month."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core import state_codec
from pipeline.core.months import Month, month_range
from pipeline.rating.carried import carried_columns
from pipeline.rating.carry import Carry, finalize_rankings, in_rank_order, note_names, registry_names
from pipeline.systems.base import MonthOutput, PlayerInfo

MONTHS = month_range(Month(2020, 11), Month(2021, 3))
# Each month's table (player, rating) in rank order, and the names its rows carry.
TABLES = [
    [("a", 10.0), ("b", 8.0)],
    [("b", 12.0), ("c", 9.0)],
    [("a", 11.0), ("c", 9.5), ("b", 7.0)],
    [("c", 3.0), ("a", 2.0)],
    [("a", 4.0), ("c", 1.0)],
]
NAMES = [{"a": "Ann", "b": "Bob"}, {"c": "Cy", "e": "Eve"}, {"a": "Anne"}, {}, {}]


class Named:
    name = "named"
    list_column = None  # one table a month


def month_table(month_index: int, carry: Carry, registry) -> pa.Table:
    rows = TABLES[month_index]
    note_names(
        carry,
        pa.table(
            {
                "player_id": pa.array(list(NAMES[month_index]), pa.string()),
                "player_name": pa.array(list(NAMES[month_index].values()), pa.string()),
            }
        ),
    )
    out = MonthOutput(
        state=None,
        table=pa.table(
            {
                "rank": pa.array(range(1, len(rows) + 1), pa.int64()),
                "player_id": pa.array([p for p, _ in rows], pa.string()),
                "rating": pa.array([r for _, r in rows], pa.float64()),
            }
        ),
        history=pa.table({}),
        extras={},
    )
    return finalize_rankings(Named(), MONTHS[month_index], out, carry, registry)


def test_common_columns_follow_last_month_the_peak_and_the_latest_name():
    carry, registry = Carry(), registry_names({"c": PlayerInfo(name="Cyrus", country=None)})
    tables = [
        month_table(k, carry, registry)
        .select(["player_id", "player_name", "rank_change", "rating_change", "peak_rating"])
        .to_pylist()
        for k in range(len(MONTHS))
    ]
    assert tables[2] == [
        {"player_id": "a", "player_name": "Anne", "rank_change": None, "rating_change": None, "peak_rating": 11.0},
        {"player_id": "c", "player_name": "Cyrus", "rank_change": 0, "rating_change": 0.5, "peak_rating": 9.5},
        {"player_id": "b", "player_name": "Bob", "rank_change": -2, "rating_change": -5.0, "peak_rating": 12.0},
    ]
    assert tables[3] == [
        {"player_id": "c", "player_name": "Cyrus", "rank_change": 1, "rating_change": -6.5, "peak_rating": 9.5},
        {"player_id": "a", "player_name": "Anne", "rank_change": -1, "rating_change": -9.0, "peak_rating": 11.0},
    ]


def test_a_carry_resumed_from_its_encoding_gives_the_same_tables():
    registry = registry_names({})
    carry = Carry()
    straight = [month_table(k, carry, registry) for k in range(len(MONTHS))]
    carry = Carry()
    for k in range(3):
        month_table(k, carry, registry)
    encoded = carry.encode()
    kept = encoded["players"].to_pylist()
    month_table(3, carry, registry)  # no new player: the carry's arrays change in place
    # The encoding is a snapshot (a checkpoint is saved after later months): they do not change it.
    assert encoded["players"].to_pylist() == kept
    assert month_table(3, Carry.decode(encoded), registry) == straight[3]


def test_a_resumed_carry_encodes_to_the_same_bytes():
    # Bob leaves the table after the third month: what a checkpoint then holds for his last
    # rank, and every later one, must not depend on where a run started.
    registry = registry_names({})
    straight = Carry()
    for k in range(len(MONTHS)):
        month_table(k, straight, registry)
    carry = Carry()
    for k in range(4):
        month_table(k, carry, registry)
    resumed = Carry.decode(state_codec.loads(state_codec.dumps(carry.encode())))
    month_table(4, resumed, registry)
    assert state_codec.dumps(resumed.encode()) == state_codec.dumps(straight.encode())


def test_a_table_out_of_rank_order_is_published_in_it():
    # Equal ranks in reverse id order, and a rank before a smaller one: both sorted into place.
    carry, registry = Carry(), registry_names({})
    out = MonthOutput(
        state=None,
        table=pa.table(
            {
                "rank": pa.array([1, 1, 3, 2], pa.int64()),
                "player_id": pa.array(["b", "a", "d", "c"], pa.string()),
                "rating": pa.array([9.0, 9.0, 5.0, 7.0], pa.float64()),
            }
        ),
        history=pa.table({}),
        extras={},
    )
    table = finalize_rankings(Named(), MONTHS[0], out, carry, registry)
    assert table.select(["rank", "player_id", "rating"]).to_pylist() == [
        {"rank": 1, "player_id": "a", "rating": 9.0},
        {"rank": 1, "player_id": "b", "rating": 9.0},
        {"rank": 2, "player_id": "c", "rating": 7.0},
        {"rank": 3, "player_id": "d", "rating": 5.0},
    ]


def test_a_table_in_rank_order_is_recognised_only_when_it_is():
    def ordered(ranks, ids):
        return in_rank_order(pa.table({"rank": pa.array(ranks, pa.int64()), "player_id": pa.array(ids, pa.string())}))

    assert ordered([1, 1, 3], ["a", "b", "a"])
    assert ordered([], [])
    assert not ordered([1, 1], ["b", "a"])
    assert not ordered([2, 1], ["a", "b"])
    assert not ordered([1, 1], ["ab", "a"])
    assert not ordered([1, None], ["a", "b"])


def test_a_carry_names_players_from_the_registry_it_is_given():
    carry = Carry()
    first = month_table(0, carry, registry_names({"a": PlayerInfo(name="Ada", country=None)}))
    second = month_table(1, carry, registry_names({"b": PlayerInfo(name="Bea", country=None)}))
    assert first["player_name"].to_pylist() == ["Ada", "Bob"]
    assert second["player_name"].to_pylist() == ["Bea", "Cy"]


def carried_reference(numbers, rank, rating, carry):
    """carried_columns in plain Python: carry maps a player to [prev_rank, prev_rating, peak]
    (None: unset); ranks and ratings may be None, ratings NaN or either zero."""

    def larger(a, b):  # Arrow's max_element_wise: NaN gives way, the first of equals is kept
        return b if math.isnan(a) else a if math.isnan(b) else (a if not a < b else b)

    rows = []
    for p, k, x in zip(numbers, rank, rating):
        old_rank, old_rating, old_peak = carry.get(p, [None, None, None])
        peak = (
            larger(old_peak, x) if old_peak is not None and x is not None else old_peak if old_peak is not None else x
        )
        rows.append(
            (
                None if old_rank is None or k is None else old_rank - k,
                None if old_rating is None or x is None else x - old_rating,
                peak,
            )
        )
    for entry in carry.values():
        entry[0] = entry[1] = None
    for p, k, x, (_, _, peak) in reversed(list(zip(numbers, rank, rating, rows))):  # the first row wins
        carry[p] = [k, x, peak]
    return rows


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_carried_columns_equal_their_plain_reference_over_months(data):
    players = data.draw(st.integers(1, 6))
    ratings = st.one_of(st.none(), st.sampled_from([0.0, -0.0, math.nan, 1.5, -2.0]), st.floats(-50, 50))
    arrays = [
        np.zeros(players, np.int64),
        np.zeros(players, np.bool_),
        np.zeros(players, np.float64),
        np.zeros(players, np.bool_),
        np.zeros(players, np.float64),
        np.zeros(players, np.bool_),
    ]
    carry: dict = {}
    for _ in range(data.draw(st.integers(1, 4))):
        n = data.draw(st.integers(0, 8))
        numbers = data.draw(st.lists(st.integers(0, players - 1), min_size=n, max_size=n))
        rank = data.draw(st.lists(st.one_of(st.none(), st.integers(1, 9)), min_size=n, max_size=n))
        rating = data.draw(st.lists(ratings, min_size=n, max_size=n))
        expected = carried_reference(numbers, rank, rating, carry)
        rank_change, rating_change, peak, given = carried_columns(
            np.array(numbers, np.int32),
            np.array([k or 0 for k in rank], np.int64),
            np.array([k is not None for k in rank]),
            np.array([0.0 if x is None else x for x in rating]),
            np.array([x is not None for x in rating]),
            *arrays,
        )
        got = [
            (
                int(rank_change[r]) if given[0, r] else None,
                float(rating_change[r]) if given[1, r] else None,
                float(peak[r]) if given[2, r] else None,
            )
            for r in range(n)
        ]
        assert [tuple(_bits(v) for v in row) for row in got] == [tuple(_bits(v) for v in row) for row in expected]
        for p in range(players):  # the carry left for next month
            old_rank, old_rating, old_peak = carry.get(p, [None, None, None])
            assert (int(arrays[0][p]) if arrays[1][p] else None) == old_rank
            assert _bits(float(arrays[2][p]) if arrays[3][p] else None) == _bits(old_rating)
            assert _bits(float(arrays[4][p]) if arrays[5][p] else None) == _bits(old_peak)


def _bits(value):
    """A value compared bit for bit (NaN equals NaN, 0.0 differs from -0.0)."""
    return struct.pack("<d", value) if isinstance(value, float) else value
