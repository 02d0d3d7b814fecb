"""`diprank report quality`: the month's predictive quality as text, the chart of trailing accuracy
on the quality page and on every system's page (also in a real browser), and the quality queries
of docs/DASHBOARDS.md, against small warehouses of hand-written quality tables."""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli.report import add_report_parser, command_report
from pipeline.core.months import Month
from pipeline.rating.quality import QUALITY_COLUMNS
from pipeline.reports.html import quality_chart_html, render_html
from pipeline.reports.model import QualityChart, Report, build_report
from pipeline.settings import Settings
from pipeline.warehouse.store import Warehouse
from tests.support import REPO, chromium, headless_dom, run_cli

SETTINGS = Settings.from_env({})
SYSTEMS = ("club", "dip_pouch", "diwz", "eagle")
QUALITY_SCHEMA = QUALITY_COLUMNS  # the layout the quality asset writes
# month -> system -> (games, pairs, concordant, trailing pairs, trailing concordant,
# (common games, common pairs, common concordant) or None for dip_pouch). Dip Pouch's range starts
# in February and it has no event in March; the club has no game in January.
FIGURES = {
    "2024-01": {
        "club": (0, 0, 0.0, 0, 0.0, (0, 0, 0.0)),
        "diwz": (3, 20, 13.0, 20, 13.0, (2, 12, 7.5)),
        "eagle": (4, 40, 25.0, 40, 25.0, (2, 12, 8.0)),
    },
    "2024-02": {
        "club": (5, 50, 31.0, 50, 31.0, (2, 10, 6.0)),
        "dip_pouch": (2, 300, 190.5, 300, 190.5, None),
        "diwz": (4, 30, 21.0, 50, 34.0, (2, 10, 7.0)),
        "eagle": (4, 30, 18.0, 70, 43.0, (2, 10, 5.5)),
    },
    "2024-03": {
        "club": (6, 60, 40.0, 110, 71.0, (3, 18, 12.0)),
        "dip_pouch": (0, 0, 0.0, 300, 190.5, None),
        "diwz": (5, 40, 30.0, 90, 64.0, (3, 18, 13.0)),
        "eagle": (5, 40, 26.0, 110, 69.0, (3, 18, 11.0)),
    },
    "2024-04": {
        "club": (4, 1234, 800.0, 1344, 871.0, (1, 6, 3.0)),
        "dip_pouch": (1, 45, 30.0, 345, 220.5, None),
        "diwz": (3, 25, 14.5, 115, 78.5, (1, 6, 4.5)),
        "eagle": (3, 25, 11.0, 135, 80.0, (1, 6, 2.0)),
    },
}
LAST = "2024-04"


def ratio(concordant: float, pairs: int | None) -> float | None:
    """An accuracy as the quality table stores it: null without a pair."""
    return None if not pairs else concordant / pairs


def quality_rows(month: str) -> list[dict]:
    """The month's quality table, one row per system, sorted by system."""
    rows = []
    for system, (games, pairs, concordant, t_pairs, t_concordant, common) in sorted(FIGURES[month].items()):
        c_games, c_pairs, c_concordant = common if common is not None else (None, None, 0.0)
        rows.append(
            {
                "system": system,
                "as_of": Month.parse(month).last_day,
                "games": games,
                "pairs": pairs,
                "concordant": concordant,
                "pairwise_accuracy": ratio(concordant, pairs),
                "trailing_pairs": t_pairs,
                "trailing_concordant": t_concordant,
                "trailing_accuracy": ratio(t_concordant, t_pairs),
                "common_games": c_games,
                "common_pairs": c_pairs,
                "common_accuracy": ratio(c_concordant, c_pairs),
            }
        )
    return rows


def write_quality(root: Path) -> Path:
    """Every month of FIGURES as quality/year=YYYY/month=MM/quality.parquet under root."""
    for month in FIGURES:
        m = Month.parse(month)
        path = root / "quality" / f"year={m.year:04d}" / f"month={m.month:02d}" / "quality.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(quality_rows(month), schema=QUALITY_SCHEMA), path)
    return root


def write_eagle_table(root: Path, month: str) -> None:
    """A one-player Eagle table for the month, enough for `diprank report eagle`."""
    m = Month.parse(month)
    row = {
        "system": "eagle",
        "as_of": m.last_day,
        "rank": 1,
        "player_id": "p1",
        "player_name": "Ann",
        "rating": 3.5,
        "points": 3.5,
        "games": 2,
        "last_game_date": dt.date(m.year, m.month, 10),
        "points_to_defend": None,
        "new_eagles": 2.0,
    }
    path = root / "rankings" / "eagle" / f"year={m.year:04d}" / f"month={m.month:02d}" / "rankings.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([row]), path)


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return write_quality(tmp_path / "warehouse")


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


# --- text -----------------------------------------------------------------------------------


def test_latest_month_by_default(warehouse, capsys):
    code, out, err = report(capsys, "quality", "--warehouse", str(warehouse))
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "Predictive quality, April 2024",
        "Pairwise accuracy of each system's table of 2024-03-31 on the results it rated in April 2024; "
        "trailing: the 12 months up to 2024-04-30.",
        "Common: the games of the month that club, eagle and diwz all rated.",
        "",
        "System     Games  Pairs  Accuracy  Trailing pairs  Trailing accuracy  Common games  Common accuracy",
        "-" * 99,
        "club           4   1234     0.648            1344              0.648             1            0.500",
        "dip_pouch      1     45     0.667             345              0.639             -                -",
        "diwz           3     25     0.580             115              0.683             1            0.750",
        "eagle          3     25     0.440             135              0.593             1            0.333",
        "-" * 99,
        "0.5 is a coin's accuracy; 1.0 would predict every pair.",
    ]


def test_month_selection_nulls_and_range(warehouse, capsys):
    code, out, _ = report(capsys, "quality", "--month", "2024-01", "--warehouse", str(warehouse))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Predictive quality, January 2024"
    rules = [i for i, line in enumerate(lines) if set(line) == {"-"}]
    body = lines[rules[0] + 1 : rules[1]]
    # No Dip Pouch row before its range; the club's month without a game has nulls, not zeros.
    assert [line.split() for line in body] == [
        ["club", "0", "0", "-", "0", "-", "0", "-"],
        ["diwz", "3", "20", "0.650", "20", "0.650", "2", "0.625"],
        ["eagle", "4", "40", "0.625", "40", "0.625", "2", "0.667"],
    ]
    code, out, _ = report(capsys, "quality", "--month", "2024-03", "--warehouse", str(warehouse))
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in ([s] for s in SYSTEMS)}
    assert rows["dip_pouch"] == ["dip_pouch", "0", "0", "-", "300", "0.635", "-", "-"]
    assert rows["diwz"] == ["diwz", "5", "40", "0.750", "90", "0.711", "3", "0.722"]
    assert rows["club"] == ["club", "6", "60", "0.667", "110", "0.645", "3", "0.667"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--month", "2023-12"], "no quality table for 2023-12; months with quality tables: 2024-01 … 2024-04"),
        (["--player", "p1"], "--player shows a Dip Pouch history: use it with dip_pouch, not quality"),
        (["--game", "g1"], "--game shows a DiWZ evaluation: use it with diwz, not quality"),
    ],
)
def test_errors_exit_2_with_one_line(warehouse, capsys, argv, message):
    code, out, err = report(capsys, "quality", *argv, "--warehouse", str(warehouse))
    assert code == 2 and out == "" and err == f"diprank: {message}\n"


def test_no_quality_tables(tmp_path, capsys):
    write_eagle_table(tmp_path / "warehouse", LAST)
    code, out, err = report(capsys, "quality", "--warehouse", str(tmp_path / "warehouse"))
    assert code == 2 and out == ""
    assert err == f"diprank: no quality tables in {tmp_path / 'warehouse'} (run `diprank run` first)\n"
    code, _, err = report(capsys, "quality", "--warehouse", str(tmp_path / "nothing"))
    assert code == 2 and err.startswith("diprank: no warehouse at") and err.count("\n") == 1


def test_cli_wiring(warehouse):
    code, out, err = run_cli("report", "quality", "--warehouse", str(warehouse), "--month", "2024-02")
    assert code == 0 and out.startswith("Predictive quality, February 2024"), err
    code, _, err = run_cli("report", "quality", "--warehouse", str(warehouse), "--month", "2025-01")
    assert code == 2 and err.startswith("diprank: no quality table for 2025-01") and err.count("\n") == 1


# --- HTML -----------------------------------------------------------------------------------


class ChartParser(HTMLParser):
    """The quality figure's SVGs, polylines and legend entries, and the page's tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.svgs: list[str] = []
        self.polylines: list[dict] = []
        self.legend: dict[str, str] = {}
        self._figure = False
        self._item: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "figure":
            self._figure = attrs.get("class") == "quality-chart"
        if self._figure and tag == "svg":
            self.svgs.append(attrs.get("class", ""))
        if self._figure and tag == "polyline":
            self.polylines.append(attrs)
        if self._figure and tag == "li":
            self._item = attrs["data-system"]
            self.legend[self._item] = ""

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = False
        if tag == "li":
            self._item = None

    def handle_data(self, data):
        if self._item is not None:
            self.legend[self._item] += data


def parsed(page: str) -> ChartParser:
    parser = ChartParser()
    parser.feed(page)
    return parser


def test_quality_page_charts_every_system(warehouse, capsys):
    code, out, _ = report(capsys, "quality", "--warehouse", str(warehouse), "--html")
    path = warehouse / "reports" / "quality" / f"{LAST}.html"
    assert code == 0 and out.rstrip().endswith(f"wrote {path}")
    page = path.read_text(encoding="utf-8")
    chart = parsed(page)
    assert chart.svgs == ["chart quality"]
    assert [p["data-system"] for p in chart.polylines] == list(SYSTEMS)
    points = {p["data-system"]: p["points"].split() for p in chart.polylines}
    # One point per month with a trailing accuracy: the club's January has none, Dip Pouch starts in February.
    assert {system: len(p) for system, p in points.items()} == {"club": 3, "dip_pouch": 3, "diwz": 4, "eagle": 4}
    assert chart.legend == {
        "club": "club 0.648",
        "dip_pouch": "dip_pouch 0.639",
        "diwz": "diwz 0.683",
        "eagle": "eagle 0.593",
    }
    assert 'class="reference"' in page and "a coin: 0.5" in page
    assert "Trailing 12-month pairwise accuracy" in page
    for label in ("2024-01", "2024-04", "0.4", "1.0"):  # months along the bottom, accuracy up the side
        assert f">{label}</text>" in page
    # Self-contained: nothing to load, no scripts.
    assert "Content-Security-Policy" in page and "script" not in chart.tags
    assert not re.search(r"\b(src|href)=", page)
    assert render_html(build_report(Warehouse(warehouse), "quality", LAST)) == page


def test_chart_stops_at_the_month(warehouse):
    page = render_html(build_report(Warehouse(warehouse), "quality", "2024-02"))
    chart = parsed(page)
    assert {p["data-system"]: len(p["points"].split()) for p in chart.polylines} == {
        "club": 1 * 2,  # one month alone: a dot, the same point twice
        "dip_pouch": 2,
        "diwz": 2,
        "eagle": 2,
    }
    club = next(p for p in chart.polylines if p["data-system"] == "club")["points"].split()
    assert club[0] == club[1]


def test_axis_follows_the_data_below_its_usual_range():
    series = {"club": [(Month(2024, 1), 0.31), (Month(2024, 2), 0.55)], "eagle": []}
    report_ = Report("quality", Month(2024, 2), "Predictive quality", "Predictive quality", [])
    figure = quality_chart_html(report_, QualityChart(["club", "eagle"], series))
    assert ">0.3</text>" in figure and ">0.2</text>" not in figure and ">1.0</text>" in figure
    assert '<li data-system="eagle">' in figure and "eagle -</li>" in figure
    empty = quality_chart_html(report_, QualityChart(["club"], {"club": []}))
    assert "<svg" not in empty and "No system has rated a pair yet." in empty


def test_system_pages_carry_the_chart_once_quality_exists(tmp_path, capsys):
    bare = tmp_path / "bare"
    write_eagle_table(bare, LAST)
    code, _, _ = report(capsys, "eagle", "--warehouse", str(bare), "--html", str(tmp_path / "bare.html"))
    page = (tmp_path / "bare.html").read_text(encoding="utf-8")
    assert code == 0 and "quality-chart" not in page and page.count("<svg") == 1
    rated = write_quality(tmp_path / "rated")
    write_eagle_table(rated, "2024-03")
    code, _, _ = report(capsys, "eagle", "--warehouse", str(rated), "--html", str(tmp_path / "rated.html"))
    page = (tmp_path / "rated.html").read_text(encoding="utf-8")
    assert code == 0 and page.count("<svg") == 2
    assert page.index('id="ranking"') < page.index('id="quality-chart"')  # after the tables
    chart = parsed(page)
    assert [p["data-system"] for p in chart.polylines] == list(SYSTEMS)
    assert chart.legend["eagle"] == "eagle 0.627"  # as of the page's month, March
    # Text output reads no quality table.
    assert build_report(Warehouse(rated), "eagle", with_chart=False).quality is None


# --- in a real browser ----------------------------------------------------------------------

# Appended to a copy of the page (whose policy forbids scripts): the layout the browser gave the chart.
MEASURE = """<script>
const svg = document.querySelector("#quality-chart svg");
const box = svg.getBoundingClientRect();
const found = {svg: [box.width, box.height], lines: {}, legend: {}};
for (const line of svg.querySelectorAll("polyline.quality")) {
  const b = line.getBBox();
  found.lines[line.dataset.system] = [b.width, b.height, line.getTotalLength()];
}
for (const item of document.querySelectorAll("#quality-chart ol.legend li")) {
  const r = item.getBoundingClientRect();
  found.legend[item.dataset.system] = [item.textContent, r.width, r.height];
}
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify(found);
document.body.append(out);
</script>"""


def test_quality_chart_in_headless_chromium(warehouse, tmp_path, capsys):
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium binary (CI installs it with: apt-get install -y chromium)")
    target = tmp_path / "quality.html"
    code, _, _ = report(capsys, "quality", "--warehouse", str(warehouse), "--html", str(target))
    assert code == 0
    done = headless_dom(browser, target, tmp_path / "profile")
    dom = done.stdout
    assert done.returncode == 0 and "</html>" in dom, done.stderr[-2000:]
    chart = parsed(dom)
    assert chart.svgs == ["chart quality"] and [p["data-system"] for p in chart.polylines] == list(SYSTEMS)
    assert set(chart.legend) == set(SYSTEMS) and all(chart.legend[s].startswith(s) for s in SYSTEMS)

    page = target.read_text(encoding="utf-8")
    measured_page = tmp_path / "measured.html"
    measured_page.write_text(
        re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page).replace("</body>", MEASURE + "</body>"),
        encoding="utf-8",
    )
    done = headless_dom(browser, measured_page, tmp_path / "profile-measured")
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, flags=re.S)
    assert done.returncode == 0 and found, done.stderr[-2000:]
    layout = json.loads(html.unescape(found.group(1)))
    width, height = layout["svg"]
    assert width > 100 and height > 50
    assert set(layout["lines"]) == set(SYSTEMS)
    for system, (line_width, _, length) in layout["lines"].items():
        assert line_width > 0 and length > 0, system
    assert set(layout["legend"]) == set(SYSTEMS)
    for system, (text, item_width, item_height) in layout["legend"].items():
        assert text.startswith(system) and item_width > 0 and item_height > 0, system


# --- docs/DASHBOARDS.md: the quality queries run ---------------------------------------------

DOCS = REPO / "docs" / "DASHBOARDS.md"
QUERIES = ("quality-trailing", "quality-trailing-files")


def quality_blocks() -> dict[str, str]:
    """The documented SQL blocks about quality, by the name on their first line."""
    blocks = re.findall(r"```sql\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    named = {re.sub(r"^--\s*(query:\s*)?", "", code.strip().splitlines()[0]).strip(): code for code in blocks}
    return {name: code for name, code in named.items() if name.startswith("quality")}


def test_docs_quality_queries(warehouse):
    blocks = quality_blocks()
    assert set(blocks) == set(QUERIES)
    expected = sorted(
        (Month.parse(month).last_day, row["system"], row["trailing_accuracy"], row["trailing_pairs"])
        for month in FIGURES
        for row in quality_rows(month)
    )
    con = duckdb.connect()
    # The view diprank.duckdb holds: every month's file, with the folders as hive partitions.
    pattern = f"{warehouse.resolve()}/quality/year=*/month=*/quality.parquet"
    con.execute(f"CREATE VIEW quality AS SELECT * FROM read_parquet('{pattern}', hive_partitioning = true)")
    for name in QUERIES:
        code = blocks[name].replace("data/warehouse", str(warehouse))
        assert con.sql(code).fetchall() == expected, name
