"""Same input, same bytes; non-conflicting deliveries in another order or split, same outputs."""

import datetime as dt

from pipeline.synthetic.generator import synthetic_games
from tests.support import run_cli, tree_bytes, write_csv

OUTPUTS = ("rankings", "history", "awards", "validated")


def test_delivery_order_does_not_matter(tmp_path):
    games = list(synthetic_games(31, 120, 20, dt.date(2019, 1, 1), dt.date(2019, 12, 31)))
    one = tmp_path / "one"
    write_csv(one / "games" / "all.csv", games)
    split = tmp_path / "split"
    ids = sorted({g["game_id"] for g in games})
    thirds = [set(ids[i::3]) for i in range(3)]
    for name, part in zip(("z_first.csv", "m_middle.csv", "a_last.csv"), thirds):
        write_csv(split / "games" / name, list(reversed([g for g in games if g["game_id"] in part])))
    results = {}
    for label, raw in (("one", one), ("split", split)):
        code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / f"w_{label}"), "--quiet")
        assert code == 0, out + err
        results[label] = tree_bytes(tmp_path / f"w_{label}", OUTPUTS)
    assert results["one"] and results["one"] == results["split"]


def test_names_round_trip_exactly_into_parquet(tmp_path):
    import pyarrow.parquet as pq

    names = [
        'Øhrn, Karl "Eagle"',
        "two\nlines",
        "Robert'); DROP TABLE games;--",
        "Müller 🙂 <b>&amp;",
        "ترکی",
        "  spaced  ",
        "日本語",
    ]
    games = list(synthetic_games(32, 1, 7, dt.date(2019, 5, 1), dt.date(2019, 5, 1)))
    for row, name in zip(games, names):
        row["player_name"] = name
        row["original_player_id"], row["replacement_denies"] = None, False
    write_csv(tmp_path / "raw" / "games" / "g.csv", games)
    code, out, err = run_cli(
        "run", "--raw", str(tmp_path / "raw"), "--warehouse", str(tmp_path / "w"), "--systems", "club", "--quiet"
    )
    assert code == 0, out + err
    table = pq.read_table(tmp_path / "w" / "rankings" / "club" / "year=2019" / "month=05" / "rankings.parquet")
    assert sorted(table.column("player_name").to_pylist()) == sorted(names)


def test_systems_side_by_side_write_what_one_after_another_writes(tmp_path):
    """Rating systems run in separate processes when cores allow; the bytes do not depend on it."""
    from tests.support import environment

    raw = tmp_path / "raw"
    write_csv(raw / "games" / "g.csv", list(synthetic_games(33, 150, 25, dt.date(2018, 1, 1), dt.date(2019, 6, 30))))
    results = {}
    for at_once in ("1", "2"):
        with environment(DIPRANK_SYSTEMS_AT_ONCE=at_once):
            code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(tmp_path / f"w{at_once}"), "--quiet")
        assert code == 0, out + err
        results[at_once] = tree_bytes(tmp_path / f"w{at_once}", OUTPUTS)
    assert results["1"] and results["1"] == results["2"]


def test_systems_run_in_this_process_one_at_a_time_else_each_in_a_spawned_process(monkeypatch):
    """One system at a time rates in the command's process; more run each in a spawned process of
    its own (this process holds DuckDB's and Arrow's threads, which a fork would copy), at most that
    many at once, their summaries yielded in the plans' order."""
    import multiprocessing

    import pipeline.orchestrate as orchestrate
    from pipeline.core.months import Month
    from pipeline.rating.planning import Plan
    from pipeline.settings import Settings

    in_process, start_methods = [], []
    monkeypatch.setattr(
        orchestrate,
        "rate_system",
        lambda plan, settings, instance=None, bounds=None: in_process.append(plan.system),
    )
    monkeypatch.setattr(orchestrate, "bounds_now", lambda settings, last_planned=None: {})  # no warehouse here

    class Child:
        """A process that reports its plan's summary as soon as it starts."""

        live = most = 0

        def __init__(self, target, args, name):
            self.plan, self.sender, self.exitcode, self.joined = args[0], args[4], 0, False

        def start(self):
            Child.live += 1
            Child.most = max(Child.most, Child.live)
            self.sender.send(orchestrate.SystemRun(self.plan.system, self.plan.first, self.plan.last, 1, 0.0))

        def join(self):
            Child.live -= not self.joined
            self.joined = True

    class Spawning:
        Pipe = staticmethod(multiprocessing.Pipe)
        Process = Child

    def get_context(method):
        start_methods.append(method)
        return Spawning()

    monkeypatch.setattr(orchestrate.multiprocessing, "get_context", get_context)
    month = Month(2026, 1)
    plans = [Plan(s, month, month) for s in ("club", "eagle", "diwz", "dip_pouch")]
    list(orchestrate.rate_systems(plans, Settings(systems_at_once=1)))
    assert in_process == ["club", "eagle", "diwz", "dip_pouch"] and start_methods == []
    runs = list(orchestrate.rate_systems(plans, Settings(systems_at_once=3)))
    assert [r.system for r in runs] == ["club", "eagle", "diwz", "dip_pouch"] and in_process == [
        s.system for s in plans
    ]
    assert start_methods == ["spawn"] and Child.most == 3 and Child.live == 0
    Child.most = 0
    list(orchestrate.rate_systems(plans[:2], Settings(systems_at_once=4)))
    assert Child.most == 2  # never more processes than runs
