"""Plain references of the Dip Pouch rating: the final ratings, and every month's table; one loop over
events, no state object, no shortcuts."""

from __future__ import annotations

from typing import Any, Iterator


def dip_pouch_ratings(events: list[dict], cutoff_year: int = 2001) -> dict[str, float]:
    """Final rating of every listed player after `events` (dicts with the event fields and a
    `results` list of {player_id, placement}), taken in (end_date, start_date, event_id) order."""
    ratings: dict[str, float] = {}
    listed: set[str] = set()
    for event in sorted(events, key=lambda e: (e["end_date"], e["start_date"], e["event_id"])):
        n = event["num_players"]
        value = _value(event, cutoff_year)
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


def dip_pouch_tables(
    rows: list[dict], months: list, registry: dict[str, str] | None = None, cutoff_year: int = 2001
) -> Iterator[tuple[Any, list[dict]]]:
    """Every month's table after the result rows of that month and all before it, month by month:
    (month, rows {rank, player_id, rating, events, last_event_date, country, national_rank} in table order).

    `rows` are result rows with their event's fields (event_id, start_date, end_date, rounds,
    num_players, is_world_championship, player_id, nationality, placement), an event's rows
    together, events in (end_date, start_date, event_id) order; `months` are consecutive
    pipeline.core.months.Month values; `registry` gives a player's registry country.
    Every row of an event reads the player's rating from before the event."""
    registry = registry or {}
    rating: dict[str, float] = {}
    events: dict[str, int] = {}
    last_event: dict = {}
    nationality: dict[str, str] = {}
    at = 0
    for month in months:
        month_rows = []
        while at < len(rows) and rows[at]["end_date"] <= month.last_day:
            month_rows.append(rows[at])
            at += 1
        for event_rows in _by_event(month_rows):
            n = event_rows[0]["num_players"]
            value = _value(event_rows[0], cutoff_year)
            old = {r["player_id"]: rating.get(r["player_id"], 40.0) for r in event_rows}
            counted = {r["player_id"]: events.get(r["player_id"], 0) for r in event_rows}
            for r in event_rows:
                pid = r["player_id"]
                if value > 0:
                    pct = (n + 0.5 - r["placement"]) / n * 100
                    rating[pid] = old[pid] + value / 100 * (pct - old[pid])
                    events[pid] = counted[pid] + 1
                    last_event[pid] = r["end_date"]
        for r in month_rows:
            if r["nationality"]:
                nationality[r["player_id"]] = r["nationality"]
        listed = sorted((pid for pid, count in events.items() if count > 0), key=lambda pid: (-rating[pid], pid))
        table: list[dict] = []
        national: dict[str, tuple] = {}  # country -> (players so far, the last one's rating, its rank)
        for k, pid in enumerate(listed):
            country = registry.get(pid) or nationality.get(pid)
            # Equal ratings share a rank (1-2-2-4), in the whole table and within a country.
            rank = k + 1 if k == 0 or rating[pid] != rating[listed[k - 1]] else table[-1]["rank"]
            national_rank = None
            if country is not None:
                seen, last_rating, last_rank = national.get(country, (0, None, 0))
                national_rank = seen + 1 if rating[pid] != last_rating else last_rank
                national[country] = (seen + 1, rating[pid], national_rank)
            table.append(
                {
                    "rank": rank,
                    "player_id": pid,
                    "rating": rating[pid],
                    "events": events[pid],
                    "last_event_date": last_event[pid],
                    "country": country,
                    "national_rank": national_rank,
                }
            )
        yield month, table


def _value(event: dict, cutoff_year: int) -> float:
    """The tournament value of an event (or of a row carrying its fields)."""
    n = event["num_players"]
    if event["is_world_championship"]:
        return 20.0
    if event["end_date"].year < cutoff_year:
        return 0.0
    return min(15.0, n / 7 + 2) if event["rounds"] == 1 else min(15.0, n / 3.5 + 2)


def _by_event(rows: list[dict]) -> list[list[dict]]:
    """Consecutive rows of one event, event by event."""
    groups: list[list[dict]] = []
    for row in rows:
        if groups and groups[-1][0]["event_id"] == row["event_id"]:
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups
