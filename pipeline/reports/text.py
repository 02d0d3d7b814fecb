"""A report (pipeline.reports.model) as fixed-width text: each section a titled table whose columns
line up in a terminal, wide East Asian names included, and the DiWZ-Auswertung in its "=" frame.
"""

from __future__ import annotations

import unicodedata

from pipeline.reports.cells import clean_text
from pipeline.reports.model import Report, Section

DIWZ_RULE_WIDTH = 67  # the seed's rules are 67 characters wide


def display_width(text: str) -> int:
    """Columns a string takes in a terminal: wide East Asian characters 2, combining marks 0."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def padded(text: str, width: int, align: str) -> str:
    """Text filled with spaces to `width` display columns, on the right or (align "right") the left."""
    gap = " " * max(0, width - display_width(text))
    return gap + text if align == "right" else text + gap


def column_widths(section: Section, cells: list[list[str]]) -> list[int]:
    """Each column's width: its widest heading or cell, leaving out a short row's spanning last cell."""
    columns = section.columns
    widths = [display_width(c.title) for c in columns]
    for row in cells:
        last = len(row) - 1 if len(row) < len(columns) else len(row)
        for i in range(min(last, len(columns))):
            widths[i] = max(widths[i], display_width(row[i]))
    return widths


def section_lines(section: Section) -> list[str]:
    """A section as fixed-width text lines."""
    columns = section.columns
    titles = [c.title for c in columns]
    cells = [[clean_text(c) for c in row.cells] for row in section.rows]
    widths = column_widths(section, cells)

    def line(values: list[str]) -> str:
        """One row (or the heading) with its cells padded to the column widths."""
        parts = []
        for i, value in enumerate(values):
            if i == len(values) - 1 and (len(values) < len(columns) or columns[i].align == "left"):
                parts.append(value)  # nothing follows: no padding (a short row's last cell spans)
            else:
                parts.append(padded(value, widths[i], columns[i].align))
        return "  ".join(parts).rstrip()

    header = line(titles)
    body = [line(row) for row in cells] or [f"  {section.empty}"]
    width = max(display_width(x) for x in [header, *body])
    out: list[str] = []
    if section.framed:
        frame = "=" * max(DIWZ_RULE_WIDTH, width)
        out += [frame, section.title, ""]
        if section.before:
            out += [*section.before, ""]
        rule = "-" * max(DIWZ_RULE_WIDTH, width)
        out += [header, rule, *body, rule, *section.after, frame]
        return out
    out += [section.title, *section.before, ""]
    rule = "-" * width
    out += [header, rule, *body]
    if section.after:
        out += [rule, *section.after]
    return out


def render_text(report: Report) -> str:
    """The whole report as text: its sections one after another, a blank line between them."""
    blocks = ["\n".join(section_lines(s)) for s in report.sections]
    return "\n\n".join(blocks) + "\n"
