"""`diprank report`: the published layouts, the DiWZ seed tables, the HTML page in a real browser,
and every query of docs/DASHBOARDS.md, against small warehouses built once per module."""

from __future__ import annotations

import argparse
import html
import re
from collections import defaultdict
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli.report import add_report_parser, command_report
from pipeline.core.months import Month, month_range
from pipeline.core.rounding import half_up
from pipeline.rating.carry import Carry, finalize_rankings, note_names, registry_names
from pipeline.rating.writer import PendingMonth, finalize_history, write_months
from pipeline.reports.html import render_html, series_path
from pipeline.reports.model import DIWZ_POOLED_NOTE, Column, Report, Row, Section, build_report, game_results
from pipeline.reports.text import display_width, render_text
from pipeline.settings import Settings
from pipeline.synthetic.generator import write_feeds
from pipeline.systems.base import MonthInput
from pipeline.systems.diwz.rules import DiWZ
from pipeline.systems.games import rows_to_table
from pipeline.warehouse.store import Warehouse
from tests.fixtures import diwz_cases
from tests.fixtures.eagle_cases import solo_game
from tests.support import REPO, chromium, headless_dom, run_cli, write_csv

# A registry name with everything a page must survive: markup, an entity, both quotes, a
# right-to-left override, a wide emoji and letters outside Latin-1.
NASTY_ID = "x-nasty"
NASTY_NAME = '<script>alert("x&y")</script> O\'Brien \u202eŁódź 😀 Ĳssel'
NASTY_OPPONENTS = ["p00001", "p00002", "p00003", "p00004", "p00005", "p00006"]
DEC_2024 = "2024-12"
# The embedded defaults, whatever the environment the tests run in: every test names its warehouse.
SETTINGS = Settings.from_env({})


# --- the warehouses -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Two years of generated feeds (2023-2024) plus a newcomer with a hostile name who solos four
    games late in 2024, run through the real `diprank run`."""
    root = tmp_path_factory.mktemp("report")
    raw = root / "raw"
    write_feeds(raw, games=300, players=40, years=2, events=8, seed=7, end_year=2024, fmt="csv")
    days = ["2024-11-05", "2024-11-20", "2024-12-03", "2024-12-18"]
    games = [
        row for n, day in enumerate(days, 1) for row in solo_game(f"zz-report-{n}", day, NASTY_ID, NASTY_OPPONENTS)
    ]
    write_csv(raw / "games" / "zz_report.csv", games)
    write_csv(raw / "players" / "zz_report.csv", [{"player_id": NASTY_ID, "name": NASTY_NAME, "country": "Ireland"}])
    warehouse = root / "warehouse"
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--quiet")
    assert code == 0 and "quarantine entr" not in out, out + err
    return warehouse


@pytest.fixture(scope="module")
def seed_warehouse(tmp_path_factory) -> Path:
    """Both DiWZ tables of seed 004, stepped from their initial lists (the CLI cannot set one) and
    written with the pipeline's own writer, plus the validated games the report reads."""
    warehouse = Warehouse(tmp_path_factory.mktemp("diwz_seed") / "warehouse")
    system = DiWZ(initial_ratings={**diwz_cases.SEED_ONE_RATINGS, **diwz_cases.SEED_TWO_RATINGS})
    rows = diwz_cases.seed_table_one_rows() + diwz_cases.seed_table_two_rows()
    by_month = defaultdict(list)
    for row in rows:
        by_month[Month.parse(row["finished_on"])].append(row)
    state, carry, pending = system.initial_state(), Carry(), []
    for month in month_range(min(by_month), max(by_month)):
        results = rows_to_table(by_month[month])
        out = system.step(state, MonthInput(month, results))
        state = out.state
        note_names(carry, results)
        pending.append(
            PendingMonth(
                month,
                finalize_rankings(system, month, out, carry, registry_names({})),
                finalize_history(system, out),
                {},
            )
        )
    write_months(warehouse, system, pending)
    for month, month_rows in by_month.items():  # one file per month, as ingest stores the games
        path = warehouse.validated_month("games", month)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(rows_to_table(month_rows).drop_columns(["responsible_player_id"]), path)
    return warehouse.root


def report(capsys, *argv: str) -> tuple[int, str, str]:
    """`diprank report …` through the parser as cli.py wires it; (exit code, stdout, stderr)."""
    parser = argparse.ArgumentParser(prog="diprank")
    add_report_parser(parser.add_subparsers(dest="command", required=True))
    capsys.readouterr()
    try:
        code = command_report(parser.parse_args(["report", *argv]), SETTINGS)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def rankings(warehouse: Path, system: str, month: str) -> list[dict]:
    return pq.read_table(Warehouse(warehouse).rankings(system, Month.parse(month))).to_pylist()


def block(out: str, title: str) -> list[str]:
    """The lines of the printed section that starts with `title`, up to the next blank-line gap."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next(
        (
            i
            for i in range(start + 1, len(lines) - 1)
            if lines[i] == ""
            and lines[i + 1] != ""
            and not lines[i + 1].startswith(("Ranking", "Rank", "Rang", "Event", "Award"))
        ),
        len(lines),
    )
    return lines[start:end]


def printed(name: str) -> str:
    """A name as text output prints it: without bidi override characters."""
    return name.replace("\u202e", "")


def money(value) -> str:
    return str(half_up(Decimal(value), 2))


# --- Eagle ----------------------------------------------------------------------------------

EAGLE_HEADERS = ["Ranking", "Name", "Points", "Date of last finished game", "Games", "Points to defend", "New Eagles"]
EAGLE_ROW = re.compile(
    r"^\s*(?P<rank>\d+)  (?P<name>.*?)\s+(?P<points>\d+\.\d\d)  (?P<date>\d{4}-\d\d-\d\d)\s+(?P<games>10\+|\d+)"
    r"(?:\s+(?P<defend>\d+\.\d\d))?\s+(?P<new>\d\.\d\d)$"
)


def test_eagle_table_layout(small, capsys):
    code, out, err = report(capsys, "eagle", "--month", DEC_2024, "--warehouse", str(small))
    assert code == 0, err
    table = rankings(small, "eagle", DEC_2024)
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("Ranking"))
    assert re.split(r"\s{2,}", header.strip()) == EAGLE_HEADERS
    body = lines[lines.index(header) + 2 : lines.index(header) + 2 + len(table)]
    assert len(body) == len(table)
    ends = defaultdict(set)
    for line, row in zip(body, table):
        m = EAGLE_ROW.match(line)
        assert m, line
        assert int(m["rank"]) == row["rank"]
        assert m["points"] == money(row["points"]) and m["new"] == money(row["new_eagles"])
        assert m["date"] == row["last_game_date"].isoformat()
        assert m["games"] == ("10+" if row["games"] > 10 else str(row["games"]))
        assert m["defend"] == (None if row["points_to_defend"] is None else money(row["points_to_defend"]))
        for column in ("points", "games", "new"):  # right-aligned in display columns, wide names too
            ends[column].add(display_width(line[: m.end(column)]))
    assert all(len(v) == 1 for v in ends.values()), ends
    assert ends["points"] == {display_width(header[: header.index("Points") + len("Points")])}
    # The data covers every case: over ten games, exactly ten or fewer, a blank points to defend.
    assert any(r["games"] > 10 for r in table) and any(r["games"] <= 10 for r in table)
    assert any(r["points_to_defend"] is None for r in table)
    nasty = next(r for r in table if r["player_id"] == NASTY_ID)
    assert nasty["games"] == 4 and nasty["points_to_defend"] is None
    # Text output drops the bidi override and keeps the rest of the name.
    assert NASTY_NAME.replace("\u202e", "") in out and "\u202e" not in out


def test_eagle_awards_follow_the_table(small, capsys):
    code, out, _ = report(capsys, "eagle", "--month", DEC_2024, "--warehouse", str(small), "--top", "3")
    assert code == 0
    lines = out.splitlines()
    assert sum(EAGLE_ROW.match(line) is not None for line in lines) == 3
    assert any(line.startswith("… ") and "more listed" in line for line in lines)
    awards = pq.read_table(Warehouse(small).output("awards", "eagle", Month.parse(DEC_2024))).to_pylist()
    titles = {a["award"] for a in awards}
    assert {"player_of_the_month", "king_of_the_mountain", "runner_of_the_year"} <= titles
    section = block(out, "Awards, December 2024")
    assert re.split(r"\s{2,}", section[2].strip()) == ["Award", "Name", "Value", "Measure", "Game"]
    king = next(a for a in awards if a["award"] == "king_of_the_mountain")
    top = rankings(small, "eagle", DEC_2024)[0]
    assert king["player_id"] == top["player_id"]
    king_line = next(line for line in section if line.startswith("King of the Mountain 2024"))
    assert printed(top["player_name"]) in king_line and money(king["value"]) in king_line
    for award in awards:
        if award["game_id"]:
            assert any(line.rstrip().endswith(award["game_id"]) for line in section)
    # A month without awards prints no awards section.
    quiet = [
        m
        for m in Warehouse(small).written_months("awards", "eagle")
        if pq.read_metadata(Warehouse(small).output("awards", "eagle", m)).num_rows == 0
    ]
    if quiet:
        code, out, _ = report(capsys, "eagle", "--month", str(quiet[0]), "--warehouse", str(small))
        assert code == 0 and "Awards," not in out


# --- DiWZ: the seed's tables ----------------------------------------------------------------

# Seed 004, as printed (tabs and all); the second table's "0 (1628)" typo is written "0(1628)".
SEED_HEADER = "Name, Vorname\tDiWZalt\tPkt/Rd\tNiv\tWe\tTE\tDiWZneu\tTD"
SEED_TABLE_ONE = """\
Spieler	1	1746-4	6  /6	1575	4.35	1966	1797-5	+51
Spieler 2	1632-1	5  /6	1594	3.33	1855	1684-2	+52
Spieler 3	1585-2	4  /6	1601	2.87	1735	1620-3	+35
Spieler 4	1600-0	2  /6	1599	3.02	1464	1569-1	-31
Spieler 5	1518-1	2  /6	1613	2.24	1487	1511-2	- 7
Spieler 6	1600-0	0  /6	1599	3.02	1198	1507-1	-93
Spieler 7	1512-7	2  /6	1614	2.18	1488	1506-8	- 6"""
SEED_TABLE_TWO = """\
Spieler 1	1628-1	1(1514), 1(1520)
Spieler 2	1520-1	0(1628), 1(1514)
Spieler 3	1514-9	0  /3*	1616	1.09	1224	1476-10	-38
Spieler 4	-	1(1514), 0(1628), 0(1520)
Spieler 5	-	0(1628), 0(1520), ½(1514)
Spieler 6	-	½(1628), 1(1520), 1(1514)
Spieler 7	-	1(1628), 1(1514), 1(1520)"""


def evaluation_lines(out: str) -> list[str]:
    """The framed DiWZ-Auswertung: from its first '=' rule to its last."""
    lines = out.splitlines()
    frames = [i for i, line in enumerate(lines) if line and set(line) == {"="}]
    assert len(frames) == 2, out
    return lines[frames[0] : frames[1] + 1]


def table_rows(framed: list[str]) -> list[str]:
    rules = [i for i, line in enumerate(framed) if line and set(line) == {"-"}]
    assert len(rules) == 2
    return framed[rules[0] + 1 : rules[1]]


def test_diwz_evaluation_reproduces_seed_table_one(seed_warehouse, capsys):
    code, out, err = report(
        capsys, "diwz", "--month", "1998-05", "--game", "deac-0017", "--warehouse", str(seed_warehouse)
    )
    assert code == 0, err
    framed = evaluation_lines(out)
    assert len(framed[0]) >= 67 and framed[1] == "DiWZ-Auswertung 'deac-0017'" and framed[2] == ""
    assert framed[3].split() == SEED_HEADER.split()
    rows = table_rows(framed)
    assert [row.split() for row in rows] == [line.split() for line in SEED_TABLE_ONE.splitlines()]
    # Pkt/Rd is printed as the seed does: the score padded to three, then "/n".
    assert all("  /6" in row for row in rows)
    assert "Ende: 20.5.98" in framed and DIWZ_POOLED_NOTE not in out
    # The month's list shows the new ratings as published.
    listing = block(out, "DiWZ-Liste, Stand 31.05.1998")
    assert re.split(r"\s{2,}", listing[2].strip()) == ["Rang", "Name", "DiWZ", "Letzte Auswertung"]
    assert re.split(r"\s{2,}", listing[4].strip()) == ["1", "Spieler 1", "1797-5", "20.05.1998"]


def test_diwz_evaluation_reproduces_seed_table_two(seed_warehouse, capsys):
    code, out, err = report(
        capsys, "diwz", "--month", "1998-07", "--game", "deac-0023", "--warehouse", str(seed_warehouse)
    )
    assert code == 0, err
    framed = evaluation_lines(out)
    rows = [row.replace("Bsp2 ", "", 1) for row in table_rows(framed)]
    expected = SEED_TABLE_TWO.splitlines()
    assert len(rows) == len(expected)
    for row, seed in zip(rows, expected):
        name, old, rest = seed.split("\t", 2)
        if "(" in rest:  # waiting or unrated: the results, in whatever order the seed lists them
            assert row.split()[:3] == [*name.split(), old]
            assert sorted(re.findall(r"[½\d]+\(\d+\)", row)) == sorted(re.findall(r"[½\d]+\(\d+\)", rest))
        else:
            assert row.split() == seed.split()
    assert "0  /3*" in rows[2]
    note = framed.index(DIWZ_POOLED_NOTE)
    assert framed[note - 1].startswith("---") and "Ende: 6.7.98" in framed[note:]


def test_diwz_results_rebuilt_for_every_game_that_waits(small):
    """The rebuilt pairwise results add up to the stored P and n for every waiting or unrated row."""
    history = duckdb.sql(
        f"SELECT source_id, list(struct_pack(player_id, rating_before, rating_after, score, opponents)) AS rows "
        f"FROM read_parquet('{small}/history/diwz/*/*/history.parquet', hive_partitioning = false) "
        "GROUP BY source_id HAVING bool_or(rating_after IS NULL) ORDER BY source_id"
    ).fetchall()
    assert len(history) >= 5
    for game_id, rows in history:
        results = game_results(Warehouse(small), game_id, rows)
        assert results is not None, game_id
        for row in rows:
            own = results[row["player_id"]]
            if row["rating_after"] is None:
                assert (len(own), sum(s for s, _ in own)) == (row["opponents"], row["score"])


def test_diwz_list(small, capsys):
    code, out, _ = report(capsys, "diwz", "--month", DEC_2024, "--warehouse", str(small))
    assert code == 0
    table = rankings(small, "diwz", DEC_2024)
    lines = block(out, "DiWZ-Liste, Stand 31.12.2024")
    for line, row in zip(lines[4:], table):
        cells = re.split(r"\s{2,}", line.strip())
        last = row["last_evaluated"]
        assert cells[:3] == [str(row["rank"]), printed(row["player_name"]), row["display"]]
        assert cells[3:] == ([f"{last:%d.%m.%Y}"] if last else [])


# --- Dip Pouch ------------------------------------------------------------------------------


def busiest_dip_pouch_player(warehouse: Path) -> str:
    return duckdb.sql(
        f"SELECT player_id FROM read_parquet('{warehouse}/history/dip_pouch/*/*/history.parquet') "
        "GROUP BY player_id ORDER BY count(*) DESC, player_id LIMIT 1"
    ).fetchall()[0][0]


def test_dip_pouch_ranking_and_player_history(small, capsys):
    player = busiest_dip_pouch_player(small)
    code, out, err = report(capsys, "dip_pouch", "--month", DEC_2024, "--player", player, "--warehouse", str(small))
    assert code == 0, err
    ranking = block(out, "Dip Pouch Tournament Rating, international ranking, December 2024")
    assert re.split(r"\s{2,}", ranking[3].strip()) == ["Rank", "Name", "Country", "Rating", "Events", "National rank"]
    first = rankings(small, "dip_pouch", DEC_2024)[0]
    # A player without a known country has no national rank: both cells print empty.
    cells = [
        "1",
        printed(first["player_name"]),
        first["country"] or "",
        money(first["rating"]),
        str(first["events"]),
        "" if first["national_rank"] is None else str(first["national_rank"]),
    ]
    assert re.split(r"\s{2,}", ranking[5].strip()) == [cell for cell in cells if cell]

    history = (
        duckdb.sql(
            f"SELECT h.*, e.name FROM read_parquet('{small}/history/dip_pouch/*/*/history.parquet', hive_partitioning = false) h "
            f"JOIN read_parquet('{small}/validated/events.parquet') e ON e.event_id = h.source_id "
            f"WHERE player_id = '{player}' ORDER BY source_date, source_id"
        )
        .to_arrow_table()
        .to_pylist()
    )
    assert len(history) >= 2
    section = block(out, "Dip Pouch history of ")
    assert f"({player})" in section[0]
    assert re.split(r"\s{2,}", section[3].strip()) == ["Event", "Date", "Place", "Percentile", "TV", "Rating"]
    body = section[5 : 5 + len(history)]
    for line, row in zip(body, history):
        after = money(row["rating_after"]) if row["rating_after"] is not None else None
        moved = f"{money(row['rating_before'])} → {after}" if after else f"{money(row['rating_before'])} (unchanged)"
        assert re.split(r"\s{2,}", line.strip()) == [
            row["name"],
            row["source_date"].isoformat(),
            f"{row['placement']}/{row['num_players']}",
            money(row["percentile"]),
            money(row["tournament_value"]),
            moved,
        ]
    # Months before the player's first event have nothing to show.
    first_month = Month.of(history[0]["source_date"])
    months = Warehouse(small).written_months("rankings", "dip_pouch")
    if months[0] < first_month:
        code, _, err = report(
            capsys, "dip_pouch", "--month", str(months[0]), "--player", player, "--warehouse", str(small)
        )
        assert code == 2 and "no Dip Pouch event up to" in err


# --- club -----------------------------------------------------------------------------------


def club_fraction(value) -> str:
    return "-" if value is None else money(value).removeprefix("0")


def test_club_columns(small, capsys):
    code, out, _ = report(capsys, "club", "--month", "2024-01", "--warehouse", str(small))
    assert code == 0
    table = rankings(small, "club", "2024-01")
    lines = block(out, "Club rankings 2024, January 2024")
    assert re.split(r"\s{2,}", lines[3].strip()) == [
        "Rank",
        "Name",
        "W-L-D",
        "P",
        "W%",
        "S",
        "Base",
        "Legacy",
        "Rating",
    ]
    for line, row in zip(lines[5 : 5 + len(table)], table):
        assert re.split(r"\s{2,}", line.strip()) == [
            str(row["rank"]),
            printed(row["player_name"]),
            f"{row['wins']}-{row['losses']}-{row['draws']}",
            club_fraction(row["win_points"]),
            club_fraction(row["win_pct"]),
            club_fraction(row["schedule_strength"]),
            money(row["base_rating"]),
            money(row["legacy"]),
            money(row["rating"]),
        ]
    # January holds both this year's players and players listed on last year's legacy alone.
    assert any(r["win_pct"] is None for r in table) and any(r["win_pct"] is not None for r in table)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["elo"], "unknown system 'elo'; choose from dip_pouch, club, eagle, diwz"),
        (["eagle", "--month", "1999-01"], "no eagle snapshot for 1999-01; months with snapshots: 2023-01 … 2024-12"),
        (["dip_pouch", "--player", "nobody"], "unknown player 'nobody'"),
        (["diwz", "--game", "no-such-game"], "unknown game 'no-such-game'"),
        (["eagle", "--game", "g0000001"], "--game shows a DiWZ evaluation"),
        (["club", "--player", "p00001"], "--player shows a Dip Pouch history"),
        (["eagle", "--month", "2024-13"], "not a month"),
        (["eagle", "--top", "0"], "at least 1"),
    ],
)
def test_errors_exit_2_with_a_message(small, capsys, argv, message):
    code, out, err = report(capsys, *argv, "--warehouse", str(small))
    assert code == 2 and message in err and "Traceback" not in out + err and out == ""


def test_missing_warehouse_and_unrated_game(small, tmp_path, capsys):
    code, _, err = report(capsys, "eagle", "--warehouse", str(tmp_path / "nothing"))
    assert code == 2 and "no warehouse at" in err
    (tmp_path / "empty").mkdir()
    code, _, err = report(capsys, "eagle", "--warehouse", str(tmp_path / "empty"))
    assert code == 2 and "no eagle snapshots" in err
    unrated = duckdb.sql(
        f"SELECT game_id FROM read_parquet('{small}/validated/games/*.parquet') WHERE NOT rated LIMIT 1"
    ).fetchall()
    if unrated:
        code, _, err = report(capsys, "diwz", "--game", unrated[0][0], "--warehouse", str(small))
        assert code == 2 and "not rated" in err


def test_default_month_is_the_latest(small, capsys):
    code, out, _ = report(capsys, "club", "--warehouse", str(small), "--top", "1")
    assert code == 0 and out.startswith("Club rankings 2024, December 2024")


def test_closed_pipe_is_not_an_error(small, monkeypatch):
    """`diprank report eagle | head` stops quietly once the reader has gone."""

    class ClosedPipe:
        encoding = "utf-8"

        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    parser = argparse.ArgumentParser(prog="diprank")
    add_report_parser(parser.add_subparsers(dest="command", required=True))
    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert command_report(parser.parse_args(["report", "eagle", "--warehouse", str(small)]), SETTINGS) == 0


def test_cli_wiring(small):
    """Once cli.py wires `report`, the real entry point gives the same output and exit codes."""
    from pipeline.cli.main import build_parser

    commands = next(a.choices for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    if "report" not in commands:
        pytest.skip("pipeline/cli/main.py does not wire the report subcommand yet")
    code, out, err = run_cli("report", "club", "--warehouse", str(small), "--top", "2")
    assert code == 0 and out.startswith("Club rankings 2024"), err
    code, _, err = run_cli("report", "elo", "--warehouse", str(small))
    assert code == 2 and "unknown system" in err


# --- the renderers on a report built by hand -------------------------------------------------


def hand_built_report() -> Report:
    """A ranking with a bidi override, a wide name and a short row, then an empty framed evaluation."""
    ranking = Section(
        "ranking",
        "Demo table, December 2024",
        [Column("Rank", "right"), Column("Name", css="name"), Column("Points", "right")],
        [
            Row(["1", "\u202eAnn", "12.50"], "p1"),
            Row(["2", "李小龍", "3.00"], "p2"),
            Row(["10", "waiting: 1(1514), ½(1628)"], "p3"),
        ],
        before=["As of 2024-12-31."],
        after=["… 4 more listed"],
    )
    evaluation = Section(
        "evaluation",
        "DiWZ-Auswertung 'g1'",
        [Column("Name, Vorname"), Column("TD", "right")],
        [],
        after=["", "Ende: 3.12.24", ""],
        framed=True,
        name_column=0,
    )
    return Report("eagle", Month(2024, 12), ranking.title, "Demo table", [ranking, evaluation])


def test_text_of_a_hand_built_report():
    frame, rule = "=" * 67, "-" * 67
    assert render_text(hand_built_report()).splitlines() == [
        "Demo table, December 2024",
        "As of 2024-12-31.",
        "",
        "Rank  Name    Points",
        "-" * 31,
        "   1  Ann      12.50",  # the override is dropped; the wide name takes six columns
        "   2  李小龍    3.00",
        "  10  waiting: 1(1514), ½(1628)",  # the short row's last cell runs on, unpadded
        "-" * 31,
        "… 4 more listed",
        "",
        frame,
        "DiWZ-Auswertung 'g1'",
        "",
        "Name, Vorname  TD",
        rule,
        "  (no players listed)",
        rule,
        "",
        "Ende: 3.12.24",
        "",
        frame,
    ]


def test_page_without_a_chart(small):
    page = render_html(hand_built_report())
    assert "<svg" not in page and "<figure" not in page
    assert '<td class="l span" colspan="2"><bdi>waiting: 1(1514), ½(1628)</bdi></td>' in page
    assert "<bdi>\u202eAnn</bdi>" in page  # HTML keeps the override and isolates the name instead
    # Text output does not need the chart, and the tables do not depend on it.
    plain = build_report(Warehouse(small), "eagle", DEC_2024, with_chart=False)
    charted = build_report(Warehouse(small), "eagle", DEC_2024)
    assert plain.chart is None and charted.chart is not None and len(charted.chart.players) == 10
    assert render_text(plain) == render_text(charted)


# --- HTML -----------------------------------------------------------------------------------


class PageParser(HTMLParser):
    """Collects what the tests look at: tags, ranking rows, chart paths, legend names, text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.ranking_rows, self.paths, self.text = [], [], [], []
        self._in_ranking = False
        self.attributes = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.attributes += [(tag, k, v) for k, v in attrs.items()]
        if tag == "table":
            self._in_ranking = attrs.get("class") == "ranking"
        if tag == "tr" and self._in_ranking and "data-player" in attrs:
            self.ranking_rows.append(attrs["data-player"])
        if tag == "path" and attrs.get("class") == "series":
            self.paths.append(attrs["data-player"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_ranking = False

    def handle_data(self, data):
        self.text.append(data)


def test_html_page_is_self_contained_and_escaped(small, capsys):
    code, out, _ = report(capsys, "eagle", "--month", DEC_2024, "--warehouse", str(small), "--html")
    path = Warehouse(small).root / "reports" / "eagle" / f"{DEC_2024}.html"
    assert code == 0 and out.rstrip().endswith(f"wrote {path}") and path.exists()
    page = path.read_text(encoding="utf-8")
    parser = PageParser()
    parser.feed(page)
    table = rankings(small, "eagle", DEC_2024)
    assert parser.ranking_rows == [r["player_id"] for r in table]
    assert parser.paths == [r["player_id"] for r in table[:10]]
    assert NASTY_ID in parser.paths, "the hostile name must be in the chart's top 10"
    # Nothing is loaded from anywhere and no markup comes from the data.
    assert "script" not in parser.tags and not {"link", "img", "iframe", "object"} & set(parser.tags)
    assert not [a for a in parser.attributes if a[1] in ("src", "href") or a[1].startswith("on")]
    assert "<script>" not in page and html.escape(NASTY_NAME) in page
    assert NASTY_NAME in "".join(parser.text)
    assert "Content-Security-Policy" in page
    # Same files, same page.
    assert render_html(build_report(Warehouse(small), "eagle", DEC_2024)) == page


def test_html_report_with_an_evaluation_and_a_history(seed_warehouse, small, tmp_path, capsys):
    target = tmp_path / "pages" / "seed.html"
    code, out, _ = report(
        capsys,
        "diwz",
        "--month",
        "1998-07",
        "--game",
        "deac-0023",
        "--warehouse",
        str(seed_warehouse),
        "--html",
        str(target),
    )
    assert code == 0 and target.exists() and out.rstrip().endswith(f"wrote {target}")
    page = target.read_text(encoding="utf-8")
    assert 'class="pooled"' in page and html.escape(DIWZ_POOLED_NOTE) in page and 'colspan="6"' in page
    player = busiest_dip_pouch_player(small)
    code, _, _ = report(
        capsys, "dip_pouch", "--month", DEC_2024, "--player", player, "--warehouse", str(small), "--html", str(tmp_path)
    )
    assert code == 0 and 'id="player-history"' in (tmp_path / f"dip_pouch-{DEC_2024}.html").read_text(encoding="utf-8")


def test_chart_path_breaks_where_a_player_was_not_listed():
    months = [Month(2024, 1), Month(2024, 2), Month(2024, 4), Month(2024, 6), Month(2024, 7)]
    d = series_path(list(zip(months, [10.0, 12.0, 11.0, 9.0, 8.0])), lambda m: float(m.month), lambda r: r)
    runs = re.split(r"(?=M)", d.replace(" ", ""))[1:]
    assert [run.count("L") for run in runs] == [1, 3, 1]  # a line, a diamond for April alone, a line
    assert runs[1].endswith("Z")


def test_html_page_in_headless_chromium(small, tmp_path, capsys):
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium binary (CI installs it with: apt-get install -y chromium)")
    target = tmp_path / "eagle.html"
    code, _, _ = report(capsys, "eagle", "--month", DEC_2024, "--warehouse", str(small), "--html", str(target))
    assert code == 0
    done = headless_dom(browser, target, tmp_path / "profile")
    dom = done.stdout
    assert done.returncode == 0 and "</html>" in dom, done.stderr[-2000:]
    parser = PageParser()
    parser.feed(dom)
    table = rankings(small, "eagle", DEC_2024)
    assert parser.ranking_rows == [r["player_id"] for r in table]
    assert parser.paths == [r["player_id"] for r in table[:10]]
    assert len(re.findall(r'<path class="series"[^>]* d="M[^"]+"', dom)) == 10
    assert "<svg" in dom and "script" not in parser.tags
    # The browser read the hostile name as text: escaped in the DOM, whole in its text.
    assert "&lt;script&gt;" in dom and NASTY_NAME in "".join(parser.text)
    first = table[0]
    assert f'data-player="{first["player_id"]}"' in dom and html.escape(first["player_name"], quote=False) in dom


# --- docs/DASHBOARDS.md: every query runs ----------------------------------------------------

DOCS = REPO / "docs" / "DASHBOARDS.md"
QUERIES = ("latest-table", "player-history", "player-ranks", "year-end", "national-ranking", "eagle-awards")
QUALITY_QUERIES = ("quality-trailing", "quality-trailing-files")  # run by tests/test_report_quality.py
GHOST_QUERIES = ("ghost-categories",)  # run by tests/test_ghost_pipeline.py
RESULT_NAMES = {
    "latest-table": "latest_table",
    "player-history": "player_history",
    "player-ranks": "player_ranks",
    "year-end": "year_end",
    "national-ranking": "national_ranking",
    "eagle-awards": "eagle_awards",
}


def doc_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)


def block_name(code: str) -> str:
    first = code.strip().splitlines()[0]
    return re.sub(r"^(--|#)\s*(query:\s*)?", "", first).strip()


@pytest.fixture(scope="module")
def doc_values(small):
    """The docs' placeholders (sample data) and their stand-ins in the small warehouse."""
    player = busiest_dip_pouch_player(small)
    country = duckdb.sql(
        f"SELECT country FROM read_parquet('{small}/rankings/dip_pouch/year=2024/month=12/rankings.parquet') "
        "WHERE country IS NOT NULL GROUP BY country ORDER BY count(*) DESC, country LIMIT 1"
    ).fetchall()[0][0]
    return {"2020": "2024", "w0101": player, "Germany": country, "data/warehouse": str(small)}


def localise(code: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():  # the year first: a temporary path may hold digits
        code = code.replace(placeholder, value)
    return code


def column(result, name: str) -> list:
    """One column of a DuckDB (Arrow), pandas or polars result as a Python list."""
    if isinstance(result, pa.Table):
        return result.column(name).to_pylist()
    if hasattr(result, "to_pandas") and hasattr(result, "get_column"):  # polars
        return result.get_column(name).to_list()
    return result[name].tolist()


def check_query(name: str, result, small: Path, values: dict[str, str]) -> None:
    """What each documented query must return, worked out from the files directly."""
    store = Warehouse(small)
    if name == "latest-table":
        last = store.written_months("rankings", "eagle")[-1]
        expected = pq.read_table(store.rankings("eagle", last)).to_pylist()
        assert column(result, "player_id") == [r["player_id"] for r in expected]
        assert column(result, "points") == [r["points"] for r in expected]
    elif name == "player-history":
        rows = duckdb.sql(
            f"SELECT source_id FROM read_parquet('{small}/history/dip_pouch/*/*/history.parquet') "
            f"WHERE player_id = '{values['w0101']}' ORDER BY source_date, source_id"
        ).fetchall()
        assert column(result, "source_id") == [r[0] for r in rows] and len(rows) >= 2
        events = {r["event_id"]: r["name"] for r in pq.read_table(store.validated("events")).to_pylist()}
        assert column(result, "event") == [events[r[0]] for r in rows]
    elif name == "player-ranks":
        listed = [
            m
            for m in store.written_months("rankings", "dip_pouch")
            if values["w0101"]
            in pq.read_table(store.rankings("dip_pouch", m), columns=["player_id"]).column("player_id").to_pylist()
        ]
        assert [str(Month.of(d)) for d in column(result, "as_of")] == [str(m) for m in listed]
    elif name == "year-end":
        expected = []
        for month in store.written_months("rankings", "club"):
            if month.month == 12:
                expected += [
                    (month.year, r["rank"], r["player_id"])
                    for r in pq.read_table(store.rankings("club", month)).to_pylist()
                    if r["rank"] <= 10
                ]
        got = list(zip(column(result, "year"), column(result, "rank"), column(result, "player_id")))
        assert [(int(y), int(r), p) for y, r, p in got] == expected and {y for y, _, _ in expected} == {2023, 2024}
    elif name == "national-ranking":
        last = store.written_months("rankings", "dip_pouch")[-1]
        expected = sorted(
            (r["national_rank"], r["player_id"])
            for r in pq.read_table(store.rankings("dip_pouch", last)).to_pylist()
            if r["country"] == values["Germany"]
        )
        assert list(zip(column(result, "national_rank"), column(result, "player_id"))) == expected
        assert len(expected) >= 2
    elif name == "eagle-awards":
        expected = []
        for month in store.written_months("awards", "eagle"):
            if month.year == 2024:
                listed = {
                    r["player_id"]: r["player_name"] for r in pq.read_table(store.rankings("eagle", month)).to_pylist()
                }
                expected += [
                    (month.month, a["award"], a["player_id"], listed.get(a["player_id"], a["player_id"]))
                    for a in pq.read_table(store.output("awards", "eagle", month)).to_pylist()
                ]
        got = zip(
            column(result, "month"), column(result, "award"), column(result, "player_id"), column(result, "player_name")
        )
        assert [(int(m), a, p, n) for m, a, p, n in got] == sorted(expected) and len(expected) > 12
    else:
        raise AssertionError(f"no check for query {name!r}")


def test_docs_duckdb_queries(small, doc_values):
    blocks = {block_name(code): code for code in doc_blocks("sql")}
    assert set(blocks) == set(QUERIES) | set(QUALITY_QUERIES) | set(GHOST_QUERIES)
    for name in QUERIES:
        result = duckdb.connect().sql(localise(blocks[name], doc_values)).to_arrow_table()
        check_query(name, result, small, doc_values)


def run_python_blocks(small, doc_values, engine: str) -> None:
    # Each engine's blocks are the ones under its level-2 heading.
    text = DOCS.read_text(encoding="utf-8")
    section = re.search(rf"^## {engine}\b.*?(?=^## )", text, flags=re.S | re.M | re.I).group(0)
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    names = [block_name(code) for code in blocks]
    assert names == ["setup", *QUERIES], names
    namespace: dict = {}
    for name, code in zip(names, blocks):
        exec(compile(localise(code, doc_values), f"DASHBOARDS.md:{engine}:{name}", "exec"), namespace)
        if name != "setup":
            check_query(name, namespace[RESULT_NAMES[name]], small, doc_values)


def test_docs_pandas_queries(small, doc_values):
    run_python_blocks(small, doc_values, "pandas")


def test_docs_polars_queries(small, doc_values):
    pytest.importorskip("polars")
    run_python_blocks(small, doc_values, "polars")
