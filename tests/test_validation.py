"""Every rule of SPEC §2, each with a delivery that breaks it; valid rows beside it still land."""

import copy
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.feed_spec import FEEDS
from pipeline.ingest.validation import VALIDATION_ORDER, ingest_feed, validate_and_count
from tests.support import make_raw, write_csv

GOOD_GAME = [
    {
        "game_id": "ok",
        "finished_on": "2020-03-01",
        "power": "England",
        "player_id": "a",
        "result": "solo",
        "centres": 18,
        "eliminated_year": None,
    },
    {
        "game_id": "ok",
        "finished_on": "2020-03-01",
        "power": "France",
        "player_id": "b",
        "result": "survived",
        "centres": 5,
        "eliminated_year": None,
    },
    {
        "game_id": "ok",
        "finished_on": "2020-03-01",
        "power": "Germany",
        "player_id": "c",
        "result": "eliminated",
        "centres": 0,
        "eliminated_year": 1905,
    },
]
GOOD_EVENT = {
    "event_id": "e_ok",
    "name": "Good",
    "start_date": "2019-05-24",
    "end_date": "2019-05-26",
    "location": "X",
    "country": "USA",
    "rounds": 3,
    "num_players": 10,
    "is_world_championship": False,
}
GOOD_RESULTS = [
    {"event_id": "e_ok", "player_id": "a", "placement": 1},
    {"event_id": "e_ok", "player_id": "b", "placement": 2},
]


def bad_game(**changes_by_power):
    """A copy of the good game as game 'bad', with per-power changes {power: {column: value}}."""
    rows = copy.deepcopy(GOOD_GAME)
    for row in rows:
        row["game_id"] = "bad"
        row.update(changes_by_power.get(row["power"], {}))
    return rows


def validate_folder(raw: Path):
    """Run ingest and validation of every feed in DuckDB; returns (quarantine rows, counts by feed)."""
    con = duckdb.connect()
    counts = {}
    for feed in VALIDATION_ORDER:
        ingest_feed(con, raw, feed)
    for feed in VALIDATION_ORDER:
        counts[feed.name] = validate_and_count(con, feed)
    quarantine = [
        dict(zip(["feed", "reason", "detail", "source_file", "source_line", "record_key"], r))
        for r in con.execute("SELECT * FROM quarantine ORDER BY feed, source_file, source_line").fetchall()
    ]
    valid = {f: [r[0] for r in con.execute(f"SELECT {FEEDS[f].key[0]} FROM {f}").fetchall()] for f in counts}
    for c in counts.values():
        assert c.balanced, c
    return quarantine, counts, valid


def every_power(**changes):
    """The same changes for every power of the game (a game-level column)."""
    return {row["power"]: changes for row in GOOD_GAME}


GAME_CASES = {
    "two_solos": ({"France": {"result": "solo"}}, "not_one_solo_or_a_draw"),
    "one_member_draw": ({"England": {"result": "draw"}}, "not_one_solo_or_a_draw"),
    "solo_plus_draw": ({"France": {"result": "draw"}}, "not_one_solo_or_a_draw"),
    "no_winner": ({"England": {"result": "survived"}}, "not_one_solo_or_a_draw"),
    "centres_over_total": ({"France": {"centres": 17}}, "centres_over_total"),
    "negative_centres": ({"France": {"centres": -1}}, "centres_out_of_range"),
    "centres_over_map": ({"England": {"centres": 35}}, "centres_out_of_range"),
    "eliminated_with_centres": ({"Germany": {"centres": 2}}, "eliminated_with_centres"),
    "eliminated_without_year": ({"Germany": {"eliminated_year": None}}, "eliminated_without_year"),
    "year_without_elimination": ({"France": {"eliminated_year": 1904}}, "year_without_elimination"),
    "year_out_of_range": ({"Germany": {"eliminated_year": 123456}}, "eliminated_year_out_of_range"),
    "future_date": ({p: {"finished_on": "2099-01-01"} for p in ("England", "France", "Germany")}, "date_in_future"),
    "before_1954": ({p: {"finished_on": "1953-12-31"} for p in ("England", "France", "Germany")}, "date_before_1954"),
    "player_on_two_powers": ({"France": {"player_id": "a"}}, "player_on_two_powers"),
    "original_holds_another_power": ({"France": {"original_player_id": "c"}}, "player_on_two_powers"),
    "original_on_two_powers": (
        {"France": {"original_player_id": "z"}, "Germany": {"original_player_id": "z"}},
        "player_on_two_powers",
    ),
    "original_replaced_on_own_power": ({"France": {"original_player_id": "b"}}, "player_on_two_powers"),
    "deny_without_original": ({"France": {"replacement_denies": True}}, "deny_without_original_player"),
    "dates_differ": ({"France": {"finished_on": "2020-03-02"}}, "game_fields_differ"),
    "unknown_result": ({"France": {"result": "won"}}, "unknown_result"),
    "wrong_type": ({"France": {"centres": "five"}}, "bad_type"),
    "missing_player": ({"France": {"player_id": None}}, "missing_required_value"),
    "survivor_without_centres": ({"France": {"centres": 0}}, "active_power_without_centres"),
    "zero_supply_centres": ({p: {"supply_centres": 0} for p in ("England", "France", "Germany")}, "bad_supply_centres"),
    "enormous_field": ({"France": {"player_name": "x" * 5000}}, "text_too_long"),
    # The game modes of SPEC §3.6: one of the listed values, the same on every row of a game.
    "unknown_scoring": (every_power(scoring="winner_takes_all"), "unknown_scoring"),
    "scoring_in_capitals": (every_power(scoring="Draw_Size"), "unknown_scoring"),
    "unknown_press": (every_power(press="no_press"), "unknown_press"),
    "scoring_differs": ({"France": {"scoring": "sum_of_squares"}}, "game_fields_differ"),
    "press_differs": ({"Germany": {"press": "gunboat"}}, "game_fields_differ"),
    "live_differs": ({"France": {"live": True}}, "game_fields_differ"),
    "live_not_a_flag": ({"France": {"live": "sometimes"}}, "bad_type"),
}


@pytest.mark.parametrize("case", sorted(GAME_CASES))
def test_game_rule(tmp_path, case):
    changes, reason = GAME_CASES[case]
    rows = GOOD_GAME + bad_game(**changes)
    raw = make_raw(
        tmp_path / "raw",
        games=[{**{"supply_centres": 34}, **r} for r in rows] if case != "zero_supply_centres" else rows,
    )
    quarantine, counts, valid = validate_folder(raw)
    bad = [q for q in quarantine if q["feed"] == "games"]
    assert {q["record_key"].split("/")[0] for q in bad} == {"bad"}
    assert len(bad) == 3, "a game is quarantined whole"
    assert reason in {q["reason"] for q in bad}, bad
    assert all(q["source_file"] == "games/games.csv" and q["source_line"] >= 5 for q in bad)
    assert sorted(set(valid["games"])) == ["ok"]
    assert counts["games"].valid == 3 and counts["games"].quarantined == 3


def test_too_few_powers(tmp_path):
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME + [{**GOOD_GAME[0], "game_id": "lonely"}])
    quarantine, _, valid = validate_folder(raw)
    assert [q["reason"] for q in quarantine] == ["too_few_powers"]
    assert set(valid["games"]) == {"ok"}


def test_duplicate_key_in_one_file(tmp_path):
    rows = GOOD_GAME + bad_game() + [dict(bad_game()[1], player_id="z")]
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", games=rows))
    assert "duplicate_key_in_file" in {q["reason"] for q in quarantine}
    assert set(valid["games"]) == {"ok"} and counts["games"].quarantined == 4


def test_later_delivery_replaces_earlier(tmp_path):
    raw = tmp_path / "raw"
    write_csv(raw / "games" / "2020-03-01.csv", GOOD_GAME)
    corrected = [dict(GOOD_GAME[1], centres=6)]
    write_csv(raw / "games" / "2020-03-02_fix.csv", corrected)
    con = duckdb.connect()
    ingest_feed(con, raw, FEEDS["games"])
    counts = validate_and_count(con, FEEDS["games"])
    assert (counts.rows_in, counts.valid, counts.replaced, counts.quarantined) == (4, 3, 1, 0)
    assert con.execute("SELECT centres FROM games WHERE power = 'France'").fetchone()[0] == 6
    fix = con.execute("SELECT record_key, replaced_file, by_file, changed FROM corrections").fetchall()
    assert fix == [("ok/France", "games/2020-03-01.csv", "games/2020-03-02_fix.csv", True)]


EVENT_CASES = {
    "end_before_start": ({"end_date": "2019-05-20"}, "end_before_start"),
    "zero_rounds": ({"rounds": 0}, "rounds_below_one"),
    "field_of_one": ({"num_players": 1}, "num_players_below_two"),
    "future_event": ({"start_date": "2099-01-01", "end_date": "2099-01-02"}, "date_in_future"),
    "ancient_event": ({"start_date": "1950-01-01", "end_date": "1950-01-02"}, "date_before_1954"),
    "bad_flag": ({"is_world_championship": "maybe"}, "bad_type"),
}


@pytest.mark.parametrize("case", sorted(EVENT_CASES))
def test_event_rule(tmp_path, case):
    changes, reason = EVENT_CASES[case]
    events = [GOOD_EVENT, {**GOOD_EVENT, "event_id": "e_bad", **changes}]
    results = GOOD_RESULTS + [{"event_id": "e_bad", "player_id": "a", "placement": 1}]
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", events=events, event_results=results))
    reasons = {(q["feed"], q["reason"]) for q in quarantine}
    assert ("events", reason) in reasons
    assert ("event_results", "event_rejected") in reasons, "results of a rejected event follow it"
    assert valid["events"] == ["e_ok"] and sorted(valid["event_results"]) == ["e_ok", "e_ok"]


RESULT_CASES = {
    "placement_zero": ({"placement": 0}, "placement_out_of_range"),
    "placement_above_field": ({"placement": 11}, "placement_out_of_range"),
    "unknown_event": ({"event_id": "nowhere"}, "unknown_event"),
    "missing_placement": ({"placement": None}, "missing_required_value"),
}


@pytest.mark.parametrize("case", sorted(RESULT_CASES))
def test_event_result_rule(tmp_path, case):
    changes, reason = RESULT_CASES[case]
    results = GOOD_RESULTS + [{"event_id": "e_ok", "player_id": "z", "placement": 3, **changes}]
    quarantine, counts, valid = validate_folder(make_raw(tmp_path / "raw", events=[GOOD_EVENT], event_results=results))
    assert [(q["feed"], q["reason"]) for q in quarantine] == [("event_results", reason)]
    assert counts["event_results"].valid == 2


def test_player_twice_in_one_event(tmp_path):
    results = GOOD_RESULTS + [{"event_id": "e_ok", "player_id": "a", "placement": 3}]
    quarantine, _, _ = validate_folder(make_raw(tmp_path / "raw", events=[GOOD_EVENT], event_results=results))
    assert [q["reason"] for q in quarantine] == ["duplicate_key_in_file", "duplicate_key_in_file"]


def test_event_without_results(tmp_path):
    events = [GOOD_EVENT, {**GOOD_EVENT, "event_id": "e_empty"}]
    quarantine, _, valid = validate_folder(make_raw(tmp_path / "raw", events=events, event_results=GOOD_RESULTS))
    assert [(q["reason"], q["record_key"]) for q in quarantine] == [("event_without_results", "e_empty")]


def test_player_registry_needs_an_id(tmp_path):
    players = [
        {"player_id": "a", "name": "Karl Georg Øhrn", "country": "NOR"},
        {"player_id": None, "name": "Nobody", "country": "GER"},
    ]
    quarantine, _, valid = validate_folder(make_raw(tmp_path / "raw", players=players))
    assert [q["reason"] for q in quarantine] == ["missing_required_value"] and valid["players"] == ["a"]


def test_unreadable_files_are_quarantined_whole(tmp_path):
    raw = make_raw(tmp_path / "raw", games=GOOD_GAME)
    (raw / "games" / "latin1.csv").write_bytes("game_id,power\nx,\xe9t\xe9\n".encode("latin-1"))
    (raw / "games" / "no_columns.csv").write_text("game_id,power\nx,England\n")
    (raw / "games" / "empty.csv").write_text("")
    (raw / "games" / "header_only.csv").write_text(",".join(FEEDS["games"].column_names) + "\n")
    (raw / "games" / "notes.xlsx").write_bytes(b"PK\x03\x04")
    good = pa.Table.from_pylist([{k: str(v) if v is not None else None for k, v in r.items()} for r in GOOD_GAME])
    pq.write_table(good, raw / "games" / "truncated.parquet")
    data = (raw / "games" / "truncated.parquet").read_bytes()
    (raw / "games" / "truncated.parquet").write_bytes(data[: len(data) // 2])
    quarantine, counts, valid = validate_folder(raw)
    whole = {q["source_file"]: q["reason"] for q in quarantine if q["source_line"] is None}
    assert whole == {
        "games/latin1.csv": "unreadable_file",
        "games/no_columns.csv": "missing_columns",
        "games/empty.csv": "empty_file",
        "games/header_only.csv": "empty_file",
        "games/notes.xlsx": "unsupported_format",
        "games/truncated.parquet": "unreadable_file",
    }
    assert counts["games"].files_rejected == 6 and counts["games"].valid == 3


def test_json_lines_with_a_broken_line(tmp_path):
    raw = tmp_path / "raw"
    (raw / "games").mkdir(parents=True)
    import json

    lines = [json.dumps(r) for r in GOOD_GAME]
    lines.insert(1, '{"game_id": "ok", "power": ')
    (raw / "games" / "feed.jsonl").write_text("\n".join(lines) + "\n")
    quarantine, counts, valid = validate_folder(raw)
    assert [(q["reason"], q["source_line"]) for q in quarantine] == [("malformed_json", 2)]
    assert counts["games"].rows_in == 4 and counts["games"].valid == 3


def test_awkward_but_valid_text_round_trips(tmp_path):
    """BOM, CRLF, quoted commas and newlines, SQL-looking names, extra columns, odd file names."""
    raw = tmp_path / "raw"
    names = ['Øhrn, Karl "Eagle"', "Line\nbreak", "Robert'); DROP TABLE games;--", "Müller 🙂"]
    rows = [dict(r, player_name=n) for r, n in zip(GOOD_GAME, names)]
    path = write_csv(raw / "games" / "Spaß 'quoted' file.csv", rows, FEEDS["games"].column_names + ["note"])
    assert b"\r\n" in path.read_bytes()  # the csv module writes CRLF line ends
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    quarantine, counts, _ = validate_folder(raw)
    assert quarantine == [] and counts["games"].valid == 3
    con = duckdb.connect()
    for feed in VALIDATION_ORDER:
        ingest_feed(con, raw, feed)
    validate_and_count(con, FEEDS["games"])
    stored = [r[0] for r in con.execute("SELECT player_name FROM games ORDER BY power").fetchall()]
    assert stored == names[:3]


# Integer columns take whole numbers only, in every delivery format (README, Feeds).
INTEGER_COLUMNS = sorted((f.name, c.name) for f in FEEDS.values() for c in f.columns if c.sql_type == "BIGINT")
NOT_WHOLE = {
    # a cell as written in text (CSV, a Parquet string column)
    "csv": ["3.5", "2.5", "1e1", "-0.5", "3,0", "99999999999999999999", "1_000", "0x10", "3.", "1E1"],
    "parquet_text": ["3.5", "2.5", "1e1", "-0.5", "3,0", "99999999999999999999", "1_000", "0x10", "3.", "1E1"],
    # a JSON value as written on the line
    "jsonl": [
        "3.5",
        "2.5",
        "1e1",
        "-0.5",
        "1E+1",
        "5e-1",
        "99999999999999999999",
        "1e400",
        '"3,0"',
        '"1e1"',
        '"2.5"',
        '"0x10"',
    ],
    # a Parquet double column
    "parquet_double": [3.5, 2.5, -0.5, 1e19, float("nan"), float("inf"), 1e-300],
}
WHOLE = {
    "csv": ["5", "5.0", "+5", " 5 ", "5.000"],
    "parquet_text": ["5", "5.0", "+5", "05"],
    "jsonl": ["5", "5.0", '"5"', '"5.0"'],
    "parquet_double": [5.0],
}


def test_every_integer_column_is_covered():
    assert INTEGER_COLUMNS == sorted(
        [
            ("event_results", "placement"),
            ("events", "num_players"),
            ("events", "rounds"),
            ("games", "centres"),
            ("games", "eliminated_year"),
            ("games", "supply_centres"),
            ("lists", "evaluations"),
            ("lists", "events"),
            ("lists", "games"),
        ]
    )


# The list rows an integer column of the lists feed belongs to: (system, the row's other values).
LIST_ROWS = {
    "events": ("dip_pouch", {"rating": 50.0, "events": 3}),
    "games": ("eagle", {"recent_points": "1.00", "games": 3, "last_game_date": "2020-01-10"}),
    "evaluations": ("diwz", {"rating": 1700, "evaluations": 3, "last_evaluated": "2020-01-10"}),
}


def write_delivery(folder: Path, feed: str, rows: list[dict], fmt: str, column: str) -> Path:
    """One delivery of `rows` in `fmt`; `column` holds each row's value as that format writes it
    (ints of the template are written the format's own way)."""
    import json

    columns = list(dict.fromkeys(k for r in rows for k in r))

    def cell(row, c):
        value = row.get(c)
        if c != column or value is None:
            return value
        if fmt == "parquet_double":
            return float(value)
        if fmt == "jsonl":
            return value if isinstance(value, str) else json.dumps(value)
        return str(value)

    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        return write_csv(folder / f"{feed}.csv", [{c: cell(r, c) for c in columns} for r in rows], columns)
    if fmt == "jsonl":
        lines = []
        for row in rows:
            parts = [
                f"{json.dumps(c)}: {cell(row, c) if c == column and row.get(c) is not None else json.dumps(row.get(c))}"
                for c in columns
            ]
            lines.append("{" + ", ".join(parts) + "}")
        path = folder / f"{feed}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path
    from tests.support import _text

    arrays = {}
    for c in columns:
        if c == column and fmt == "parquet_double":
            values = [cell(r, c) for r in rows]
            assert all(v is None or isinstance(v, float) for v in values)
            arrays[c] = pa.array(values, pa.float64(), from_pandas=False)
        else:
            arrays[c] = pa.array(
                [None if r.get(c) is None else (cell(r, c) if c == column else _text(r.get(c))) for r in rows],
                pa.string(),
            )
    path = folder / f"{feed}.parquet"
    pq.write_table(pa.table(arrays), path)
    return path


def integer_case(feed: str, column: str, values: list) -> tuple[dict[str, list[dict]], str, list[tuple[str, int]]]:
    """Deliveries with one good record and one bad record per value: (rows by feed, the feed carrying the
    values, [(record key of the row carrying the value, its row index)])."""
    if feed == "games":
        rows = [dict(r, supply_centres=34) for r in GOOD_GAME]
        marked = []
        for i, value in enumerate(values):
            power = {"centres": "France", "eliminated_year": "Germany", "supply_centres": "France"}[column]
            game = [dict(r, supply_centres=34) for r in bad_game()]
            for row in game:
                row["game_id"] = f"bad{i}"
                if row["power"] == power or column == "supply_centres":
                    row[column] = value
            marked.append((f"bad{i}/{power}", len(rows) + [r["power"] for r in game].index(power)))
            rows += game
        return {"games": rows}, "games", marked
    if feed == "events":
        events = [GOOD_EVENT] + [dict(GOOD_EVENT, event_id=f"e_bad{i}", **{column: v}) for i, v in enumerate(values)]
        results = GOOD_RESULTS + [
            {"event_id": f"e_bad{i}", "player_id": "a", "placement": 1} for i in range(len(values))
        ]
        return (
            {"events": events, "event_results": results},
            "events",
            [(f"e_bad{i}", 1 + i) for i in range(len(values))],
        )
    if feed == "lists":
        system, values_of_row = LIST_ROWS[column]
        good = {"system": system, "as_of": "2020-01-31", "player_id": "p_ok", **values_of_row}
        rows = [good] + [dict(good, player_id=f"p_bad{i}", **{column: v}) for i, v in enumerate(values)]
        # The lists' key: system, category (the default, overall, for these systems), player.
        return {"lists": rows}, "lists", [(f"{system}/overall/p_bad{i}", 1 + i) for i in range(len(values))]
    results = GOOD_RESULTS + [{"event_id": "e_ok", "player_id": f"z{i}", "placement": v} for i, v in enumerate(values)]
    return (
        {"events": [GOOD_EVENT], "event_results": results},
        "event_results",
        [(f"e_ok/z{i}", len(GOOD_RESULTS) + i) for i in range(len(values))],
    )


def write_case(raw: Path, rows_by_feed: dict, carrier: str, fmt: str, column: str) -> str:
    for name, rows in rows_by_feed.items():
        if name == carrier:
            path = write_delivery(raw / name, name, rows, fmt, column)
        else:
            write_csv(raw / name / f"{name}.csv", rows)
    return path.relative_to(raw).as_posix()


@pytest.mark.parametrize("fmt", sorted(NOT_WHOLE))
@pytest.mark.parametrize("feed,column", INTEGER_COLUMNS)
def test_a_number_that_is_not_whole_is_a_bad_type(tmp_path, feed, column, fmt):
    values = NOT_WHOLE[fmt]
    rows_by_feed, carrier, marked = integer_case(feed, column, values)
    source = write_case(tmp_path / "raw", rows_by_feed, carrier, fmt, column)
    quarantine, counts, valid = validate_folder(tmp_path / "raw")
    first_line = 2 if fmt == "csv" else 1
    entries = {q["record_key"]: q for q in quarantine if q["feed"] == carrier}
    for (key, index), value in zip(marked, values):
        assert key in entries, f"{value!r} was accepted in {fmt}"
        entry = entries[key]
        assert (entry["reason"], entry["source_file"], entry["source_line"]) == (
            "bad_type",
            source,
            index + first_line,
        ), (value, entry)
        assert column in entry["detail"], entry
    good = {
        "games": ["ok"] * 3,
        "events": ["e_ok"],
        "event_results": ["e_ok", "e_ok"],
        "lists": [LIST_ROWS.get(column, ("",))[0]],
    }[carrier]
    assert sorted(valid[carrier]) == good
    if carrier == "games":
        assert counts["games"].quarantined == 3 * len(values), "a game is quarantined whole"


@pytest.mark.parametrize("fmt", sorted(WHOLE))
def test_whole_numbers_are_taken_in_every_format(tmp_path, fmt):
    values = WHOLE[fmt]
    rows_by_feed, carrier, marked = integer_case("games", "centres", values)
    write_case(tmp_path / "raw", rows_by_feed, carrier, fmt, "centres")
    quarantine, counts, valid = validate_folder(tmp_path / "raw")
    assert quarantine == []
    con = duckdb.connect()
    for feed in VALIDATION_ORDER:
        ingest_feed(con, tmp_path / "raw", feed)
    validate_and_count(con, FEEDS["games"])
    stored = con.execute("SELECT DISTINCT centres FROM games WHERE power = 'France' AND game_id <> 'ok'").fetchall()
    assert stored == [(5,)]


@pytest.mark.parametrize("arrow_type", [pa.float32(), pa.decimal128(10, 2)], ids=["float", "decimal"])
def test_parquet_fractions_of_any_number_type(tmp_path, arrow_type):
    """Floats and decimals are judged by their value: 5.00 is taken, 5.25 is not."""
    from decimal import Decimal

    as_value = (lambda x: Decimal(str(x))) if pa.types.is_decimal(arrow_type) else float
    rows = GOOD_GAME + [dict(r, game_id=g) for g in ("whole", "part") for r in bad_game()]
    centres = [as_value(r["centres"]) for r in rows]
    centres[len(GOOD_GAME) * 2 + 1] = as_value(5.25)  # France of game 'part'
    table = pa.table(
        {
            c: pa.array([None if r.get(c) is None else str(r.get(c)) for r in rows], pa.string())
            for c in FEEDS["games"].column_names
            if c != "centres" and any(c in r for r in rows)
        }
    )
    table = table.append_column("centres", pa.array(centres, arrow_type))
    (tmp_path / "raw" / "games").mkdir(parents=True)
    pq.write_table(table, tmp_path / "raw" / "games" / "games.parquet")
    quarantine, counts, valid = validate_folder(tmp_path / "raw")
    assert sorted(set(valid["games"])) == ["ok", "whole"]
    bad = [q for q in quarantine if q["record_key"] == "part/France"]
    assert [(q["reason"], q["source_line"]) for q in bad] == [("bad_type", 8)]
    assert counts["games"].quarantined == 3


def test_a_person_on_two_powers_is_found_exactly_whatever_the_hash_masks_say():
    """The games' facts compare ids only where the hash masks cannot show them distinct: over many
    random games (ids from a small pool, so that masks collide with and without a repeated id), the
    facts flag exactly the games the rule of SPEC §2 names."""
    import random

    from pipeline.ingest.validation import GAME_FACTS, game_facts_sql, player_conflicts_sql

    rng = random.Random(11)
    pool = [f"p{k}" for k in range(40)]
    rows, expected = [], {}
    for g in range(6_000):
        game, size = f"g{g}", rng.randint(2, 14)
        multi = rng.random() < 0.2
        holders = [rng.choice(pool) if rng.random() < 0.95 else None for _ in range(size)]
        if rng.random() < 0.5:  # mostly distinct holders
            holders = [h if h is None else f"{h}-{k}" for k, h in enumerate(holders)]
        originals = [rng.choice(pool) if rng.random() < 0.15 else None for _ in range(size)]
        for holder, original in zip(holders, originals):
            rows.append((game, holder, original, multi))
        held, replaced = [h for h in holders if h], [o for o in originals if o]
        if multi:
            expected[game] = len(replaced) > len(set(replaced)) or bool(set(held) & set(replaced))
        else:
            expected[game] = len(held + replaced) > len(set(held + replaced))
    con = duckdb.connect()
    names = ["game_id", "player_id", "original_player_id", "multi_site"]
    con.register("delivered", pa.table({name: [row[k] for row in rows] for k, name in enumerate(names)}))
    con.execute("CREATE TABLE typed_games AS SELECT * FROM delivered")
    con.execute("""ALTER TABLE typed_games ADD COLUMN result VARCHAR DEFAULT 'survived';
                   ALTER TABLE typed_games ADD COLUMN centres BIGINT DEFAULT 1;
                   ALTER TABLE typed_games ADD COLUMN variant VARCHAR DEFAULT 'standard';
                   ALTER TABLE typed_games ADD COLUMN supply_centres BIGINT DEFAULT 34;
                   ALTER TABLE typed_games ADD COLUMN finished_on DATE DEFAULT DATE '2020-01-01';
                   ALTER TABLE typed_games ADD COLUMN rated BOOLEAN DEFAULT true;
                   ALTER TABLE typed_games ADD COLUMN scoring VARCHAR DEFAULT 'draw_size';
                   ALTER TABLE typed_games ADD COLUMN press VARCHAR DEFAULT 'full';
                   ALTER TABLE typed_games ADD COLUMN live BOOLEAN DEFAULT false;
                   ALTER TABLE typed_games ADD COLUMN _replaced BOOLEAN DEFAULT false;
                   ALTER TABLE typed_games ADD COLUMN _source_file VARCHAR DEFAULT 'games/a.csv';
                   CREATE TABLE _scope AS SELECT DISTINCT game_id AS grp FROM typed_games;
                   CREATE TABLE _scope_files (path VARCHAR);""")
    con.execute(f"CREATE TABLE {GAME_FACTS} AS {game_facts_sql()}")
    con.execute(f"UPDATE {GAME_FACTS} SET _player_conflict = true WHERE game_id IN ({player_conflicts_sql()})")
    found = dict(con.execute(f"SELECT game_id, _player_conflict FROM {GAME_FACTS}").fetchall())
    assert found == expected
    kinds = con.execute(f"SELECT _ids_unsettled, _player_conflict, count(*) FROM {GAME_FACTS} GROUP BY ALL").fetchall()
    # Every kind of game was there: settled by the masks, compared and clear, compared and flagged.
    assert {(unsettled, conflict) for unsettled, conflict, _ in kinds} == {(False, False), (True, False), (True, True)}
