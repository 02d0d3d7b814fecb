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
    {"game_id": "ok", "finished_on": "2020-03-01", "power": "England", "player_id": "a", "result": "solo",
     "centres": 18, "eliminated_year": None},
    {"game_id": "ok", "finished_on": "2020-03-01", "power": "France", "player_id": "b", "result": "survived",
     "centres": 5, "eliminated_year": None},
    {"game_id": "ok", "finished_on": "2020-03-01", "power": "Germany", "player_id": "c", "result": "eliminated",
     "centres": 0, "eliminated_year": 1905},
]
GOOD_EVENT = {"event_id": "e_ok", "name": "Good", "start_date": "2019-05-24", "end_date": "2019-05-26",
              "location": "X", "country": "USA", "rounds": 3, "num_players": 10, "is_world_championship": False}
GOOD_RESULTS = [{"event_id": "e_ok", "player_id": "a", "placement": 1},
                {"event_id": "e_ok", "player_id": "b", "placement": 2}]


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
    quarantine = [dict(zip(["feed", "reason", "detail", "source_file", "source_line", "record_key"], r))
                  for r in con.execute("SELECT * FROM quarantine ORDER BY feed, source_file, source_line").fetchall()]
    valid = {f: [r[0] for r in con.execute(f"SELECT {FEEDS[f].key[0]} FROM {f}").fetchall()] for f in counts}
    for c in counts.values():
        assert c.balanced, c
    return quarantine, counts, valid


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
    "deny_without_original": ({"France": {"replacement_denies": True}}, "deny_without_original_player"),
    "dates_differ": ({"France": {"finished_on": "2020-03-02"}}, "game_fields_differ"),
    "unknown_result": ({"France": {"result": "won"}}, "unknown_result"),
    "wrong_type": ({"France": {"centres": "five"}}, "bad_type"),
    "missing_player": ({"France": {"player_id": None}}, "missing_required_value"),
    "survivor_without_centres": ({"France": {"centres": 0}}, "active_power_without_centres"),
    "zero_supply_centres": ({p: {"supply_centres": 0} for p in ("England", "France", "Germany")}, "bad_supply_centres"),
    "enormous_field": ({"France": {"player_name": "x" * 5000}}, "text_too_long"),
}


@pytest.mark.parametrize("case", sorted(GAME_CASES))
def test_game_rule(tmp_path, case):
    changes, reason = GAME_CASES[case]
    rows = GOOD_GAME + bad_game(**changes)
    raw = make_raw(tmp_path / "raw", games=[{**{"supply_centres": 34}, **r} for r in rows] if case != "zero_supply_centres" else rows)
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
    players = [{"player_id": "a", "name": "Karl Georg Øhrn", "country": "NOR"},
               {"player_id": None, "name": "Nobody", "country": "GER"}]
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
