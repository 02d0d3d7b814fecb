"""Output checks fail on broken tables and pass on real ones; the assets report them to Dagster."""

import datetime as dt

import pyarrow as pa
from dagster import AssetKey, DagsterInstance, materialize

from pipeline.core.months import Month
from pipeline.rating.checks import (
    HISTORY_AGREES,
    ONE_ROW_PER_PLAYER,
    RANKS_CONTIGUOUS,
    RATING_IN_RANGE,
    check_tables,
    merge_outcomes,
)
from pipeline.settings import Settings
from pipeline.systems.dip_pouch.rules import DipPouch
from pipeline.systems.eagle.rules import EaglePoints
from tests.support import make_raw
from tests.test_validation import GOOD_EVENT, GOOD_GAME, GOOD_RESULTS

MONTH = Month(2020, 3)


def tables(system, ranks, ratings, players, history_after=None):
    n = len(players)
    rankings = pa.table(
        {"system": [system] * n, "as_of": [MONTH.last_day] * n, "rank": ranks, "player_id": players, "rating": ratings}
    )
    after = history_after or ratings
    history = pa.table(
        {
            "system": [system] * n,
            "source_id": ["x"] * n,
            "source_date": [dt.date(2020, 3, 2)] * n,
            "player_id": players,
            "rating_before": [None] * n,
            "rating_after": after,
        }
    )
    return rankings, history


def failed(system_obj, *month_tables):
    return {o.name for o in check_tables(system_obj, *tables(system_obj.name, *month_tables)) if not o.passed}


def test_checks_pass_on_a_consistent_table():
    assert failed(DipPouch(), [1, 2, 2, 4], [60.0, 50.0, 50.0, 45.0], ["a", "b", "c", "d"]) == set()


def test_each_check_can_fail():
    assert failed(DipPouch(), [1, 3, 3, 4], [60.0, 50.0, 50.0, 45.0], ["a", "b", "c", "d"]) == {RANKS_CONTIGUOUS}
    assert failed(DipPouch(), [1, 2, 2, 4], [160.0, 50.0, 50.0, 45.0], ["a", "b", "c", "d"]) == {RATING_IN_RANGE}
    assert ONE_ROW_PER_PLAYER in failed(DipPouch(), [1, 2, 2, 4], [60.0, 50.0, 50.0, 45.0], ["a", "b", "b", "d"])
    assert failed(
        DipPouch(), [1, 2, 2, 4], [60.0, 50.0, 50.0, 45.0], ["a", "b", "c", "d"], [60.0, 50.0, 51.0, 45.0]
    ) == {HISTORY_AGREES}


def test_ordered_system_needs_unique_ranks():
    assert failed(EaglePoints(), [1, 2, 2], [10.0, 9.0, 9.0], ["a", "b", "c"]) == {RANKS_CONTIGUOUS}


def test_batches_merge_into_the_range_outcome():
    good = check_tables(DipPouch(), *tables("dip_pouch", [1, 2], [60.0, 50.0], ["a", "b"]))
    bad = check_tables(DipPouch(), *tables("dip_pouch", [1, 3], [60.0, 50.0], ["a", "b"]))
    merged = {o.name: o for o in merge_outcomes(good, bad)}
    assert not merged[RANKS_CONTIGUOUS].passed and merged[RANKS_CONTIGUOUS].failures == 1
    assert merged[RATING_IN_RANGE].passed
    assert all(o.passed for o in merge_outcomes(good, good))


def test_assets_report_their_checks(tmp_path):
    """Asset layer: materialize ingest and one system on a temporary warehouse; every check passes."""
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME, events=[GOOD_EVENT], event_results=GOOD_RESULTS)
    settings = Settings.from_env({}, raw_dir=str(raw), warehouse_dir=str(tmp_path / "w"), settle_seconds=0)
    from assets.ingest import ingest_feeds
    from assets.ratings import build_rating_assets
    from pipeline.defs.partitions import partition_bounds, rating_partitions
    from pipeline.defs.resources import DiprankResource

    rating_assets = build_rating_assets(rating_partitions(partition_bounds(settings)))
    instance = DagsterInstance.ephemeral()
    resources = {"diprank": DiprankResource.from_settings(settings)}
    ingest = materialize([ingest_feeds], resources=resources, instance=instance)
    assert ingest.success
    checks = ingest.get_asset_check_evaluations()
    assert {c.check_name for c in checks} == {"rows_balance", "nothing_quarantined"}
    assert all(c.passed for c in checks)
    rated = materialize(
        rating_assets,
        selection=[AssetKey("eagle_rankings")],
        resources=resources,
        instance=instance,
        tags={"dagster/asset_partition_range_start": "2020-03-01", "dagster/asset_partition_range_end": "2020-04-01"},
    )
    assert rated.success
    evaluations = rated.get_asset_check_evaluations()
    assert {e.check_name for e in evaluations} == {
        RANKS_CONTIGUOUS,
        ONE_ROW_PER_PLAYER,
        RATING_IN_RANGE,
        HISTORY_AGREES,
    }
    assert all(e.passed for e in evaluations)
    materializations = rated.asset_materializations_for_node("eagle_rankings")
    metadata = materializations[-1].metadata
    assert metadata["months_written"].value == 2 and metadata["players_listed"].value == 3
    assert "player_id" in metadata["preview"].value


def test_a_run_of_months_without_results_writes_empty_history(tmp_path):
    """An incremental month with no events: empty history files, validated and written."""
    from tests.support import run_cli

    raw = make_raw(tmp_path / "raw", events=[GOOD_EVENT], event_results=GOOD_RESULTS)
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), "--to", "2019-05")
    assert code == 0, out + err
    code, out, err = run_cli(
        "run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), "--from", "2019-06", "--to", "2019-07"
    )
    assert code == 0, out + err
    import pyarrow.parquet as pq

    history = pq.read_table(tmp_path / "w" / "history" / "dip_pouch" / "year=2019" / "month=07" / "history.parquet")
    assert history.num_rows == 0 and "tournament_value" in history.column_names


def test_a_table_breaking_its_model_is_never_written():
    """The writer's Pandera validation (run in DuckDB) refuses a defective table and names the check."""
    import pytest

    from pipeline.rating.writer import OutputInvalid, validate_output
    from schemas.outputs import RankingsBase

    def table(ranks):
        return pa.table(
            {
                "system": ["dip_pouch"] * 2,
                "as_of": [MONTH.last_day] * 2,
                "rank": pa.array(ranks, pa.int64()),
                "player_id": ["a", "b"],
                "player_name": ["A", None],
                "rating": [60.0, 50.0],
                "rank_change": pa.array([None, 1], pa.int64()),
                "rating_change": pa.array([None, 2.0], pa.float64()),
                "peak_rating": [60.0, 50.0],
            }
        )

    validate_output(RankingsBase, table([1, 2]), "good rankings")
    with pytest.raises(OutputInvalid, match="rank"):
        validate_output(RankingsBase, table([0, 2]), "bad rankings")


def test_consistent_tables_of_either_tie_rule_pass():
    assert failed(DipPouch(), [1, 2, 2, 4], [60.0, 50.0, 50.0, 45.0], ["a", "b", "c", "d"]) == set()
    assert failed(EaglePoints(), [1, 2, 3], [10.0, 9.0, 9.0], ["a", "b", "c"]) == set()
    # A history row without rating_after (an event of no value) is not compared.
    assert failed(DipPouch(), [1, 2], [60.0, 50.0], ["a", "b"], [60.0, None]) == set()
