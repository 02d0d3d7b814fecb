"""A report (pipeline.reports.model) as one self-contained HTML page: its tables and, when the report
carries them, an inline SVG chart of the month's top 10 over every month up to it and one of every
system's trailing pairwise accuracy (SPEC §3.5) over the months up to it.

No scripts, no external fonts, stylesheets or images: the page carries a Content-Security-Policy
that forbids loading anything, so it opens the same offline, from a file share or a dashboard.
Every piece of data (names, ids, event names) is escaped, and names are isolated as
bidirectional text so a right-to-left or override character cannot reorder the rest of a row.
The output depends only on the warehouse files: the same files give the same bytes.
"""

from __future__ import annotations

import html
import math
import os
from pathlib import Path

from pipeline.core.months import Month
from pipeline.reports.cells import accuracy_text, decimal_text, month_name, whole_text
from pipeline.reports.model import Chart, QualityChart, Report, Section
from pipeline.warehouse.store import atomic_write_bytes

# Tableau 10: distinct hues that stay apart for the usual colour-vision deficiencies.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f")

WIDTH, HEIGHT = 960, 420
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 40, 16, 44
DOT_RADIUS = 3
MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120, 240)
MAX_X_TICKS = 12
ACCURACY_LOW, ACCURACY_HIGH, ACCURACY_STEP = 0.4, 1.0, 0.1  # the accuracy axis, lowered if the data goes below
COIN_ACCURACY = 0.5

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 2rem auto; max-width: 68rem; padding: 0 1rem; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
p.meta, p.note { color: #555; margin: .25rem 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { text-align: left; border-bottom: 2px solid #999; white-space: nowrap; }
th.r, td.r { text-align: right; }
tbody tr:nth-child(even) { background: #f7f7f9; }
td.name { max-width: 28rem; overflow-wrap: anywhere; }
td.span { color: #444; }
tr.pooled td:nth-child(3) { font-weight: 600; }
section.evaluation table { border-top: 3px double #999; border-bottom: 3px double #999; }
figure { margin: 2rem 0; }
figcaption { font-weight: 600; margin-bottom: .5rem; }
svg.chart { width: 100%; height: auto; max-width: 960px; font-size: 12px; }
svg.chart .grid { stroke: #e3e3e3; stroke-width: 1; }
svg.chart .axis { stroke: #999; stroke-width: 1; }
svg.chart text { fill: #555; }
svg.chart path.series { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
svg.chart polyline.quality { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
svg.chart .reference { stroke: #555; stroke-width: 1; stroke-dasharray: 6 4; }
ol.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
ol.legend li { white-space: nowrap; }
ol.legend .swatch { display: inline-block; width: .9rem; height: .9rem; margin-right: .35rem;
                    vertical-align: -.1rem; border-radius: 2px; }
"""


def _clean(text: str) -> str:
    """Characters HTML cannot carry (controls other than tab and newline, surrogates, noncharacters) as U+FFFD."""
    out = []
    for char in text:
        code = ord(char)
        if (
            (code < 0x20 and char not in "\t\n")
            or 0x7F <= code <= 0x9F
            or 0xD800 <= code <= 0xDFFF
            or 0xFDD0 <= code <= 0xFDEF
            or (code & 0xFFFE) == 0xFFFE
        ):
            out.append("\ufffd")
        else:
            out.append(char)
    return "".join(out)


def esc(value: object) -> str:
    """Any value as HTML text or attribute content."""
    return html.escape(_clean("" if value is None else str(value)), quote=True)


# --- tables ---------------------------------------------------------------------------------


def section_html(section: Section) -> str:
    """A section as an HTML <section>: heading, notes and table, every value escaped."""
    lang = f' lang="{esc(section.lang)}"' if section.lang else ""
    parts = [f'<section class="{esc(section.key)}" id="{esc(section.key)}"{lang}>', f"<h2>{esc(section.title)}</h2>"]
    parts += [f'<p class="meta">{esc(line)}</p>' for line in section.before if line]
    head = "".join(
        f'<th class="{"r" if c.align == "right" else "l"}" scope="col">{esc(c.title)}</th>' for c in section.columns
    )
    parts.append(f'<table class="{esc(section.key)}">')
    parts.append(f"<thead><tr>{head}</tr></thead>")
    parts.append("<tbody>")
    if not section.rows:
        parts.append(f'<tr><td colspan="{len(section.columns)}">{esc(section.empty)}</td></tr>')
    for row in section.rows:
        attrs = ""
        if row.css:
            attrs += f' class="{esc(row.css)}"'
        if row.player_id is not None:
            attrs += f' data-player="{esc(row.player_id)}"'
        cells = []
        for i, value in enumerate(row.cells):
            column = section.columns[i]
            classes = ["r" if column.align == "right" else "l"]
            if column.css:
                classes.append(column.css)
            span = ""
            if i == len(row.cells) - 1 and len(row.cells) < len(section.columns):
                span = f' colspan="{len(section.columns) - i}"'
                classes = ["l", "span"]
            text = esc(value)
            if i == section.name_column:
                text = f"<bdi>{text}</bdi>"
            cells.append(f'<td class="{" ".join(classes)}"{span}>{text}</td>')
        parts.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    parts.append("</tbody></table>")
    parts += [f'<p class="note">{esc(line)}</p>' for line in section.after if line]
    parts.append("</section>")
    return "\n".join(parts)


# --- the chart ------------------------------------------------------------------------------


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about `ticks` intervals."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _index(month: Month) -> int:
    """A month as a count of months, so that neighbours differ by one."""
    return month.year * 12 + month.month - 1


def _number(value: float) -> str:
    """A coordinate with two decimals and no trailing zeros (short, stable paths)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _tick_label(value: float, step: float) -> str:
    """A tick value with as many decimals as the step needs (10, 2.5, 0.25)."""
    decimals = len(f"{step:.6f}".rstrip("0").rstrip(".").partition(".")[2])
    return f"{value:.{decimals}f}"


def rating_text(system: str, value: float | None) -> str:
    """A rating as the system prints it: DiWZ whole, the others with two decimals."""
    return whole_text(value) if system == "diwz" else decimal_text(value)


def series_path(points: list[tuple[Month, float]], x, y) -> str:
    """SVG path data of one player's line: consecutive months joined, a gap where the player was not listed."""
    # A month standing alone becomes a small diamond: a line needs two points.
    runs: list[list[tuple[float, float]]] = []
    previous: Month | None = None
    for month, rating in points:
        if previous is None or _index(month) != _index(previous) + 1:
            runs.append([])
        runs[-1].append((x(month), y(rating)))
        previous = month
    d = []
    for run in runs:
        if len(run) == 1:
            px, py = run[0]
            r = DOT_RADIUS
            d.append(
                f"M{_number(px - r)} {_number(py)} L{_number(px)} {_number(py - r)} "
                f"L{_number(px + r)} {_number(py)} L{_number(px)} {_number(py + r)} Z"
            )
        else:
            d.append(" ".join(f"{'M' if i == 0 else 'L'}{_number(px)} {_number(py)}" for i, (px, py) in enumerate(run)))
    return " ".join(d)


def chart_html(report: Report, chart: Chart) -> str:
    """The SVG figure: one path per player (gaps where a player was not listed) and a legend."""
    series, players, label = chart.series, chart.players, chart.label
    points = [(m, r) for pid, _ in players for m, r in series.get(pid, [])]
    caption = f"{label} at each month end up to {report.month}: the top {len(players)} of {report.month}"
    if not points:
        return f'<figure class="chart"><figcaption>{esc(caption)}</figcaption><p class="note">No one is listed.</p></figure>'
    first = min(m for m, _ in points)
    last = report.month
    x0, x1 = _index(first), _index(last)
    low = min(r for _, r in points)
    high = max(r for _, r in points)
    step = nice_step(high - low if high > low else max(abs(high), 1.0) * 0.1)
    y_low = math.floor(low / step) * step
    y_high = math.ceil(high / step) * step
    if y_high == y_low:
        y_low, y_high = y_low - step, y_high + step
    left, right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    top, bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM

    def x(month: Month) -> float:
        """The month's horizontal position; a single month stands in the middle."""
        if x1 == x0:
            return (left + right) / 2
        return left + (_index(month) - x0) / (x1 - x0) * (right - left)

    def y(value: float) -> float:
        """The rating's vertical position, higher ratings nearer the top."""
        return bottom - (value - y_low) / (y_high - y_low) * (bottom - top)

    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-labelledby="chart-title">',
        f'<title id="chart-title">{esc(caption)}</title>',
        '<g class="y-axis">',
    ]
    value = y_low
    while value <= y_high + step / 1000:
        yy = _number(y(value))
        out.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{yy}" y2="{yy}"/>'
            f'<text x="{left - 6}" y="{yy}" text-anchor="end" dominant-baseline="middle">'
            f"{esc(_tick_label(value, step))}</text>"
        )
        value += step
    out.append(
        f'<text x="14" y="{_number((top + bottom) / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {_number((top + bottom) / 2)})">{esc(label)}</text>'
    )
    out.append("</g>")

    out += month_axis(x0, x1, x, left, right, bottom)

    out.append('<g class="series">')
    legend = []
    for number, (pid, name) in enumerate(players):
        colour = PALETTE[number % len(PALETTE)]
        latest = series[pid][-1][1] if series.get(pid) else None
        shown = rating_text(report.system, latest)
        out.append(
            f'<path class="series" data-player="{esc(pid)}" stroke="{colour}" '
            f'd="{series_path(series.get(pid, []), x, y)}">'
            f"<title>{number + 1}. {esc(name)}: {esc(shown)}</title></path>"
        )
        legend.append(
            f'<li data-player="{esc(pid)}"><span class="swatch" style="background:{colour}"></span>'
            f"<bdi>{esc(name)}</bdi> {esc(shown)}</li>"
        )
    out.append("</g></svg>")
    return (
        '<figure class="chart">\n'
        f"<figcaption>{esc(caption)}</figcaption>\n"
        + "\n".join(out)
        + f'\n<ol class="legend">{"".join(legend)}</ol>\n</figure>'
    )


def month_axis(x0: int, x1: int, x, left: float, right: float, bottom: float) -> list[str]:
    """The horizontal axis from month index x0 to x1: a tick at every round step of months, labelled."""
    months = x1 - x0
    month_step = next((s for s in MONTH_STEPS if months / s <= MAX_X_TICKS), MONTH_STEPS[-1])
    out = ['<g class="x-axis">', f'<line class="axis" x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}"/>']
    for index in range(x0, x1 + 1):
        if index % month_step and not (x0 == x1):
            continue
        month = Month(index // 12, index % 12 + 1)
        xx = _number(x(month))
        text = str(month.year) if month_step >= 12 else str(month)
        out.append(
            f'<line class="axis" x1="{xx}" x2="{xx}" y1="{bottom}" y2="{bottom + 5}"/>'
            f'<text x="{xx}" y="{bottom + 18}" text-anchor="middle">{esc(text)}</text>'
        )
    out.append("</g>")
    return out


def latest_accuracy(points: list[tuple[Month, float]], month: Month) -> str:
    """A system's trailing accuracy as the legend shows it: the month's, else the latest with its month."""
    if not points:
        return "-"
    last, value = points[-1]
    return accuracy_text(value) if last == month else f"{accuracy_text(value)} ({last})"


def quality_chart_html(report: Report, chart: QualityChart) -> str:
    """The SVG figure of trailing accuracy: one polyline per system, a line at a coin's 0.5, and a legend."""
    caption = f"Trailing 12-month pairwise accuracy of each system at each month end up to {report.month}"
    points = [(m, a) for system in chart.systems for m, a in chart.series[system]]
    if not points:
        return (
            f'<figure class="quality-chart"><figcaption>{esc(caption)}</figcaption>'
            '<p class="note">No system has rated a pair yet.</p></figure>'
        )
    x0, x1 = _index(min(m for m, _ in points)), _index(report.month)
    y_low = min(ACCURACY_LOW, math.floor(min(a for _, a in points) / ACCURACY_STEP) * ACCURACY_STEP)
    y_high = ACCURACY_HIGH
    left, right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    top, bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM

    def x(month: Month) -> float:
        """The month's horizontal position; a single month stands in the middle."""
        if x1 == x0:
            return (left + right) / 2
        return left + (_index(month) - x0) / (x1 - x0) * (right - left)

    def y(value: float) -> float:
        """The accuracy's vertical position, higher accuracy nearer the top."""
        return bottom - (value - y_low) / (y_high - y_low) * (bottom - top)

    label = "Trailing 12-month pairwise accuracy"
    out = [
        f'<svg class="chart quality" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-labelledby="quality-title">',
        f'<title id="quality-title">{esc(caption)}</title>',
        '<g class="y-axis">',
    ]
    ticks = round((y_high - y_low) / ACCURACY_STEP)
    for k in range(ticks + 1):
        value = y_low + k * ACCURACY_STEP
        yy = _number(y(value))
        out.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{yy}" y2="{yy}"/>'
            f'<text x="{left - 6}" y="{yy}" text-anchor="end" dominant-baseline="middle">{value:.1f}</text>'
        )
    middle = _number((top + bottom) / 2)
    out.append(f'<text x="14" y="{middle}" text-anchor="middle" transform="rotate(-90 14 {middle})">{label}</text>')
    coin = _number(y(COIN_ACCURACY))
    out.append(
        f'<line class="reference" x1="{left}" x2="{right}" y1="{coin}" y2="{coin}"/>'
        f'<text x="{right - 4}" y="{_number(y(COIN_ACCURACY) - 6)}" text-anchor="end">a coin: 0.5</text>'
    )
    out.append("</g>")
    out += month_axis(x0, x1, x, left, right, bottom)

    out.append('<g class="series">')
    legend = []
    for number, system in enumerate(chart.systems):
        colour = PALETTE[number % len(PALETTE)]
        series = chart.series[system]
        shown = latest_accuracy(series, report.month)
        # One month alone is drawn as a dot: the same point twice, with round caps.
        coordinates = [f"{_number(x(m))},{_number(y(a))}" for m, a in series]
        if len(coordinates) == 1:
            coordinates *= 2
        out.append(
            f'<polyline class="quality" data-system="{esc(system)}" stroke="{colour}" '
            f'points="{" ".join(coordinates)}"><title>{esc(system)}: {esc(shown)}</title></polyline>'
        )
        legend.append(
            f'<li data-system="{esc(system)}"><span class="swatch" style="background:{colour}"></span>'
            f"{esc(system)} {esc(shown)}</li>"
        )
    out.append("</g></svg>")
    return (
        '<figure class="quality-chart" id="quality-chart">\n'
        f"<figcaption>{esc(caption)}</figcaption>\n"
        + "\n".join(out)
        + f'\n<ol class="legend">{"".join(legend)}</ol>\n</figure>'
    )


# --- the page -------------------------------------------------------------------------------


def render_html(report: Report) -> str:
    """The whole page: header, the chart when the report has one, every section, then the quality chart."""
    # The chart first: a full table can run to hundreds of rows.
    chart = [] if report.chart is None else [chart_html(report, report.chart)]
    quality = [] if report.quality is None else [quality_chart_html(report, report.quality)]
    body = [*chart, *(section_html(s) for s in report.sections), *quality]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(report.title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            f'<body data-system="{esc(report.system)}" data-month="{esc(report.month)}">',
            f"<header><h1>{esc(report.heading)}</h1>",
            f'<p class="meta">{esc(month_name(report.month))}, as of {esc(report.month.last_day.isoformat())}.</p></header>',
            "<main>",
            *body,
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


def write_html(report: Report, path: Path) -> Path:
    """Write the page atomically (temporary name, then rename); readable by all, like any web page."""
    path = Path(path)
    atomic_write_bytes(path, render_html(report).encode("utf-8"))
    os.chmod(path, 0o644)
    return path
