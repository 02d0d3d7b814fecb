"""Small SQL helpers: identifiers are quoted, values always travel as parameters."""

from __future__ import annotations


def quote_ident(name: str) -> str:
    """A SQL identifier, double-quoted with embedded quotes doubled (safe for any column name)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal with quotes doubled. Only for DDL, where DuckDB takes no parameters
    (a view's file path); every query passes values as parameters instead."""
    return "'" + text.replace("'", "''") + "'"
