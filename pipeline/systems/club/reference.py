"""Reference club rating (SPEC §3.2): every month's table recomputed from scratch, slowly and plainly.

S is summed over every (game, opponent) pair as exact fractions of the W% floats and rounded
once; the fast path must produce the same float64 values.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from pipeline.core.months import Month
from pipeline.systems.games import Game


def result_of(result: str) -> str:
    """W for a solo, D for a draw member, L for any other result."""
    if result == "solo":
        return "W"
    if result == "draw":
        return "D"
    return "L"


def games_of_year_to(games: list[Game], month: Month) -> list[Game]:
    """Games finished in the month's year up to the month's last day."""
    return [g for g in games if g.finished_on.year == month.year and g.finished_on <= month.last_day]


def players_of(games: list[Game]) -> set[str]:
    """Everyone with a result in these games."""
    return {p.player_id for g in games for p in g.powers}


def snapshot(games: list[Game], month: Month, memo: dict[Month, dict[str, dict]]) -> dict[str, dict]:
    """The table as of `month`: player -> column values, computed from all games."""
    if month in memo:
        return memo[month]
    year_games = games_of_year_to(games, month)
    results: dict[str, list[str]] = {}
    for g in year_games:
        for p in g.powers:
            results.setdefault(p.player_id, []).append(result_of(p.result))

    pct: dict[str, float] = {}
    for player, letters in results.items():
        w, d = letters.count("W"), letters.count("D")
        pct[player] = (2 * w + d) / (2 * len(letters))

    opponent_pcts: dict[str, list[float]] = {player: [] for player in results}
    for g in year_games:
        for p in g.powers:
            for q in g.powers:
                if q is not p:
                    opponent_pcts[p.player_id].append(pct[q.player_id])

    last_year_games = [g for g in games if g.finished_on.year == month.year - 1]
    legacy: dict[str, float] = {}
    if last_year_games:
        december = snapshot(games, Month(month.year - 1, 12), memo)
        for player in players_of(last_year_games):
            legacy[player] = 0.1 * december[player]["rating"]

    table: dict[str, dict[str, Any]] = {}
    for player in set(results) | set(legacy):
        letters = results.get(player, [])
        w, d = letters.count("W"), letters.count("D")
        points = math.log10(w + d / 2 + 1)
        old = legacy.get(player, 0.0)
        if letters:
            s = float(sum((Fraction(x) for x in opponent_pcts[player]), Fraction(0)) / len(opponent_pcts[player]))
            base = points * (pct[player] + s) / 2 * 100
            row: dict[str, Any] = {
                "wins": w,
                "draws": d,
                "losses": letters.count("L"),
                "games": len(letters),
                "win_points": points,
                "win_pct": pct[player],
                "schedule_strength": s,
                "base_rating": base,
                "legacy": old,
                "rating": base + old,
            }
        else:
            row = {
                "wins": 0,
                "draws": 0,
                "losses": 0,
                "games": 0,
                "win_points": points,
                "win_pct": None,
                "schedule_strength": None,
                "base_rating": 0.0,
                "legacy": old,
                "rating": old,
            }
        table[player] = row
    memo[month] = table
    return table


def ranked(table: dict[str, dict]) -> list[dict]:
    """Rows sorted by rating desc then player_id, equal ratings sharing the best rank."""
    order = sorted(table, key=lambda player: (-table[player]["rating"], player))
    rows: list[dict] = []
    for position, player in enumerate(order, start=1):
        rank = position
        if rows and rows[-1]["rating"] == table[player]["rating"]:
            rank = rows[-1]["rank"]
        rows.append({"rank": rank, "player_id": player, **table[player]})
    return rows


def club_reference(games: list[Game], months: list[Month]) -> dict[Month, tuple[list[dict], list[dict]]]:
    """For each month: (ranking rows with every table column, history rows), from scratch."""
    memo: dict[Month, dict[str, dict]] = {}
    out: dict[Month, tuple[list[dict], list[dict]]] = {}
    for month in months:
        now = snapshot(games, month, memo)
        before = snapshot(games, month.previous(), memo)
        history = []
        for g in games:
            if Month.of(g.finished_on) == month:
                for p in g.powers:
                    history.append(
                        {
                            "source_id": g.game_id,
                            "source_date": g.finished_on,
                            "player_id": p.player_id,
                            "rating_before": before[p.player_id]["rating"] if p.player_id in before else None,
                            "rating_after": now[p.player_id]["rating"],
                            "result": result_of(p.result),
                        }
                    )
        out[month] = (ranked(now), history)
    return out
