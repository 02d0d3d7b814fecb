"""The predictive quality tables (SPEC §3.5): the plain-Python reference on hand-built warehouses with
figures worked out by hand, then the pipeline's `quality/` files against the reference on a
generated feed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.months import Month
from tests.quality_reference import COLUMNS, reference_quality
from tests.test_cli import diprank

RANKINGS_SCHEMA = pa.schema([("as_of", pa.date32()), ("player_id", pa.string()), ("rating", pa.float64())])
HISTORY_SCHEMA = pa.schema(
    [("system", pa.string()), ("source_id", pa.string()), ("source_date", pa.date32()), ("player_id", pa.string())]
)
DIP_POUCH_HISTORY_SCHEMA = HISTORY_SCHEMA.append(pa.field("placement", pa.int64()))
GAMES_SCHEMA = pa.schema(
    [
        ("game_id", pa.string()),
        ("finished_on", pa.date32()),
        ("multi_site", pa.bool_()),
        ("power", pa.string()),
        ("player_id", pa.string()),
        ("original_player_id", pa.string()),
        ("replacement_denies", pa.bool_()),
        ("result", pa.string()),
        ("centres", pa.int64()),
        ("eliminated_year", pa.int64()),
    ]
)


def month_path(root: Path, kind: str, system: str, month: str) -> Path:
    m = Month.parse(month)
    return root / kind / system / f"year={m.year:04d}" / f"month={m.month:02d}" / f"{kind}.parquet"


def write(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def write_rankings(root: Path, system: str, month: str, ratings: dict[str, float]) -> None:
    as_of = Month.parse(month).last_day
    rows = [{"as_of": as_of, "player_id": p, "rating": r} for p, r in ratings.items()]
    write(month_path(root, "rankings", system, month), rows, RANKINGS_SCHEMA)


def write_history(root: Path, system: str, month: str, games: dict[str, list]) -> None:
    """games: source_id -> player ids (dip_pouch: (player_id, placement) pairs)."""
    day = Month.parse(month).first_day
    rows = []
    for source_id, players in games.items():
        for player in players:
            row = {"system": system, "source_id": source_id, "source_date": day}
            if system == "dip_pouch":
                row["player_id"], row["placement"] = player
            else:
                row["player_id"] = player
            rows.append(row)
    schema = DIP_POUCH_HISTORY_SCHEMA if system == "dip_pouch" else HISTORY_SCHEMA
    write(month_path(root, "history", system, month), rows, schema)


def power(game_id, day, name, player, result, centres=0, year=None, original=None, denies=False, multi_site=False):
    return {
        "game_id": game_id,
        "finished_on": day,
        "multi_site": multi_site,
        "power": name,
        "player_id": player,
        "original_player_id": original,
        "replacement_denies": denies,
        "result": result,
        "centres": centres,
        "eliminated_year": year,
    }


def write_games(root: Path, month: str, rows: list[dict]) -> None:
    write(root / "validated" / "games" / f"{month}.parquet", rows, GAMES_SCHEMA)


JAN, FEB = dt.date(2024, 1, 20), dt.date(2024, 2, 10)

# g0 (January): a solo, a survivor and an eliminated power.
G0 = [
    power("g0", JAN, "Austria", "p", "solo", 18),
    power("g0", JAN, "England", "q", "survived", 3),
    power("g0", JAN, "France", "r", "eliminated", 0, 1906),
]
# g1 (February): two draw members, a survivor, two eliminated powers (1905 and 1908). e1's power
# ended in the hands of a replacement who declined responsibility, so it is e1's; s took over
# from a player who left without such a declaration, so it is s's.
G1 = [
    power("g1", FEB, "Austria", "d1", "draw", 15),
    power("g1", FEB, "England", "d2", "draw", 12),
    power("g1", FEB, "France", "s", "survived", 7, original="quitter"),
    power("g1", FEB, "Germany", "stand_in", "eliminated", 0, 1905, original="e1", denies=True),
    power("g1", FEB, "Italy", "e2", "eliminated", 0, 1908),
]
# g2 (February): a two-way draw, no pair.
G2 = [power("g2", FEB, "Austria", "x", "draw", 17), power("g2", FEB, "England", "y", "draw", 17)]
G1_PLAYERS = ["d1", "d2", "s", "e1", "e2"]


def club_warehouse(root: Path) -> Path:
    write_games(root, "2024-01", G0)
    write_games(root, "2024-02", G1 + G2)
    write_rankings(root, "club", "2024-01", {"d1": 20.0, "d2": 10.0, "s": 10.0, "e1": 5.0, "x": 3.0})
    write_rankings(root, "club", "2024-02", {"d1": 25.0})  # present so the month is the club's
    write_history(root, "club", "2024-01", {"g0": ["p", "q", "r"]})
    write_history(root, "club", "2024-02", {"g1": G1_PLAYERS, "g2": ["x", "y"]})
    return root


def scored(root: Path) -> dict[str, list[dict]]:
    """The reference's tables of a hand-built warehouse, after checking that the pipeline's own
    scoring (pipeline/rating/quality.py) gives exactly the same rows."""
    from pipeline.rating.quality import quality_tables
    from pipeline.warehouse.store import Warehouse

    expected = reference_quality(root)
    months = sorted(Month.parse(m) for m in expected)
    produced = quality_tables(Warehouse(root), months[0], months[-1]) if months else {}
    assert {str(m): t.to_pylist() for m, t in produced.items()} == expected
    return expected


def row(system, as_of, games, pairs, concordant, trailing_pairs, trailing_concordant, common=(None, None, None)):
    return {
        "system": system,
        "as_of": as_of,
        "games": games,
        "pairs": pairs,
        "concordant": concordant,
        "pairwise_accuracy": concordant / pairs if pairs else None,
        "trailing_pairs": trailing_pairs,
        "trailing_concordant": trailing_concordant,
        "trailing_accuracy": trailing_concordant / trailing_pairs if trailing_pairs else None,
        "common_games": common[0],
        "common_pairs": common[1],
        "common_accuracy": common[2],
    }


def test_club_game_by_hand(tmp_path):
    # January, the club's first month: everyone is a newcomer at 0, so each of g0's 3 pairs (its
    # three outcomes all differ) counts 0.5: pairs 3, concordant 1.5.
    #
    # February, pre-month ratings from January's table: d1 20, d2 10, s 10, e1 5, e2 0 (not listed:
    # a newcomer). Outcome keys: d1 = d2 (draw) > s (survived) > e2 (eliminated 1908) > e1 (1905).
    # The 10 pairs of g1 less d1-d2 (same key) leave 9:
    #   d1-s 1, d1-e2 1, d1-e1 1   (the higher rating finished better)
    #   d2-s 0.5                   (equal ratings 10 and 10)
    #   d2-e2 1, d2-e1 1, s-e2 1, s-e1 1
    #   e2-e1 0                    (e2 outlasted e1 but was rated 0 against 5)
    # pairs 9, concordant 7.5; g2's two draw members are no pair, so games = 1.
    # Trailing over January and February: 12 pairs, 9.0 concordant.
    # Only the club has these months: no game is common to club, eagle and diwz.
    tables = scored(club_warehouse(tmp_path))
    assert tables == {
        "2024-01": [row("club", dt.date(2024, 1, 31), 1, 3, 1.5, 3, 1.5, (0, 0, None))],
        "2024-02": [row("club", dt.date(2024, 2, 29), 1, 9, 7.5, 12, 9.0, (0, 0, None))],
    }
    assert list(tables["2024-02"][0]) == list(COLUMNS)
    assert tables["2024-02"][0]["pairwise_accuracy"] == 7.5 / 9
    assert tables["2024-02"][0]["trailing_accuracy"] == 0.75


def test_common_games_are_those_all_three_online_systems_rated(tmp_path):
    club_warehouse(tmp_path)
    # Eagle starts in February. Eagle rated g1 only, DiWZ g1 and g2: the common games of February
    # are {g1}; January has no eagle month, so nothing is common there.
    write_rankings(tmp_path, "eagle", "2024-02", {"d1": 2.0})
    write_history(tmp_path, "eagle", "2024-02", {"g1": G1_PLAYERS})
    # DiWZ also has a table of January (without games that month): d1 1700, d2 1650, s 1500,
    # e1 1600; e2 is not listed and takes 1600 too.
    write_rankings(tmp_path, "diwz", "2024-01", {"d1": 1700.0, "d2": 1650.0, "s": 1500.0, "e1": 1600.0})
    write_rankings(tmp_path, "diwz", "2024-02", {"d1": 1710.0})
    write_history(tmp_path, "diwz", "2024-02", {"g1": G1_PLAYERS, "g2": ["x", "y"]})
    # Eagle has no January table: everyone at 0, g1's 9 pairs count 0.5 each = 4.5.
    # DiWZ on g1: d1-s 1, d1-e2 1, d1-e1 1, d2-s 1, d2-e2 1, d2-e1 1 (1700 and 1650 above 1600
    #   and 1500, draw above survivor and eliminated); s-e2 0, s-e1 0 (1500 survived, rated below
    #   1600); e2-e1 0.5 (both 1600): pairs 9, concordant 6.5.
    # The club's February figures, all from g1, are its common ones too: 9 pairs, 7.5.
    tables = scored(tmp_path)
    assert tables["2024-01"] == [
        row("club", dt.date(2024, 1, 31), 1, 3, 1.5, 3, 1.5, (0, 0, None)),
        row("diwz", dt.date(2024, 1, 31), 0, 0, 0.0, 0, 0.0, (0, 0, None)),
    ]
    assert tables["2024-02"] == [
        row("club", dt.date(2024, 2, 29), 1, 9, 7.5, 12, 9.0, (1, 9, 7.5 / 9)),
        row("diwz", dt.date(2024, 2, 29), 1, 9, 6.5, 9, 6.5, (1, 9, 6.5 / 9)),
        row("eagle", dt.date(2024, 2, 29), 1, 9, 4.5, 9, 4.5, (1, 9, 0.5)),
    ]


def test_dip_pouch_event_with_shared_placements(tmp_path):
    # February: a table and no event (0 games, 0 pairs, null accuracy). March: one event placed
    # a 1, b 2, c 2 (shared), d 4, e 5, rated before it a 60, b 50, c 30, d 40 (not listed: the
    # newcomer value), e 40.
    write_rankings(tmp_path, "dip_pouch", "2024-02", {"a": 60.0, "b": 50.0, "c": 30.0, "e": 40.0})
    write_history(tmp_path, "dip_pouch", "2024-02", {})
    write_rankings(tmp_path, "dip_pouch", "2024-03", {"a": 61.0})
    write_history(tmp_path, "dip_pouch", "2024-03", {"ev1": [("a", 1), ("b", 2), ("c", 2), ("d", 4), ("e", 5)]})
    # The 10 pairs less b-c (shared 2nd place) leave 9:
    #   a-b 1, a-c 1, a-d 1, a-e 1, b-d 1, b-e 1   (the higher rating placed better)
    #   c-d 0, c-e 0                               (c placed 2nd rated 30, under 40)
    #   d-e 0.5                                    (both 40)
    # pairs 9, concordant 6.5; dip_pouch has no common figures.
    assert scored(tmp_path) == {
        "2024-02": [row("dip_pouch", dt.date(2024, 2, 29), 0, 0, 0.0, 0, 0.0)],
        "2024-03": [row("dip_pouch", dt.date(2024, 3, 31), 1, 9, 6.5, 9, 6.5)],
    }


def test_multi_site_powers_merge(tmp_path):
    day = dt.date(2024, 5, 3)
    write_games(
        tmp_path,
        "2024-05",
        [
            power("m1", day, "Austria", "P", "solo", 18, multi_site=True),
            power("m1", day, "England", "O", "survived", 5, multi_site=True),
            power("m1", day, "France", "M", "survived", 3, multi_site=True),
            power("m1", day, "Germany", "M", "survived", 2, multi_site=True),
            power("m1", day, "Italy", "N", "eliminated", 0, 1904, multi_site=True),
            power("m1", day, "Russia", "N", "eliminated", 0, 1906, multi_site=True),
            power("m1", day, "Turkey", "T", "anarchy", 2, multi_site=True),
            power("m1", day, "Spain", "helper", "eliminated", 0, 1907, original="T", denies=True, multi_site=True),
        ],
    )
    write_rankings(tmp_path, "club", "2024-04", {"P": 10.0, "O": 20.0, "M": 5.0, "N": 15.0, "T": 1.0})
    write_rankings(tmp_path, "club", "2024-05", {"P": 11.0})
    write_history(tmp_path, "club", "2024-05", {"m1": ["P", "O", "M", "N", "T"]})
    # Merged: M survived with 3 + 2 = 5 centres, level with O; N eliminated in 1906 (its latest);
    # T's anarchy and its (denied) eliminated power merge to anarchy, the worst outcome key.
    # Order P > O = M > N > T; the 10 pairs less O-M leave 9:
    #   P-O 0, P-N 0, M-N 0   (P rated 10 under 20 and 15; M 5 under 15)
    #   P-M 1, P-T 1, O-N 1, O-T 1, M-T 1, N-T 1
    # pairs 9, concordant 6. April, with a table and no game, is a club month too.
    assert scored(tmp_path) == {
        "2024-04": [row("club", dt.date(2024, 4, 30), 0, 0, 0.0, 0, 0.0, (0, 0, None))],
        "2024-05": [row("club", dt.date(2024, 5, 31), 1, 9, 6.0, 9, 6.0, (0, 0, None))],
    }


def test_trailing_window_is_twelve_months(tmp_path):
    # One game in each of January 2023 and January 2024, with every table empty (everyone a
    # newcomer): each 3 pairs, 1.5 concordant. The window of January
    # 2024 is February 2023 .. January 2024, so January 2023 has left it; December 2023 holds both.
    write_games(tmp_path, "2023-01", [dict(p, game_id="a") for p in G0])
    write_games(tmp_path, "2024-01", G0)
    write_rankings(tmp_path, "club", "2023-01", {})
    write_history(tmp_path, "club", "2023-01", {"a": ["p", "q", "r"]})
    write_rankings(tmp_path, "club", "2023-12", {})
    write_history(tmp_path, "club", "2023-12", {})
    write_rankings(tmp_path, "club", "2024-01", {})
    write_history(tmp_path, "club", "2024-01", {"g0": ["p", "q", "r"]})
    tables = scored(tmp_path)
    assert sorted(tables) == ["2023-01", "2023-12", "2024-01"]
    assert tables["2023-12"] == [row("club", dt.date(2023, 12, 31), 0, 0, 0.0, 3, 1.5, (0, 0, None))]
    assert tables["2024-01"] == [row("club", dt.date(2024, 1, 31), 1, 3, 1.5, 3, 1.5, (0, 0, None))]


def approx_row(values: dict) -> dict:
    return {k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in values.items()}


@pytest.mark.slow
def test_pipeline_quality_equals_the_reference(tmp_path):
    pytest.importorskip("pipeline.rating.quality")
    raw, warehouse = tmp_path / "raw", tmp_path / "wh"
    done = diprank(
        "generate",
        *("--games", "600", "--players", "80", "--years", "3", "--events", "8", "--seed", "7"),
        *("--out", str(raw)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = diprank(
        "run",
        "--raw",
        str(raw),
        "--warehouse",
        str(warehouse),
        "--quiet",
        env={"DAGSTER_HOME": str(warehouse / ".dagster")},
    )
    assert done.returncode == 0, done.stdout + done.stderr

    expected = reference_quality(warehouse)
    assert expected, "the generated feed gives no month"
    written = {}
    for path in sorted((warehouse / "quality").glob("year=*/month=*/quality.parquet")):
        year, month = path.parent.parent.name.split("=")[1], path.parent.name.split("=")[1]
        table = pq.read_table(path)
        assert table.schema.names == list(COLUMNS), path
        written[f"{year}-{month}"] = sorted(table.to_pylist(), key=lambda r: r["system"])
    assert sorted(written) == sorted(expected)
    for month, rows in expected.items():
        assert written[month] == [approx_row(r) for r in rows], month
    # The range is scored in chunks of months (24 by default, so this run's 47 months of window
    # in two); any chunking gives the same tables.
    from pipeline.rating.quality import quality_tables
    from pipeline.warehouse.store import Warehouse

    months = sorted(Month.parse(m) for m in written)
    for chunk_months in (1, 7):
        tables = quality_tables(Warehouse(warehouse), months[0], months[-1], chunk_months)
        assert {str(m): sorted(t.to_pylist(), key=lambda r: r["system"]) for m, t in tables.items()} == written
