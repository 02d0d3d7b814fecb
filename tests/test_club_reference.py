"""Club rating: the compiled path against the from-scratch reference, checkpoint round trips, and
the kernel's exact arithmetic."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core import state_codec
from pipeline.core.months import Month, month_range
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.base import MonthInput, MonthOutput
from pipeline.systems.club import kernel
from pipeline.systems.club.reference import club_reference
from pipeline.systems.club.rules import ClubRating
from pipeline.systems.games import games_from_rows, rows_to_table
from pipeline.systems.kernels.sort import sorted_by_id

FIRST_DAY, LAST_DAY = dt.date(2019, 10, 1), dt.date(2022, 3, 31)
MONTHS = month_range(Month.of(FIRST_DAY), Month.of(LAST_DAY).next())


def generated(seed: int, n_games: int, n_players: int, powers: int) -> pa.Table:
    """A synthetic feed over two and a half years, as the runner's sorted GAME_COLUMNS table."""
    rows = list(synthetic_games(seed, n_games, n_players, FIRST_DAY, LAST_DAY, powers=powers))
    return rows_to_table(rows)


def month_rows(table: pa.Table, month: Month) -> pa.Table:
    """The games of one month, as the runner hands them over."""
    days = table.column("finished_on")
    return table.filter(
        pc.and_(
            pc.greater_equal(days, pa.scalar(month.first_day, pa.date32())),
            pc.less_equal(days, pa.scalar(month.last_day, pa.date32())),
        )
    )


def run(system: ClubRating, state, table: pa.Table, months: list[Month]) -> tuple[list[MonthOutput], object]:
    """Step the system over the months; the outputs and the final state."""
    outputs = []
    for month in months:
        out = system.step(state, MonthInput(month, month_rows(table, month)))
        state = out.state
        outputs.append(out)
    return outputs, state


def assert_matches_reference(table: pa.Table) -> None:
    """Every month's table and history equal the reference's, float for float."""
    outputs, _ = run(ClubRating(), ClubRating().initial_state(), table, MONTHS)
    expected = club_reference(games_from_rows(table), MONTHS)
    for month, out in zip(MONTHS, outputs):
        ranking_rows, history_rows = expected[month]
        assert out.table.to_pylist() == ranking_rows, month
        assert out.history.to_pylist() == history_rows, month


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_games=st.integers(0, 70),
    n_players=st.integers(2, 40),
    powers=st.integers(2, 7),
)
def test_fast_path_equals_reference(seed, n_games, n_players, powers):
    assert_matches_reference(generated(seed, n_games, n_players, powers))


def test_fast_path_equals_reference_on_a_busier_feed():
    table = generated(20240601, 400, 30, 7)
    assert_matches_reference(table)
    # The feed exercises what the comparison is for: year changes, ties, legacy-only rows.
    outputs, _ = run(ClubRating(), ClubRating().initial_state(), table, MONTHS)
    january = outputs[MONTHS.index(Month(2021, 1))].table
    assert any(legacy > 0 for legacy in january.column("legacy").to_pylist())
    assert any(0 in out.table.column("games").to_pylist() for out in outputs)
    assert any(len(set(out.table.column("rank").to_pylist())) < out.table.num_rows for out in outputs)


def test_sparse_feed_with_skipped_years_equals_reference():
    # Few games among many players: many players skip a year, so listings end and legacies lapse.
    table = generated(7, 45, 60, 3)
    assert_matches_reference(table)
    years_played = {}
    for game in games_from_rows(table):
        for power in game.powers:
            years_played.setdefault(power.player_id, set()).add(game.finished_on.year)
    assert any(2020 in years and 2021 not in years for years in years_played.values())


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), split=st.integers(1, len(MONTHS) - 1))
def test_checkpoint_round_trip_continues_identically(seed, split):
    table = generated(seed, 120, 25, 7)
    system = ClubRating()
    uninterrupted, _ = run(system, system.initial_state(), table, MONTHS)
    _, state = run(system, system.initial_state(), table, MONTHS[:split])
    encoded = state_codec.dumps(system.encode_state(state))
    restored = system.decode_state(state_codec.loads(encoded))
    assert state_codec.dumps(system.encode_state(restored)) == encoded
    resumed, _ = run(ClubRating(), restored, table, MONTHS[split:])
    for before, after in zip(uninterrupted[split:], resumed):
        assert after.table.equals(before.table)
        assert after.history.equals(before.history)


def test_step_leaves_its_input_state_usable():
    table = generated(99, 150, 20, 7)
    system = ClubRating()
    _, state = run(system, system.initial_state(), table, MONTHS[:14])
    snapshot = state_codec.dumps(system.encode_state(state))
    month = MONTHS[14]
    first = system.step(state, MonthInput(month, month_rows(table, month)))
    assert state_codec.dumps(system.encode_state(state)) == snapshot
    second = system.step(state, MonthInput(month, month_rows(table, month)))
    assert first.table.equals(second.table) and first.history.equals(second.history)
    assert state_codec.dumps(system.encode_state(first.state)) == state_codec.dumps(system.encode_state(second.state))


# --- larger feeds: the compiled path month by month against the reference ---------------------


def renamed(rows: list[dict], names: dict[str, str], game_prefix: str = "") -> list[dict]:
    """Rows with player ids (every id column) and game ids replaced."""
    out = []
    for row in rows:
        row = dict(row, game_id=game_prefix + row["game_id"], player_id=names.get(row["player_id"], row["player_id"]))
        if row["original_player_id"] is not None:
            row["original_player_id"] = names.get(row["original_player_id"], row["original_player_id"])
        out.append(row)
    return out


def feed_with_a_gap(seed: int, n_games: int, n_players: int, powers: int) -> tuple[pa.Table, list[Month]]:
    """Games over 2016-2018 and 2020 to mid-2021 (none in 2019), and the months to step through
    (every month up to one past the last game)."""
    early = synthetic_games(
        seed, n_games * 2 // 3, n_players, dt.date(2016, 1, 1), dt.date(2018, 12, 31), powers=powers
    )
    late = synthetic_games(
        seed + 1, n_games - n_games * 2 // 3, n_players, dt.date(2020, 1, 1), dt.date(2021, 6, 30), powers=powers
    )
    table = rows_to_table(list(early) + renamed(list(late), {}, game_prefix="h"))
    return table, month_range(Month(2016, 1), Month(2021, 7))


def assert_months_match_reference(table: pa.Table, months: list[Month]) -> list[MonthOutput]:
    """Step the system over the months and compare each month with the reference; the outputs."""
    outputs, _ = run(ClubRating(), ClubRating().initial_state(), table, months)
    expected = club_reference(games_from_rows(table), months)
    for month, out in zip(months, outputs):
        ranking_rows, history_rows = expected[month]
        assert out.table.to_pylist() == ranking_rows, month
        assert out.history.to_pylist() == history_rows, month
    return outputs


@settings(max_examples=4, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_games=st.integers(2_000, 3_500),
    n_players=st.integers(60, 500),
    powers=st.sampled_from([3, 5, 7]),
)
def test_fast_path_equals_reference_on_thousands_of_games(seed, n_games, n_players, powers):
    table, months = feed_with_a_gap(seed, n_games, n_players, powers)
    outputs = assert_months_match_reference(table, months)
    by_month = dict(zip(months, outputs))
    # The time rules fired: legacy after a played year, legacy-only rows (players of last year
    # who have not played yet, or stopped), a year without games listing legacy alone and ending
    # it, and empty months repeating the table.
    assert any(v > 0 for v in by_month[Month(2017, 1)].table.column("legacy").to_pylist())
    assert any(0 in out.table.column("games").to_pylist() for out in outputs)
    assert by_month[Month(2019, 6)].table.column("games").to_pylist() == [0] * by_month[Month(2019, 6)].table.num_rows
    assert all(v == 0 for v in by_month[Month(2020, 12)].table.column("legacy").to_pylist())
    assert by_month[Month(2021, 7)].history.num_rows == 0
    assert by_month[Month(2021, 7)].table.equals(by_month[Month(2021, 6)].table)


def unicode_names(ids: list[str]) -> dict[str, str]:
    """Distinct player ids of many shapes: short, exactly 8 bytes, long, sharing a first word,
    prefixes of each other, and non-ASCII (so id order is code point order, not byte luck)."""
    shapes = (
        "{k}",
        "Øhrn{k}",
        "müller-{k}",
        "abcdefgh{k:05d}",
        "abcdefghij-{k}-long-identifier",
        "Z{k:07d}",
        "😀{k}",
        "p",
        "p{k}",
        "ß{k}",
        "ab{k:06d}",
    )
    names, used = {}, set()
    for k, pid in enumerate(sorted(set(ids))):
        name = shapes[k % len(shapes)].format(k=k)
        names[pid] = name if name not in used else f"{name}#{k}"
        used.add(names[pid])
    return names


def test_many_players_grow_the_arrays_and_equal_the_reference():
    # 4,000 players, most with a handful of games: the per-player arrays, the id buffers and the
    # hash table grow many times, within months and between them.
    rows = list(synthetic_games(11, 1_800, 4_000, dt.date(2018, 3, 1), dt.date(2020, 2, 29)))
    ids = [row["player_id"] for row in rows] + [row["original_player_id"] for row in rows if row["original_player_id"]]
    table = rows_to_table(renamed(rows, unicode_names(ids)))
    months = month_range(Month(2018, 3), Month(2020, 3))
    outputs = assert_months_match_reference(table, months)
    assert outputs[-1].state.n_players > 2_000
    assert len(set(table.column("responsible_player_id").to_pylist())) == outputs[-1].state.n_players


def test_stepping_an_older_state_again_forks_its_shared_arrays():
    # The id registry and the year's rows are shared with later states; stepping an older state
    # again (new players and rows in both branches) must not disturb either branch.
    table, months = feed_with_a_gap(3, 900, 300, 7)
    system = ClubRating()
    outputs, _ = run(system, system.initial_state(), table, months[:30])
    older = outputs[10].state
    again, _ = run(system, older, table, months[11:30])
    for first, second in zip(outputs[11:30], again):
        assert first.table.equals(second.table) and first.history.equals(second.history)
    later, _ = run(system, outputs[-1].state, table, months[30:])
    fresh, _ = run(system, system.initial_state(), table, months)
    for first, second in zip(fresh[30:], later):
        assert first.table.equals(second.table) and first.history.equals(second.history)


def test_checkpoints_of_a_larger_feed_resume_identically():
    # Mid-year, at a December, in a January, in the year without games and just after it.
    table, months = feed_with_a_gap(8, 1_500, 200, 7)
    system = ClubRating()
    outputs, _ = run(system, system.initial_state(), table, months)
    for split in (Month(2016, 7), Month(2017, 12), Month(2018, 1), Month(2019, 5), Month(2020, 1)):
        at = months.index(split)
        encoded = state_codec.dumps(system.encode_state(outputs[at].state))
        restored = ClubRating().decode_state(state_codec.loads(encoded))
        assert state_codec.dumps(ClubRating().encode_state(restored)) == encoded
        resumed, _ = run(ClubRating(), restored, table, months[at + 1 :])
        for before, after in zip(outputs[at + 1 :], resumed):
            assert after.table.equals(before.table) and after.history.equals(before.history)


# --- exact arithmetic of the kernel ---------------------------------------------------------------


@settings(max_examples=3_000, deadline=None)
@given(
    total=st.one_of(st.integers(0, 2**128 - 1), st.integers(0, 2**64), st.integers(0, 2**40).map(lambda x: x << 80)),
    count=st.one_of(st.integers(1, kernel.MAX_COUNT), st.integers(1, 64)),
)
def test_exact_ratio_rounds_like_fractions(total, count):
    high, low = np.uint64(total >> 64), np.uint64(total & (2**64 - 1))
    assert kernel.exact_ratio(high, low, count) == float(Fraction(total, count << kernel.SCALE_BITS))


@settings(max_examples=500, deadline=None)
@given(mantissa=st.integers(2**52, 2**53 - 1), count=st.integers(1, 2**20), data=st.data())
def test_exact_ratio_breaks_exact_ties_to_even(mantissa, count, data):
    # total / (count × 2**96) lies exactly halfway between two floats, or a hair either side of it:
    # halfway = (2·mantissa + 1) · count · 2**shift is (mantissa + ½) · 2**exponent, shift = 96 + exponent - 1.
    # The exponent is drawn where the dividend is a whole 128-bit number (shift >= 0 and
    # halfway + 1 < 2**128), its largest such value often: every example reaches the assertion.
    odd = (2 * mantissa + 1) * count
    highest = 128 - odd.bit_length() - kernel.SCALE_BITS + 1
    exponent = data.draw(st.one_of(st.just(highest), st.integers(1 - kernel.SCALE_BITS, highest)), label="exponent")
    shift = kernel.SCALE_BITS + exponent - 1
    halfway = odd << shift
    assert shift >= 0 and halfway + 1 < 2**128
    for total in (halfway - 1, halfway, halfway + 1):
        high, low = np.uint64(total >> 64), np.uint64(total & (2**64 - 1))
        assert kernel.exact_ratio(high, low, count) == float(Fraction(total, count << kernel.SCALE_BITS))


@settings(max_examples=500, deadline=None)
@given(games=st.one_of(st.integers(1, 500), st.integers(1, kernel.MAX_COUNT)), data=st.data())
def test_scaled_win_pct_is_the_float_exactly(games, data):
    points2 = data.draw(st.integers(0, 2 * games))
    pct, high, low = kernel.scaled_win_pct(points2, 2 * games)
    assert pct == points2 / (2 * games)
    assert (int(high) << 64) + int(low) == Fraction(pct) * 2**kernel.SCALE_BITS


@settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=60, unique=True),
    data=st.data(),
)
def test_table_order_is_rating_then_code_point_order(ids, data):
    # Ratings that tie exactly, or differ only in their last bits (where the radix sort's high
    # 32 bits tie), or not at all; ids of any code points, so byte order must match str order.
    offsets, id_bytes = np.zeros(len(ids) + 1, np.int32), b""
    for k, pid in enumerate(ids):
        id_bytes += pid.encode()
        offsets[k + 1] = len(id_bytes)
    id_bytes = np.frombuffer(id_bytes, np.uint8) if id_bytes else np.zeros(0, np.uint8)
    players = np.arange(len(ids), dtype=np.int32)
    by_id = sorted_by_id(players, offsets, id_bytes)
    assert [ids[p] for p in by_id] == sorted(ids)
    base = data.draw(st.sampled_from([0.0, 1.0, 12.345, 55.5]))
    ratings = np.array(
        data.draw(
            st.lists(
                st.one_of(
                    st.just(base),
                    st.just(0.0),
                    st.floats(0, 100),
                    st.integers(0, 2**20).map(lambda u: base + u * 2**-40),
                ),
                min_size=len(ids),
                max_size=len(ids),
            )
        )
    )
    order = kernel._by_rating(by_id, ratings)
    assert [ids[p] for p in order] == [ids[p] for p in sorted(players, key=lambda p: (-ratings[p], ids[p]))]
