"""Ghost Rating: the compiled path against the plain-Python reference on generated feeds, every
category and month, and checkpoints that resume exactly."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core import state_codec
from pipeline.core.months import Month, month_range
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.base import MonthInput, MonthOutput
from pipeline.systems.games import rows_to_table
from pipeline.systems.ghost import reference
from pipeline.systems.ghost.rules import GhostRating

FIRST_DAY, LAST_DAY = dt.date(2019, 10, 1), dt.date(2021, 3, 31)
MONTHS = month_range(Month.of(FIRST_DAY), Month(2021, 11))  # eight months past the last game: lists empty out
SCORINGS = ("draw_size", "sum_of_squares", "ppsc", "unranked")
PRESS = ("full", "rulebook", "public", "gunboat")


def generated(seed: int, n_games: int, n_players: int, powers: int) -> pa.Table:
    """A synthetic feed with every scoring, press and pace drawn per game (same on its rows)."""
    modes = random.Random(seed)
    per_game: dict[str, dict] = {}
    rows = []
    for row in synthetic_games(seed, n_games, n_players, FIRST_DAY, LAST_DAY, powers=powers):
        mode = per_game.setdefault(
            row["game_id"],
            {"scoring": modes.choice(SCORINGS), "press": modes.choice(PRESS), "live": modes.random() < 0.3},
        )
        rows.append({**row, **mode})
    return rows_to_table(rows)


def month_rows(table: pa.Table, month: Month) -> pa.Table:
    days = table.column("finished_on")
    return table.filter(
        pc.and_(
            pc.greater_equal(days, pa.scalar(month.first_day, pa.date32())),
            pc.less_equal(days, pa.scalar(month.last_day, pa.date32())),
        )
    )


def run(state, table: pa.Table, months: list[Month]) -> tuple[list[MonthOutput], object]:
    system, outputs = GhostRating(), []
    for month in months:
        out = system.step(state, MonthInput(month, month_rows(table, month)))
        state = out.state
        outputs.append(out)
    return outputs, state


HISTORY_COMPARED = ("source_id", "player_id", "category", "expected", "actual", "rating_before", "rating_after")
TABLE_COMPARED = ("category", "rank", "player_id", "rating", "games", "last_game_date")


def assert_matches_reference(table: pa.Table) -> None:
    """Every month's tables and history rows equal the reference's, float for float."""
    outputs, _ = run(GhostRating().initial_state(), table, MONTHS)
    games = reference.counted_games(table.to_pylist())
    state = reference.ReferenceGhost()
    for month, out in zip(MONTHS, outputs):
        for game in games:
            if Month.of(game.finished_on) == month:
                reference.rate(state, game)
        assert out.table.select(list(TABLE_COMPARED)).to_pylist() == reference.table(state, month), month
        month_history = [h for h in state.history if Month.of(table_day(games, h["source_id"])) == month]
        assert out.history.select(list(HISTORY_COMPARED)).to_pylist() == month_history, month


def table_day(games: list[reference.GhostGame], game_id: str) -> dt.date:
    return next(g.finished_on for g in games if g.game_id == game_id)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_games=st.integers(0, 60),
    n_players=st.integers(2, 30),
    powers=st.integers(2, 7),
)
def test_fast_path_equals_reference(seed, n_games, n_players, powers):
    assert_matches_reference(generated(seed, n_games, n_players, powers))


def test_fast_path_equals_reference_on_a_busier_feed():
    table = generated(20261207, 300, 25, 7)
    assert_matches_reference(table)
    outputs, _ = run(GhostRating().initial_state(), table, MONTHS)
    categories = {c for out in outputs for c in out.table.column("category").to_pylist()}
    assert categories == {"overall", "classic", "gunboat", "live"}
    scorings = {s for out in outputs for s in out.history.column("scoring").to_pylist()}
    assert scorings == {"draw_size", "sum_of_squares", "ppsc"}
    assert outputs[-1].table.num_rows == 0  # nobody played in the six months before the last one


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), split=st.integers(1, len(MONTHS) - 1))
def test_checkpoint_round_trip_continues_identically(seed, split):
    table = generated(seed, 120, 20, 7)
    system = GhostRating()
    uninterrupted, _ = run(system.initial_state(), table, MONTHS)
    _, state = run(system.initial_state(), table, MONTHS[:split])
    encoded = state_codec.dumps(system.encode_state(state))
    restored = system.decode_state(state_codec.loads(encoded))
    resumed, _ = run(restored, table, MONTHS[split:])
    for before, after in zip(uninterrupted[split:], resumed):
        assert after.table.equals(before.table)
        assert after.history.equals(before.history)


def test_step_leaves_its_input_state_usable():
    table = generated(99, 150, 20, 7)
    system = GhostRating()
    _, state = run(system.initial_state(), table, MONTHS[:9])
    snapshot = state_codec.dumps(system.encode_state(state))
    month = MONTHS[9]
    first = system.step(state, MonthInput(month, month_rows(table, month)))
    assert state_codec.dumps(system.encode_state(state)) == snapshot
    second = system.step(state, MonthInput(month, month_rows(table, month)))
    assert first.table.equals(second.table) and first.history.equals(second.history)
