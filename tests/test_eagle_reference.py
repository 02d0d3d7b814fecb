"""EaglePoints against the slow reference on generated games, checkpoint round trips, and OrderedKeys."""
from __future__ import annotations

import datetime as dt
import random
from bisect import bisect_left, insort
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import state_codec
from pipeline.months import Month, month_range
from pipeline.generate import synthetic_games
from pipeline.reference.eagle import as_rows, eagle_reference
from pipeline.systems.base import GAME_COLUMNS, MonthInput, MonthOutput
from pipeline.systems.eagle import EaglePoints
from pipeline.systems.eagle_table import LOAD, OrderedKeys
from pipeline.systems.games import games_from_rows, rows_to_table
from tests.fixtures.eagle_cases import listing_window_games

TABLE_COLUMNS = ["rank", "player_id", "rating", "points", "games", "last_game_date", "points_to_defend", "new_eagles"]
HISTORY_COLUMNS = ["source_id", "source_date", "player_id", "rating_before", "rating_after",
                   "contribution", "game_value", "points"]
AWARD_COLUMNS = ["award", "year", "month", "player_id", "value", "game_id"]


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


def generated_rows(seed: int, n_games: int, n_players: int, first: dt.date, last: dt.date,
                   prefix: str = "g") -> list[dict]:
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
    return (generated_rows(11, 40, 25, dt.date(2000, 1, 1), dt.date(2000, 12, 31), "a")
            + generated_rows(12, 25, 25, dt.date(2003, 1, 1), dt.date(2003, 3, 31), "b")
            + generated_rows(13, 40, 25, dt.date(2008, 6, 1), dt.date(2009, 6, 30), "c"))


def test_listing_ends_and_restarts_match_reference_in_both_modes():
    for positions in ("published", "live"):
        outputs = assert_matches_reference(gap_rows(), ("standard",), positions)
        restarted = [row for out in outputs for row in out.history.to_pylist()
                     if row["source_id"].startswith("c") and row["rating_before"] is None]
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
                system.encode_state(straight[cut].state))
            resumed = run_fast(system, inputs[cut + 1:], restored)
            for a, b in zip(straight[cut + 1:], resumed, strict=True):
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
    resumed = run_fast(system, inputs[cut + 1:], restored)
    assert [o.table for o in resumed] == [o.table for o in straight[cut + 1:]]


def test_initial_state_round_trips():
    system = EaglePoints()
    data = state_codec.loads(state_codec.dumps(system.encode_state(system.initial_state())))
    inputs = monthly_inputs(generated_rows(3, 20, 15, dt.date(2005, 1, 1), dt.date(2005, 6, 30)))
    fresh = run_fast(system, inputs)
    decoded = run_fast(system, inputs, system.decode_state(data))
    assert [o.table for o in fresh] == [o.table for o in decoded]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_ordered_keys_agree_with_a_sorted_list(seed):
    rng = random.Random(seed)
    keys = OrderedKeys(rng.sample(range(400), rng.randint(0, 50)))
    model = sorted(set(keys))
    universe = 8 * LOAD  # small enough that removals hit, large enough for several blocks
    phase = 12 * LOAD
    most_blocks = 0
    for step in range(2 * phase):
        shrinking = step >= phase
        # While shrinking, mostly pick present keys so the set empties out and blocks merge.
        key = rng.choice(model) if shrinking and model and rng.random() < 0.7 else rng.randrange(universe)
        # Mostly adds in the first phase (blocks split), mostly removals in the second (blocks merge).
        if rng.random() < (0.15 if shrinking else 0.85):
            keys.add(key)
            if key not in model:
                insort(model, key)
        else:
            assert keys.discard(key) == (key in model)
            if key in model:
                model.remove(key)
        probe = rng.randrange(universe + 1)
        assert keys.rank(probe) == bisect_left(model, probe)
        assert (probe in keys) == (probe in model)
        assert keys.index(probe) == (model.index(probe) if probe in model else None)
        most_blocks = max(most_blocks, len(keys._blocks))
    assert list(keys) == model and len(keys) == len(model)
    assert most_blocks >= 4 and len(keys._blocks) < most_blocks  # it split, then merged
    copy = keys.copy()
    copy.add(universe + 10)
    assert list(keys) == model


def test_ordered_keys_merge_a_short_block_into_a_full_neighbour():
    # Two blocks of LOAD keys; the second grows to exactly 2 x LOAD (not yet split); then the first
    # shrinks below LOAD/2, merges with it, and the merged block is too long and splits again.
    keys = OrderedKeys(range(2 * LOAD))
    for k in range(LOAD, 2 * LOAD):
        keys.add(k + 0.5)
    for k in range(LOAD // 2 + 1):
        assert keys.discard(k)
    model = sorted(set(range(LOAD // 2 + 1, 2 * LOAD)) | {k + 0.5 for k in range(LOAD, 2 * LOAD)})
    assert list(keys) == model and len(keys) == len(model)
    assert len(keys._blocks) == 2 and all(len(block) <= 2 * LOAD for block in keys._blocks)
    assert [keys.rank(k) for k in model] == list(range(len(model)))
    assert [keys.index(k) for k in model] == list(range(len(model)))
    assert keys.rank(2 * LOAD) == len(model) and keys.index(-1) is None
