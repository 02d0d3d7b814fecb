"""What the raw folder holds but a run does not read is listed in the summary, once, with why."""

import os
import signal
import stat

import duckdb
import pytest

from pipeline.core.feed_spec import FEEDS
from tests.support import rankings, run_cli, write_csv
from tests.test_validation import GOOD_GAME

HEADING = "skipped in the raw folder:"

# (path relative to the raw folder, reason) the summary must list, each exactly once.
EXPECTED = [
    ("games/loop.csv", "symbolic link loop"),
    ("games/gone.csv", "broken symbolic link (its target does not exist)"),
    ("games/linked", "link to a folder (links to folders are not followed)"),
    ("games/x.csv", "folder named like a delivery file, with no delivery inside"),
    ("games/pipe.csv", "not a regular file (named pipe); never opened"),
    ("scores", "not a feed folder (feeds: games, events, event_results, players, lists)"),
    ("notes.txt", "file outside the feed folders"),
    (
        "games/dup.csv",
        f"repeated column 'centres' (column {len(FEEDS['games'].column_names) + 1}) ignored; "
        "column 13 of that name is read",
    ),
    ("games/dup.csv", "columns not in the games feed, ignored: note"),
    ("games/dup.jsonl", "repeated key 'Centres' (first on line 1) ignored; the first key of that name is read"),
]


def build_raw(root):
    raw = root / "raw"
    games = raw / "games"
    write_csv(games / "good.csv", GOOD_GAME)
    # The same game shape again as game 'dup', with `centres` twice: the first column is read.
    columns = FEEDS["games"].column_names + ["centres", "note"]
    with (games / "dup.csv").open("w", encoding="utf-8") as handle:
        handle.write(",".join(columns) + "\n")
        for row in GOOD_GAME:
            values = {**row, "game_id": "dup"}
            line = ["" if values.get(c) is None else str(values[c]) for c in FEEDS["games"].column_names]
            handle.write(",".join(line + ["99", "remark"]) + "\n")
    import json

    with (games / "dup.jsonl").open("w", encoding="utf-8") as handle:
        for row in GOOD_GAME:
            text = json.dumps({**row, "game_id": "dupj"})
            handle.write(text[:-1] + ', "Centres": 99}\n')
    os.symlink("loop.csv", games / "loop.csv")
    os.symlink("nowhere.csv", games / "gone.csv")
    (root / "elsewhere").mkdir()
    write_csv(root / "elsewhere" / "more.csv", GOOD_GAME)
    os.symlink(root / "elsewhere", games / "linked")
    (games / "x.csv").mkdir()
    os.mkfifo(games / "pipe.csv")
    write_csv(raw / "scores" / "table.csv", [{"a": 1}])
    (raw / "notes.txt").write_text("not a feed\n")
    (games / ".hidden.csv").write_text("ignored silently\n")
    (raw / ".cache").mkdir()
    (games / "notes.xlsx").write_bytes(b"PK\x03\x04")  # quarantined whole, as before: not a skipped entry
    return raw


def _hang(signum, frame):
    raise TimeoutError("the run hung (a named pipe was opened?)")


@pytest.fixture(scope="module")
def raw_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("rawfolder")
    raw = build_raw(root)
    assert stat.S_ISFIFO(os.lstat(raw / "games" / "pipe.csv").st_mode)
    old = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(300)
    try:
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(root / "w"), "--quiet")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return root / "w", code, out, err


def skipped_section(out: str) -> list[str]:
    lines = out.splitlines()
    assert HEADING in lines, out
    section = []
    for line in lines[lines.index(HEADING) + 1 :]:
        if not line.startswith("  "):
            break
        section.append(line)
    return section


def test_run_succeeds_and_rates_the_good_games(raw_run):
    warehouse, code, out, err = raw_run
    assert code == 0, out + err
    assert "Traceback" not in out + err
    table = rankings(warehouse, "club", "2020-03")
    assert {r["player_id"] for r in table} == {"a", "b", "c"}
    con = duckdb.connect(str(warehouse / "diprank.duckdb"), read_only=True)
    try:
        games = con.execute("SELECT game_id, power, centres FROM games ORDER BY ALL").fetchall()
    finally:
        con.close()
    assert {g for g, _, _ in games} == {"ok", "dup", "dupj"}
    assert all(centres != 99 for _, _, centres in games), "the first of two same-named columns is read"


def test_each_skipped_entry_is_listed_once_with_its_reason(raw_run):
    _, code, out, _ = raw_run
    section = skipped_section(out)
    for path, reason in EXPECTED:
        hits = [line for line in section if line.split()[0] == path and line.rstrip().endswith(reason)]
        assert len(hits) == 1, (path, reason, section)
    assert len(section) == len(EXPECTED), section


def test_hidden_entries_stay_silent_and_bad_files_stay_quarantined(raw_run):
    _, _, out, _ = raw_run
    assert ".hidden.csv" not in out and ".cache" not in out
    assert "unsupported_format" in out and "games/notes.xlsx" in out
    assert "games/notes.xlsx" not in "\n".join(skipped_section(out))


def test_skipped_entries_are_kept_in_duckdb(raw_run):
    warehouse, _, _, _ = raw_run
    con = duckdb.connect(str(warehouse / "diprank.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT path, reason FROM raw_skipped ORDER BY ALL").fetchall()
    finally:
        con.close()
    assert rows == sorted(EXPECTED)


def test_a_clean_raw_folder_lists_nothing(tmp_path):
    raw = tmp_path / "raw"
    write_csv(raw / "games" / "good.csv", GOOD_GAME)
    code, out, err = run_cli(
        "run", "--raw", str(raw), "--warehouse", str(tmp_path / "w"), "--quiet", "--systems", "club"
    )
    assert code == 0, out + err
    assert HEADING not in out
