"""Read every delivery of a feed from the raw folder into DuckDB, typed, with lineage and corrections.

Files are read in lexicographic order of their path; each file is one delivery. Each file is
typed in one pass as DuckDB reads it: a column that already has the feed's type is taken as it
is, anything else goes through text and `TRY_CAST`, so that a bad value becomes a recorded
problem on its row instead of an error for the whole file. For a key delivered more than once,
the latest delivery wins and the earlier rows are marked as replaced.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.core.feed_spec import FILE_EXTENSIONS, MAX_TEXT_LENGTH, SOURCE_FILE, SOURCE_LINE, Feed, FeedColumn
from pipeline.warehouse.sql import quote_ident

# Accepts any line length up to this; longer text is caught by validation instead of failing the file.
MAX_LINE_BYTES = 64 * 1024 * 1024
TRUE_WORDS = ("true", "t", "1", "yes", "y")
FALSE_WORDS = ("false", "f", "0", "no", "n")
INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"}
TEXT_TYPES = {"VARCHAR"}


@dataclass(frozen=True)
class FileProblem:
    """A delivery that could not be taken whole (or a single unreadable line of it)."""

    feed: str
    source_file: str
    reason: str
    detail: str
    source_line: int | None = None


@dataclass
class StageReport:
    """What staging one feed found."""

    feed: str
    files: list[str] = field(default_factory=list)
    rows_in: int = 0
    problems: list[FileProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def staged_table(feed: Feed) -> str:
    return f"staged_{feed.name}"


def typed_table(feed: Feed) -> str:
    return f"typed_{feed.name}"


def delivery_files(raw_dir: Path, feed: Feed) -> list[Path]:
    """The feed's delivery files in lexicographic order of their path; hidden files are skipped."""
    folder = raw_dir / feed.name
    if not folder.is_dir():
        return []
    files = [
        p for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(raw_dir).as_posix())


def _create_staged(con, feed: Feed) -> None:
    columns = ", ".join(f"{quote_ident(c.name)} {c.sql_type}" for c in feed.columns)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {staged_table(feed)} ({columns}, _cast_errors VARCHAR, _too_long BOOLEAN, "
        f"{SOURCE_FILE} VARCHAR, {SOURCE_LINE} BIGINT, _delivery BIGINT)"
    )


def stage_feed(con: duckdb.DuckDBPyConnection, raw_dir: Path, feed: Feed) -> StageReport:
    """Stage every delivery of `feed` as typed rows in `staged_<feed>`; returns what was found."""
    report = StageReport(feed.name)
    _create_staged(con, feed)
    for delivery, path in enumerate(delivery_files(raw_dir, feed)):
        source = path.relative_to(raw_dir).as_posix()
        report.files.append(source)
        kind = FILE_EXTENSIONS.get(path.suffix.lower())
        if kind is None:
            report.problems.append(FileProblem(feed.name, source, "unsupported_format",
                                               f"not .csv, .parquet or .jsonl: {path.name}"))
            continue
        try:
            if kind == "jsonl":
                rows = _stage_jsonl(con, feed, path, source, delivery, report)
            else:
                rows = _stage_tabular(con, feed, path, source, delivery, kind, report)
        except _Rejected as rejected:
            report.problems.append(FileProblem(feed.name, source, rejected.reason, rejected.detail))
            continue
        except (duckdb.Error, UnicodeDecodeError, OSError, ValueError) as error:
            report.problems.append(FileProblem(feed.name, source, "unreadable_file", _first_line(error)))
            continue
        if rows == 0:
            report.problems.append(FileProblem(feed.name, source, "empty_file", "the file holds no rows"))
        report.rows_in += rows
    return report


class _Rejected(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def _match_columns(feed: Feed, found: dict[str, str], source: str, report: StageReport) -> dict[str, tuple[str, str]]:
    """Map feed column -> (column name in the file, its type); names match case-insensitively."""
    by_norm: dict[str, tuple[str, str]] = {}
    for name, sql_type in found.items():
        by_norm.setdefault(name.strip().lstrip("\ufeff").lower(), (name, sql_type))
    missing = [c for c in feed.required_columns if c not in by_norm]
    if missing:
        raise _Rejected("missing_columns", f"required column(s) missing: {', '.join(missing)}")
    extra = sorted(set(by_norm) - set(feed.column_names))
    if extra:
        report.notices.append(f"{source}: ignored extra column(s) {', '.join(extra)}")
    return {c: by_norm[c] for c in feed.column_names if c in by_norm}


def _reader(kind: str) -> str:
    if kind == "csv":
        return (f"read_csv(?, all_varchar=true, header=true, delim=',', quote='\"', escape='\"', "
                f"max_line_size={MAX_LINE_BYTES}, strict_mode=false)")
    return "read_parquet(?)"


def _typed_expression(column: FeedColumn, source: str | None, source_type: str | None) -> tuple[str, str, str]:
    """SQL for (typed value, 'failed to convert' flag, 'text too long' flag) of one feed column."""
    if source is None:
        return (column.default or "NULL"), "false", "false"
    raw = quote_ident(source)
    target = column.sql_type
    native = (source_type == target or (target == "BIGINT" and source_type in INTEGER_TYPES)
              or (target == "DATE" and source_type and source_type.startswith("TIMESTAMP")))
    long_text = f"coalesce(length({raw}) > {MAX_TEXT_LENGTH}, false)" if source_type in TEXT_TYPES else "false"
    if native:
        value = raw if source_type == target else f"CAST({raw} AS {target})"
        failed = "false"
    else:
        text = raw if source_type in TEXT_TYPES else f"CAST({raw} AS VARCHAR)"
        if target == "VARCHAR":
            value, failed = f"CASE WHEN {text} = '' THEN NULL ELSE {text} END", "false"
        elif target == "BOOLEAN":
            word = f"lower(trim({text}))"
            value = f"CASE WHEN {word} IN {TRUE_WORDS} THEN true WHEN {word} IN {FALSE_WORDS} THEN false END"
            failed = f"(trim({text}) <> '' AND {value} IS NULL)"
        else:
            value = f"TRY_CAST(NULLIF(trim({text}), '') AS {target})"
            failed = f"(trim({text}) <> '' AND {value} IS NULL)"
        failed = f"coalesce({failed}, false)"
    if column.default is not None:
        value = f"coalesce({value}, {column.default})"
    return value, failed, long_text


def _insert_typed(con, feed: Feed, relation: str, params: list, mapping: dict[str, tuple[str, str]],
                  source: str, delivery: int, line_expr: str) -> int:
    """Insert one delivery, typed in a single pass over `relation` (a reader or a registered table)."""
    values, flags, long_flags = [], [], []
    for column in feed.columns:
        name, sql_type = mapping.get(column.name, (None, None))
        value, failed, too_long = _typed_expression(column, name, sql_type)
        values.append(value)
        flags.append(f"CASE WHEN {failed} THEN '{column.name}' END")
        long_flags.append(too_long)
    before = con.execute(f"SELECT count(*) FROM {staged_table(feed)}").fetchall()[0][0]
    con.execute(
        f"""INSERT INTO {staged_table(feed)}
        SELECT {", ".join(values)}, NULLIF(concat_ws(',', {", ".join(flags)}), ''), ({" OR ".join(long_flags)}),
               ?, {line_expr}, ?
        FROM {relation}""",
        [source, delivery, *params],
    )
    return con.execute(f"SELECT count(*) FROM {staged_table(feed)}").fetchall()[0][0] - before


def _stage_tabular(con, feed: Feed, path: Path, source: str, delivery: int, kind: str,
                   report: StageReport) -> int:
    if path.stat().st_size == 0:
        return 0
    reader = _reader(kind)
    described = con.execute(f"DESCRIBE SELECT * FROM {reader}", [str(path)]).fetchall()
    found = {row[0]: row[1] for row in described}
    if kind == "csv" and list(found) == ["column0"] and not _has_header_line(path):
        return 0
    mapping = _match_columns(feed, found, source, report)
    # row_number() over a plain scan follows file order (DuckDB preserves insertion order);
    # for CSV the header is line 1.
    line = "row_number() OVER () + 1" if kind == "csv" else "row_number() OVER ()"
    return _insert_typed(con, feed, reader, [str(path)], mapping, source, delivery, line)


def _has_header_line(path: Path) -> bool:
    with path.open("rb") as handle:
        return bool(handle.read(4096).strip())


def _stage_jsonl(con, feed: Feed, path: Path, source: str, delivery: int, report: StageReport) -> int:
    """JSON Lines are parsed line by line so that one broken line is quarantined, not the file."""
    text = path.read_bytes().decode("utf-8")  # not UTF-8: the whole file is unreadable
    columns: dict[str, list] = {c: [] for c in feed.column_names}
    lines: list[int] = []
    seen_keys: set[str] = set()
    broken = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            report.problems.append(FileProblem(feed.name, source, "malformed_json", _first_line(error), number))
            broken += 1
            continue
        if not isinstance(record, dict):
            report.problems.append(FileProblem(feed.name, source, "malformed_json", "line is not a JSON object", number))
            broken += 1
            continue
        normalised = {str(k).strip().lower(): v for k, v in record.items()}
        seen_keys.update(normalised)
        for c in feed.column_names:
            columns[c].append(_json_text(normalised.get(c)))
        lines.append(number)
    if not lines:
        return broken
    missing = [c for c in feed.required_columns if c not in seen_keys]
    if missing:
        raise _Rejected("missing_columns", f"required column(s) missing: {', '.join(missing)}")
    extra = sorted(seen_keys - set(feed.column_names))
    if extra:
        report.notices.append(f"{source}: ignored extra column(s) {', '.join(extra)}")
    arrays = {c: pa.array(v, pa.string()) for c, v in columns.items()}
    arrays["_line"] = pa.array(lines, pa.int64())
    con.register("_jsonl_batch", pa.table(arrays))
    try:
        mapping = {c: (c, "VARCHAR") for c in feed.column_names if c in seen_keys}
        # Broken lines count as rows delivered (and quarantined).
        return _insert_typed(con, feed, "_jsonl_batch", [], mapping, source, delivery, "_line") + broken
    finally:
        con.unregister("_jsonl_batch")


def _json_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def build_typed(con: duckdb.DuckDBPyConnection, feed: Feed) -> None:
    """Create `typed_<feed>`: staged rows with a row id and the key's delivery status.

    Keys seen more than once are found with one hash aggregate, not a sort of every row.
    """
    key = ", ".join(quote_ident(k) for k in feed.key)
    con.execute(
        f"""
        CREATE OR REPLACE TABLE {typed_table(feed)} AS
        WITH repeated AS (
            SELECT {key}, max(_delivery) AS _last_delivery
            FROM {staged_table(feed)} GROUP BY {key} HAVING count(*) > 1
        ),
        in_one_file AS (
            SELECT {key}, _delivery
            FROM {staged_table(feed)} GROUP BY {key}, _delivery HAVING count(*) > 1
        )
        SELECT (s._delivery << 32) + s.{SOURCE_LINE} AS _row_id, s.*,
               (d._delivery IS NOT NULL) AS _duplicate_in_file,
               coalesce(s._delivery < r._last_delivery, false) AS _replaced
        FROM {staged_table(feed)} s
        LEFT JOIN repeated r USING ({key})
        LEFT JOIN in_one_file d USING ({key}, _delivery)
        """
    )
