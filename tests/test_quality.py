"""The quality table (SPEC §3.5) as users meet it: it finds the generator's latent skill, a table of
shuffled ratings scores a coin's accuracy, it follows the systems through the sensors and the asset,
and a late game scores again only the months it changes."""

import datetime as dt
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from dagster import (
    DagsterInstance,
    DagsterRunStatus,
    RunRequest,
    SkipReason,
    build_run_status_sensor_context,
    materialize,
)

from assets.quality import build_quality_asset
from pipeline.core.months import Month
from pipeline.definitions import build_definitions
from pipeline.defs.partitions import PartitionBounds, quality_partitions
from pipeline.defs.resources import DiprankResource
from pipeline.defs.tags import RANGE_END, RANGE_START
from pipeline.rating.quality import QUALITY_MANIFEST, quality_tables, stale_quality_range
from pipeline.settings import Settings
from pipeline.synthetic.generator import synthetic_games
from pipeline.systems.registry import SYSTEM_NAMES
from pipeline.warehouse.store import Warehouse
from tests.support import environment, run_cli, write_csv


def run(raw: Path, warehouse: Path) -> None:
    with environment(DAGSTER_HOME=str(warehouse / ".dagster")):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0, out + err


@pytest.fixture(scope="module")
def skilled(tmp_path_factory) -> Path:
    """A generated warehouse whose players have a latent skill that their results follow."""
    root = tmp_path_factory.mktemp("skilled")
    code, out, err = run_cli(
        "generate",
        *("--games", "2500", "--players", "120", "--years", "4", "--events", "40", "--seed", "11"),
        *("--out", str(root / "raw")),
    )
    assert code == 0, out + err
    run(root / "raw", root / "w")
    return root / "w"


def trailing(tables: dict[Month, pa.Table]) -> dict[str, list[tuple[Month, float | None]]]:
    """Each system's trailing accuracy by month."""
    series: dict[str, list[tuple[Month, float | None]]] = {}
    for month, table in sorted(tables.items()):
        for row in table.to_pylist():
            series.setdefault(row["system"], []).append((month, row["trailing_accuracy"]))
    return series


def written_tables(warehouse: Path) -> dict[Month, pa.Table]:
    store = Warehouse(warehouse)
    return {month: pq.read_table(store.quality(month)) for month in store.quality_months()}


def test_every_system_finds_the_latent_skill_after_its_second_year(skilled):
    series = trailing(written_tables(skilled))
    assert set(series) == set(SYSTEM_NAMES)
    for system, points in series.items():
        later = [accuracy for month, accuracy in points[24:] if accuracy is not None]
        assert later, system
        assert min(later) > 0.6, (system, min(later))


def test_a_table_of_shuffled_ratings_scores_a_coin(skilled, tmp_path):
    """The same games scored against each system's tables with the ratings shuffled among the
    listed players: about half the pairs are concordant."""
    shuffled = tmp_path / "w"
    shutil.copytree(skilled, shuffled, ignore=shutil.ignore_patterns(".dagster", "*.duckdb"))
    store = Warehouse(shuffled)
    rng = np.random.default_rng(3)
    for system in SYSTEM_NAMES:
        for month in store.written_months("rankings", system):
            path = store.rankings(system, month)
            table = pq.read_table(path)
            ratings = table.column("rating").to_numpy().copy()
            rng.shuffle(ratings)
            pq.write_table(table.set_column(table.schema.get_field_index("rating"), "rating", pa.array(ratings)), path)
    months = store.quality_months()
    scored = quality_tables(store, months[0], months[-1])
    pairs = {s: 0 for s in SYSTEM_NAMES}
    concordant = {s: 0.0 for s in SYSTEM_NAMES}
    for table in scored.values():
        for row in table.to_pylist():
            pairs[row["system"]] += row["pairs"]
            concordant[row["system"]] += row["concordant"]
    for system in SYSTEM_NAMES:
        assert pairs[system] > 2000, system
        assert abs(concordant[system] / pairs[system] - 0.5) < 0.03, (system, concordant[system] / pairs[system])


def test_a_late_game_scores_again_from_its_month_and_equals_a_run_from_scratch(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(5, 80, 15, dt.date(2020, 1, 1), dt.date(2020, 8, 31))))
    run(raw, warehouse)
    store = Warehouse(warehouse)
    assert stale_quality_range(store) is None
    before = {m: store.quality(m).stat().st_mtime_ns for m in store.quality_months()}
    late = [dict(row, game_id="late") for row in synthetic_games(6, 1, 15, dt.date(2020, 5, 3), dt.date(2020, 5, 3))]
    write_csv(raw / "games" / "b.csv", late)
    run(raw, warehouse)
    after = {m: store.quality(m).stat().st_mtime_ns for m in store.quality_months()}
    assert [str(m) for m in before if after[m] != before[m]] == [f"2020-{n:02d}" for n in range(5, 9)]
    run(raw, tmp_path / "scratch")
    scratch = Warehouse(tmp_path / "scratch")
    for month in store.quality_months():
        assert store.quality(month).read_bytes() == scratch.quality(month).read_bytes(), month
    assert store.load_manifest(QUALITY_MANIFEST) == scratch.load_manifest(QUALITY_MANIFEST)


@pytest.fixture(scope="module")
def four_months(tmp_path_factory) -> Path:
    """A whole run over four months of games (raw/ and w/ under the folder returned)."""
    root = tmp_path_factory.mktemp("four_months")
    write_csv(
        root / "raw" / "games" / "a.csv", list(synthetic_games(7, 60, 15, dt.date(2020, 1, 1), dt.date(2020, 4, 30)))
    )
    run(root / "raw", root / "w")
    return root


def copy_of(folder: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of a run's raw folder and warehouse (without its Dagster instance)."""
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".dagster"))
    return tmp_path / "raw", tmp_path / "w"


def test_the_sensor_after_a_systems_run_asks_for_the_stale_months(four_months, tmp_path):
    raw, warehouse = copy_of(four_months, tmp_path)
    settings = Settings.from_env({}, raw_dir=str(raw), warehouse_dir=str(warehouse))
    defs, diprank = build_definitions(settings), DiprankResource.from_settings(settings)
    sensor = defs.resolve_sensor_def("score_after_rating")
    instance = DagsterInstance.ephemeral()
    rated = defs.resolve_job_def("club_job").execute_in_process(
        instance=instance, resources={"diprank": diprank}, tags={RANGE_START: "2020-04-01", RANGE_END: "2020-04-01"}
    )
    success = next(e for e in rated.all_events if e.event_type_value == "PIPELINE_SUCCESS")

    def sensed():
        context = build_run_status_sensor_context(
            sensor_name="score_after_rating",
            dagster_event=success,
            dagster_instance=instance,
            dagster_run=rated.dagster_run,
            resources={"diprank": diprank},
        )
        return sensor(context)

    assert isinstance(sensed(), SkipReason)  # the same inputs: every table is current
    Warehouse(warehouse).quality(Month(2020, 2)).unlink()
    request = sensed()
    assert isinstance(request, RunRequest)
    assert (request.tags[RANGE_START], request.tags[RANGE_END]) == ("2020-02-01", "2020-04-01")
    assert request.job_name in (None, "quality_job")
    assert request.run_key == sensed().run_key  # two runs finishing together ask for one quality run

    # Another system's run still going: the last of the runs to finish asks, not this one.
    running = instance.create_run_for_job(defs.resolve_job_def("eagle_job"), status=DagsterRunStatus.STARTED)
    waiting = sensed()
    assert isinstance(waiting, SkipReason) and "eagle_job" in (waiting.skip_message or "")
    instance.report_run_failed(running)
    assert isinstance(sensed(), RunRequest)


def test_the_asset_scores_a_range_the_ui_asks_for(four_months, tmp_path):
    """The quality job over a range of months, as a UI backfill launches it (one run for the
    range), writes those months' tables as the whole run wrote them."""
    raw, warehouse = copy_of(four_months, tmp_path)
    store = Warehouse(warehouse)
    months = [Month(2020, 2), Month(2020, 3)]
    written = {m: store.quality(m).read_bytes() for m in months}
    for month in months:
        store.quality(month).unlink()
    settings = Settings.from_env({}, raw_dir=str(raw), warehouse_dir=str(warehouse))
    defs = build_definitions(settings)
    result = defs.resolve_job_def("quality_job").execute_in_process(
        instance=DagsterInstance.ephemeral(),
        resources={"diprank": DiprankResource.from_settings(settings)},
        tags={RANGE_START: "2020-02-01", RANGE_END: "2020-03-01"},
    )
    assert result.success
    assert {m: store.quality(m).read_bytes() for m in months} == written
    (check,) = result.get_asset_check_evaluations()
    assert check.passed
    # One Materialize of a single month, the asset on its own, gives that month's table too.
    april = store.quality(Month(2020, 4)).read_bytes()
    store.quality(Month(2020, 4)).unlink()
    single = materialize(
        [build_quality_asset(quality_partitions(PartitionBounds({s: Month(2020, 1) for s in SYSTEM_NAMES})))],
        partition_key="2020-04-01",
        instance=DagsterInstance.ephemeral(),
        resources={"diprank": DiprankResource.from_settings(settings)},
    )
    assert single.success and store.quality(Month(2020, 4)).read_bytes() == april


def test_the_months_check_finds_a_missing_table_and_a_table_of_other_systems(four_months, tmp_path):
    from assets.quality import tables_out_of_range

    _, warehouse = copy_of(four_months, tmp_path)
    store = Warehouse(warehouse)
    assert tables_out_of_range(store, Month(2020, 1), Month(2020, 4)) == []
    store.quality(Month(2020, 2)).unlink()
    march = store.quality(Month(2020, 3))
    table = pq.read_table(march)
    pq.write_table(table.filter(pc.not_equal(table.column("system"), "club")), march)
    found = tables_out_of_range(store, Month(2020, 1), Month(2020, 4))
    assert [line.split(":")[0] for line in found] == ["2020-02", "2020-03"]
    listed, expected = found[1].split(", expected ")
    assert "no table" in found[0] and "'club'" not in listed and "'club'" in expected
