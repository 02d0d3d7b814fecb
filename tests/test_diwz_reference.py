"""The DiWZ fast path against the plain reference on generated games, checkpoint round trips, and
the compiled kernel's arithmetic against Python's."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core import state_codec
from pipeline.core.months import Month, add_years, month_range
from pipeline.core.rounding import half_up_int
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.base import MonthInput
from pipeline.systems.diwz import kernel
from pipeline.systems.diwz.finish import ELIMINATED, finish_key
from pipeline.systems.diwz.reference import _erstzahl as reference_erstzahl
from pipeline.systems.diwz.reference import _w as reference_w
from pipeline.systems.diwz.reference import reference_diwz
from pipeline.systems.diwz.rules import DiWZ, PlayerIndex, day_number, month_games, w_table
from pipeline.systems.games import PowerResult, rows_to_table
from pipeline.systems.kernels.ids import string_buffers

FIRST_DAY = dt.date(2000, 1, 1)
LAST_DAY = dt.date(2005, 12, 31)
PLAYERS = 40


def generated(seed: int, n_games: int = 50) -> list[dict]:
    """Small generated feed over six years: players pause long enough for strike-offs."""
    return list(synthetic_games(seed, n_games, PLAYERS, FIRST_DAY, LAST_DAY))


def existing_list(seed: int) -> dict[str, tuple[int, int]]:
    """An existing list for some of the generated players."""
    return {f"p{i:05d}": (1450 + (seed * 7 + i * 37) % 300, i % 5) for i in range(0, PLAYERS, 3)}


def months_of(rows: list[dict], tail: int = 30) -> list[Month]:
    """Every month from the first game to `tail` months after the last (so late strike-offs happen)."""
    months = [Month.of(row["finished_on"]) for row in rows]
    return month_range(min(months), max(months).shift(tail))


def fast_run(system: DiWZ, rows: list[dict], months: list[Month], state=None):
    """Outputs of stepping the system over the months, and its final state."""
    by_month = defaultdict(list)
    for row in rows:
        by_month[Month.of(row["finished_on"])].append(row)
    state = system.initial_state() if state is None else state
    outputs = []
    for month in months:
        out = system.step(state, MonthInput(month, rows_to_table(by_month.get(month, []))))
        outputs.append(out)
        state = out.state
    return outputs, state


def assert_same_as_reference(rows, newcomers, initial):
    months = months_of(rows)
    outputs, _ = fast_run(DiWZ(newcomers=newcomers, initial_ratings=initial), rows, months)
    expected = reference_diwz(rows, months, newcomers=newcomers, initial_ratings=initial)
    for out, ref in zip(outputs, expected, strict=True):
        assert out.table.to_pylist() == ref["rankings"], ref["month"]
        assert out.history.to_pylist() == ref["history"], ref["month"]
    return outputs


@given(
    seed=st.integers(min_value=0, max_value=2**31),
    newcomers=st.sampled_from(["erstzahl", "start_1600"]),
    with_list=st.booleans(),
)
@settings(max_examples=30, deadline=None)
def test_fast_path_matches_reference(seed, newcomers, with_list):
    rows = generated(seed)
    assert_same_as_reference(rows, newcomers, existing_list(seed) if with_list else None)


def test_generated_data_exercises_every_rule():
    """The comparison above is only meaningful if the generated games reach every rule."""
    seen = defaultdict(int)
    for seed in range(6):
        for newcomers, initial in [("erstzahl", None), ("erstzahl", existing_list(seed)), ("start_1600", None)]:
            outputs = assert_same_as_reference(generated(seed), newcomers, initial)
            previous: set[str] = set()
            for out in outputs:
                for row in out.history.to_pylist():
                    if row["rating_after"] is None and row["rating_before"] is not None:
                        seen["waiting"] += 1
                    if row["pooled"]:
                        seen["pooled"] += 1
                    if row["rating_before"] is None and row["rating_after"] is not None:
                        seen["first rating"] += 1
                    if row["rating_before"] is None and row["rating_after"] is None:
                        seen["newcomer collecting"] += 1
                listed = set(out.table.column("player_id").to_pylist())
                seen["struck off"] += len(previous - listed)
                previous = listed
    assert set(seen) == {"waiting", "pooled", "first rating", "newcomer collecting", "struck off"}
    assert min(seen.values()) > 0, dict(seen)


def test_games_between_ratings_further_apart_than_the_w_table_match_the_reference():
    """A game whose ratings span more than W_SPAN takes the kernel's path without the table."""
    rows = generated(3)
    initial = {f"p{i:05d}": (200 if i % 2 else 200 + kernel.W_SPAN + 500, 4) for i in range(PLAYERS)}
    outputs = assert_same_as_reference(rows, "erstzahl", initial)
    spreads = []
    for out in outputs:
        history = out.history.to_pylist()
        for game_id in {row["source_id"] for row in history}:
            before = [
                row["rating_before"]
                for row in history
                if row["source_id"] == game_id and row["rating_before"] is not None
            ]
            spreads.append(max(before) - min(before) if before else 0)
    assert max(spreads) > kernel.W_SPAN
    assert min(spreads) <= kernel.W_SPAN


def test_checkpoint_round_trip_continues_identically():
    rows = generated(11, n_games=80)
    months = months_of(rows)
    for newcomers, initial in [("erstzahl", None), ("start_1600", existing_list(11))]:
        system = DiWZ(newcomers=newcomers, initial_ratings=initial)
        straight, final = fast_run(system, rows, months)
        cut = len(months) // 2
        _, halfway = fast_run(system, rows, months[:cut])
        restored = system.decode_state(state_codec.loads(state_codec.dumps(system.encode_state(halfway))))
        assert state_codec.dumps(system.encode_state(restored)) == state_codec.dumps(system.encode_state(halfway))
        resumed, resumed_final = fast_run(system, rows, months[cut:], state=restored)
        for a, b in zip(straight[cut:], resumed, strict=True):
            assert a.table.equals(b.table)
            assert a.history.equals(b.history)
        assert state_codec.dumps(system.encode_state(final)) == state_codec.dumps(system.encode_state(resumed_final))


def test_step_leaves_its_input_state_unchanged():
    rows = generated(5, n_games=80)
    months = months_of(rows, tail=0)
    system = DiWZ()
    by_month = defaultdict(list)
    for row in rows:
        by_month[Month.of(row["finished_on"])].append(row)
    state = system.initial_state()
    for month in months:
        before = state_codec.dumps(system.encode_state(state))
        month_input = MonthInput(month, rows_to_table(by_month.get(month, [])))
        first = system.step(state, month_input)
        assert state_codec.dumps(system.encode_state(state)) == before
        again = system.step(state, month_input)
        assert first.table.equals(again.table) and first.history.equals(again.history)
        state = first.state


# --- larger data: years of games, many players ----------------------------------------------


def rule_events(outputs) -> dict[str, int]:
    """How often each rule that depends on time or pooling acted in a run."""
    seen: dict[str, int] = defaultdict(int)
    listed_before: dict[str, int] = {}  # player -> evaluations in last month's list
    ever_rated: set[str] = set()
    for out in outputs:
        rows = out.history.to_pylist()
        playing = {row["player_id"] for row in rows}
        first_rows: set[str] = set()
        for row in rows:
            before, after = row["rating_before"], row["rating_after"]
            pid = row["player_id"]
            if (
                pid in listed_before
                and pid not in first_rows
                and (before is None or (row["evaluations"] == 1 and listed_before[pid] >= 1))
            ):
                # The rating expired before this game: struck off there (start_1600 gives 1600-0 again).
                seen["struck off at a game"] += 1
            first_rows.add(pid)
            if before is not None and after is None:
                seen["waiting"] += 1
            if row["pooled"]:
                seen["pooled"] += 1
            if before is None and after is not None:
                seen["returned with a first rating" if row["player_id"] in ever_rated else "first rating"] += 1
            if before is None and after is None:
                seen["newcomer collecting"] += 1
        listed = dict(zip(out.table.column("player_id").to_pylist(), out.table.column("evaluations").to_pylist()))
        seen["struck off at a month end"] += len((set(listed_before) - set(listed)) - playing)
        ever_rated |= set(listed)
        listed_before = listed
    return seen


TIME_RULES = {
    "waiting",
    "pooled",
    "first rating",
    "newcomer collecting",
    "struck off at a game",
    "struck off at a month end",
    "returned with a first rating",
}


def years_of_games(seed: int, games: int = 2500, players: int = 600) -> list[dict]:
    """Eight years of generated games: players leave for years and come back."""
    return list(synthetic_games(seed, games, players, dt.date(1996, 1, 1), dt.date(2003, 12, 31)))


@given(
    seed=st.integers(min_value=0, max_value=2**31),
    newcomers=st.sampled_from(["erstzahl", "start_1600"]),
    with_list=st.booleans(),
)
@settings(max_examples=3, deadline=None)
def test_fast_path_matches_reference_over_years_of_games(seed, newcomers, with_list):
    rows = years_of_games(seed)
    assert_same_as_reference(rows, newcomers, existing_list(seed) if with_list else None)


def test_years_of_games_exercise_every_time_rule():
    seen: dict[str, int] = defaultdict(int)
    for seed, newcomers in [(4, "erstzahl"), (5, "start_1600")]:
        for rule, count in rule_events(assert_same_as_reference(years_of_games(seed), newcomers, None)).items():
            seen[rule] += count
    assert TIME_RULES <= set(seen) and min(seen[rule] for rule in TIME_RULES) > 0, dict(seen)


def test_many_players_grow_every_array_and_match_the_reference():
    rows = list(synthetic_games(21, 1500, 2500, dt.date(2010, 1, 1), dt.date(2011, 6, 30)))
    months = months_of(rows, tail=0)
    system = DiWZ()
    outputs, final = fast_run(system, rows, months)
    expected = reference_diwz(rows, months)
    for out, ref in zip(outputs, expected, strict=True):
        assert out.table.to_pylist() == ref["rankings"], ref["month"]
        assert out.history.to_pylist() == ref["history"], ref["month"]
    # The records and the numbering grew with the players.
    fresh = system.initial_state()
    assert len(final.arrays.records) == final.count > 1000
    assert final.index.numbers.slots.shape[0] > fresh.index.numbers.slots.shape[0]
    # Each month's copy keeps the collected results of the players still collecting, and only those.
    states = [system.initial_state()] + [out.state for out in outputs]
    carried = [after.arrays.collected_rows for after in states[1:]]
    live = [int(before.arrays.records["collected_count"].sum()) for before in states[:-1]]
    assert carried == live and max(live) > 0
    first_ratings = [
        row
        for out in outputs
        for row in out.history.to_pylist()
        if row["rating_before"] is None and row["rating_after"] is not None
    ]
    assert first_ratings  # collections were left behind for the copies to drop
    # A checkpoint of the grown state continues identically.
    cut = len(months) // 2
    _, halfway = fast_run(system, rows, months[:cut])
    restored = system.decode_state(state_codec.loads(state_codec.dumps(system.encode_state(halfway))))
    resumed, _ = fast_run(system, rows, months[cut:], state=restored)
    for a, b in zip(outputs[cut:], resumed, strict=True):
        assert a.table.equals(b.table) and a.history.equals(b.history)


def test_a_checkpoint_with_one_record_per_player_continues_identically():
    """Checkpoints that stored each player's record as a tuple still load."""
    rows = generated(7, n_games=80)
    months = months_of(rows)
    system = DiWZ()
    straight, _ = fast_run(system, rows, months)
    cut = len(months) // 2
    _, halfway = fast_run(system, rows, months[:cut])
    legacy = {
        "first_month": (halfway.first_month.year, halfway.first_month.month),
        "players": {
            player_id: (
                record.rating,
                record.evaluations,
                record.last_evaluated,
                record.rated_since,
                [list(result) for result in record.pending],
                [list(result) for result in record.collected],
            )
            for player_id, record in halfway.players.items()
        },
    }
    restored = system.decode_state(state_codec.loads(state_codec.dumps(legacy)))
    assert dict(restored.players) == dict(halfway.players)
    resumed, _ = fast_run(system, rows, months[cut:], state=restored)
    for a, b in zip(straight[cut:], resumed, strict=True):
        assert a.table.equals(b.table) and a.history.equals(b.history)


# --- the compiled arithmetic against Python's --------------------------------------------------


def test_compiled_half_up_matches_decimal_rounding():
    rng = np.random.default_rng(5)
    whole = rng.integers(-(10**7), 10**7, 20_000).astype(np.float64)
    halves = whole + 0.5
    values = np.concatenate(
        [
            halves,
            np.nextafter(halves, np.inf),
            np.nextafter(halves, -np.inf),
            whole,
            rng.uniform(-5000, 5000, 20_000),
            rng.normal(0.0, 1.0, 5_000),
            rng.uniform(-1.0, 1.0, 5_000) * 2.0 ** rng.integers(-60, 62, 5_000),
            [
                0.5,
                -0.5,
                1.5,
                2.5,
                -2.5,
                0.49999999999999994,
                -0.49999999999999994,
                0.0,
                -0.0,
                2.0**52 - 0.5,
                2.0**52 + 1,
                2.0**53,
                -(2.0**53),
                2.0**62,
                -(2.0**62),
                5e-324,
                -5e-324,
            ],
        ]
    )
    for value in values.tolist():
        assert kernel.half_up_int(value) == half_up_int(value), value


@given(st.floats(min_value=-(2.0**62), max_value=2.0**62, allow_nan=False))
@settings(max_examples=500, deadline=None)
def test_compiled_half_up_matches_decimal_rounding_for_any_float(value):
    assert kernel.half_up_int(value) == half_up_int(value)


def test_compiled_expectation_is_pythons_to_the_bit():
    table = w_table()
    for difference in range(-kernel.W_SPAN - 50, kernel.W_SPAN + 51):
        rating = 1600 + difference
        assert kernel.whole_expectation(rating, 1600, table, kernel.TEN) == reference_w(rating, 1600), difference
    rng = np.random.default_rng(9)
    for rating, opponent in zip(rng.uniform(500, 2700, 5_000).tolist(), rng.integers(500, 2700, 5_000).tolist()):
        assert kernel.expectation(rating, opponent, kernel.TEN) == reference_w(rating, opponent)


def product_and_power_iterates(score: float, opponents: list[int]) -> list[tuple[float, float, float]]:
    """The Erstzahl's iterates both ways, in Python floats (the kernels' IEEE operations), with
    the margin the kernel keeps: (power iterate, product iterate, margin) per step, until the
    power iteration stops."""
    n = len(opponents)
    powers = [10.0 ** (0.0025 * o) for o in opponents]
    exact = fast = 1600.0
    margin, steps = 0.0, []
    for _ in range(kernel.MAX_FIRST_RATING_STEPS):
        exact_next = exact + (score - sum_in_order(reference_w(exact, o) for o in opponents)) * 800 / (20 + n)
        base = 10.0 ** (-0.0025 * fast)
        fast = fast + (score - sum_in_order(1.0 / (1.0 + base * p) for p in powers)) * 800 / (20 + n)
        margin += 800 / (20 + n) * (n + 2.0) ** 2 * 1e-14 + abs(fast) * 1e-15
        steps.append((exact_next, fast, margin))
        if np.floor(exact_next) == np.floor(exact):
            return steps
        exact = exact_next
    return steps


def sum_in_order(values) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


newcomer_results = st.lists(
    st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.integers(-9_000, 9_000) | st.integers(1_000, 2_400)),
    min_size=5,
    max_size=40,
).filter(lambda rs: 0 < sum(p for p, _ in rs) < len(rs))


@given(newcomer_results)
@settings(max_examples=300, deadline=None)
def test_compiled_first_rating_is_the_references(results):
    """The Erstzahl, however the kernel takes its steps, is the reference's; the fast steps vouch
    for it within ordinary ratings and leave ratings beyond ±8000 to the reference's steps."""
    score = sum(points for points, _ in results)  # halves: exact
    opponents = np.array([o for _, o in results], np.int64)
    expected = reference_erstzahl(results)
    assert kernel.first_rating(score, opponents, np.empty(len(opponents)), kernel.TEN) == expected
    assert kernel._first_rating_by_powers(score, opponents, kernel.TEN) == expected
    rating, vouched = kernel._first_rating_by_products(score, opponents, np.empty(len(opponents)), kernel.TEN)
    if np.abs(opponents).max() > 8_000:
        assert not vouched
    elif vouched:
        assert rating == expected


def test_an_iterate_on_an_integer_is_left_to_the_reference_steps():
    """Five opponents at 1600 and 3 points: the first step lands on 1616.0 exactly, where a
    product a unit in the last place off could floor to 1615; the fast steps do not vouch."""
    results = [(1.0, 1600)] * 3 + [(0.0, 1600)] * 2
    opponents = np.full(5, 1600, np.int64)
    room = np.empty(len(opponents))
    assert kernel._first_rating_by_products(3.0, opponents, room, kernel.TEN)[1] is False
    assert kernel.first_rating(3.0, opponents, room, kernel.TEN) == reference_erstzahl(results) == 1667


def test_first_rating_margin_covers_the_two_evaluations_gap():
    """On ordinary newcomers the product steps vouch for the rating, and at every step the two
    evaluations' iterates differ by less than a tenth of the margin the kernel keeps."""
    rng = np.random.default_rng(3)
    vouched_count = 0
    for _ in range(2_000):
        n = int(rng.choice([5, 6, 7, 12, 30]))
        opponents = rng.normal(1600, 250, n).round().astype(np.int64)
        score = int(rng.integers(1, 2 * n)) / 2
        for exact, fast, margin in product_and_power_iterates(score, opponents.tolist()):
            assert abs(exact - fast) < margin / 10, (score, opponents.tolist())
        vouched_count += kernel._first_rating_by_products(score, opponents, np.empty(len(opponents)), kernel.TEN)[1]
    assert vouched_count == 2_000


def test_compiled_add_years_is_the_calendars():
    days = list(range(-9000, 60_000, 7)) + [
        day_number(dt.date(year, 2, 29)) for year in range(1952, 2100, 4) if year % 100 or year % 400 == 0
    ]
    for number in days:
        day = dt.date(1970, 1, 1) + dt.timedelta(days=number)
        assert kernel.add_years(number, 2) == day_number(add_years(day, 2)), day


def test_compiled_finish_key_is_the_rules():
    """The compiled category and key (read without branches) agree with pipeline.systems.diwz.finish
    on every result name, on strings that differ from one in a byte or in length only, and on
    every tier boundary of centres, powers and supply centres."""
    names = ["solo", "draw", "survived", "eliminated", "anarchy"]
    near = [
        "",
        "s",
        "sol",
        "solo ",
        "Solo",
        "drew",
        "draws",
        "eliminate",
        "eliminatex",
        "eliminateD",
        "eliminated!",
        "xliminated",
        "eliminated-and-then-some",
        "dräw",
        "survivedsurvived",
        "draw\x00",
        "solo\x00\x00",
        "eliminated\x00",
    ]  # the same first bytes, zero-padded, but longer
    strings = pa.array(names + near, pa.string())
    offsets, data = string_buffers(strings)
    for row, result in enumerate(strings.to_pylist()):
        for powers, supply, centres in [(7, 34, c) for c in range(0, 12)] + [(3, 10, c) for c in range(0, 8)]:
            power = PowerResult("p", "x", result, centres, 1907 if result == "eliminated" else None)
            category, key = finish_key(power, powers, supply)
            compiled_category = kernel.result_category(data, offsets[row], offsets[row + 1])
            assert compiled_category == category, result
            year = 1907 if compiled_category == ELIMINATED else 0
            assert kernel.finish_key(compiled_category, centres, year, powers, supply) == key, (result, centres)


POWER_FINISHES = st.tuples(
    st.sampled_from(["solo", "draw", "survived", "eliminated", "anarchy"]),
    st.integers(0, 18),
    st.one_of(
        st.integers(1901, 1920),
        st.integers(-(2**62), 2**62),
        st.sampled_from([2**40 - 1, 2**40, -(2**40), -(2**40) - 1]),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(POWER_FINISHES, min_size=2, max_size=7), min_size=1, max_size=4))
def test_parsed_finish_values_order_a_games_powers_as_their_finish_keys(games):
    """The finish values parse_month writes as it reads each row order every game's powers as
    their (category, key) finish keys do: packed while every key of the game is below 2**40 in
    size, and counted when one is not (elimination years far out of range)."""
    rows, keys = [], []
    for g, powers in enumerate(games):
        game_keys = []
        for k, (result, centres, year) in enumerate(powers):
            year = year if result == "eliminated" else None
            rows.append(
                {
                    "game_id": f"g{g}",
                    "finished_on": "2020-03-0%d" % (g + 1),
                    "power": f"P{k}",
                    "player_id": f"p{g}-{k}",
                    "result": result,
                    "centres": centres,
                    "eliminated_year": year,
                }
            )
            game_keys.append(finish_key(PowerResult(f"P{k}", f"p{g}-{k}", result, centres, year), len(powers), 34))
        keys.append(game_keys)
    parsed = month_games(rows_to_table(rows), PlayerIndex())
    for g, game_keys in enumerate(keys):
        lo = int(parsed.game_start[g])
        values = parsed.finish[lo : lo + len(game_keys)].tolist()
        for i, a in enumerate(game_keys):
            for j, b in enumerate(game_keys):
                assert (values[i] < values[j]) == (a < b) and (values[i] == values[j]) == (a == b), (a, b)


BOUNDARY_INTEGERS = [v for k in range(19) for v in (10**k - 1, 10**k, 10**k + 1)] + [2**63 - 1]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-20_000, 20_000),
            st.sampled_from(BOUNDARY_INTEGERS + [-v for v in BOUNDARY_INTEGERS] + [-(2**63)]),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_compiled_list_numbers_are_pythons_decimal_form(values):
    # The list's display strings ("1797-5") are written by the compiled kernel, digit pairs
    # from a table: each number reads as str() writes it, one after another in one buffer.
    buffer = np.full(41 * len(values), 255, np.uint8)
    at = 0
    for value in values:
        end = kernel._write_int(buffer, at, value)
        assert bytes(buffer[at:end]).decode() == str(value)
        at = end
    assert (buffer[at:] == 255).all()
