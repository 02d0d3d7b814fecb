"""The runner saves a batch of months while it computes the next: batches still land in order,
each with its checkpoints and manifest, and a batch that breaks its model stops the run before
any later month is written."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from pipeline.core.months import month_range
from pipeline.rating import runner
from pipeline.rating.checks import CHECK_DESCRIPTIONS
from pipeline.rating.writer import OutputInvalid
from pipeline.systems.base import MonthOutput
from pipeline.systems.club.rules import ClubRating
from pipeline.systems.registry import config_key
from tests.support import validated_warehouse
from tests.test_planning import APR, DEC, FEB, JAN, NOV, games, settings_for


class BrokenIn(ClubRating):
    """The club rating, with a negative base rating (which its model refuses) in one month."""

    def __init__(self, broken):
        self.broken = broken

    def step(self, state, month_input) -> MonthOutput:
        out = super().step(state, month_input)
        if month_input.month != self.broken or out.table.num_rows == 0:
            return out
        column = out.table.schema.get_field_index("base_rating")
        table = out.table.set_column(column, "base_rating", pc.negate(pc.add(out.table["base_rating"], 1.0)))
        return MonthOutput(out.state, table, out.history, out.extras)


@pytest.fixture
def one_month_batches(monkeypatch):
    monkeypatch.setattr(runner, "FLUSH_ROWS", 1)


def test_batches_are_saved_in_order_with_their_checkpoints_and_manifest(tmp_path, one_month_batches):
    warehouse = validated_warehouse(tmp_path / "w", games=games())
    lines: list[str] = []
    result = runner.run_system(ClubRating(), warehouse, None, None, config_key="k", progress=lines.append)
    months = month_range(NOV, APR)
    assert result.months == months
    assert lines == [f"club: wrote {m}..{m} ({k}/{len(months)} months)" for k, m in enumerate(months, start=1)]
    assert warehouse.written_months("rankings", "club") == months
    assert warehouse.written_months("history", "club") == months
    assert sorted(warehouse.load_manifest("club")) == [str(m) for m in months]
    assert warehouse.checkpoint_months("club") == [DEC, APR]
    assert [o.name for o in result.checks] == list(CHECK_DESCRIPTIONS) and all(o.passed for o in result.checks)


def test_a_batch_that_breaks_its_model_stops_the_run_before_any_later_month(tmp_path, one_month_batches):
    warehouse = validated_warehouse(tmp_path / "w", games=games())
    with pytest.raises(OutputInvalid, match="base_rating"):
        runner.run_system(BrokenIn(FEB), warehouse, None, None, config_key="k")
    written = month_range(NOV, JAN)
    assert warehouse.written_months("rankings", "club") == written
    assert warehouse.written_months("history", "club") == written
    assert sorted(warehouse.load_manifest("club")) == [str(m) for m in written]
    assert warehouse.checkpoint_months("club") == [DEC]


def test_a_run_ends_the_same_whatever_its_batches(tmp_path, monkeypatch):
    """Batches of one month and one batch of everything write the same bytes."""
    settings = settings_for(tmp_path)
    key = config_key("club", settings)
    outputs = {}
    for label, rows in (("whole", 10**9), ("monthly", 1)):
        monkeypatch.setattr(runner, "FLUSH_ROWS", rows)
        warehouse = validated_warehouse(tmp_path / label, games=games())
        runner.run_system(ClubRating(), warehouse, None, None, config_key=key)
        outputs[label] = {
            p.relative_to(warehouse.root).as_posix(): p.read_bytes()
            for kind in ("rankings", "history", "state")
            for p in (warehouse.root / kind).rglob("*")
            if p.is_file()
        }
    assert outputs["whole"] == outputs["monthly"]
    assert len(outputs["whole"]) == 2 * len(month_range(NOV, APR)) + 3  # the tables, two checkpoints, the manifest
