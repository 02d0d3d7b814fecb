"""Reference DiWZ: the rules of SPEC §3.4 written out plainly, to check the fast path against.

It reads feed row dicts (as the fixtures and pipeline.synthetic.generator produce them), replays every
month from scratch with plain dicts, and returns each month's list and history rows as plain
values with the same columns as pipeline.systems.diwz.rules. Sums of expectations run in the same
order as the fast path (waiting results first, then the game's opponents in power order), so
the two agree to the last bit.
"""

from __future__ import annotations

import datetime as dt
import math
from fractions import Fraction
from typing import Mapping

from pipeline.core.months import Month, add_years
from pipeline.core.rounding import half_up_int


def _day(value) -> dt.date:
    """A date from a date or an ISO string."""
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


def _games(rows: list[dict]) -> list[dict]:
    """Rated games in processing order, each with its powers sorted by power name."""
    by_id: dict[str, dict] = {}
    for row in rows:
        game = by_id.setdefault(
            row["game_id"],
            {
                "game_id": row["game_id"],
                "day": _day(row["finished_on"]),
                "rated": row.get("rated", True),
                "supply_centres": row.get("supply_centres", 34),
                "powers": [],
            },
        )
        owner = row["player_id"]
        if row.get("replacement_denies") and row.get("original_player_id"):
            owner = row["original_player_id"]
        game["powers"].append(
            {
                "power": row["power"],
                "player": owner,
                "result": row["result"],
                "centres": row["centres"],
                "year": row.get("eliminated_year"),
            }
        )
    games = [game for game in by_id.values() if game["rated"]]
    for game in games:
        game["powers"].sort(key=lambda power: power["power"])
    games.sort(key=lambda game: (game["day"], game["game_id"]))
    return games


def _waves(game: dict) -> list[int]:
    """For each power, the index of the wave in which it dropped out (higher = later = better)."""
    powers = game["powers"]
    count = len(powers)
    vz = game["supply_centres"]
    waves: list[list[int]] = []
    for year in sorted({p["year"] for p in powers if p["result"] == "eliminated"}):
        waves.append([i for i, p in enumerate(powers) if p["result"] == "eliminated" and p["year"] == year])
    rest = [i for i, p in enumerate(powers) if p["result"] in ("survived", "anarchy")]
    low = [i for i in rest if powers[i]["centres"] < Fraction(vz, count)]
    middle = [i for i in rest if i not in low and powers[i]["centres"] < 2 * Fraction(vz, count)]
    high = [i for i in rest if i not in low and i not in middle]
    waves += [low, middle, high]
    waves.append([i for i, p in enumerate(powers) if p["result"] == "draw"])
    waves.append([i for i, p in enumerate(powers) if p["result"] == "solo"])
    wave_of = [0] * count
    for number, members in enumerate(waves):
        for i in members:
            wave_of[i] = number
    return wave_of


def _w(mine: float, theirs: float) -> float:
    """Expectation against one opponent."""
    return 1 / (1 + 10 ** (-0.0025 * (mine - theirs)))


def _we(mine: float, results: list) -> float:
    """Expectation over results, summed in their order."""
    total = 0.0
    for _points, theirs in results:
        total = total + _w(mine, theirs)
    return total


def _erstzahl(results: list) -> int | None:
    """The iterated first rating, or None below 5 results or at 0% / 100%."""
    n = len(results)
    points = sum(points for points, _ in results)
    if n < 5 or points == 0 or points == n:
        return None
    current = 1600.0
    for _ in range(10_000):
        nxt = current + (points - _we(current, results)) * 800 / (20 + n)
        if math.floor(nxt) == math.floor(current):
            return math.floor(nxt)
        current = nxt
    return math.floor(current)


def _expired(person: dict, day: dt.date) -> bool:
    """Whether a rating has gone more than two years without an evaluation on `day`."""
    anchor = person["last"] or person["since"]
    return person["rating"] is not None and anchor is not None and day > add_years(anchor, 2)


def _unrated() -> dict:
    """A player with no rating and nothing collected."""
    return {"rating": None, "count": 0, "last": None, "since": None, "waiting": [], "collected": []}


def reference_diwz(
    rows: list[dict],
    months: list[Month],
    newcomers: str = "erstzahl",
    initial_ratings: Mapping[str, tuple[int, int]] | None = None,
) -> list[dict]:
    """Per month: {"month", "rankings": [row dicts], "history": [row dicts]}."""
    games = _games(rows)
    people: dict[str, dict] = {}
    for pid, (rating, count) in (initial_ratings or {}).items():
        people[pid] = {**_unrated(), "rating": rating, "count": count}
    first_month = None
    output = []
    for month in months:
        month_games = [g for g in games if Month.of(g["day"]) == month]
        if first_month is None and month_games:
            first_month = month
            for person in people.values():
                if person["rating"] is not None:
                    person["since"] = month.first_day
        start_everyone = newcomers == "start_1600" or (not initial_ratings and month == first_month)
        history = []
        for game in month_games:
            day = game["day"]
            players = [p["player"] for p in game["powers"]]
            for pid in players:
                person = people.setdefault(pid, _unrated())
                if _expired(person, day):
                    people[pid] = person = _unrated()
                if person["rating"] is None and start_everyone:
                    person.update(rating=1600, count=0, last=None, since=day, waiting=[], collected=[])
            before = {pid: people[pid]["rating"] for pid in players}
            waves = _waves(game)
            for i, pid in enumerate(players):
                mine = []
                for j, other in enumerate(players):
                    if j == i or before[other] is None:
                        continue
                    points = 1.0 if waves[i] > waves[j] else 0.5 if waves[i] == waves[j] else 0.0
                    mine.append((points, before[other]))
                person = people[pid]
                row = {
                    "source_id": game["game_id"],
                    "source_date": day,
                    "player_id": pid,
                    "rating_before": None,
                    "rating_after": None,
                    "score": float(sum(p for p, _ in mine)),
                    "opponents": len(mine),
                    "niveau": sum(r for _, r in mine) / len(mine) if mine else None,
                    "expected": None,
                    "performance": None,
                    "pooled": False,
                    "evaluations": None,
                }
                if before[pid] is None:
                    everything = person["collected"] + mine
                    first = _erstzahl(everything) if mine else None
                    if first is None:
                        person["collected"] = everything
                    else:
                        n = len(everything)
                        points = float(sum(p for p, _ in everything))
                        we = _we(first, everything)
                        row.update(
                            rating_after=float(first),
                            score=points,
                            opponents=n,
                            niveau=sum(r for _, r in everything) / n,
                            expected=we,
                            performance=first + (points - we) * 800 / n,
                            pooled=len(person["collected"]) > 0,
                            evaluations=1,
                        )
                        person.update(rating=first, count=1, last=day, since=day, waiting=[], collected=[])
                else:
                    old = before[pid]
                    everything = person["waiting"] + mine
                    n = len(everything)
                    row["rating_before"] = float(old)
                    if n < 3:
                        person["waiting"] = everything
                        row.update(expected=_we(old, mine), evaluations=person["count"])
                    else:
                        points = float(sum(p for p, _ in everything))
                        we = _we(old, everything)
                        te = old + (points - we) * 800 / n
                        new = half_up_int(old + (te - old) * n / (20 + n))
                        row.update(
                            rating_after=float(new),
                            score=points,
                            opponents=n,
                            niveau=sum(r for _, r in everything) / n,
                            expected=we,
                            performance=te,
                            pooled=len(person["waiting"]) > 0,
                            evaluations=person["count"] + 1,
                        )
                        person.update(rating=new, count=person["count"] + 1, last=day, waiting=[])
                history.append(row)
        for pid, person in people.items():
            if _expired(person, month.last_day):
                people[pid] = _unrated()
        listed = sorted(
            (pid for pid, person in people.items() if person["rating"] is not None),
            key=lambda pid: (-people[pid]["rating"], pid),
        )
        rankings = []
        for pid in listed:
            person = people[pid]
            better = sum(1 for other in listed if people[other]["rating"] > person["rating"])
            rankings.append(
                {
                    "rank": better + 1,
                    "player_id": pid,
                    "rating": float(person["rating"]),
                    "evaluations": person["count"],
                    "display": f"{person['rating']}-{person['count']}",
                    "last_evaluated": person["last"],
                }
            )
        output.append({"month": month, "rankings": rankings, "history": history})
    return output
