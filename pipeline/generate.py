"""Synthetic result feeds in the SPEC §2 format, deterministic for a seed."""
from __future__ import annotations

import datetime as dt
import random
from typing import Iterator

POWERS = ("Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey")
VARIANTS = ("standard", "standard", "standard", "standard", "standard", "standard", "youngstown", "chaos")


def game_rows(
    rng: random.Random,
    game_id: str,
    finished_on: dt.date,
    players: list[str],
    *,
    variant: str = "standard",
    supply_centres: int = 34,
    rated: bool = True,
    replacement_rate: float = 0.05,
    substitutes: list[str] | None = None,
) -> list[dict]:
    """One valid finished game: one row per power, with a solo or a draw of 2–5."""
    n = len(players)
    order = list(range(n))
    rng.shuffle(order)
    outcome = rng.random()
    rows: list[dict] = []
    results = ["survived"] * n
    if outcome < 0.3:
        results[order[0]] = "solo"
        winners = [order[0]]
    else:
        k = rng.randint(2, min(5, n))
        winners = order[:k]
        for i in winners:
            results[i] = "draw"
    losers = [i for i in order if i not in winners]
    centres = [0] * n
    elim_year: list[int | None] = [None] * n
    # Losers: some eliminated (simultaneous years happen), some anarchy, the rest survive.
    base_year = rng.randint(1903, 1912)
    for i in losers:
        r = rng.random()
        if r < 0.45:
            results[i] = "eliminated"
            elim_year[i] = base_year + rng.randint(-1, 3)
        elif r < 0.55:
            results[i] = "anarchy"
            centres[i] = rng.randint(0, 2)
        else:
            centres[i] = rng.randint(1, 3)
    # Winners share what is left, each at least one centre; a soloist holds a majority.
    budget = supply_centres - sum(centres)
    if results[winners[0]] == "solo":
        need = supply_centres // 2 + 1
        if budget < need:
            for i in losers:
                if results[i] == "survived" and budget < need:
                    give = min(centres[i] - 1, need - budget)
                    centres[i] -= give
                    budget += give
        centres[winners[0]] = rng.randint(min(need, budget), budget) if budget >= 1 else 1
    else:
        for i in winners:
            centres[i] = 1
        spare = max(0, budget - len(winners))
        for _ in range(spare):
            if rng.random() < 0.8:
                centres[rng.choice(winners)] += 1
    subs = substitutes or []
    for i, player in enumerate(players):
        row = {
            "game_id": game_id,
            "site": "synthetic",
            "variant": variant,
            "supply_centres": supply_centres,
            "finished_on": finished_on,
            "rated": rated,
            "power": POWERS[i] if i < len(POWERS) else f"Power{i + 1}",
            "player_id": player,
            "player_name": f"Player {player}",
            "original_player_id": None,
            "replacement_denies": False,
            "result": results[i],
            "centres": centres[i],
            "eliminated_year": elim_year[i],
        }
        if subs and rng.random() < replacement_rate:
            candidate = rng.choice(subs)
            if candidate not in players:
                row["original_player_id"] = player
                row["player_id"] = candidate
                row["player_name"] = f"Player {candidate}"
                row["replacement_denies"] = rng.random() < 0.3
        rows.append(row)
    # A replacement may appear once per game only.
    seen: set[str] = set()
    for row in rows:
        for key in ("player_id", "original_player_id"):
            pid = row[key]
            if pid is None:
                continue
            if pid in seen:
                row["player_id"] = row["original_player_id"] or row["player_id"]
                row["original_player_id"] = None
                row["replacement_denies"] = False
                break
            seen.add(pid)
    return rows


def synthetic_games(
    seed: int,
    n_games: int,
    n_players: int,
    first_day: dt.date,
    last_day: dt.date,
    *,
    powers: int = 7,
    variant_mix: bool = True,
    unrated_rate: float = 0.05,
) -> Iterator[dict]:
    """Rows of n_games valid games between two dates, in finishing order."""
    rng = random.Random(seed)
    span = (last_day - first_day).days
    ids = [f"p{i:05d}" for i in range(n_players)]
    days = sorted(rng.randint(0, span) for _ in range(n_games))
    for g, offset in enumerate(days):
        players = rng.sample(ids, min(powers, n_players))
        variant = rng.choice(VARIANTS) if variant_mix else "standard"
        yield from game_rows(
            rng,
            f"g{g:07d}",
            first_day + dt.timedelta(days=offset),
            players,
            variant=variant,
            rated=rng.random() >= unrated_rate,
            substitutes=ids,
        )
