"""Regenerate the generated part of the bundled sample feeds in data/raw/.

    python data/make_sample.py [--out DIR]

Deterministic: running it again writes byte-identical files. It writes only the files listed
in GENERATED; the handcrafted files beside them (events/wdd_events.csv,
event_results/dixie33_2019.csv, players/wdd_dixie33.csv) are left as they are.

What it writes:
- games/: about 750 online games, 2017-01 to 2020-12, among about 75 players (7 powers,
  standard plus a few variant and unrated games, replacements), one delivery per year (2019
  as Parquet; 2020 in two parts, the last quarter as JSON Lines), and a later correction delivery that
  re-delivers two rows of one 2018 game with a changed, still valid result.
- events/synthetic_events.csv and event_results/: fictional face-to-face events from 1999 to
  2020 and a synthetic results list for World DipCon VIII (1998).
- players/registry.csv: the registry of every fictional player.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.synthetic.generator import (  # noqa: E402
    COUNTRY_NAMES,
    EVENT_RESULTS_SCHEMA,
    EVENTS_SCHEMA,
    PLAYERS_SCHEMA,
    VARIANTS,
    PlayerPool,
    game_days,
    games_table,
    placements,
    player_pool,
    random_names,
    write_table,
)

SEED = 20190526
RAW = Path(__file__).resolve().parent / "raw"
FIRST_DAY, LAST_DAY = dt.date(2017, 1, 1), dt.date(2020, 12, 31)
N_GAMES = 760
N_ONLINE = 72
N_FACE_TO_FACE = 150

GENERATED = (
    "games/2017.csv",
    "games/2018.csv",
    "games/2019.parquet",
    "games/2020-q1-q3.csv",
    "games/2020-q4.jsonl",
    "games/2021-01-15_corrections.csv",
    "events/synthetic_events.csv",
    "event_results/1998-2013.csv",
    "event_results/2016-2020.jsonl",
    "players/registry.csv",
)

# Fictional players who recur over the years, online and face to face: id, name, country.
REGULARS = (
    ("w0101", "Ingrid Øhrn", "Norway"),
    ("w0102", "Jürgen Müller", "Germany"),
    ("w0103", "Élodie Lefèvre", "France"),
)

# Synthetic events: id, name, start, end, location, country, rounds, field, listed, world,
# and the places of the regulars who took part (index into REGULARS -> list position).
EVENTS = (
    ("hanse-cup-1999", "Hanse Cup 1999", "1999-03-13", "1999-03-14", "Hamburg", "Germany", 2, 21, 21, False, {1: 0}),
    ("oslo-open-2000", "Oslo Open 2000", "2000-10-07", "2000-10-07", "Oslo", "Norway", 1, 14, 14, False, {0: 1}),
    ("euro-2003", "European Championship 2003", "2003-08-29", "2003-08-31", "Leuven", "Belgium", 3, 49, 49, False, {0: 6, 2: 11}),
    ("rhine-cup-2006", "Rhine Cup 2006", "2006-04-22", "2006-04-22", "Köln", "Germany", 1, 18, 18, False, {1: 3}),
    ("nordic-open-2009", "Nordic Open 2009", "2009-09-12", "2009-09-13", "Göteborg", "Sweden", 2, 28, 20, False, {0: 0}),
    ("nac-2011", "North American Championship 2011", "2011-07-15", "2011-07-17", "Chicago", "USA", 3, 42, 42, False, {}),
    ("euro-2013", "European Championship 2013", "2013-09-06", "2013-09-08", "Kraków", "Poland", 3, 56, 45, False, {0: 4, 1: 17, 2: 2}),
    ("paris-open-2016", "Paris Open 2016", "2016-03-19", "2016-03-19", "Paris", "France", 1, 21, 21, False, {2: 0}),
    ("hanse-cup-2018", "Hanse Cup 2018", "2018-04-14", "2018-04-15", "Bremen", "Germany", 3, 35, 35, False, {0: 8, 1: 1}),
    ("apac-2019", "Asia-Pacific Championship 2019", "2019-10-04", "2019-10-06", "Melbourne", "Australia", 3, 28, 28, False, {}),
    ("nordic-open-2020", "Nordic Open 2020", "2020-02-15", "2020-02-16", "Oslo", "Norway", 2, 16, 16, False, {0: 2}),
)
# World DipCon VIII's event row is handcrafted (events/wdd_events.csv); its list here is synthetic.
# id, end, country, field, listed (the top 40 of 77), regulars' list positions.
WDC_VIII = ("wdc-viii-1998", "1998-05-24", "USA", 77, 40, {0: 11, 2: 23})


def unique_names(gen: np.random.Generator, count: int, taken: set[str]) -> tuple[list[str], list[int]]:
    """count fictional names not in taken (which they join), with their country codes."""
    names: list[str] = []
    codes: list[int] = []
    while len(names) < count:
        batch, batch_codes = random_names(gen, count)
        for name, code in zip(batch.to_pylist(), batch_codes.tolist()):
            if name not in taken and len(names) < count:
                taken.add(name)
                names.append(name)
                codes.append(code)
    return names, codes


def face_to_face_pool(gen: np.random.Generator, taken: set[str]) -> tuple[list[str], list[str], list[str | None]]:
    """Fictional tournament players: ids w0101.., names and countries (a few unknown)."""
    ids = [r[0] for r in REGULARS] + [f"w{i:04d}" for i in range(104, 104 + N_FACE_TO_FACE)]
    names, codes = unique_names(gen, N_FACE_TO_FACE, taken)
    countries = [COUNTRY_NAMES[c] if gen.random() >= 0.05 else None for c in codes]
    return ids, [r[1] for r in REGULARS] + names, [r[2] for r in REGULARS] + countries


def event_results(gen, ids, names, countries):
    """Results lists of WDC VIII and the synthetic events, with shared places."""
    rows = []
    specs = [(WDC_VIII[0], WDC_VIII[1], WDC_VIII[2], WDC_VIII[4], WDC_VIII[5])]
    specs += [(e[0], e[3], e[5], e[8], e[10]) for e in EVENTS]
    for event_id, end, country, listed, regulars in specs:
        slots = [None] * listed
        for regular, position in regulars.items():
            slots[position] = regular
        others = list(range(len(REGULARS), len(ids)))
        key = gen.random(len(others)) - np.array([0.5 if countries[i] == country else 0.0 for i in others])
        order = [others[i] for i in np.argsort(key, kind="stable")]
        fill = iter(order)
        places = placements(gen, listed).tolist()
        for position in range(listed):
            who = slots[position] if slots[position] is not None else next(fill)
            nationality = countries[who] if gen.random() >= 0.08 else None
            rows.append((event_id, end, ids[who], names[who], nationality, places[position]))
    return rows


def online_pool(gen: np.random.Generator, taken: set[str]) -> PlayerPool:
    """The online players: p0001.. plus the regulars, who also play online."""
    pool = player_pool(gen, N_ONLINE, FIRST_DAY.year, LAST_DAY.year, id_prefix="p", id_width=4, id_start=1, min_active=45)
    ids = pool.ids.to_pylist()
    names, codes = unique_names(gen, N_ONLINE, taken)
    country = np.where(pool.country >= 0, np.array(codes), -1)
    for slot, (pid, name, nation) in enumerate(REGULARS):
        ids[slot], names[slot] = pid, name
        country[slot] = COUNTRY_NAMES.index(nation)
        pool.in_registry[slot] = False  # registered with the face-to-face players
        pool.weight[slot] = 2.0
    pool.ids, pool.names, pool.country = pa.array(ids, pa.string()), pa.array(names, pa.string()), country
    # The regulars play every year.
    pool.active = [np.union1d(year, np.arange(len(REGULARS))) for year in pool.active]
    return pool


def correction(games: pa.Table) -> pa.Table:
    """Two re-delivered rows of the first 2018 draw with a survivor: the survivor joins the draw."""
    rows = games.to_pylist()
    by_game: dict[str, list[dict]] = {}
    for row in rows:
        by_game.setdefault(row["game_id"], []).append(row)
    for game_id, powers in by_game.items():
        if powers[0]["finished_on"].year != 2018 or powers[0]["variant"] != "standard":
            continue
        draw = [p for p in powers if p["result"] == "draw" and p["centres"] >= 3]
        survivor = [p for p in powers if p["result"] == "survived" and not p["original_player_id"]]
        if len([p for p in powers if p["result"] == "draw"]) == 2 and draw and survivor:
            giver, joiner = dict(max(draw, key=lambda p: p["centres"])), dict(survivor[0])
            giver["centres"] -= 1
            joiner["result"], joiner["centres"] = "draw", joiner["centres"] + 1
            fixed = sorted([giver, joiner], key=lambda p: p["power"])
            return pa.Table.from_pylist(fixed, schema=games.schema)
    raise RuntimeError("no game to correct")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RAW, help="raw folder (default data/raw)")
    out = parser.parse_args(argv).out
    root = np.random.SeedSequence(SEED)
    pool_seed, games_seed, f2f_seed, events_seed = (np.random.default_rng(s) for s in root.spawn(4))

    # Online games.
    taken = {r[1] for r in REGULARS}
    pool = online_pool(pool_seed, taken)
    per_day = game_days(games_seed, N_GAMES, FIRST_DAY, LAST_DAY, growth=0.5)
    days = (FIRST_DAY - dt.date(1970, 1, 1)).days + np.repeat(np.arange(len(per_day)), per_day)
    ids = pc.binary_join_element_wise(
        pa.array(["g"] * N_GAMES), pc.utf8_lpad(pc.cast(pa.array(np.arange(1, N_GAMES + 1)), pa.string()), 5, "0"), ""
    )
    games = games_table(
        games_seed, pool, days, ids,
        variants=tuple(v for v in VARIANTS if len(v.powers) == 7),  # 7 powers in the sample
        sites=("dip2000", "deac"), site_shares=(0.6, 0.4), replacement_rate=0.03,
    )
    day = games.column("finished_on")

    def between(first: str, last: str) -> pa.Table:
        lo, hi = pa.scalar(dt.date.fromisoformat(first)), pa.scalar(dt.date.fromisoformat(last))
        return games.filter(pc.and_(pc.greater_equal(day, lo), pc.less_equal(day, hi)))
    write_table(between("2017-01-01", "2017-12-31"), out / "games/2017.csv", "csv")
    write_table(between("2018-01-01", "2018-12-31"), out / "games/2018.csv", "csv")
    write_table(between("2019-01-01", "2019-12-31"), out / "games/2019.parquet", "parquet")
    write_table(between("2020-01-01", "2020-09-30"), out / "games/2020-q1-q3.csv", "csv")
    write_table(between("2020-10-01", "2020-12-31"), out / "games/2020-q4.jsonl", "jsonl")
    write_table(correction(games), out / "games/2021-01-15_corrections.csv", "csv")

    # Face-to-face events.
    f_ids, f_names, f_countries = face_to_face_pool(f2f_seed, taken)
    events = pa.Table.from_pylist(
        [
            {
                "event_id": e[0], "name": e[1], "start_date": dt.date.fromisoformat(e[2]),
                "end_date": dt.date.fromisoformat(e[3]), "location": e[4], "country": e[5],
                "rounds": e[6], "num_players": e[7], "is_world_championship": e[9],
            }
            for e in EVENTS
        ],
        schema=EVENTS_SCHEMA,
    )
    write_table(events, out / "events/synthetic_events.csv", "csv")
    results = event_results(events_seed, f_ids, f_names, f_countries)

    def results_table(keep) -> pa.Table:
        return pa.Table.from_pylist(
            [
                {"event_id": r[0], "player_id": r[2], "player_name": r[3], "nationality": r[4], "placement": r[5]}
                for r in results if keep(r[1])
            ],
            schema=EVENT_RESULTS_SCHEMA,
        )
    write_table(results_table(lambda end: end < "2014"), out / "event_results/1998-2013.csv", "csv")
    write_table(results_table(lambda end: end >= "2014"), out / "event_results/2016-2020.jsonl", "jsonl")

    # Registry: every fictional player, online and face to face.
    online = pool.registry()
    registry = pa.concat_tables(
        [
            pa.table({"player_id": f_ids, "name": f_names, "country": f_countries}, schema=PLAYERS_SCHEMA),
            online,
        ]
    )
    write_table(registry, out / "players/registry.csv", "csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
