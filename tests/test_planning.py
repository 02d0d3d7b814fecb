"""Which months a run computes and where it starts: resume_point, first_stale_month, plan_system and
plan_all on small warehouses built in place (validated feeds, checkpoints, manifests)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil

import pyarrow as pa
import pytest

from pipeline.core import state_codec
from pipeline.core.months import Month, month_range
from pipeline.rating.carry import Carry, note_names
from pipeline.rating.planning import Plan, plan_all, plan_system
from pipeline.rating.runner import (
    CHECKPOINT_FORMAT,
    _checkpoint_payload,
    first_stale_month,
    input_chain,
    resume_point,
    run_system,
)
from pipeline.settings import Settings
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.registry import SYSTEM_NAMES, build_system, config_key
from pipeline.warehouse.store import Warehouse
from tests.support import validated_warehouse

SEP, OCT, NOV, DEC = Month(2019, 9), Month(2019, 10), Month(2019, 11), Month(2019, 12)
JAN, FEB, MAR, APR, MAY, JUN = (Month(2020, m) for m in range(1, 7))
GAME_SYSTEMS = ("club", "eagle", "diwz")


# --- resume_point: which checkpoint a run that must cover `first` starts from --------------------


class Marked:
    """A stand-in system whose state says which checkpoint it came from."""

    name = "marked"
    feed = "games"

    def initial_state(self):
        return "initial"

    def encode_state(self, state):
        return {"marked": state}

    def decode_state(self, data):
        return data["marked"]


KEY = '{"system": "marked"}'
CHAIN = {m: f"inputs-up-to-{m}" for m in month_range(OCT, JUN)}


def carry_of(month: Month) -> Carry:
    carry = Carry()
    note_names(carry, pa.table({"player_id": ["p1"], "player_name": [f"named in {month}"]}))
    return carry


def checkpoint(warehouse, month: Month, *, key: str = KEY, **changes) -> None:
    """The checkpoint the runner writes at the end of `month`, with any field changed."""
    payload = _checkpoint_payload(Marked(), f"state of {month}", carry_of(month), key, CHAIN[month])
    warehouse.save_checkpoint(Marked.name, month, {**payload, **changes})


def resume(warehouse, first: Month, data_first: Month = NOV, chain=CHAIN):
    start, state, carry = resume_point(warehouse, Marked(), first, data_first, KEY, chain)
    return start, state, dict(zip(carry.numbers.ids().to_pylist(), carry.names.to_pylist()))


def test_without_checkpoints_a_run_starts_at_the_first_month_with_data(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    assert resume(warehouse, MAR) == (NOV, "initial", {})


def test_the_previous_months_checkpoint_continues_at_first(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    checkpoint(warehouse, FEB)
    assert resume(warehouse, MAR) == (MAR, "state of 2020-02", {"p1": "named in 2020-02"})


def test_an_older_checkpoint_replays_from_the_month_after_it(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    checkpoint(warehouse, DEC)
    start, state, _ = resume(warehouse, APR)
    assert (start, state) == (JAN, "state of 2019-12")


def test_the_nearest_earlier_checkpoint_wins_and_later_ones_are_not_used(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    for month in (DEC, FEB, MAR, MAY):
        checkpoint(warehouse, month)
    assert resume(warehouse, APR)[:2] == (APR, "state of 2020-03")
    # A checkpoint of `first` itself or later is never a starting point for `first`.
    assert resume(warehouse, MAR)[:2] == (MAR, "state of 2020-02")
    assert resume(warehouse, JAN)[:2] == (JAN, "state of 2019-12")
    assert resume(warehouse, DEC)[:2] == (NOV, "initial")


def test_a_checkpoint_of_another_configuration_is_skipped(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    checkpoint(warehouse, DEC)
    checkpoint(warehouse, FEB, key='{"system": "marked", "option": 2}')
    assert resume(warehouse, MAR)[:2] == (JAN, "state of 2019-12")
    checkpoint(warehouse, DEC, key='{"system": "marked", "option": 2}')
    assert resume(warehouse, MAR)[:2] == (NOV, "initial")


def test_a_checkpoint_of_an_older_layout_is_skipped(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    checkpoint(warehouse, DEC)
    checkpoint(warehouse, FEB, format=CHECKPOINT_FORMAT - 1)
    assert resume(warehouse, MAR)[:2] == (JAN, "state of 2019-12")


def test_checkpoints_after_a_changed_month_are_stale(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    for month in (DEC, JAN, FEB, MAR):
        checkpoint(warehouse, month)
    # Late data in February: February's link of the chain and every later one change.
    late = {m: (f + "+late" if m >= FEB else f) for m, f in CHAIN.items()}
    assert resume(warehouse, APR, chain=late)[:2] == (FEB, "state of 2020-01")
    # Late data before the system's first month: the whole chain is new, nothing is current.
    everything = {m: f + "+earlier" for m, f in CHAIN.items()}
    assert resume(warehouse, APR, data_first=OCT, chain=everything)[:2] == (OCT, "initial")


def test_checkpoints_before_the_first_month_with_data_are_not_used(tmp_path):
    warehouse = Warehouse(tmp_path / "w")
    checkpoint(warehouse, OCT)
    assert resume(warehouse, DEC, data_first=NOV)[:2] == (NOV, "initial")
    assert resume(warehouse, DEC, data_first=OCT)[:2] == (NOV, "state of 2019-10")


# --- a real warehouse: games from November 2019 to April 2020, rated by the runner ---------------


def games() -> list[dict]:
    rows = list(synthetic_games(41, 45, 15, dt.date(2019, 11, 1), dt.date(2020, 4, 30)))
    assert {Month.of(r["finished_on"]) for r in rows} == set(month_range(NOV, APR))
    return rows


def late_game(day: dt.date, game_id: str = "late-1") -> list[dict]:
    return [dict(r, game_id=game_id) for r in synthetic_games(42, 1, 15, day, day)]


def settings_for(root, **changes) -> Settings:
    values = {"raw_dir": str(root / "raw"), "warehouse_dir": str(root / "w"), "start_month": Month(1990, 1)}
    return Settings(**{**values, **changes})


@pytest.fixture(scope="module")
def rated_once(tmp_path_factory):
    root = tmp_path_factory.mktemp("rated")
    settings = settings_for(root)
    warehouse = validated_warehouse(root / "w", games=games())
    for name in GAME_SYSTEMS:
        result = run_system(build_system(name, settings), warehouse, None, None, config_key=config_key(name, settings))
        assert result.months == month_range(NOV, APR)
        assert warehouse.checkpoint_months(name) == [DEC, APR]
    return root / "w"


@pytest.fixture
def rated(rated_once, tmp_path):
    """A warehouse of its own whose games systems are computed and current (checkpoints 2019-12
    and 2020-04)."""
    shutil.copytree(rated_once, tmp_path / "w")
    return Warehouse(tmp_path / "w"), settings_for(tmp_path)


def stale(warehouse, settings, name: str, last: Month | None = None, **changes) -> Month | None:
    settings = dataclasses.replace(settings, **changes)
    return first_stale_month(build_system(name, settings), warehouse, config_key(name, settings), last)


def relayer(warehouse, **feeds):
    """New validated feeds in the same warehouse (what the next ingest leaves), outputs kept."""
    return validated_warehouse(warehouse.root, **feeds)


def test_nothing_is_stale_right_after_a_run(rated):
    warehouse, settings = rated
    for name in GAME_SYSTEMS:
        assert stale(warehouse, settings, name) is None, name
    assert stale(warehouse, settings, "dip_pouch") is None  # no events at all: nothing to compute


def test_without_outputs_everything_is_stale_from_the_first_month(tmp_path):
    warehouse = validated_warehouse(tmp_path / "w", games=games())
    settings = settings_for(tmp_path)
    assert [stale(warehouse, settings, name) for name in GAME_SYSTEMS] == [NOV, NOV, NOV]


def test_a_missing_table_file_is_stale(rated):
    warehouse, settings = rated
    warehouse.rankings("eagle", FEB).unlink()
    assert stale(warehouse, settings, "eagle") == FEB
    assert stale(warehouse, settings, "club") is None


@pytest.mark.parametrize(
    "day, first_stale",
    [
        (dt.date(2020, 2, 11), FEB),
        (dt.date(2019, 9, 20), SEP),  # before the first month: everything is stale from it
    ],
)
def test_a_late_game_makes_its_month_the_first_stale_one(rated, day, first_stale):
    warehouse, settings = rated
    relayer(warehouse, games=games() + late_game(day))
    assert [stale(warehouse, settings, name) for name in GAME_SYSTEMS] == [first_stale] * 3


def test_a_corrected_value_makes_its_month_the_first_stale_one(rated):
    warehouse, settings = rated
    rows = games()
    at = next(i for i, r in enumerate(rows) if Month.of(r["finished_on"]) == MAR)
    rows[at] = dict(rows[at], player_name="Corrected Name")
    relayer(warehouse, games=rows)
    assert [stale(warehouse, settings, name) for name in GAME_SYSTEMS] == [MAR, MAR, MAR]


def test_another_configuration_is_stale_from_the_first_month(rated):
    warehouse, settings = rated
    assert stale(warehouse, settings, "diwz", diwz_newcomers="start_1600") == NOV
    assert stale(warehouse, settings, "eagle", eagle_positions="live") == NOV
    assert stale(warehouse, settings, "club", diwz_newcomers="start_1600") is None  # not club's option


def test_a_changed_registry_is_stale_from_the_first_month(rated):
    warehouse, settings = rated
    relayer(warehouse, games=games(), players=[{"player_id": "p00001", "name": "Registered", "country": "NOR"}])
    assert [stale(warehouse, settings, name) for name in GAME_SYSTEMS] == [NOV, NOV, NOV]


def test_later_data_of_another_feed_extends_every_system(rated):
    # Every system writes up to the latest month with data in any feed.
    warehouse, settings = rated
    event = {
        "event_id": "e1",
        "name": "Open",
        "start_date": dt.date(2020, 6, 5),
        "end_date": dt.date(2020, 6, 6),
        "location": "Oslo",
        "country": "NOR",
        "rounds": 2,
        "num_players": 2,
        "is_world_championship": False,
    }
    results = [
        {"event_id": "e1", "player_id": f"p{k:05d}", "player_name": None, "nationality": "NOR", "placement": k + 1}
        for k in range(2)
    ]
    relayer(warehouse, games=games(), events=[event], event_results=results)
    assert [stale(warehouse, settings, name) for name in GAME_SYSTEMS] == [MAY, MAY, MAY]
    assert [stale(warehouse, settings, name, last=APR) for name in GAME_SYSTEMS] == [None, None, None]
    assert stale(warehouse, settings, "dip_pouch") == JUN


def test_resume_after_late_data_uses_the_last_current_checkpoint(rated):
    warehouse, settings = rated
    diwz, key = build_system("diwz", settings), config_key("diwz", settings)
    december = warehouse.load_checkpoint("diwz", DEC)
    relayer(warehouse, games=games() + late_game(dt.date(2020, 2, 11)))
    chain = input_chain(warehouse, diwz, key, NOV, APR)
    start, state, carry = resume_point(warehouse, diwz, FEB, NOV, key, chain)
    assert start == JAN
    assert state_codec.dumps(diwz.encode_state(state)) == state_codec.dumps(december["state"])
    assert carry.names.equals(Carry.decode(december["carry"]).names)
    # A range from April replays from January too: the April checkpoint has the old February in it.
    result = run_system(diwz, warehouse, APR, None, config_key=key)
    assert result.replayed_from == JAN and result.months == month_range(JAN, APR)
    assert first_stale_month(diwz, warehouse, key) is None


def test_resume_after_a_month_before_the_first_starts_over(rated):
    warehouse, settings = rated
    diwz, key = build_system("diwz", settings), config_key("diwz", settings)
    relayer(warehouse, games=games() + late_game(dt.date(2019, 9, 20)))
    chain = input_chain(warehouse, diwz, key, SEP, APR)
    start, state, carry = resume_point(warehouse, diwz, MAR, SEP, key, chain)
    assert start == SEP
    assert state_codec.dumps(diwz.encode_state(state)) == state_codec.dumps(diwz.encode_state(diwz.initial_state()))
    assert len(carry.names) == 0


# --- plans ---------------------------------------------------------------------------------------


def assert_up_to_date(plan: Plan, name: str) -> None:
    assert (plan.system, plan.first, plan.last) == (name, None, None)
    assert plan.note.startswith("up to date"), plan.note


def test_plan_of_a_current_system_is_empty_with_a_note(rated):
    warehouse, settings = rated
    for name in GAME_SYSTEMS:
        assert_up_to_date(plan_system(name, warehouse, settings), name)


def test_plan_starts_at_the_first_stale_month_and_ends_at_the_data(rated):
    warehouse, settings = rated
    relayer(warehouse, games=games() + late_game(dt.date(2020, 3, 3)))
    for name in GAME_SYSTEMS:
        assert plan_system(name, warehouse, settings) == Plan(name, MAR, APR)


def test_plan_of_a_fresh_warehouse_covers_all_the_data(tmp_path):
    warehouse = validated_warehouse(tmp_path / "w", games=games())
    settings = settings_for(tmp_path)
    assert plan_system("diwz", warehouse, settings) == Plan("diwz", NOV, APR)
    assert plan_system("dip_pouch", warehouse, settings) == Plan("dip_pouch", note="no data")


def test_plan_from_a_given_month_recomputes_even_when_current(rated):
    warehouse, settings = rated
    assert plan_system("club", warehouse, settings, first=FEB) == Plan("club", FEB, APR)
    # Never before the system's first month with data ...
    assert plan_system("club", warehouse, settings, first=Month(2018, 1)) == Plan("club", NOV, APR)
    # ... nor before the first partition.
    later_start = dataclasses.replace(settings, start_month=JAN)
    assert plan_system("club", warehouse, later_start, first=Month(2018, 1)) == Plan("club", JAN, APR)


def test_plan_stale_month_before_the_first_partition_starts_at_the_partition(tmp_path):
    warehouse = validated_warehouse(tmp_path / "w", games=games())
    settings = settings_for(tmp_path, start_month=FEB)
    assert plan_system("eagle", warehouse, settings) == Plan("eagle", FEB, APR)


def test_plan_to_a_given_month(rated, tmp_path):
    warehouse, settings = rated
    assert plan_system("eagle", warehouse, settings, first=DEC, last=FEB) == Plan("eagle", DEC, FEB)
    # Stale months after the bound are not this run's business.
    relayer(warehouse, games=games() + late_game(dt.date(2020, 3, 3)))
    assert_up_to_date(plan_system("eagle", warehouse, settings, last=FEB), "eagle")
    assert plan_system("eagle", warehouse, settings, last=MAR) == Plan("eagle", MAR, MAR)
    # Past the data: the months after it are missing.
    assert plan_system("eagle", warehouse, settings, last=JUN) == Plan("eagle", MAR, JUN)
    fresh = validated_warehouse(tmp_path / "fresh", games=games())
    assert plan_system("eagle", fresh, settings, last=JAN) == Plan("eagle", NOV, JAN)


def test_plan_with_from_after_to_has_no_range(rated):
    warehouse, settings = rated
    plan = plan_system("diwz", warehouse, settings, first=MAR, last=FEB)
    assert (plan.first, plan.last) == (None, None) and plan.note == "no data in range"


def test_plan_to_a_month_before_the_data_has_no_range(tmp_path):
    """Not "up to date": with --to before the first month with data there is nothing to compute."""
    fresh = validated_warehouse(tmp_path / "w", games=games())
    settings = settings_for(tmp_path)
    for first in (None, Month(2019, 1)):
        assert plan_system("club", fresh, settings, first=first, last=Month(2019, 6)) == Plan(
            "club", note="no data in range"
        )


def test_plan_all_lists_every_system_in_order_or_the_chosen_ones(rated):
    warehouse, settings = rated
    relayer(warehouse, games=games() + late_game(dt.date(2020, 1, 7)))
    plans = plan_all(warehouse, settings)
    assert [p.system for p in plans] == list(SYSTEM_NAMES)
    by_name = {p.system: p for p in plans}
    assert by_name["dip_pouch"] == Plan("dip_pouch", note="no data")
    for name in GAME_SYSTEMS:
        assert by_name[name] == Plan(name, JAN, APR)
    assert plan_all(warehouse, settings, systems=["diwz", "club"]) == [Plan("diwz", JAN, APR), Plan("club", JAN, APR)]
    assert plan_all(warehouse, settings, FEB, MAR, systems=["eagle"]) == [Plan("eagle", FEB, MAR)]


def test_side_by_side_runs_start_with_the_longest():
    from pipeline.orchestrate import expected_work

    plans = [Plan("dip_pouch", OCT, JUN), Plan("club", NOV, JUN), Plan("eagle", OCT, JUN), Plan("diwz", OCT, MAR)]
    assert [p.system for p in sorted(plans, key=expected_work, reverse=True)] == ["eagle", "dip_pouch", "club", "diwz"]
    plans[0] = Plan("dip_pouch", NOV, JUN)
    assert [p.system for p in sorted(plans, key=expected_work, reverse=True)] == ["eagle", "club", "dip_pouch", "diwz"]
