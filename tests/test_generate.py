"""The synthetic feed generator and the bundled sample: every SPEC §2 rule, determinism, the mix."""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.synthetic import generator
from pipeline.synthetic.generator import game_rows, synthetic_games, write_feeds

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"

COLUMNS = {
    "games": [
        "game_id",
        "site",
        "variant",
        "supply_centres",
        "finished_on",
        "rated",
        "power",
        "player_id",
        "player_name",
        "original_player_id",
        "replacement_denies",
        "result",
        "centres",
        "eliminated_year",
        "scoring",
        "press",
        "live",
    ],
    "events": [
        "event_id",
        "name",
        "start_date",
        "end_date",
        "location",
        "country",
        "rounds",
        "num_players",
        "is_world_championship",
    ],
    "event_results": ["event_id", "player_id", "player_name", "nationality", "placement"],
    "players": ["player_id", "name", "country"],
}
# Optional game-level columns (SPEC §3.6): the generator writes them, a hand-made file may leave them out.
GAME_KINDS = ["scoring", "press", "live"]
INTS = {"supply_centres", "centres", "eliminated_year", "rounds", "num_players", "placement"}
BOOLS = {"rated", "replacement_denies", "is_world_championship", "live"}
DATES = {"finished_on", "start_date", "end_date"}
RESULTS = {"solo", "draw", "survived", "eliminated", "anarchy"}
SCORINGS = {"draw_size", "sum_of_squares", "ppsc", "unranked"}
PRESSES = {"full", "rulebook", "public", "gunboat"}
# The shares the generator is asked for, per game.
KIND_SHARES = {
    "scoring": {"draw_size": 0.75, "sum_of_squares": 0.15, "ppsc": 0.06, "unranked": 0.04},
    "press": {"full": 0.70, "rulebook": 0.08, "public": 0.04, "gunboat": 0.18},
    "live": {True: 0.10, False: 0.90},
}
TODAY = dt.date.today()

# Seed 000: Dixie 33 2019 as listed on the WDD page.
DIXIE_33 = [
    (1, "David MILLER"),
    (2, "Bill HACKENBRACHT"),
    (3, "Brad BLITSTEIN"),
    (4, "Peter YEARGIN"),
    (5, "Jeff LADD"),
    (5, "Edwin TURNAGE"),
    (7, "Tanya GILL"),
    (8, "Brian ECTON"),
    (9, "Michael BINDER"),
    (10, "Todd CRAIG"),
    (11, "Emily TURNAGE"),
    (12, "Derek HANLIN"),
    (13, "Keith WEST"),
    (14, "Emmett WAINWRIGHT"),
    (15, "Mitchell MCCONEGHEY"),
    (16, "Jason MASTBAUM"),
    (17, "Eric ERIKSON"),
    (18, "Alex RONKE"),
    (19, "Hudson DEFOE"),
    (20, "Vince LUTTERBIE"),
    (21, "Dan POLLOCK"),
    (22, "Clem JAYNE"),
    (23, "Scott CROOK"),
    (24, "Alex MASLOW"),
    (25, "Rob KOHR"),
    (26, "Vince AGOSTA"),
    (26, "Christian WEST"),
    (28, "Tim RICHARDSON"),
    (29, "Colin WEST"),
]


# ---------------------------------------------------------------------------------------------
# Reading feed files, the way SPEC §2 describes them
# ---------------------------------------------------------------------------------------------


def file_columns(feed: str, with_kinds: bool = True) -> list[str]:
    """The SPEC columns of a feed file, in order (games without the game-level ones when asked)."""
    return [c for c in COLUMNS[feed] if with_kinds or c not in GAME_KINDS]


def _check_columns(feed: str, names: list[str], source) -> list[str]:
    """names must be the SPEC columns in order; a games file may leave out the game-level ones."""
    assert names in (file_columns(feed), file_columns(feed, with_kinds=False)), (source, names)
    return names


def _typed(feed: str, raw: dict, source: str) -> dict:
    """A CSV or JSON Lines row with SPEC types; '' (CSV) and null are None."""
    row = {}
    for key in raw:
        value = raw[key]
        if value == "" or value is None:
            row[key] = None
        elif key in INTS:
            assert isinstance(value, int) or str(value).lstrip("-").isdigit(), (source, key, value)
            row[key] = int(value)
        elif key in BOOLS:
            assert value in (True, False, "true", "false"), (source, key, value)
            row[key] = value in (True, "true")
        elif key in DATES:
            assert isinstance(value, str) and len(value) == 10, (source, key, value)
            row[key] = dt.date.fromisoformat(value)
        else:
            assert isinstance(value, str), (source, key, value)
            row[key] = value
    return row


def read_file(feed: str, path: Path) -> list[dict]:
    """Rows of one delivery file; its columns must be exactly the SPEC columns, in order."""
    if path.suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            _check_columns(feed, list(reader.fieldnames or []), path)
            return [_typed(feed, raw, str(path)) for raw in reader]
    if path.suffix == ".jsonl":
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            _check_columns(feed, list(raw), path)
            rows.append(_typed(feed, raw, str(path)))
        return rows
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        _check_columns(feed, table.column_names, path)
        rows = table.to_pylist()
        for row in rows:
            for key in DATES & set(row):
                assert row[key] is None or isinstance(row[key], dt.date)
            for key in INTS & set(row):
                assert row[key] is None or isinstance(row[key], int)
            for key in BOOLS & set(row):
                assert row[key] is None or isinstance(row[key], bool)
        return rows
    raise AssertionError(f"unexpected file {path}")


def read_feed(root: Path, feed: str) -> tuple[list[dict], list[Path]]:
    """A feed's rows after deduplication (for a key delivered twice, the later file wins)."""
    keys = {
        "games": ("game_id", "power"),
        "events": ("event_id",),
        "event_results": ("event_id", "player_id"),
        "players": ("player_id",),
    }[feed]
    files = sorted(p for p in (root / feed).iterdir() if not p.name.startswith("."))
    merged: dict[tuple, dict] = {}
    for path in files:
        seen = set()
        for row in read_file(feed, path):
            key = tuple(row[k] for k in keys)
            assert None not in key, (path, row)
            assert key not in seen, f"{key} twice in {path}"
            seen.add(key)
            merged[key] = row
    return list(merged.values()), files


# ---------------------------------------------------------------------------------------------
# SPEC §2 rules
# ---------------------------------------------------------------------------------------------


def check_games(rows: list[dict]) -> dict[str, list[dict]]:
    """Every row and every game valid (SPEC §2); returns the games by id."""
    games: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        assert row["game_id"] and row["power"] and row["player_id"], row
        assert row["finished_on"] is not None and dt.date(1954, 1, 1) <= row["finished_on"] <= TODAY, row
        assert row["result"] in RESULTS, row
        sc = 34 if row["supply_centres"] is None else row["supply_centres"]
        assert row["centres"] is not None and 0 <= row["centres"] <= sc, row
        assert (row["eliminated_year"] is not None) == (row["result"] == "eliminated"), row
        if row["replacement_denies"]:
            assert row["original_player_id"], row
        games[row["game_id"]].append(row)
        assert row.get("scoring", "draw_size") in SCORINGS, row
        assert row.get("press", "full") in PRESSES, row
        assert row.get("live", False) in (True, False), row
    for game_id, powers in games.items():
        assert len(powers) >= 2, game_id
        for key in ("variant", "supply_centres", "finished_on", "rated", "site", *GAME_KINDS):
            assert len({p.get(key) for p in powers}) == 1, (game_id, key)
        assert len({p["power"] for p in powers}) == len(powers), game_id
        results = Counter(p["result"] for p in powers)
        assert (results["solo"] == 1 and results["draw"] == 0) or (results["solo"] == 0 and results["draw"] >= 2), (
            game_id
        )
        for p in powers:
            if p["result"] == "eliminated":
                assert p["centres"] == 0, p
            if p["result"] in ("solo", "draw", "survived"):
                assert p["centres"] >= 1, p
        sc = powers[0]["supply_centres"] or 34
        assert sum(p["centres"] for p in powers) <= sc, game_id
        ids = [p["player_id"] for p in powers] + [p["original_player_id"] for p in powers if p["original_player_id"]]
        assert len(ids) == len(set(ids)), game_id
    return games


def check_events(events: list[dict], results: list[dict]) -> tuple[dict, dict]:
    """Events and results lists valid (SPEC §2); returns events by id and results by event."""
    by_id = {}
    for e in events:
        assert e["event_id"] and e["event_id"] not in by_id, e
        assert e["start_date"] and e["end_date"] and e["start_date"] <= e["end_date"] <= TODAY, e
        assert e["rounds"] is not None and e["rounds"] >= 1, e
        assert e["num_players"] is not None and e["num_players"] >= 2, e
        assert e["is_world_championship"] in (True, False), e
        by_id[e["event_id"]] = e
    lists: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        assert r["event_id"] in by_id, r
        assert r["player_id"], r
        assert r["placement"] is not None and 1 <= r["placement"] <= by_id[r["event_id"]]["num_players"], r
        lists[r["event_id"]].append(r)
    for event_id, rows in lists.items():
        assert len({r["player_id"] for r in rows}) == len(rows), event_id
    return by_id, lists


def check_players(players: list[dict]) -> dict[str, dict]:
    registry = {}
    for p in players:
        assert p["player_id"] and p["player_id"] not in registry, p
        assert p["name"], p
        registry[p["player_id"]] = p
    return registry


def check_tree(root: Path) -> dict:
    """Read and check every feed under root."""
    games, game_files = read_feed(root, "games")
    events, _ = read_feed(root, "events")
    results, _ = read_feed(root, "event_results")
    players, _ = read_feed(root, "players")
    by_game = check_games(games)
    by_event, lists = check_events(events, results)
    registry = check_players(players)
    return {"games": by_game, "game_files": game_files, "events": by_event, "lists": lists, "registry": registry}


def shared_place_then_skip(rows: list[dict]) -> bool:
    """Some place is shared by n players and the next listed place is that place + n (5, 5, 7)."""
    places = sorted(r["placement"] for r in rows)
    counts = Counter(places)
    for place, n in counts.items():
        if n >= 2:
            later = [p for p in places if p > place]
            if later and min(later) == place + n:
                return True
    return False


def returning_players(games: dict[str, list[dict]], absent: int = 2) -> set[str]:
    """Players with a stretch of at least `absent` whole years without games between two games."""
    years = defaultdict(set)
    for powers in games.values():
        for p in powers:
            years[p["player_id"]].add(p["finished_on"].year)
    back = set()
    for player, ys in years.items():
        ordered = sorted(ys)
        if any(b - a - 1 >= absent for a, b in zip(ordered, ordered[1:])):
            back.add(player)
    return back


# ---------------------------------------------------------------------------------------------
# write_feeds
# ---------------------------------------------------------------------------------------------

SMALL = dict(games=4000, players=500, years=20, events=60, seed=11, end_year=2024, chunk_games=1500)


@pytest.fixture(scope="module")
def small_feed(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("feed")
    counts = write_feeds(out, **SMALL)
    return out, counts


def test_counts_and_files(small_feed):
    out, counts = small_feed
    assert counts["games"] == 4000
    assert counts["files"] == {"games": 3, "events": 1, "event_results": 1, "players": 1}
    names = sorted(p.name for p in (out / "games").iterdir())
    assert names == ["games-00000.parquet", "games-00001.parquet", "games-00002.parquet"]
    tree = check_tree(out)
    assert len(tree["games"]) == 4000
    assert counts["rows"]["games"] == sum(len(p) for p in tree["games"].values())
    assert counts["rows"]["events"] == len(tree["events"]) == 60
    assert counts["rows"]["event_results"] == sum(len(r) for r in tree["lists"].values())
    assert counts["rows"]["players"] == len(tree["registry"])


def test_generated_feed_follows_every_rule_and_has_the_mix(small_feed):
    out, _ = small_feed
    tree = check_tree(out)
    games, events, lists, registry = tree["games"], tree["events"], tree["lists"], tree["registry"]
    first, last = dt.date(2024 - 20 + 1, 1, 1), dt.date(2024, 12, 31)
    assert all(first <= powers[0]["finished_on"] <= last for powers in games.values())
    assert all(first <= e["start_date"] and e["end_date"] <= last for e in events.values())
    # Games finish in file order: ids and dates rise together.
    ordered = sorted(games, key=lambda g: (games[g][0]["finished_on"], g))
    assert ordered == sorted(games)

    standard = [g for g in games.values() if g[0]["variant"] == "standard"]
    assert all(len(g) == 7 and g[0]["supply_centres"] == 34 for g in standard)
    assert len(standard) > 0.85 * len(games)
    results = [Counter(p["result"] for p in g) for g in games.values()]
    assert any(r["solo"] for r in results)
    assert {r["draw"] for r in results if r["draw"]} == {2, 3, 4, 5}
    assert any(r["anarchy"] for r in results) and any(r["survived"] for r in results)
    simultaneous = [
        g
        for g in games.values()
        if any(n >= 2 for n in Counter(p["eliminated_year"] for p in g if p["result"] == "eliminated").values())
    ]
    assert simultaneous
    rows = [p for g in games.values() for p in g]
    replaced = [p for p in rows if p["original_player_id"]]
    assert any(p["replacement_denies"] for p in replaced) and any(not p["replacement_denies"] for p in replaced)
    assert any(not g[0]["rated"] for g in games.values())
    variants = {(g[0]["variant"], g[0]["supply_centres"], len(g)) for g in games.values()}
    assert len({v[0] for v in variants}) >= 3 and any(v[1] != 34 for v in variants) and any(v[2] != 7 for v in variants)
    assert len(returning_players(games, absent=2)) >= 5

    assert all(10 <= e["num_players"] <= 80 for e in events.values())
    assert any(e["is_world_championship"] for e in events.values())
    assert any(not e["is_world_championship"] and "Championship" in e["name"] for e in events.values())
    assert {e["rounds"] == 1 for e in events.values()} == {True, False}
    assert any(len(lists[e]) < events[e]["num_players"] for e in lists)
    assert any(len(lists[e]) == events[e]["num_players"] for e in lists)
    assert any(shared_place_then_skip(rows) for rows in lists.values())
    assert any(r["nationality"] for rows in lists.values() for r in rows)

    names = [p["name"] for p in registry.values()]
    assert sum(any(ord(ch) > 127 for ch in name) for name in names) > 0.3 * len(names)
    assert sum(p["country"] is not None for p in registry.values()) > 0.8 * len(registry)
    # Most feed players are registered; the others are named in the feed.
    unregistered = {p["player_id"] for p in rows} - set(registry)
    assert 0 < len(unregistered) < 0.1 * len(registry)
    assert all(p["player_name"] for p in rows if p["player_id"] in unregistered)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_same_arguments_same_bytes(tmp_path, fmt):
    args = dict(games=900, players=120, years=6, events=12, seed=3, fmt=fmt, chunk_games=400)
    first = write_feeds(tmp_path / "a", **args)
    second = write_feeds(tmp_path / "b", **args)
    assert first == second
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) == 6
    assert all(p.suffix == f".{fmt}" for p in files_a)
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    tree = check_tree(tmp_path / "a")
    assert len(tree["games"]) == 900
    other = write_feeds(tmp_path / "c", **{**args, "seed": 4})
    assert other["games"] == 900
    assert (tmp_path / f"c/games/games-00000.{fmt}").read_bytes() != (
        tmp_path / f"a/games/games-00000.{fmt}"
    ).read_bytes()


def test_rewriting_a_folder_leaves_no_stale_parts(tmp_path):
    write_feeds(tmp_path, games=900, players=60, years=3, events=3, seed=1, chunk_games=200, fmt="csv")
    write_feeds(tmp_path, games=300, players=60, years=3, events=3, seed=1, chunk_games=200, fmt="csv")
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == ["games-00000.csv", "games-00001.csv"]
    assert len(check_tree(tmp_path)["games"]) == 300


def test_dates_fixed_by_end_year_and_never_in_the_future(tmp_path):
    counts = write_feeds(tmp_path, games=50, players=30, years=1, events=2, seed=9, end_year=2001, fmt="csv")
    tree = check_tree(tmp_path)
    assert {g[0]["finished_on"].year for g in tree["games"].values()} == {2001}
    assert counts["rows"]["events"] == 2
    with pytest.raises(ValueError):
        write_feeds(tmp_path / "x", games=10, players=30, years=1, events=0, seed=1, end_year=TODAY.year + 1)
    with pytest.raises(ValueError):
        write_feeds(tmp_path / "x", games=10, players=30, years=80, events=0, seed=1, end_year=2000)
    with pytest.raises(ValueError):
        write_feeds(tmp_path / "x", games=10, players=30, years=3, events=0, seed=1, fmt="xlsx")


# ---------------------------------------------------------------------------------------------
# Game-level columns: scoring, press, live (SPEC §3.6)
# ---------------------------------------------------------------------------------------------


def kinds_by_game(rows: list[dict]) -> dict[str, tuple]:
    """(scoring, press, live) of each game, checking that every row of a game has the same."""
    kinds: dict[str, set[tuple]] = defaultdict(set)
    for row in rows:
        kinds[row["game_id"]].add(tuple(row[k] for k in GAME_KINDS))
    assert all(len(k) == 1 for k in kinds.values()), [g for g, k in kinds.items() if len(k) > 1][:5]
    return {game_id: next(iter(k)) for game_id, k in kinds.items()}


def assert_mix(kinds: dict[str, tuple], tolerance: float) -> None:
    """The shares of each value, over games, within tolerance of the generator's."""
    for i, column in enumerate(GAME_KINDS):
        counts = Counter(k[i] for k in kinds.values())
        assert set(counts) == set(KIND_SHARES[column]), (column, counts)
        for value, share in KIND_SHARES[column].items():
            assert abs(counts[value] / len(kinds) - share) < tolerance, (column, value, counts[value], len(kinds))


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_every_format_carries_the_game_kinds_constant_within_a_game(tmp_path, fmt):
    write_feeds(tmp_path, games=600, players=100, years=3, events=2, seed=21, fmt=fmt, chunk_games=250)
    rows = []
    for path in sorted((tmp_path / "games").iterdir()):
        if fmt == "parquet":
            assert pq.read_schema(path).field("live").type == "bool"
        part = read_file("games", path)
        assert part and all(list(row) == file_columns("games") for row in part), path
        rows += part
    assert all(isinstance(row["live"], bool) for row in rows)
    kinds = kinds_by_game(rows)
    assert len(kinds) == 600
    check_games(rows)
    assert {k[0] for k in kinds.values()} == SCORINGS and {k[1] for k in kinds.values()} == PRESSES
    assert {k[2] for k in kinds.values()} == {True, False}


def test_game_kinds_mix_of_generated_feeds(tmp_path):
    write_feeds(tmp_path, games=5000, players=400, years=5, events=0, seed=13, chunk_games=2000)
    rows, _ = read_feed(tmp_path, "games")
    assert_mix(kinds_by_game(rows), tolerance=0.02)
    assert_mix(kinds_by_game(list(synthetic_games(13, 5000, 400, dt.date(2015, 1, 1), dt.date(2020, 12, 31)))), 0.02)


def test_game_kinds_mix_and_choice_of_game_rows():
    rng = random.Random(7)
    players = [f"a{i}" for i in range(7)]
    rows = [row for g in range(2000) for row in game_rows(rng, f"x{g}", dt.date(2020, 5, 1), players)]
    assert_mix(kinds_by_game(rows), tolerance=0.03)
    chosen = game_rows(random.Random(1), "y", dt.date(2020, 5, 1), players, scoring="ppsc", press="gunboat", live=True)
    assert {tuple(row[k] for k in GAME_KINDS) for row in chosen} == {("ppsc", "gunboat", True)}
    with pytest.raises(ValueError):
        game_rows(random.Random(1), "z", dt.date(2020, 5, 1), players, scoring="winner_takes_all")
    with pytest.raises(ValueError):
        game_rows(random.Random(1), "z", dt.date(2020, 5, 1), players, press="email")


def test_same_seed_same_game_kinds(tmp_path):
    args = dict(games=1500, players=200, years=4, events=0, chunk_games=700)
    kinds = []
    for folder, seed in (("a", 5), ("b", 5), ("c", 6)):
        write_feeds(tmp_path / folder, seed=seed, **args)
        kinds.append(kinds_by_game(read_feed(tmp_path / folder, "games")[0]))
    assert kinds[0] == kinds[1] and kinds[0] != kinds[2]
    sg = (17, 400, 60, dt.date(2018, 1, 1), dt.date(2020, 12, 31))
    assert kinds_by_game(list(synthetic_games(*sg))) == kinds_by_game(list(synthetic_games(*sg)))
    players = [f"a{i}" for i in range(7)]

    def some_game_rows(seed: int) -> list[dict]:
        rng = random.Random(seed)
        return [row for g in range(200) for row in game_rows(rng, f"x{g}", dt.date(2020, 5, 1), players)]

    assert kinds_by_game(some_game_rows(3)) == kinds_by_game(some_game_rows(3))


def test_game_kinds_stream_leaves_the_other_columns_alone(monkeypatch):
    gen = np.random.default_rng(np.random.SeedSequence(99).spawn(3)[2])
    state, spawned = gen.bit_generator.state, gen.bit_generator.seed_seq.n_children_spawned
    generator.game_kind_generator(gen)
    assert gen.bit_generator.state == state and gen.bit_generator.seed_seq.n_children_spawned == spawned

    def table():
        gen = np.random.default_rng(99)
        pool = generator.player_pool(gen, 150, 2019, 2021)
        days = np.sort(gen.integers(17_900, 18_900, 800))
        ids = pa.array([f"g{i:05d}" for i in range(800)])
        return generator.games_table(gen, pool, days, ids, skill=gen.normal(0, 1, 150))

    first = table()
    monkeypatch.setattr(generator, "GAME_KIND_STREAM", generator.GAME_KIND_STREAM + 1)
    second = table()
    assert first.drop_columns(GAME_KINDS).equals(second.drop_columns(GAME_KINDS))
    assert not first.select(GAME_KINDS).equals(second.select(GAME_KINDS))


# ---------------------------------------------------------------------------------------------
# game_rows and synthetic_games
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_players,powers", [(2, 7), (3, 3), (5, 5), (7, 7), (9, 7), (40, 7), (60, 4)])
def test_synthetic_games_are_valid(n_players, powers):
    rows = list(synthetic_games(5, 150, n_players, dt.date(2019, 10, 1), dt.date(2022, 3, 31), powers=powers))
    for row in rows:
        assert list(row) == COLUMNS["games"]
    games = check_games(rows)
    assert len(games) == 150
    assert all(len(g) == min(powers, n_players) for g in games.values())
    days = [g[0]["finished_on"] for g in games.values()]
    assert days == sorted(days) and dt.date(2019, 10, 1) <= days[0] and days[-1] <= dt.date(2022, 3, 31)


def test_synthetic_games_mix_and_determinism():
    args = (8, 600, 40, dt.date(2015, 1, 1), dt.date(2022, 12, 31))
    rows = list(synthetic_games(*args))
    assert rows == list(synthetic_games(*args))
    games = check_games(rows)
    assert any(not g[0]["rated"] for g in games.values())
    assert len({g[0]["variant"] for g in games.values()}) > 1
    assert any(p["replacement_denies"] for p in rows) and any(p["original_player_id"] for p in rows)
    assert returning_players(games)
    assert list(synthetic_games(8, 0, 40, dt.date(2015, 1, 1), dt.date(2022, 12, 31))) == []


def test_game_rows_are_valid_and_use_substitutes_once():
    rng = random.Random(42)
    players = [f"a{i}" for i in range(7)]
    rows = []
    for g in range(300):
        rows += game_rows(
            rng,
            f"x{g}",
            dt.date(2020, 5, 1),
            players,
            replacement_rate=0.3,
            substitutes=["s1", "s2", "a0", "a3"],
            supply_centres=58 if g % 5 == 0 else 34,
        )
    games = check_games(rows)
    used = {p["player_id"] for p in rows if p["original_player_id"]}
    assert used == {"s1", "s2"}
    assert any(p["replacement_denies"] for p in rows)
    assert {g[0]["supply_centres"] for g in games.values()} == {34, 58}
    assert game_rows(random.Random(1), "y", dt.date(2020, 5, 1), players) == game_rows(
        random.Random(1), "y", dt.date(2020, 5, 1), players
    )
    with pytest.raises(ValueError):
        game_rows(random.Random(1), "z", dt.date(2020, 5, 1), ["solo"])


# ---------------------------------------------------------------------------------------------
# The bundled sample (data/raw)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> dict:
    return check_tree(RAW)


def test_sample_is_small_valid_and_mixes_formats(sample):
    files = [p for p in RAW.rglob("*") if p.is_file() and p.name != "README.md"]
    assert sum(p.stat().st_size for p in files) < 700_000
    suffixes = Counter(p.suffix for p in files)
    assert suffixes[".csv"] > suffixes[".parquet"] + suffixes[".jsonl"]
    assert suffixes[".parquet"] >= 1 and suffixes[".jsonl"] >= 1
    assert (RAW / "README.md").is_file()
    assert {p.parent.name for p in files} == {"games", "events", "event_results", "players"}


def test_sample_dixie_33_2019_is_exactly_the_wdd_field(sample):
    dixie = sample["events"]["dixie-33-2019"]
    assert dixie["name"] == "Dixie 33 2019"
    assert (dixie["start_date"], dixie["end_date"]) == (dt.date(2019, 5, 24), dt.date(2019, 5, 26))
    assert (dixie["location"], dixie["country"]) == ("Chapel Hill", "USA")
    assert (dixie["rounds"], dixie["num_players"], dixie["is_world_championship"]) == (3, 36, False)
    listed = sorted(sample["lists"]["dixie-33-2019"], key=lambda r: (r["placement"], r["player_id"]))
    assert [(r["placement"], r["player_name"]) for r in listed] == DIXIE_33
    # Golden percentiles of SPEC §3.1.
    n = dixie["num_players"]
    pct = {r["player_name"]: round((n + 0.5 - r["placement"]) / n * 100, 2) for r in listed}
    assert (pct["David MILLER"], pct["Jeff LADD"], pct["Vince AGOSTA"], pct["Colin WEST"]) == (
        98.61,
        87.5,
        29.17,
        20.83,
    )


def test_sample_events_cover_the_cases(sample):
    events, lists = sample["events"], sample["lists"]
    wdc = events["wdc-viii-1998"]
    assert (wdc["num_players"], wdc["rounds"], wdc["is_world_championship"]) == (77, 4, True)
    assert wdc["end_date"].year < 2001 and lists["wdc-viii-1998"]
    years = {e["end_date"].year for e in events.values()}
    assert min(years) == 1998 and max(years) == 2020 and len(years) >= 8
    before = [e for e in events.values() if e["end_date"].year < 2001 and not e["is_world_championship"]]
    after = [e for e in events.values() if e["end_date"].year >= 2001]
    for group in (before, after):
        assert {e["rounds"] == 1 for e in group} == {True, False}
    continental = [e for e in events.values() if "Championship" in e["name"]]
    assert len(continental) >= 2 and not any(e["is_world_championship"] for e in continental)
    assert any(len(lists[e]) < events[e]["num_players"] for e in lists)
    assert any(r["nationality"] for rows in lists.values() for r in rows)
    # A player who comes back event after event, over the years and in the games too.
    years_of = defaultdict(set)
    for event_id, rows in lists.items():
        for r in rows:
            years_of[r["player_id"]].add(events[event_id]["end_date"].year)
    online = {p["player_id"] for g in sample["games"].values() for p in g}
    regulars = [p for p, ys in years_of.items() if len(ys) >= 5 and min(ys) <= 2000 and max(ys) >= 2018]
    assert set(regulars) & online


def test_sample_registry(sample):
    registry = sample["registry"]
    names = {p["name"] for p in registry.values()}
    assert any("Øhrn" in n for n in names) and any("Müller" in n for n in names)
    assert sum(p["country"] is not None for p in registry.values()) > 0.75 * len(registry)
    feed_players = {p["player_id"] for g in sample["games"].values() for p in g}
    feed_players |= {r["player_id"] for rows in sample["lists"].values() for r in rows}
    assert len(feed_players & set(registry)) > 0.9 * len(feed_players)


def test_sample_games(sample):
    games = sample["games"]
    assert 600 <= len(games) <= 900
    players = {p["player_id"] for g in games.values() for p in g}
    assert 60 <= len(players) <= 90
    days = [g[0]["finished_on"] for g in games.values()]
    assert min(days) >= dt.date(2017, 1, 1) and max(days) <= dt.date(2020, 12, 31)
    assert {(d.year, d.month) for d in days} == {(y, m) for y in range(2017, 2021) for m in range(1, 13)}
    assert sum(len(g) == 7 for g in games.values()) == len(games)
    assert any(g[0]["variant"] != "standard" for g in games.values())
    assert any(not g[0]["rated"] for g in games.values())
    assert any(p["original_player_id"] for g in games.values() for p in g)
    assert len(sample["game_files"]) >= 5


def test_sample_correction_re_delivers_two_rows_of_an_existing_game(sample):
    files = sample["game_files"]
    correction = files[-1]
    assert "correction" in correction.name
    fixed = read_file("games", correction)
    assert len(fixed) == 2 and len({r["game_id"] for r in fixed}) == 1
    earlier = {(r["game_id"], r["power"]): r for path in files[:-1] for r in read_file("games", path)}
    game_id = fixed[0]["game_id"]
    for row in fixed:
        before = earlier[(row["game_id"], row["power"])]
        assert row != before
    assert any(row["result"] != earlier[(row["game_id"], row["power"])]["result"] for row in fixed)
    # Valid before and after the correction.
    check_games([r for k, r in earlier.items() if k[0] == game_id])
    assert sample["games"][game_id] != [r for k, r in earlier.items() if k[0] == game_id]


def test_make_sample_regenerates_the_same_bytes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_sample", ROOT / "data" / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path)]) == 0
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(module.GENERATED)
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (RAW / rel).read_bytes(), rel
