"""Plain reference of the Dip Pouch rating: one loop over events, no state object, no shortcuts."""
from __future__ import annotations


def dip_pouch_ratings(events: list[dict], cutoff_year: int = 2001) -> dict[str, float]:
    """Final rating of every listed player after `events` (dicts with the event fields and a
    `results` list of {player_id, placement}), taken in (end_date, start_date, event_id) order."""
    ratings: dict[str, float] = {}
    listed: set[str] = set()
    for event in sorted(events, key=lambda e: (e["end_date"], e["start_date"], e["event_id"])):
        n = event["num_players"]
        if event["is_world_championship"]:
            value = 20.0
        elif event["end_date"].year < cutoff_year:
            value = 0.0
        elif event["rounds"] == 1:
            value = min(15.0, n / 7 + 2)
        else:
            value = min(15.0, n / 3.5 + 2)
        for result in event["results"]:
            pid = result["player_id"]
            old = ratings.get(pid, 40.0)
            pct = (n + 0.5 - result["placement"]) / n * 100
            if value > 0:
                ratings[pid] = old + value / 100 * (pct - old)
                listed.add(pid)
            else:
                ratings[pid] = old
    return {pid: ratings[pid] for pid in listed}
