"""Read a delivery file of a feed from the raw folder into DuckDB, typed, with lineage.

A feed's files are listed in lexicographic order of their path; each file is one delivery. Each
file is typed in one pass as DuckDB reads it: a column that already has the feed's type is taken
as it is, anything else goes through text and `TRY_CAST`, so that a bad value becomes a recorded
problem on its row instead of an error for the whole file. An integer column takes whole numbers
only (`whole_number_sql`). Which files are read, and how a later delivery of a key replaces an
earlier one, is `deliveries.py`'s.

What the raw folder holds but a run does not read (links that cannot be followed, named pipes,
folders that are no feed, repeated or unknown columns) is listed as `SkippedEntry` data; nothing
is opened to find out what an entry is.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.feed_spec import (
    FEEDS,
    FILE_EXTENSIONS,
    MAX_TEXT_LENGTH,
    SOURCE_FILE,
    SOURCE_LINE,
    Feed,
    FeedColumn,
)
from pipeline.warehouse.sql import quote_ident

# Accepts any line length up to this; longer text is caught by validation instead of failing the file.
MAX_LINE_BYTES = 64 * 1024 * 1024
TRUE_WORDS = ("true", "t", "1", "yes", "y")
FALSE_WORDS = ("false", "f", "0", "no", "n")
INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"}
TEXT_TYPES = {"VARCHAR"}
FRACTIONAL_TYPES = ("FLOAT", "DOUBLE", "DECIMAL")  # Parquet numbers that may hold a fraction
# A whole number written as text: an optional sign, ASCII digits, and at most a point followed by
# zeros ("3", "-2", "+7", "3.0"). No exponent, no grouping, no other base: "1e1", "3,0", "1_000"
# and "0x10" are not whole numbers here, although DuckDB's cast would take some of them.
WHOLE_NUMBER_PATTERN = "[+-]?[0-9]+([.]0+)?"
INTEGER_PART_PATTERN = "^[+-]?[0-9]+"

# Why an entry of the raw folder is not read (the run summary lists each with its path).
LINK_LOOP = "symbolic link loop"
BROKEN_LINK = "broken symbolic link (its target does not exist)"
LINK_TO_FOLDER = "link to a folder (links to folders are not followed)"
NOT_REGULAR = "not a regular file ({kind}); never opened"
UNFOLLOWABLE_LINK = "symbolic link that cannot be followed ({error})"
UNEXAMINABLE = "cannot be examined ({error})"
UNLISTABLE_FOLDER = "folder that cannot be listed ({error})"
FOLDER_NAMED_LIKE_FILE = "folder named like a delivery file, with no delivery inside"
NOT_A_FEED_FOLDER = "not a feed folder (feeds: " + ", ".join(FEEDS) + ")"
OUTSIDE_FEEDS = "file outside the feed folders"
FEED_NOT_A_FOLDER = "not a folder; the {feed} feed's deliveries go in a folder of that name"
REPEATED_COLUMN = "repeated column {name!r} (column {position}) ignored; column {first} of that name is read"
REPEATED_KEY = "repeated key {name!r} (first on line {line}) ignored; the first key of that name is read"
UNNAMED_COLUMN = "column {position} has no name; ignored"
EXTRA_COLUMNS = "columns not in the {feed} feed, ignored: {names}"
STILL_BEING_WRITTEN = "still being written (changed within {settle:g} s, or while it was read); the next run reads it"
EARLIER_VERSION_KEPT = STILL_BEING_WRITTEN + "; until then its version ingested before stays"


@dataclass(frozen=True)
class FileProblem:
    """A delivery that could not be taken whole (or a single unreadable line of it)."""

    feed: str
    source_file: str
    reason: str
    detail: str
    source_line: int | None = None


@dataclass(frozen=True)
class SkippedEntry:
    """Something the raw folder holds that a run does not read: a path (relative to the raw
    folder) and why. `feed` is None for entries outside the feed folders."""

    feed: str | None
    path: str
    reason: str


@dataclass
class StageReport:
    """What staging one feed found."""

    feed: str
    files: list[str] = field(default_factory=list)
    rows_in: int = 0
    problems: list[FileProblem] = field(default_factory=list)
    skipped: list[SkippedEntry] = field(default_factory=list)


def staged_table(feed: Feed) -> str:
    return f"staged_{feed.name}"


def typed_table(feed: Feed) -> str:
    return f"typed_{feed.name}"


def _entry_kind(path: Path) -> tuple[str, str | None]:
    """("file" | "folder" | "linked_folder" | "skip", why skipped) from the entry's status alone:
    nothing is opened, so a named pipe or a device cannot block. Links to files are followed."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return "gone", None  # removed while the folder was listed
    except OSError as error:
        return "skip", UNEXAMINABLE.format(error=error.strerror or type(error).__name__)
    linked = stat.S_ISLNK(status.st_mode)
    if linked:
        try:
            status = path.stat()
        except OSError as error:
            if error.errno == errno.ELOOP:
                return "skip", LINK_LOOP
            if error.errno in (errno.ENOENT, errno.ENOTDIR):
                return "skip", BROKEN_LINK
            return "skip", UNFOLLOWABLE_LINK.format(error=error.strerror or type(error).__name__)
    mode = status.st_mode
    if stat.S_ISREG(mode):
        return "file", None
    if stat.S_ISDIR(mode):
        return ("linked_folder", LINK_TO_FOLDER) if linked else ("folder", None)
    kind = (
        "named pipe"
        if stat.S_ISFIFO(mode)
        else "socket"
        if stat.S_ISSOCK(mode)
        else "character device"
        if stat.S_ISCHR(mode)
        else "block device"
        if stat.S_ISBLK(mode)
        else "unknown kind"
    )
    return "skip", NOT_REGULAR.format(kind=kind)


def _visible_entries(folder: Path) -> list[Path]:
    """The folder's entries whose names do not start with '.' (hidden entries are ignored)."""
    with os.scandir(folder) as entries:
        return sorted((Path(e.path) for e in entries if not e.name.startswith(".")), key=lambda p: p.name)


def survey_feed(raw_dir: Path, feed: Feed) -> tuple[list[Path], list[SkippedEntry]]:
    """The feed's delivery files in lexicographic order of their path, and what its folder holds
    that is not read. Subfolders are walked; links to files are read, links to folders are not
    followed; hidden entries are ignored."""
    folder = raw_dir / feed.name
    relative = lambda p: p.relative_to(raw_dir).as_posix()  # noqa: E731
    files: list[Path] = []
    skipped: list[SkippedEntry] = []
    if not os.path.lexists(folder):
        return files, skipped
    if not folder.is_dir():  # the feed's folder itself may be a link to a folder
        kind, reason = _entry_kind(folder)
        skipped.append(
            SkippedEntry(
                feed.name, feed.name, FEED_NOT_A_FOLDER.format(feed=feed.name) if kind == "file" else reason or kind
            )
        )
        return files, skipped

    def walk(directory: Path) -> int:
        try:
            entries = _visible_entries(directory)
        except OSError as error:
            skipped.append(
                SkippedEntry(
                    feed.name,
                    relative(directory),
                    UNLISTABLE_FOLDER.format(error=error.strerror or type(error).__name__),
                )
            )
            return 0
        found = 0
        for path in entries:
            kind, reason = _entry_kind(path)
            if kind == "file":
                files.append(path)
                found += 1
            elif kind == "folder":
                inside = walk(path)
                if inside == 0 and path.suffix.lower() in FILE_EXTENSIONS:
                    skipped.append(SkippedEntry(feed.name, relative(path), FOLDER_NAMED_LIKE_FILE))
                found += inside
            elif reason is not None:
                skipped.append(SkippedEntry(feed.name, relative(path), reason))
        return found

    walk(folder)
    files.sort(key=relative)
    skipped.sort(key=lambda s: (s.path, s.reason))
    return files, skipped


def delivery_files(raw_dir: Path, feed: Feed) -> list[Path]:
    """The feed's delivery files in lexicographic order of their path; hidden files are skipped."""
    return survey_feed(raw_dir, feed)[0]


def outside_feed_folders(raw_dir: Path) -> list[SkippedEntry]:
    """Entries of the raw folder's top level that are no feed folder (hidden entries are ignored)."""
    try:
        entries = _visible_entries(raw_dir)
    except OSError:
        return []  # a missing raw folder is reported where the run starts
    skipped = []
    for path in entries:
        if path.name in FEEDS:
            continue  # the feed's own survey reports it
        kind, reason = _entry_kind(path)
        if kind in ("folder", "linked_folder"):
            reason = NOT_A_FEED_FOLDER
        elif kind == "file":
            reason = OUTSIDE_FEEDS
        if reason is not None:
            skipped.append(SkippedEntry(None, path.name, reason))
    return skipped


def create_staged(con, feed: Feed) -> None:
    """An empty `staged_<feed>`: the feed's typed columns, conversion flags and lineage."""
    columns = ", ".join(f"{quote_ident(c.name)} {c.sql_type}" for c in feed.columns)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {staged_table(feed)} ({columns}, _cast_errors VARCHAR, _too_long BOOLEAN, "
        f"{SOURCE_FILE} VARCHAR, {SOURCE_LINE} BIGINT, _delivery BIGINT)"
    )


def stage_file(con: duckdb.DuckDBPyConnection, feed: Feed, path: Path, source: str) -> StageReport:
    """Stage one delivery file of `feed` as typed rows in `staged_<feed>` (replacing what the table
    held); returns what was found in it. `source` is the file's path relative to the raw folder."""
    report = StageReport(feed.name, files=[source])
    create_staged(con, feed)
    kind = FILE_EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        report.problems.append(
            FileProblem(feed.name, source, "unsupported_format", f"not .csv, .parquet or .jsonl: {path.name}")
        )
        return report
    try:
        if kind == "jsonl":
            rows = _stage_jsonl(con, feed, path, source, 0, report)
        else:
            rows = _stage_tabular(con, feed, path, source, 0, kind, report)
    except _Rejected as rejected:
        report.problems.append(FileProblem(feed.name, source, rejected.reason, rejected.detail))
        return report
    except (duckdb.Error, UnicodeDecodeError, OSError, ValueError) as error:
        report.problems.append(FileProblem(feed.name, source, "unreadable_file", _first_line(error)))
        return report
    if rows == 0:
        report.problems.append(FileProblem(feed.name, source, "empty_file", "the file holds no rows"))
    report.rows_in = rows
    return report


class _Rejected(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def _normalised(name: str) -> str:
    return name.strip().lstrip("\ufeff").lower()


def _match_columns(
    feed: Feed, columns: list[tuple[str | None, str, str]], source: str, report: StageReport
) -> dict[str, tuple[str, str]]:
    """Map feed column -> (column name in the reader, its type), from (name in the file's header,
    name in the reader, type) in file order. Names match case-insensitively; of two columns with one
    name the first is read; the later one and columns no feed has are listed as skipped."""
    by_norm: dict[str, tuple[str, str]] = {}
    first_at: dict[str, int] = {}
    extra: list[str] = []
    for position, (header, name, sql_type) in enumerate(columns, start=1):
        if not header or not header.strip().lstrip("\ufeff"):
            report.skipped.append(SkippedEntry(feed.name, source, UNNAMED_COLUMN.format(position=position)))
            continue
        norm, header = _normalised(header), header.strip().lstrip("\ufeff")
        if norm in by_norm:
            report.skipped.append(
                SkippedEntry(
                    feed.name, source, REPEATED_COLUMN.format(name=header, position=position, first=first_at[norm])
                )
            )
            continue
        by_norm[norm], first_at[norm] = (name, sql_type), position
        if norm not in feed.column_names:
            extra.append(header)
    missing = [c for c in feed.required_columns if c not in by_norm]
    if missing:
        raise _Rejected("missing_columns", f"required column(s) missing: {', '.join(missing)}")
    if extra:
        report.skipped.append(
            SkippedEntry(feed.name, source, EXTRA_COLUMNS.format(feed=feed.name, names=", ".join(extra)))
        )
    return {c: by_norm[c] for c in feed.column_names if c in by_norm}


# A column name the reader made up: DuckDB numbers repeated names ("a_1") and names empty ones ("column3").
_MADE_UP_NAME = re.compile(r".+_[0-9]+|column[0-9]+")


def _header_names(con, path: Path, kind: str, found: list[str]) -> list[str | None]:
    """The column names as the file writes them, in file order (the reader renames repeated and
    empty ones); the reader's names when the file's own cannot be had."""
    if not any(_MADE_UP_NAME.fullmatch(name) for name in found):
        return list(found)
    try:
        if kind == "csv":
            row = con.execute(f"SELECT * FROM {_reader(kind, header=False)} LIMIT 1", [str(path)]).fetchone()
            names = list(row) if row is not None else []
        else:
            names = pq.read_schema(path).names
    except (duckdb.Error, OSError, ValueError):
        return list(found)
    return names if len(names) == len(found) else list(found)


def _reader(kind: str, header: bool = True) -> str:
    if kind == "csv":
        return (
            f"read_csv(?, all_varchar=true, header={str(header).lower()}, delim=',', quote='\"', escape='\"', "
            f"max_line_size={MAX_LINE_BYTES}, strict_mode=false)"
        )
    return "read_parquet(?)"


# A Parquet file's rows numbered from 0 in file order by the reader (a file holding a column of
# that name is numbered by a window instead).
ROW_NUMBER_COLUMN = "file_row_number"
PARQUET_NUMBERED_READER = f"read_parquet(?, {ROW_NUMBER_COLUMN}=true)"


def whole_number_sql(text: str) -> str:
    """SQL: the BIGINT of a text that is a whole number (WHOLE_NUMBER_PATTERN, in range), else NULL."""
    return (
        f"CASE WHEN regexp_full_match({text}, '{WHOLE_NUMBER_PATTERN}') "
        f"THEN TRY_CAST(regexp_extract({text}, '{INTEGER_PART_PATTERN}') AS BIGINT) END"
    )


def _typed_expression(column: FeedColumn, source: str | None, source_type: str | None) -> tuple[str, str, str]:
    """SQL for (typed value, 'failed to convert' flag, 'text too long' flag) of one feed column."""
    if source is None:
        return (column.default or "NULL"), "false", "false"
    raw = quote_ident(source)
    target = column.sql_type
    native = (
        source_type == target
        or (target == "BIGINT" and source_type in INTEGER_TYPES)
        or (
            target == "DOUBLE"
            and source_type
            and (source_type in INTEGER_TYPES or source_type.startswith(FRACTIONAL_TYPES))
        )
        or (target == "DATE" and source_type and source_type.startswith("TIMESTAMP"))
    )
    long_text = f"coalesce(length({raw}) > {MAX_TEXT_LENGTH}, false)" if source_type in TEXT_TYPES else "false"
    if native:
        value = raw if source_type == target else f"CAST({raw} AS {target})"
        failed = "false"
    elif target == "BIGINT" and source_type and source_type.startswith(FRACTIONAL_TYPES):
        # A Parquet float or decimal: taken only when its value has no fraction and fits.
        value = f"CASE WHEN {raw} = trunc({raw}) THEN TRY_CAST({raw} AS BIGINT) END"
        failed = f"coalesce({raw} IS NOT NULL AND {value} IS NULL, false)"
    else:
        text = raw if source_type in TEXT_TYPES else f"CAST({raw} AS VARCHAR)"
        if target == "VARCHAR":
            value, failed = f"CASE WHEN {text} = '' THEN NULL ELSE {text} END", "false"
        elif target == "BOOLEAN":
            word = f"lower(trim({text}))"
            value = f"CASE WHEN {word} IN {TRUE_WORDS} THEN true WHEN {word} IN {FALSE_WORDS} THEN false END"
            failed = f"(trim({text}) <> '' AND {value} IS NULL)"
        elif target == "BIGINT":
            value = whole_number_sql(f"trim({text})")
            failed = f"(trim({text}) <> '' AND {value} IS NULL)"
        else:
            value = f"TRY_CAST(NULLIF(trim({text}), '') AS {target})"
            failed = f"(trim({text}) <> '' AND {value} IS NULL)"
        failed = f"coalesce({failed}, false)"
    if column.default is not None:
        value = f"coalesce({value}, {column.default})"
    return value, failed, long_text


def _insert_typed(
    con,
    feed: Feed,
    relation: str,
    params: list,
    mapping: dict[str, tuple[str, str]],
    source: str,
    delivery: int,
    line_expr: str,
) -> int:
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


def _stage_tabular(con, feed: Feed, path: Path, source: str, delivery: int, kind: str, report: StageReport) -> int:
    if path.stat().st_size == 0:
        return 0
    reader = _reader(kind)
    described = con.execute(f"DESCRIBE SELECT * FROM {reader}", [str(path)]).fetchall()
    found = [(row[0], row[1]) for row in described]
    if kind == "csv" and [name for name, _ in found] == ["column0"] and not _has_header_line(path):
        return 0
    headers = _header_names(con, path, kind, [name for name, _ in found])
    mapping = _match_columns(feed, [(h, n, t) for h, (n, t) in zip(headers, found)], source, report)
    if kind == "parquet" and not any(name.lower() == ROW_NUMBER_COLUMN for name, _ in found):
        # The reader numbers a Parquet file's rows as it scans them in parallel; a window over the
        # whole file would run on one thread.
        reader, line = PARQUET_NUMBERED_READER, f"{ROW_NUMBER_COLUMN} + 1"
    else:
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
    seen_keys: dict[str, str] = {}  # normalised key -> the key as first written
    repeated: dict[str, tuple[str, int]] = {}  # normalised key -> (the repeated key as written, first line)
    broken = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_float=_JsonNumber, object_pairs_hook=_JsonObject.of)
        except json.JSONDecodeError as error:
            report.problems.append(FileProblem(feed.name, source, "malformed_json", _first_line(error), number))
            broken += 1
            continue
        if not isinstance(record, _JsonObject):
            report.problems.append(
                FileProblem(feed.name, source, "malformed_json", "line is not a JSON object", number)
            )
            broken += 1
            continue
        normalised: dict[str, object] = {}
        for key, value in record.pairs:  # of two keys with one name, the first is read (as in a header)
            norm = _normalised(str(key))
            if norm in normalised:
                repeated.setdefault(norm, (str(key), number))
                continue
            normalised[norm] = value
            seen_keys.setdefault(norm, str(key))
        for c in feed.column_names:
            columns[c].append(_json_text(normalised.get(c)))
        lines.append(number)
    if not lines:
        return broken
    missing = [c for c in feed.required_columns if c not in seen_keys]
    if missing:
        raise _Rejected("missing_columns", f"required column(s) missing: {', '.join(missing)}")
    for key, first_line in repeated.values():
        report.skipped.append(SkippedEntry(feed.name, source, REPEATED_KEY.format(name=key, line=first_line)))
    extra = [seen_keys[k] for k in sorted(set(seen_keys) - set(feed.column_names))]
    if extra:
        report.skipped.append(
            SkippedEntry(feed.name, source, EXTRA_COLUMNS.format(feed=feed.name, names=", ".join(extra)))
        )
    arrays = {c: pa.array(v, pa.string()) for c, v in columns.items()}
    arrays["_line"] = pa.array(lines, pa.int64())
    con.register("_jsonl_batch", pa.table(arrays))
    try:
        mapping = {c: (c, "VARCHAR") for c in feed.column_names if c in seen_keys}
        # Broken lines count as rows delivered (and quarantined).
        return _insert_typed(con, feed, "_jsonl_batch", [], mapping, source, delivery, "_line") + broken
    finally:
        con.unregister("_jsonl_batch")


class _JsonNumber(float):
    """A JSON number with a fraction or an exponent, which keeps the text it was written as, so that
    an integer column judges "1e1" or "3.50" as delivered."""

    text: str

    def __new__(cls, text: str):
        number = super().__new__(cls, text)
        number.text = text
        return number


class _JsonObject(dict):
    """A JSON object as usual (the last of repeated keys), which also keeps its (key, value) pairs
    as written, so that a repeated key can be found and the first one read."""

    pairs: list

    @classmethod
    def of(cls, pairs: list) -> "_JsonObject":
        obj = cls(pairs)
        obj.pairs = pairs
        return obj


def _json_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, _JsonNumber):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
