"""Incremental ingest: a delivery file already ingested and unchanged is not read again, what a
changed or removed file touched is re-derived (validated games only in the months it touched), and
the warehouse always equals an ingest from scratch on the same raw folder; after random sequences
of deliveries, whole runs equal runs from scratch."""

import datetime as dt
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster import AssetMaterialization
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import pipeline.ingest.deliveries as deliveries
from pipeline.core.feed_spec import FEEDS
from pipeline.synthetic.generator import synthetic_games
from pipeline.warehouse.store import Warehouse
from tests.support import dagster_in_memory, dagster_instance_at, environment, ingest_in_process, write_csv
from tests.test_lifecycle import STATE_FILES, assert_equals_a_run_from_scratch, asset_key_of, materialized_months, run
from tests.test_validation import GOOD_EVENT, GOOD_RESULTS


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The delivery files read (parsed) by ingest, in order, across the test."""
    seen: list[str] = []
    original = deliveries.stage_file

    def counting(con, feed, path, source):
        seen.append(source)
        return original(con, feed, path, source)

    monkeypatch.setattr(deliveries, "stage_file", counting)
    return seen


def ingest_files(root: Path) -> dict[str, bytes]:
    """The validated feeds, quarantine, fingerprints and ingest state, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for folder in ("validated", "quarantine", "ingest")
        if (root / folder).is_dir()
        for pattern in STATE_FILES
        for p in (root / folder).rglob(pattern)
    }


def working_copy(root: Path) -> dict[str, list]:
    """The DuckDB tables a run leaves, without the working copy's own file numbering."""
    con = duckdb.connect(str(root / "diprank.duckdb"), read_only=True)
    try:
        tables = {
            "quarantine": "SELECT * FROM quarantine",
            "corrections": "SELECT * FROM corrections",
            "raw_skipped": "SELECT * FROM raw_skipped",
        }
        for feed in FEEDS:
            tables[feed] = f'SELECT * FROM "{feed}"'
            tables[f"typed_{feed}"] = f"SELECT * EXCLUDE (_row_id, _delivery) FROM typed_{feed}"
        return {name: sorted(map(repr, con.execute(sql).fetchall())) for name, sql in tables.items()}
    finally:
        con.close()


def assert_equals_an_ingest_from_scratch(raw: Path, root: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        ingest_in_process(raw, Path(scratch))
        mine, theirs = ingest_files(root), ingest_files(Path(scratch))
        assert sorted(mine) == sorted(theirs)
        assert [p for p in mine if mine[p] != theirs[p]] == []
        assert working_copy(root) == working_copy(Path(scratch))


def game(seed: int, day: dt.date, game_id: str) -> list[dict]:
    return [dict(r, game_id=game_id) for r in synthetic_games(seed, 1, 20, day, day)]


def valid_games(root: Path) -> dict[str, dt.date]:
    con = duckdb.connect(str(root / "diprank.duckdb"), read_only=True)
    try:
        return dict(con.execute("SELECT DISTINCT game_id, finished_on FROM games").fetchall())
    finally:
        con.close()


def test_an_unchanged_file_is_not_read_again(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1"))
    write_csv(raw / "games" / "b.csv", game(2, dt.date(2020, 2, 5), "g2"))
    write_csv(raw / "players" / "p.csv", [{"player_id": "p00001", "name": "A", "country": "NOR"}])
    ingest_in_process(raw, root)
    assert sorted(parsed) == ["games/a.csv", "games/b.csv", "players/p.csv"]
    before = {p: (root / p).stat().st_mtime_ns for p in ingest_files(root)}
    parsed.clear()
    ingest_in_process(raw, root)
    assert parsed == []
    # Nothing new: the validated feeds, quarantine, fingerprints and ingest state are not rewritten.
    assert {p: (root / p).stat().st_mtime_ns for p in ingest_files(root)} == before
    write_csv(raw / "games" / "c.csv", game(3, dt.date(2020, 3, 5), "g3"))
    ingest_in_process(raw, root)
    assert parsed == ["games/c.csv"]
    assert_equals_an_ingest_from_scratch(raw, root)


def test_a_changed_and_a_removed_file_correct_every_row_they_held(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1") + game(2, dt.date(2020, 1, 9), "g2"))
    write_csv(raw / "games" / "b.csv", game(3, dt.date(2020, 2, 5), "g1"))  # corrects g1
    write_csv(raw / "games" / "c.csv", game(4, dt.date(2020, 3, 5), "g3"))
    counts = ingest_in_process(raw, root)
    assert counts["games"].replaced == 7
    assert valid_games(root) == {"g1": dt.date(2020, 2, 5), "g2": dt.date(2020, 1, 9), "g3": dt.date(2020, 3, 5)}
    # a.csv changed in place: g2 moves to another year, g1's earlier delivery is still replaced.
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1") + game(2, dt.date(2019, 12, 9), "g2"))
    parsed.clear()
    ingest_in_process(raw, root)
    assert parsed == ["games/a.csv"]
    assert valid_games(root)["g2"] == dt.date(2019, 12, 9)
    assert_equals_an_ingest_from_scratch(raw, root)
    # b.csv removed: g1 falls back to its delivery in a.csv, and the correction is gone.
    (raw / "games" / "b.csv").unlink()
    parsed.clear()
    counts = ingest_in_process(raw, root)
    assert parsed == []
    assert counts["games"].replaced == 0
    assert valid_games(root)["g1"] == dt.date(2020, 1, 5)
    # c.csv removed: the last month of data goes from the feed and its fingerprints.
    (raw / "games" / "c.csv").unlink()
    ingest_in_process(raw, root)
    assert "g3" not in valid_games(root)
    assert_equals_an_ingest_from_scratch(raw, root)
    assert len(list((root / "ingest" / "games").glob("*.parquet"))) == 1  # only a.csv's rows are kept


def test_a_game_split_across_files_is_judged_whole_when_one_file_changes(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    rows = game(5, dt.date(2020, 4, 2), "split")
    write_csv(raw / "games" / "a.csv", rows[:4])
    write_csv(raw / "games" / "b.csv", rows[4:])
    ingest_in_process(raw, root)
    assert "split" in valid_games(root)
    bad = [dict(r, centres=99) if i == 0 else r for i, r in enumerate(rows[4:])]
    write_csv(raw / "games" / "b.csv", bad)
    parsed.clear()
    counts = ingest_in_process(raw, root)
    assert parsed == ["games/b.csv"]
    assert "split" not in valid_games(root)
    assert counts["games"].quarantined == len(rows)  # a.csv's rows too, though a.csv was not read
    assert_equals_an_ingest_from_scratch(raw, root)
    write_csv(raw / "games" / "b.csv", rows[4:])
    counts = ingest_in_process(raw, root)
    assert "split" in valid_games(root) and counts["games"].quarantined == 0
    assert_equals_an_ingest_from_scratch(raw, root)


def test_events_and_their_results_are_judged_together_across_files(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "events" / "e.csv", [GOOD_EVENT])
    write_csv(raw / "event_results" / "r.csv", GOOD_RESULTS)
    counts = ingest_in_process(raw, root)
    assert counts["events"].valid == 1
    (raw / "event_results" / "r.csv").unlink()  # an event without results is rejected
    parsed.clear()
    counts = ingest_in_process(raw, root)
    assert parsed == [] and counts["events"].valid == 0 and counts["events"].quarantined == 1
    assert_equals_an_ingest_from_scratch(raw, root)
    write_csv(raw / "event_results" / "r2.csv", GOOD_RESULTS)
    parsed.clear()
    counts = ingest_in_process(raw, root)
    assert parsed == ["event_results/r2.csv"] and counts["events"].valid == 1
    assert_equals_an_ingest_from_scratch(raw, root)


def test_a_lost_working_copy_is_rebuilt_from_the_warehouse(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1"))
    write_csv(raw / "games" / "b.jsonl", [])  # an empty, hence rejected, file is remembered too
    (raw / "games" / "b.jsonl").write_text("")
    ingest_in_process(raw, root)
    before = ingest_files(root)
    (root / "diprank.duckdb").unlink()
    parsed.clear()
    ingest_in_process(raw, root)
    assert parsed == []
    assert ingest_files(root) == before
    assert_equals_an_ingest_from_scratch(raw, root)


def test_a_staged_rows_file_lost_from_the_warehouse_is_read_again(tmp_path, parsed):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1"))
    ingest_in_process(raw, root)
    (root / "diprank.duckdb").unlink()
    for path in (root / "ingest" / "games").glob("*.parquet"):
        path.unlink()
    parsed.clear()
    ingest_in_process(raw, root)
    assert parsed == ["games/a.csv"]
    assert_equals_an_ingest_from_scratch(raw, root)


def test_a_staged_rows_file_keeps_its_delivery_in_line_order(tmp_path):
    """The staged rows are copied to the warehouse as DuckDB holds them, unsorted: this holds only
    while a delivery read on several threads (many Parquet row groups, a CSV of several buffers)
    is stored in file order."""
    raw, root = tmp_path / "raw", tmp_path / "w"
    rng = random.Random(5)
    ids = [f"p{n:07d}" for n in rng.sample(range(10_000_000), 300_000)]  # not in id order
    rows = [{"player_id": pid, "name": f"Player {pid}", "country": "NOR"} for pid in ids]
    write_csv(raw / "players" / "a.csv", rows)
    (raw / "players" / "b.parquet").parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows[::-1]), raw / "players" / "b.parquet", row_group_size=4_096)
    ingest_in_process(raw, root)
    manifest = deliveries.load_ingest_manifest(Warehouse(root), "players")
    for source, first_line, expected in (("players/a.csv", 2, ids), ("players/b.parquet", 1, ids[::-1])):
        staged = pq.read_table(deliveries.staged_rows_path(Warehouse(root), "players", manifest[source].file_id))
        assert staged.column("_source_line").to_pylist() == list(range(first_line, first_line + len(ids)))
        assert staged.column("player_id").to_pylist() == expected


def test_a_parquet_delivery_with_a_column_named_like_the_readers_row_number_is_numbered_all_the_same(tmp_path):
    """Parquet rows are numbered by the reader's own row number, unless the file holds a column of
    that name: then by a window, and the column is an extra one, ignored."""
    raw, root = tmp_path / "raw", tmp_path / "w"
    ids = [f"p{n:05d}" for n in range(20_000, 0, -1)]
    rows = [{"player_id": pid, "name": f"Player {pid}", "country": "NOR", "File_Row_Number": 7} for pid in ids]
    (raw / "players").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), raw / "players" / "a.parquet", row_group_size=1_000)
    pq.write_table(
        pa.Table.from_pylist(rows).drop_columns(["File_Row_Number"]),
        raw / "players" / "b.parquet",
        row_group_size=1_000,
    )
    ingest_in_process(raw, root)
    manifest = deliveries.load_ingest_manifest(Warehouse(root), "players")
    assert manifest["players/a.parquet"].skipped == ("columns not in the players feed, ignored: File_Row_Number",)
    assert manifest["players/b.parquet"].skipped == ()
    for source in ("players/a.parquet", "players/b.parquet"):
        staged = pq.read_table(deliveries.staged_rows_path(Warehouse(root), "players", manifest[source].file_id))
        assert staged.column("_source_line").to_pylist() == list(range(1, len(ids) + 1))
        assert staged.column("player_id").to_pylist() == ids


def test_only_the_months_a_delivery_touches_are_written_again(tmp_path):
    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1") + game(2, dt.date(2020, 2, 9), "g2"))
    ingest_in_process(raw, root)
    months = root / "validated" / "games"
    before = {p.name: p.stat().st_mtime_ns for p in months.glob("*.parquet")}
    assert sorted(before) == ["2020-01.parquet", "2020-02.parquet"]
    write_csv(raw / "games" / "b.csv", game(3, dt.date(2020, 3, 1), "g3"))
    ingest_in_process(raw, root)
    after = {p.name: p.stat().st_mtime_ns for p in months.glob("*.parquet")}
    assert {n for n in after if after[n] != before.get(n)} == {"2020-03.parquet"}
    write_csv(raw / "games" / "c.csv", game(4, dt.date(2020, 3, 20), "g1"))  # g1 moves: January empties
    ingest_in_process(raw, root)
    assert sorted(p.name for p in months.glob("*.parquet")) == ["2020-02.parquet", "2020-03.parquet"]
    assert_equals_an_ingest_from_scratch(raw, root)


def test_month_files_hold_their_rows_in_processing_order(tmp_path):
    """Validated games are stored by finishing day, then game and power, the order the ratings
    take them in, so a year is read without sorting."""
    import pyarrow.parquet as pq

    from pipeline.core.months import Month
    from pipeline.rating.inputs import read_results

    raw, root = tmp_path / "raw", tmp_path / "w"
    # Game "a" finishes after game "b" within the month: key order and processing order differ.
    write_csv(
        raw / "games" / "a.csv",
        game(1, dt.date(2020, 1, 20), "a") + game(2, dt.date(2020, 1, 5), "b") + game(3, dt.date(2020, 1, 5), "c"),
    )
    ingest_in_process(raw, root)
    month_file = root / "validated" / "games" / "2020-01.parquet"
    stored = pq.read_table(month_file)
    assert stored.column("game_id").unique().to_pylist() == ["b", "c", "a"]
    in_order = read_results(Warehouse(root), "games", Month(2020, 1), Month(2020, 1))
    assert in_order.column("game_id").unique().to_pylist() == ["b", "c", "a"]

    assert_equals_an_ingest_from_scratch(raw, root)


# Deliveries a sequence draws from; each takes a random source for its details. Dates fall in
# 2019-10 … 2020-03: six months across a year's end keep whole runs short, and the club rating
# starts each year afresh, so a game moved across the year matters.
FIRST_DAY, LAST_DAY = dt.date(2019, 10, 1), dt.date(2020, 3, 28)
# Whole runs commit to Dagster's SQLite storage at every event: on a memory file system, where
# one is, those commits cost nothing.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def some_day(rng: random.Random) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=rng.randint(0, (LAST_DAY - FIRST_DAY).days))


def add_file(raw: Path, rng: random.Random, state: dict) -> None:
    """A new file of one or two games in a random month."""
    state["files"] += 1
    rows = []
    for _ in range(rng.randint(1, 2)):
        state["games"] += 1
        rows += game(rng.randint(0, 10**6), some_day(rng), f"g{state['games']}")
    write_csv(raw / "games" / f"{state['files']:03d}.csv", rows)


def correct_game(raw: Path, rng: random.Random, state: dict) -> None:
    """A later file re-delivering an existing game, moved to another month (or year)."""
    if not state["games"]:
        return add_file(raw, rng, state)
    state["files"] += 1
    write_csv(
        raw / "games" / f"{state['files']:03d}.csv",
        game(rng.randint(0, 10**6), some_day(rng), f"g{rng.randint(1, state['games'])}"),
    )


def split_game(raw: Path, rng: random.Random, state: dict) -> None:
    """One new game's rows in two new files."""
    state["games"] += 1
    rows = game(rng.randint(0, 10**6), some_day(rng), f"g{state['games']}")
    cut = rng.randint(1, len(rows) - 1)
    for part in (rows[:cut], rows[cut:]):
        state["files"] += 1
        write_csv(raw / "games" / f"{state['files']:03d}.csv", part)


def game_files(raw: Path) -> list[Path]:
    return sorted((raw / "games").glob("*.csv")) if (raw / "games").is_dir() else []


def read_rows(path: Path) -> list[dict]:
    import csv

    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def edit_in_place(raw: Path, rng: random.Random, state: dict) -> None:
    """An existing file rewritten: a row made invalid, or every date moved."""
    files = game_files(raw)
    if not files:
        return add_file(raw, rng, state)
    path = rng.choice(files)
    rows = read_rows(path)
    if rng.random() < 0.5:
        rows[rng.randrange(len(rows))]["centres"] = "99"
    else:
        rows = [dict(r, finished_on=some_day(rng).isoformat()) for r in rows]
    write_csv(path, rows)


def dated_files(raw: Path) -> list[tuple[str, Path]]:
    """(latest finished_on, file) of every games file."""
    return [(max(r["finished_on"] for r in read_rows(p)), p) for p in game_files(raw)]


def remove_file(raw: Path, rng: random.Random, state: dict) -> None:
    """A file removed: a random one, or the one holding the latest month of data (or the earliest)."""
    files = dated_files(raw)
    if not files:
        return add_file(raw, rng, state)
    if rng.random() < 0.4:
        path = rng.choice(files)[1]
    else:
        path = (max(files) if rng.random() < 0.6 else min(files))[1]
    path.unlink()


def move_first_month_later(raw: Path, rng: random.Random, state: dict) -> None:
    """The games of the earliest month corrected, in place, into a later month: the systems' first
    month moves later."""
    files = game_files(raw)
    if not files:
        return add_file(raw, rng, state)
    earliest = min(r["finished_on"][:7] for p in files for r in read_rows(p))
    later = some_day(rng)
    for path in files:
        rows = read_rows(path)
        if any(r["finished_on"][:7] == earliest for r in rows):
            write_csv(
                path, [dict(r, finished_on=later.isoformat()) if r["finished_on"][:7] == earliest else r for r in rows]
            )


def players_file(raw: Path, rng: random.Random, state: dict) -> None:
    """The registry delivered again, with a random subset of names."""
    rows = [
        {"player_id": f"p{i:05d}", "name": f"Name {rng.randint(0, 3)}", "country": "NOR"}
        for i in sorted(rng.sample(range(20), rng.randint(0, 5)))
    ]
    write_csv(raw / "players" / f"{rng.randint(0, 2)}.csv", rows, ["player_id", "name", "country"])


DELIVERIES = [add_file, correct_game, split_game, edit_in_place, remove_file, move_first_month_later, players_file]

# Two layers. At the ingest level, in process, 25 sequences (a fraction of a second a step) cover
# the incremental logic itself. Whole runs against runs from scratch (two `diprank run`s a step,
# one to two seconds each) cover what the systems, the views and Dagster make of it: `make test`
# runs 10 such sequences (new ones on every run), one in each of the shards that xdist spreads
# over its workers, and `make bench` (benchmarks/run.py) many more through the variable; it reads
# back how many ran from the file the second variable names. 20 per `make test` took the suite to
# 10 minutes on a slow 2-core machine, 30 to 9.5 on a faster one; the suite is kept well under 10.
INGEST_SEQUENCES = 25
SEQUENCES = int(os.environ.get("DIPRANK_PROPERTY_SEQUENCES", "10"))
SEQUENCES_REPORT = os.environ.get("DIPRANK_PROPERTY_REPORT")
SHARDS = 10


def whole_run(raw: Path, root: Path) -> None:
    """`diprank run` with the systems one after another in this process (no worker processes to
    start: the property test makes hundreds of runs)."""
    with environment(DIPRANK_SYSTEMS_AT_ONCE="1"):
        run(raw, root)


def starting_raw(raw: Path) -> dict:
    """The raw folder every sequence starts from: a few deliveries (a split game, a correction, an
    event in the middle of the range, so the Dip Pouch range ends with the games' last month)."""
    state = {"files": 0, "games": 0}
    for number, delivery in enumerate([add_file, split_game, correct_game, add_file]):
        delivery(raw, random.Random(number), state)
    write_csv(raw / "events" / "e.csv", [dict(GOOD_EVENT, start_date="2019-11-08", end_date="2019-11-09")])
    write_csv(raw / "event_results" / "r.csv", GOOD_RESULTS)
    return state


def starting_folder(tmp_path_factory, name: str, prepare) -> Iterator[tuple[Path, dict]]:
    """The starting raw folder with `prepare(raw, warehouse)` done on it, made once per module:
    each sequence starts from a copy."""
    folder = Path(tempfile.mkdtemp(dir=FAST_TMP)) if FAST_TMP else tmp_path_factory.mktemp(name)
    state = starting_raw(folder / "raw")
    prepare(folder / "raw", folder / "w")
    yield folder, state
    if FAST_TMP:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def ingested_only(tmp_path_factory) -> Iterator[tuple[Path, dict]]:
    """The starting raw folder and its ingest (no rating)."""
    yield from starting_folder(tmp_path_factory, "ingested_only", ingest_in_process)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Iterator[tuple[Path, dict, dict[str, set[str]]]]:
    """The starting raw folder, a whole run on it, and the months Dagster showed as materialized
    after that run (its instance was in memory: each sequence records them in its own)."""
    shown: dict[str, set[str]] = {}

    def prepare(raw: Path, root: Path) -> None:
        with dagster_in_memory():
            whole_run(raw, root)
            shown.update(materialized_months(root))
        assert shown and all(shown.values()), shown  # every system rated the starting folder

    starting = starting_folder(tmp_path_factory, "ingested", prepare)
    folder, state = next(starting)
    yield folder, state, shown
    next(starting, None)


def record_materialized(home: Path, shown: dict[str, set[str]]) -> None:
    """Dagster's instance at `home` shows these months of each system as materialized."""
    with dagster_instance_at(home) as instance:
        for system, months in shown.items():
            for month in sorted(months):
                instance.report_runless_asset_event(AssetMaterialization(asset_key_of(system), partition=month))


# One to two steps of one to three deliveries, each with its own random seed.
DELIVERY_STEPS = st.lists(
    st.lists(st.tuples(st.sampled_from(DELIVERIES), st.integers(0, 2**32)), min_size=1, max_size=3),
    min_size=1,
    max_size=2,
)


@settings(
    max_examples=INGEST_SEQUENCES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=DELIVERY_STEPS)
def test_any_sequence_of_deliveries_equals_an_ingest_from_scratch(ingested_only, steps):
    """After every step of one to three deliveries, incremental ingest leaves the same files, bytes
    and tables as an ingest from scratch (in process, at the ingest level: the systems read only
    the validated files compared here)."""
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as folder:
        shutil.copytree(ingested_only[0], folder, dirs_exist_ok=True)
        raw, root, state = Path(folder) / "raw", Path(folder) / "w", dict(ingested_only[1])
        for step in steps:
            for delivery, seed in step:
                delivery(raw, random.Random(seed), state)
            ingest_in_process(raw, root)
            assert_equals_an_ingest_from_scratch(raw, root)


# No shrinking: a sequence is at most two steps of three deliveries, already short to read, and
# each shrinking attempt costs two whole runs.
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(
    max_examples=-(-SEQUENCES // SHARDS),
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=DELIVERY_STEPS)
def test_any_sequence_of_deliveries_equals_a_run_from_scratch(ingested, shard, steps):
    """After every step of one to three deliveries (new files, corrections, in-place edits, removed
    files, games moved across months and years, the last month of data removed, the first month
    moved later), a whole `diprank run` leaves what a run from scratch on the same raw folder
    leaves: the same files and bytes (outputs, validated feeds, fingerprints, checkpoints,
    manifests), the same rows in the DuckDB views and tables, and Dagster shows as materialized
    exactly the months on disk. Dagster's instances are in memory; each sequence's starts with the
    months the starting run materialized."""
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as folder, dagster_in_memory():
        shutil.copytree(ingested[0], folder, dirs_exist_ok=True)
        raw, root, state = Path(folder) / "raw", Path(folder) / "w", dict(ingested[1])
        record_materialized(root / ".dagster", ingested[2])
        for number, step in enumerate(steps):
            for delivery, seed in step:
                delivery(raw, random.Random(seed), state)
            whole_run(raw, root)
            with environment(DIPRANK_SYSTEMS_AT_ONCE="1"):
                assert_equals_a_run_from_scratch(raw, root, Path(folder) / f"scratch{number}")
            assert working_copy(root) == working_copy(Path(folder) / f"scratch{number}")
    if SEQUENCES_REPORT:
        with open(SEQUENCES_REPORT, "a") as report:
            report.write(f"{len(steps)}\n")  # one line per sequence: its number of steps


def test_a_run_after_the_last_games_are_removed_equals_a_run_from_scratch(tmp_path):
    """With every games file removed (the events stay), the game systems' months go, and their
    manifests with them: a run from scratch writes no manifest for a system without months."""
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(7, 30, 15, dt.date(2020, 1, 1), dt.date(2020, 4, 30))))
    write_csv(raw / "events" / "e.csv", [GOOD_EVENT])
    write_csv(raw / "event_results" / "r.csv", GOOD_RESULTS)
    run(raw, warehouse)
    assert (warehouse / "state" / "eagle" / "manifest.json").exists()
    (raw / "games" / "a.csv").unlink()
    run(raw, warehouse)
    assert not any((warehouse / "state" / system / "manifest.json").exists() for system in ("club", "eagle", "diwz"))
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch")


def test_cli_runs_read_only_new_files_and_survive_a_lost_duckdb_file(tmp_path, parsed):
    """Whole runs: nothing new reads nothing; the DuckDB file deleted between runs is rebuilt from
    the warehouse without reading a delivery; each run equals a run from scratch."""
    raw, warehouse = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", list(synthetic_games(7, 30, 15, dt.date(2020, 1, 1), dt.date(2020, 4, 30))))
    write_csv(raw / "events" / "e.csv", [GOOD_EVENT])
    write_csv(raw / "event_results" / "r.csv", GOOD_RESULTS)
    run(raw, warehouse)
    parsed.clear()
    out = run(raw, warehouse)
    assert parsed == []
    assert ["games", "1", "210", "210"] in [line.split()[:4] for line in out.splitlines()]  # the balance in full
    (warehouse / "diprank.duckdb").unlink()
    write_csv(raw / "games" / "b.csv", game(9, dt.date(2020, 5, 3), "new"))
    run(raw, warehouse)
    assert parsed == ["games/b.csv"]
    assert_equals_a_run_from_scratch(raw, warehouse, tmp_path / "scratch")


class Crash(Exception):
    """Stands for a kill at one point of ingest."""


CRASH_POINTS = {
    "staged rows written, manifest not": ("pipeline.ingest.deliveries", "save_ingest_manifest"),
    "manifest written, working copy not": ("pipeline.ingest.deliveries", "sync_working_copy"),
    "validated, queue not cleared": ("pipeline.ingest.validation", "queue_export"),
    "validated, files not written": ("pipeline.ingest.exports", "export_feed"),
    "files written, not marked": ("pipeline.ingest.exports", "export_done"),
}


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_an_ingest_interrupted_at_any_point_is_mended_by_the_next(tmp_path, monkeypatch, point):
    """A changed file, a removed one and a new one; ingest stops at one point; the next ingest
    ends where an ingest from scratch does."""
    import importlib

    raw, root = tmp_path / "raw", tmp_path / "w"
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2020, 1, 5), "g1"))
    write_csv(raw / "games" / "b.csv", game(2, dt.date(2020, 2, 5), "g2"))
    write_csv(raw / "games" / "c.csv", game(3, dt.date(2020, 3, 5), "g3"))
    ingest_in_process(raw, root)
    write_csv(raw / "games" / "a.csv", game(1, dt.date(2019, 7, 5), "g1"))
    (raw / "games" / "c.csv").unlink()
    write_csv(raw / "games" / "d.csv", game(4, dt.date(2020, 2, 7), "g2"))
    module, name = CRASH_POINTS[point]

    def crash(*args, **kwargs):
        raise Crash(point)

    with monkeypatch.context() as patch:
        patch.setattr(importlib.import_module(module), name, crash)
        with pytest.raises(Crash):
            ingest_in_process(raw, root)
    ingest_in_process(raw, root)
    assert_equals_an_ingest_from_scratch(raw, root)
