"""Games as Python objects for the game-based systems, built from the validated feed rows."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class PowerResult:
    """One power's end of game, credited to its responsible player (SPEC §2)."""

    power: str
    player_id: str  # the responsible player
    result: str  # solo | draw | survived | eliminated | anarchy
    centres: int
    eliminated_year: int | None


@dataclass(frozen=True)
class Game:
    """A finished game with its powers in feed order (sorted by power)."""

    game_id: str
    finished_on: dt.date
    variant: str
    supply_centres: int
    rated: bool
    powers: tuple[PowerResult, ...]


def check_finished_in(rows: pa.Table, month: Any) -> None:
    """ValueError naming the first game that did not finish within the month."""
    if rows.num_rows == 0:
        return
    finished = rows.column("finished_on")
    outside = pc.or_(pc.less(finished, month.first_day), pc.greater(finished, month.last_day))
    if pc.any(outside).as_py():
        row = pc.index(outside, True).as_py()
        raise ValueError(f"game {rows.column('game_id')[row].as_py()} finished {finished[row].as_py()}, not in {month}")


def games_from_rows(rows: pa.Table) -> list[Game]:
    """Group game rows (GAME_COLUMNS, sorted by finished_on, game_id, power) into games, in order."""
    games: list[Game] = []
    if rows.num_rows == 0:
        return games
    cols = rows.select(
        [
            "game_id",
            "finished_on",
            "variant",
            "supply_centres",
            "rated",
            "power",
            "responsible_player_id",
            "result",
            "centres",
            "eliminated_year",
        ]
    ).to_pydict()
    current_id = None
    powers: list[PowerResult] = []
    head = 0
    for i, game_id in enumerate(cols["game_id"]):
        if game_id != current_id:
            if current_id is not None:
                games.append(_game(cols, head, powers))
            current_id, head, powers = game_id, i, []
        powers.append(
            PowerResult(
                power=cols["power"][i],
                player_id=cols["responsible_player_id"][i],
                result=cols["result"][i],
                centres=int(cols["centres"][i]),
                eliminated_year=cols["eliminated_year"][i],
            )
        )
    games.append(_game(cols, head, powers))
    return games


def _game(cols: dict, head: int, powers: list[PowerResult]) -> Game:
    return Game(
        game_id=cols["game_id"][head],
        finished_on=cols["finished_on"][head],
        variant=cols["variant"][head],
        supply_centres=int(cols["supply_centres"][head]),
        rated=bool(cols["rated"][head]),
        powers=tuple(powers),
    )


def responsible_player(player_id: str, original_player_id: str | None, replacement_denies: bool) -> str:
    """Who a power's result belongs to (SPEC §2): the original player only when the replacement denied."""
    if replacement_denies and original_player_id:
        return original_player_id
    return player_id


# The merged power's result is the best of its powers' in this order (SPEC §2 Decision).
RESULT_PREFERENCE = ("solo", "draw", "survived", "anarchy", "eliminated")


def merged_powers(rows: pa.Table) -> pa.Table:
    """Game rows (GAME_COLUMNS in processing order) with each multi-site game's powers of one
    responsible player merged into one power (SPEC §2 Decision): the powers' names joined by "+",
    the sum of their centres, the best of their results and, when that is `eliminated`, the
    latest elimination year. Every system rates the merged power once. Rows of other games are
    returned as they are (and a table without a multi-site game is returned itself)."""
    if rows.num_rows == 0 or not pc.any(rows.column("multi_site")).as_py():
        return rows
    multi = pc.fill_null(rows.column("multi_site"), False)
    kept = rows.filter(pc.invert(multi))
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows.filter(multi).to_pylist():
        groups.setdefault((row["game_id"], row["responsible_player_id"]), []).append(row)
    merged = []
    for (_, responsible), powers in groups.items():
        if len(powers) == 1:
            merged.append(powers[0])
            continue
        powers.sort(key=lambda r: r["power"])
        result = min((r["result"] for r in powers), key=RESULT_PREFERENCE.index)
        named = [r["player_name"] for r in powers if r["player_name"] is not None]
        merged.append(
            {
                **powers[0],
                "power": "+".join(r["power"] for r in powers),
                "player_id": responsible,
                "player_name": named[0] if named else None,
                "original_player_id": None,
                "replacement_denies": False,
                "result": result,
                "centres": sum(r["centres"] for r in powers),
                "eliminated_year": max(r["eliminated_year"] for r in powers) if result == "eliminated" else None,
            }
        )
    table = pa.concat_tables([kept, pa.Table.from_pylist(merged, schema=rows.schema)])
    return table.sort_by([("finished_on", "ascending"), ("game_id", "ascending"), ("power", "ascending")])


def rows_to_table(rows: list[dict]) -> pa.Table:
    """Game row dicts (feed columns) as a GAME_COLUMNS table in processing order, with defaults."""
    from pipeline.systems.base import GAME_COLUMNS

    filled = []
    for row in rows:
        r: dict[str, Any] = {
            "site": None,
            "variant": "standard",
            "supply_centres": 34,
            "rated": True,
            "player_name": None,
            "original_player_id": None,
            "replacement_denies": False,
            "eliminated_year": None,
            "multi_site": False,
            "scoring": "draw_size",
            "press": "full",
            "live": False,
        }
        r.update(row)
        if isinstance(r["finished_on"], str):
            r["finished_on"] = dt.date.fromisoformat(r["finished_on"])
        r["responsible_player_id"] = responsible_player(
            r["player_id"], r["original_player_id"], bool(r["replacement_denies"])
        )
        filled.append(r)
    filled.sort(key=lambda r: (r["finished_on"], r["game_id"], r["power"]))
    return merged_powers(pa.Table.from_pylist(filled, schema=GAME_COLUMNS))
