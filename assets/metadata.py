"""Metadata helpers shared by the assets: column schemas from Pandera models, markdown previews."""

from __future__ import annotations

import pyarrow as pa
from dagster import TableColumn, TableSchema


def column_schema(model, *, skip_internal: bool = True) -> TableSchema:
    """A Dagster table schema built from a Pandera model's columns, types and descriptions."""
    columns = []
    for name, column in model.to_schema().columns.items():
        if skip_internal and name.startswith("_"):
            continue
        columns.append(TableColumn(name=name, type=str(column.dtype), description=column.description or ""))
    return TableSchema(columns=columns)


def markdown_table(table: pa.Table, columns: list[str], limit: int = 10) -> str:
    """The first rows of a table as a markdown table."""
    rows = table.slice(0, limit).select(columns).to_pylist()
    if not rows:
        return "_no rows_"
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "\n".join("| " + " | ".join(_cell(r[c]) for c in columns) + " |" for r in rows)
    return head + body


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("|", "\\|").replace("\n", " ")
