"""A plain, slow reference of the Eagle points rules (SPEC §3.3), for testing the fast path.

It keeps every player's whole game list, recomputes table points from it whenever they are
needed and sorts the whole table each time a position is asked for: obviously correct,
quadratic, only for small inputs. Values are exact Decimals; `as_rows` gives the output form.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pipeline.core.months import Month, add_years
from pipeline.core.rounding import half_up
from pipeline.systems.games import Game
from schemas.eagle import PLAYER_OF_THE_MONTH


@dataclass
class Entry:
    """One finished game of one player."""

    game_id: str
    day: dt.date
    points: Decimal
    starts_run: bool  # first game ever, or first after a more-than-7-year gap


@dataclass
class ReferenceMonth:
    """The reference's outputs for one month, as lists of row dicts with Decimal values."""

    month: Month
    table: list[dict] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    awards: list[dict] = field(default_factory=list)


def contribution(position: int | None) -> Decimal:
    """0.5 + (601 - P)/400 rounded half up for 1 <= P <= 602; 0.50 below or unlisted."""
    if position is not None and 1 <= position <= 602:
        return half_up(Decimal("0.5") + (Decimal(601) - position) / Decimal(400), 2)
    return Decimal("0.50")


def points_for(result: str, centres: int, value: Decimal, drawers: int) -> Decimal:
    """Points of one power's result in a game of value `value`."""
    return {
        "solo": lambda: value,
        "draw": lambda: half_up(value / drawers, 2),
        "survived": lambda: Decimal("0.10") + Decimal("0.01") * centres,
        "eliminated": lambda: Decimal("0.01"),
        "anarchy": lambda: Decimal("0"),
    }[result]()


def current_run(entries: list[Entry], upto: dt.date) -> list[Entry]:
    """A player's games up to a date since their last restart."""
    seen = [e for e in entries if e.day <= upto]
    starts = [i for i, e in enumerate(seen) if e.starts_run]
    return seen[starts[-1] :] if starts else []


def table_points(run: list[Entry]) -> Decimal:
    """Sum of the points of the last 10 games of a run."""
    return sum((e.points for e in run[-10:]), Decimal("0"))


def table_at(games_of: dict[str, list[Entry]], day: dt.date) -> list[dict]:
    """The table as of `day` (listing measured at that date), sorted and ranked."""
    rows: list[dict[str, Any]] = []
    for pid, entries in games_of.items():
        run = current_run(entries, day)
        if not run:
            continue
        last = run[-1].day
        if not day < add_years(last, 2):
            continue
        rows.append(
            {
                "player_id": pid,
                "points": table_points(run),
                "games": len(run),
                "last_game_date": last,
                "points_to_defend": run[-10].points if len(run) >= 10 else None,
            }
        )
    rows.sort(key=lambda r: (-r["points"], r["games"], -r["last_game_date"].toordinal(), r["player_id"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
        row["rating"] = row["points"]
        row["new_eagles"] = contribution(rank)
    return rows


def winners(values: dict) -> list:
    """Keys holding the largest value, sorted."""
    if not values:
        return []
    top = max(values.values())
    return sorted(k for k, v in values.items() if v == top)


def eagle_reference(
    games: list[Game], months: list[Month], variants: tuple[str, ...] = ("standard",), positions: str = "published"
) -> list[ReferenceMonth]:
    """Every month's table, history and awards under the Eagle rules, computed the slow way."""
    games_of: dict[str, list[Entry]] = {}
    log: list[dict] = []  # one dict per counted game: id, day, value, soloist, points by player, rookies
    previous_ranks: dict[str, int] = {}
    out = []
    for month in months:
        result = ReferenceMonth(month)
        month_games = [g for g in games if Month.of(g.finished_on) == month and g.variant in variants]
        month_games.sort(key=lambda g: (g.finished_on, g.game_id))
        players_this_month: list[str] = []
        for game in month_games:
            if positions == "live":
                before_table = table_at(games_of, game.finished_on)
                ranks = {row["player_id"]: row["rank"] for row in before_table}
            else:
                ranks = previous_ranks
            contribs = {
                p.player_id: Decimal(0) if p.result == "anarchy" else contribution(ranks.get(p.player_id))
                for p in game.powers
            }
            value = sum(contribs.values(), Decimal(0))
            drawers = len([p for p in game.powers if p.result == "draw"])
            earned = {}
            rookies = []
            for power in game.powers:
                pid = power.player_id
                entries = games_of.setdefault(pid, [])
                if not entries:
                    rookies.append(pid)
                restart = not entries or game.finished_on > add_years(entries[-1].day, 7)
                before = None if restart else table_points(current_run(entries, game.finished_on))
                pts = points_for(power.result, power.centres, value, drawers)
                earned[pid] = pts
                entries.append(Entry(game.game_id, game.finished_on, pts, restart))
                after = table_points(current_run(entries, game.finished_on))
                result.history.append(
                    {
                        "source_id": game.game_id,
                        "source_date": game.finished_on,
                        "player_id": pid,
                        "rating_before": before,
                        "rating_after": after,
                        "contribution": contribs[pid],
                        "game_value": value,
                        "points": pts,
                    }
                )
                if pid not in players_this_month:
                    players_this_month.append(pid)
            soloists = [p.player_id for p in game.powers if p.result == "solo"]
            log.append(
                {
                    "game_id": game.game_id,
                    "day": game.finished_on,
                    "value": value,
                    "soloist": soloists[0] if soloists else None,
                    "earned": earned,
                    "rookies": rookies,
                }
            )
        result.table = table_at(games_of, month.last_day)
        previous_ranks = {row["player_id"]: row["rank"] for row in result.table if row["rank"] <= 602}
        result.awards = month_awards(month, games_of, players_this_month, log, result.table)
        out.append(result)
    return out


def month_awards(
    month: Month, games_of: dict[str, list[Entry]], players_this_month: list[str], log: list[dict], table: list[dict]
) -> list[dict]:
    """Player of the month, plus the year's titles in December."""
    awards = []
    previous_end = month.first_day - dt.timedelta(days=1)
    changes = {}
    for pid in players_this_month:
        now = current_run(games_of[pid], month.last_day)
        # The run the player is in now, as it stood at the previous month end (empty if it began this month).
        earlier = [e for e in now if e.day <= previous_end]
        changes[pid] = table_points(now) - table_points(earlier)
    for pid in winners(changes):
        awards.append(_award("player_of_the_month", month, pid, changes[pid], None))
    if month.month != 12:
        return awards
    year_games = [g for g in log if g["day"].year == month.year]
    if table:
        awards.append(_award("king_of_the_mountain", month, table[0]["player_id"], table[0]["points"], None))
    solos = {(g["soloist"], g["game_id"]): g["value"] for g in year_games if g["soloist"] is not None}
    for pid, gid in winners(solos):
        awards.append(_award("most_valuable_victory", month, pid, solos[(pid, gid)], gid))
    totals: dict[str, Decimal] = {}
    for g in year_games:
        for pid, pts in g["earned"].items():
            totals[pid] = totals.get(pid, Decimal(0)) + pts
    for pid in winners(totals):
        awards.append(_award("runner_of_the_year", month, pid, totals[pid], None))
    firsts = {(pid, g["game_id"]): g["earned"][pid] for g in year_games for pid in g["rookies"]}
    for pid, gid in winners(firsts):
        awards.append(_award("rookie_of_the_year", month, pid, firsts[(pid, gid)], gid))
    return awards


def _award(award: str, month: Month, player_id: str, value: Decimal, game_id: str | None) -> dict:
    return {
        "award": award,
        "period": str(month) if award == PLAYER_OF_THE_MONTH else str(month.year),
        "player_id": player_id,
        "value": value,
        "game_id": game_id,
    }


def as_rows(rows: list[dict], columns: list[str]) -> list[dict]:
    """Rows in output form: the given columns in order, Decimals as float64."""
    return [{c: float(r[c]) if isinstance(r[c], Decimal) else r[c] for c in columns} for r in rows]
