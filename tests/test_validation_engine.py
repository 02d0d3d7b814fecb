"""The one-query rule evaluation finds, row by row, exactly what Pandera's own engine finds."""
from __future__ import annotations

import duckdb
import ibis
import pandera.ibis as pdi

from pipeline.ingest.validation import (
    FEED_MODELS, VALIDATION_ORDER, candidates_sql, failing_rows, ingest_feed, scope_tables, validate_feed,
)
from tests.support import make_raw
from tests.test_lists import GOOD_LISTS, LIST_CASES, MULTI_SITE_CASES, multi_site_game
from tests.test_validation import (
    EVENT_CASES, GAME_CASES, GOOD_EVENT, GOOD_GAME, GOOD_RESULTS, RESULT_CASES, bad_game,
)


def pandera_failures(con: duckdb.DuckDBPyConnection, feed, candidates: str) -> dict[int, list[str]]:
    """Row id -> failed rules, from `model.validate(lazy=True)`: a query or more per rule."""
    try:
        FEED_MODELS[feed.name].validate(ibis.duckdb.from_connection(con).table(candidates), lazy=True)
    except pdi.errors.SchemaErrors as errors:
        cases = errors.failure_cases
    else:
        return {}
    found: dict[int, list[str]] = {}
    for check, case in zip(cases["check"], cases["failure_case"]):
        assert isinstance(case, dict) and "_row_id" in case, (check, case)
        found.setdefault(int(case["_row_id"]), []).append(str(check))
    return found


def every_bad_case() -> dict[str, list[dict]]:
    """One raw folder holding every bad-row case of every feed, each under keys of its own."""
    games = list(GOOD_GAME)
    for case, (changes, _) in sorted(GAME_CASES.items()):
        games += [dict(row, game_id=f"bad_{case}") for row in bad_game(**changes)]
    for case, (changes, _) in sorted(MULTI_SITE_CASES.items()):
        games += multi_site_game(f"ms_{case}", **changes)
    events, results = [GOOD_EVENT], list(GOOD_RESULTS)
    for case, (changes, _) in sorted(EVENT_CASES.items()):
        events.append({**GOOD_EVENT, "event_id": f"e_{case}", **changes})
        results.append({"event_id": f"e_{case}", "player_id": "a", "placement": 1})
    for case, (changes, _) in sorted(RESULT_CASES.items()):
        results.append({"event_id": "e_ok", "player_id": f"p_{case}", "placement": 3, **changes})
    lists = list(GOOD_LISTS)
    for case, (extra, _) in sorted(LIST_CASES.items()):
        lists += [{**row, "player_id": f"bad_{case}"} if row.get("player_id") == "bad" else row for row in extra]
    players = [{"player_id": "a", "name": "A", "country": "NOR"}, {"player_id": None, "name": "Nobody", "country": "GER"}]
    return {"games": games, "events": events, "event_results": results, "lists": lists, "players": players}


def test_one_query_finds_what_pandera_finds(tmp_path):
    con = duckdb.connect()
    raw = make_raw(tmp_path / "raw", **every_bad_case())
    for feed in VALIDATION_ORDER:
        ingest_feed(con, raw, feed)
    compared = {}
    for feed in VALIDATION_ORDER:
        assert scope_tables(con, feed)
        con.execute(f"CREATE OR REPLACE TEMP TABLE probe AS {candidates_sql(feed)}")
        ours = {row: sorted(rules) for row, rules in failing_rows(con, feed, "probe").items()}
        theirs = {row: sorted(rules) for row, rules in pandera_failures(con, feed, "probe").items()}
        assert ours == theirs, feed.name
        compared[feed.name] = {rule for rules in ours.values() for rule in rules}
        validate_feed(con, feed)  # the next feeds' rules read this one's valid rows
    # The comparison is only as good as the rules it saw fail.
    expected = {
        "games": {reason for _, reason in GAME_CASES.values()} | {reason for _, reason in MULTI_SITE_CASES.values() if reason},
        "events": {reason for _, reason in EVENT_CASES.values()},
        "event_results": {reason for _, reason in RESULT_CASES.values()},
        "lists": {reason for _, reason in LIST_CASES.values()},
        "players": {"missing_required_value"},
    }
    for feed, reasons in expected.items():
        assert reasons <= compared[feed], (feed, reasons - compared[feed])
