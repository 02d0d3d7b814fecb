"""The one-query rule evaluation finds, row by row, exactly what Pandera's own engine finds."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import duckdb
import ibis
import pandera.ibis as pdi
import pyarrow as pa
import pytest

from pipeline.ingest.validation import (
    FEED_MODELS,
    VALIDATION_ORDER,
    create_candidates,
    drop_candidates,
    failing_rows,
    ingest_feed,
    scope_tables,
    validate_feed,
)
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from schemas.engine import NOT_NULLABLE, rule_failures
from tests.support import make_raw
from tests.test_lists import GOOD_LISTS, LIST_CASES, MULTI_SITE_CASES, multi_site_game
from tests.test_validation import (
    EVENT_CASES,
    GAME_CASES,
    GOOD_EVENT,
    GOOD_GAME,
    GOOD_RESULTS,
    RESULT_CASES,
    bad_game,
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
    players = [
        {"player_id": "a", "name": "A", "country": "NOR"},
        {"player_id": None, "name": "Nobody", "country": "GER"},
    ]
    return {"games": games, "events": events, "event_results": results, "lists": lists, "players": players}


def test_one_query_finds_what_pandera_finds(tmp_path):
    con = duckdb.connect()
    raw = make_raw(tmp_path / "raw", **every_bad_case())
    for feed in VALIDATION_ORDER:
        ingest_feed(con, raw, feed)
    compared = {}
    for feed in VALIDATION_ORDER:
        assert scope_tables(con, feed)
        create_candidates(con, feed, "probe")
        ours = {row: sorted(rules) for row, rules in failing_rows(con, feed, "probe").items()}
        theirs = {row: sorted(rules) for row, rules in pandera_failures(con, feed, "probe").items()}
        drop_candidates(con, "probe")
        assert ours == theirs, feed.name
        compared[feed.name] = {rule for rules in ours.values() for rule in rules}
        validate_feed(con, feed)  # the next feeds' rules read this one's valid rows
    # The comparison is only as good as the rules it saw fail.
    expected = {
        "games": {reason for _, reason in GAME_CASES.values()}
        | {reason for _, reason in MULTI_SITE_CASES.values() if reason},
        "events": {reason for _, reason in EVENT_CASES.values()},
        "event_results": {reason for _, reason in RESULT_CASES.values()},
        "lists": {reason for _, reason in LIST_CASES.values()},
        "players": {"missing_required_value"},
    }
    for feed, reasons in expected.items():
        assert reasons <= compared[feed], (feed, reasons - compared[feed])


# Values that break some rule of some output model, by Arrow type, with null among them.
MESSY_VALUES = {
    "int64": [None, -1, 0, 1, 2, 3, 5],
    "float64": [None, -1.0, 0.0, 0.5, 3.0, 1600.0, 1600.5],
    "string": [None, "a", "1600-0", "1600-1"],
    "boolean": [None, True, False],
    "date": [None, dt.date(2020, 1, 31)],
}
ARROW = {
    "int64": pa.int64(),
    "float64": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
}


def by_rule(failures: list[tuple[str, str | None]]) -> tuple[Counter, set]:
    """Failing rows per rule (without its arguments or column), and the columns that held a null."""
    counts, nulls = Counter(), set()
    for rule, column in failures:
        if rule.startswith(NOT_NULLABLE):
            nulls.add(column)
        else:
            counts[rule.split("(")[0]] += 1
    return counts, nulls


@pytest.mark.parametrize("system", SYSTEM_NAMES)
@pytest.mark.parametrize("table", ["rankings", "history"])
def test_one_query_finds_what_pandera_finds_in_outputs(system, table):
    """Every output model over a table of messy values: the same failures per rule (Pandera reports a
    column's nulls once, the one query row by row)."""
    model = getattr(system_class(system), f"{table}_model")
    schema = pa.schema([(name, ARROW[str(column.dtype)]) for name, column in model.to_schema().columns.items()])
    rng = random.Random(1)
    rows = pa.Table.from_pylist(
        [
            {f.name: rng.choice(MESSY_VALUES[str(model.to_schema().columns[f.name].dtype)]) for f in schema}
            for _ in range(300)
        ],
        schema=schema,
    )
    con = duckdb.connect()
    con.register("messy", rows)
    ours = by_rule(
        [
            (rule, rule[len(NOT_NULLABLE) + 1 : -1] if rule.startswith(NOT_NULLABLE) else None)
            for _, rules in rule_failures(con, model, "messy", [])
            for rule in rules
        ]
    )
    with pytest.raises(pdi.errors.SchemaErrors) as raised:
        model.validate(ibis.duckdb.from_connection(con).table("messy"), lazy=True)
    cases = raised.value.failure_cases
    theirs = by_rule([(check, column) for check, column in zip(cases["check"], cases["column"])])
    assert ours == theirs
    assert ours[0] and ours[1], "the messy values must break rules and nulls to compare anything"
