"""Read every delivery of a feed from the raw folder into DuckDB, typed, with lineage and corrections.

Files are read in lexicographic order of their path inside the feed folder; each file is one
delivery. Every value is first staged as text with its source file and line, then typed in SQL
(`TRY_CAST`) so that a bad value becomes a recorded problem on its row instead of an error for
the whole file. For a key delivered more than once, the latest delivery wins and the earlier
rows are recorded as replaced.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.feeds import FILE_EXTENSIONS, Feed, MAX_TEXT_LENGTH, SOURCE_FILE, SOURCE_LINE
from pipeline.sql import quote_ident

# Accepts any line length up to this; longer text is caught by validation instead of failing the file.
MAX_LINE_BYTES = 64 * 1024 * 1024
TRUE_WORDS = ("true", "t", "1", "yes", "y")
FALSE_WORDS = ("false", "f", "0", "no", "n")


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


def stage_feed(con: duckdb.DuckDBPyConnection, raw_dir: Path, feed: Feed) -> StageReport:
    """Stage every delivery of `feed` as text rows in `staged_<feed>`; returns what was found."""
    report = StageReport(feed.name)
    columns_sql = ", ".join(f"{quote_ident(c)} VARCHAR" for c in feed.column_names)
    con.execute(
        f"CREATE OR REPLACE TABLE {staged_table(feed)} ({columns_sql}, "
        f"{SOURCE_FILE} VARCHAR, {SOURCE_LINE} BIGINT, _delivery INTEGER)"
    )
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


def _match_columns(feed: Feed, found: list[str], source: str, report: StageReport) -> dict[str, str]:
    """Map feed column -> column name in the file (case-insensitive, surrounding blanks ignored)."""
    by_norm = {}
    for name in found:
        by_norm.setdefault(name.strip().lstrip("\ufeff").lower(), name)
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


def _stage_tabular(con, feed: Feed, path: Path, source: str, delivery: int, kind: str,
                   report: StageReport) -> int:
    if path.stat().st_size == 0:
        return 0
    reader = _reader(kind)
    found = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {reader}", [str(path)]).fetchall()]
    if kind == "csv" and found == ["column0"] and not _has_header_line(path):
        return 0
    mapping = _match_columns(feed, found, source, report)
    select = ", ".join(
        f"CAST({quote_ident(mapping[c])} AS VARCHAR)" if c in mapping else "NULL"
        for c in feed.column_names
    )
    # row_number() over a plain scan follows file order (DuckDB preserves insertion order).
    line_offset = 1 if kind == "csv" else 0
    before = con.execute(f"SELECT count(*) FROM {staged_table(feed)}").fetchall()[0][0]
    con.execute(
        f"INSERT INTO {staged_table(feed)} SELECT {select}, ?, row_number() OVER () + ?, ? FROM {reader}",
        [source, line_offset, delivery, str(path)],
    )
    return con.execute(f"SELECT count(*) FROM {staged_table(feed)}").fetchall()[0][0] - before


def _has_header_line(path: Path) -> bool:
    with path.open("rb") as handle:
        return bool(handle.read(4096).strip())


def _stage_jsonl(con, feed: Feed, path: Path, source: str, delivery: int, report: StageReport) -> int:
    """JSON Lines are parsed line by line so that one broken line is quarantined, not the file."""
    text = path.read_bytes().decode("utf-8")  # not UTF-8: the whole file is unreadable
    columns: dict[str, list] = {c: [] for c in feed.column_names}
    lines: list[int] = []
    seen_keys: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            report.problems.append(FileProblem(feed.name, source, "malformed_json", _first_line(error), number))
            continue
        if not isinstance(record, dict):
            report.problems.append(FileProblem(feed.name, source, "malformed_json", "line is not a JSON object", number))
            continue
        normalised = {str(k).strip().lower(): v for k, v in record.items()}
        seen_keys.update(normalised)
        for c in feed.column_names:
            columns[c].append(_json_text(normalised.get(c)))
        lines.append(number)
    if lines:
        missing = [c for c in feed.required_columns if c not in seen_keys]
        if missing:
            raise _Rejected("missing_columns", f"required column(s) missing: {', '.join(missing)}")
        extra = sorted(seen_keys - set(feed.column_names))
        if extra:
            report.notices.append(f"{source}: ignored extra column(s) {', '.join(extra)}")
    # Broken lines count as rows delivered (and quarantined).
    broken = sum(1 for p in report.problems if p.source_file == source and p.reason == "malformed_json")
    if not lines:
        return broken
    arrays = {c: pa.array(v, pa.string()) for c, v in columns.items()}
    arrays[SOURCE_FILE] = pa.array([source] * len(lines), pa.string())
    arrays[SOURCE_LINE] = pa.array(lines, pa.int64())
    arrays["_delivery"] = pa.array([delivery] * len(lines), pa.int32())
    batch = pa.table(arrays)
    con.register("_jsonl_batch", batch)
    try:
        con.execute(f"INSERT INTO {staged_table(feed)} SELECT * FROM _jsonl_batch")
    finally:
        con.unregister("_jsonl_batch")
    return len(lines) + broken


def _json_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _typed_expression(feed: Feed, column) -> tuple[str, str]:
    """SQL for the typed value of a staged text column, and for its 'failed to convert' flag."""
    raw = quote_ident(column.name)
    present = f"({raw} IS NOT NULL AND trim({raw}) <> '')"
    if column.sql_type == "VARCHAR":
        value = f"CASE WHEN {raw} = '' THEN NULL ELSE {raw} END"
        failed = "false"
    elif column.sql_type == "BOOLEAN":
        text = f"lower(trim({raw}))"
        value = (f"CASE WHEN {text} IN {TRUE_WORDS} THEN true WHEN {text} IN {FALSE_WORDS} THEN false END")
        failed = f"({present} AND {value} IS NULL)"
    else:
        value = f"TRY_CAST(trim({raw}) AS {column.sql_type})"
        failed = f"({present} AND {value} IS NULL)"
    if column.default is not None:
        value = f"CASE WHEN {present} THEN {value} ELSE {column.default} END"
    else:
        value = f"CASE WHEN {present} THEN {value} END" if column.sql_type != "VARCHAR" else value
    return value, failed


def build_typed(con: duckdb.DuckDBPyConnection, feed: Feed) -> None:
    """Create `typed_<feed>`: typed values, conversion failures, row ids and the key's delivery status."""
    values, flags = [], []
    for column in feed.columns:
        value, failed = _typed_expression(feed, column)
        values.append(f"{value} AS {quote_ident(column.name)}")
        flags.append(f"CASE WHEN {failed} THEN '{column.name}' END")
    too_long = " OR ".join(
        f"length({quote_ident(c.name)}) > {MAX_TEXT_LENGTH}" for c in feed.columns
    )
    key = ", ".join(quote_ident(k) for k in feed.key)
    key_present = " AND ".join(f"{quote_ident(k)} IS NOT NULL" for k in feed.key)
    con.execute(
        f"""
        CREATE OR REPLACE TABLE {typed_table(feed)} AS
        WITH raw AS (
            SELECT *, coalesce({too_long}, false) AS _too_long FROM {staged_table(feed)}
        ),
        typed AS (
            SELECT
                row_number() OVER (ORDER BY _delivery, {SOURCE_LINE}) AS _row_id,
                {", ".join(values)},
                NULLIF(concat_ws(',', {", ".join(flags)}), '') AS _cast_errors,
                _too_long,
                {SOURCE_FILE}, {SOURCE_LINE}, CAST(_delivery AS BIGINT) AS _delivery
            FROM raw
        )
        SELECT *,
            CASE WHEN {key_present}
                 THEN count(*) OVER (PARTITION BY {key}, _delivery) > 1 ELSE false END AS _duplicate_in_file,
            CASE WHEN {key_present}
                 THEN _delivery < max(_delivery) OVER (PARTITION BY {key}) ELSE false END AS _replaced
        FROM typed
        """
    )
