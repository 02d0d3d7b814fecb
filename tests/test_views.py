"""The DuckDB views over the output folders (pipeline/warehouse/views.py): one per folder, listing the
months its system's manifest commits (a month written but not yet committed is not seen), left alone
while its files are the same, made anew when they change or the folder moved, dropped when no month
is committed, and a system's run touches only its own."""

import shutil

import pyarrow as pa

from pipeline.core.months import Month
from pipeline.settings import Settings
from pipeline.warehouse.store import Warehouse, atomic_write_parquet, connect
from pipeline.warehouse.views import refresh_views


def write(warehouse: Warehouse, kind: str, system: str, month: Month, rating: float) -> None:
    atomic_write_parquet(warehouse.output(kind, system, month), pa.table({"rating": [rating]}))


def commit(warehouse: Warehouse, system: str, *months: Month) -> None:
    """The system's manifest takes these months (as a run does after writing their files)."""
    warehouse.save_manifest(system, {**warehouse.load_manifest(system), **{str(m): "f" for m in months}})


def view_ids(con) -> dict[str, int]:
    return dict(con.execute("SELECT view_name, view_oid FROM duckdb_views() WHERE NOT internal").fetchall())


def test_views_follow_the_folders_and_are_made_only_when_missing_or_moved(tmp_path):
    warehouse = Warehouse(tmp_path / "warehouse", Settings())
    write(warehouse, "rankings", "club", Month(2020, 1), 1.0)
    write(warehouse, "history", "club", Month(2020, 1), 1.5)
    write(warehouse, "rankings", "eagle", Month(2020, 1), 9.0)
    commit(warehouse, "club", Month(2020, 1))
    commit(warehouse, "eagle", Month(2020, 1))
    con = connect(str(tmp_path / "views.duckdb"))
    assert sorted(refresh_views(con, warehouse)) == ["history_club", "rankings_club", "rankings_eagle"]
    made = view_ids(con)

    # Nothing changed: nothing is made again.
    assert sorted(refresh_views(con, warehouse, systems=["club"])) == ["history_club", "rankings_club"]
    assert view_ids(con) == made

    # A month written by a run in progress is not seen until the manifest commits it.
    write(warehouse, "rankings", "club", Month(2020, 2), 2.0)
    assert con.execute("SELECT month, rating FROM rankings_club").fetchall() == [("01", 1.0)]
    refresh_views(con, warehouse, systems=["club"])
    assert con.execute("SELECT month, rating FROM rankings_club").fetchall() == [("01", 1.0)]
    commit(warehouse, "club", Month(2020, 2))
    refresh_views(con, warehouse, systems=["club"])
    assert view_ids(con)["rankings_club"] != made["rankings_club"]
    assert view_ids(con)["history_club"] == made["history_club"]  # its files are the same
    assert con.execute("SELECT year, month, rating FROM rankings_club ORDER BY month").fetchall() == [
        (2020, "01", 1.0),
        (2020, "02", 2.0),
    ]

    # A view that reads another folder (a warehouse that moved) is made anew.
    con.execute("CREATE OR REPLACE VIEW rankings_club AS SELECT 1 AS rating")
    moved = view_ids(con)["rankings_club"]
    refresh_views(con, warehouse, systems=["club"])
    assert view_ids(con)["rankings_club"] not in (moved, made["rankings_club"])
    assert con.execute("SELECT count(*) FROM rankings_club").fetchall() == [(2,)]

    # A system's months gone: its view goes, when that system's views (or all) are refreshed.
    shutil.rmtree(warehouse.root / "rankings" / "eagle")
    warehouse.save_manifest("eagle", {})
    refresh_views(con, warehouse, systems=["club"])
    assert "rankings_eagle" in view_ids(con)
    refresh_views(con, warehouse)
    assert sorted(view_ids(con)) == ["history_club", "rankings_club"]
