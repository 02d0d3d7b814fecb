"""Run a Pandera model over a DuckDB table in one query.

Pandera validates the table's columns and types; every data rule of the model (its dataframe
checks, its column checks and each column that takes no null) then becomes one boolean column of
a single SQL query, true where a row fails the rule. Pandera's own engine runs a query or three
per rule, which costs about a second a table however small it is. `tests/test_validation_engine.py`
holds the two to the same answer, row by row.
"""

from __future__ import annotations

import functools
import operator

import duckdb
import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandera.backends.ibis.builtin_checks  # noqa: F401  (registers ge, le, ... for Ibis data)
import pandera.ibis as pdi
from pandera.api.ibis.types import IbisData
from pandera.config import ValidationDepth, config_context

NOT_NULLABLE = "not_nullable"


class ModelMismatch(RuntimeError):
    """The table's columns or types are not the model's: a defect of the code that built it."""


def failing_expression(check, table: ir.Table, column: str | None = None) -> ir.BooleanColumn:
    """One Pandera check as a boolean column, true where the row fails it. A null outcome passes,
    as in Pandera (its failure cases filter on the check's negation)."""
    if check.element_wise:
        raise TypeError(f"check {check.name!r}: element-wise checks run in Python, not in one SQL pass")
    outcome = check._check_fn(IbisData(table, column), **check._check_kwargs)
    if isinstance(outcome, dict):  # a mapping of boolean columns (see feed_common.rowwise): all must hold
        outcome = functools.reduce(operator.and_, outcome.values())
    elif isinstance(outcome, ir.Table):
        # Pandera's built-in checks (ge, le, ...) project the table onto a boolean column: the
        # projection's expressions are over `table` itself, so they can join the one query.
        projection = outcome.op()
        if not (isinstance(projection, ops.Project) and projection.parent == table.op()):
            raise TypeError(f"check {check.name!r}: returns a table that is not a projection of the one checked")
        outcome = functools.reduce(operator.and_, (value.to_expr() for value in projection.values.values()))
    if not isinstance(outcome, ir.BooleanColumn):
        raise TypeError(f"check {check.name!r}: returns {type(outcome).__name__}, not a boolean per row")
    return ~outcome.fill_null(True)


def rule_outcomes(model, table: ir.Table) -> dict[str, ir.BooleanColumn]:
    """Every data rule of the model by name: dataframe checks by their own name, column checks and
    null checks as `<name>(<column>)` when a column's name is needed to tell them apart."""
    schema = model.to_schema()
    outcomes = {check.name: failing_expression(check, table) for check in schema.checks}
    for name, column in schema.columns.items():
        if not column.nullable:
            outcomes[f"{NOT_NULLABLE}({name})"] = table[name].isnull()
        for check in column.checks:
            outcomes[f"{check.name}({name})"] = failing_expression(check, table, name)
    return outcomes


def check_columns(model, table: ir.Table) -> None:
    """Pandera's schema-level validation (columns present, no others, their types); no data read."""
    with config_context(validation_depth=ValidationDepth.SCHEMA_ONLY):
        try:
            model.validate(table, lazy=True)
        except pdi.errors.SchemaErrors as errors:
            raise ModelMismatch(f"{model.__name__}: {errors}") from None


def rule_failures(
    con: duckdb.DuckDBPyConnection, model, table_name: str, shown: list[str], limit: int | None = None
) -> list[tuple[tuple, list[str]]]:
    """The rows of `table_name` that fail a rule of `model`: their `shown` columns and the rules
    they fail, at most `limit` rows (all without one). One query over the table."""
    relation = con.table(table_name)
    signature = tuple(zip(relation.columns, map(str, relation.types)))
    sql, names = _failing_rows_query(con, model, table_name, signature, tuple(shown), limit)
    width = len(shown)
    return [
        (tuple(row[:width]), [name for name, hit in zip(names, row[width:]) if hit])
        for row in con.execute(sql).fetchall()
    ]


# The query depends on the model, the table's name and its columns and types, never on its rows:
# compiled once per process, it is reused by every later validation of a table of the same shape
# (compiling one through Ibis takes tens of milliseconds, more than the query on a small table).
_QUERIES: dict[tuple, tuple[str, list[str]]] = {}


def _failing_rows_query(
    con: duckdb.DuckDBPyConnection, model, table_name: str, signature: tuple, shown: tuple[str, ...], limit: int | None
) -> tuple[str, list[str]]:
    """The SQL of `rule_failures` and the rule names of its boolean columns, in order."""
    key = (model, table_name, signature, shown, limit)
    if key not in _QUERIES:
        table = ibis.duckdb.from_connection(con).table(table_name)
        check_columns(model, table)
        outcomes = rule_outcomes(model, table)
        names = list(outcomes)
        failing = table.filter(functools.reduce(operator.or_, outcomes.values()))
        query = failing.select(
            *[table[c] for c in shown], *[outcomes[n].name(f"_rule_{i}") for i, n in enumerate(names)]
        )
        if limit is not None:
            query = query.limit(limit)
        _QUERIES[key] = (ibis.to_sql(query, dialect="duckdb"), names)
    return _QUERIES[key]
