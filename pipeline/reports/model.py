"""The report model: a system's month read from the warehouse as plain sections (title, columns,
rows, notes), ready for either renderer (pipeline.reports.text, pipeline.reports.html).

- eagle: Dip2000's seven columns (Ranking, Name, Points, Date of last finished game, Games as
  "10+" above ten, Points to defend, New Eagles), then the month's awards.
- diwz: the DiWZ list (rank, name, "1797-5", last evaluation); with a game the game's
  DiWZ-Auswertung in the layout of seed 004 (waiting and unrated players show their results).
- dip_pouch: the international ranking; with a player that player's event history.
- club: record W-L-D, P, W%, S, base, legacy, rating.
- quality (not a rating system): every system's predictive quality of the month (SPEC §3.5), the
  month's pairwise accuracy beside the trailing 12 months' and the common games'; the chart of
  trailing accuracy over time is also part of every system's page.

Everything is read from the warehouse files (SPEC §4); nothing is recomputed except the pairwise
results a waiting or unrated DiWZ player collected in a game, which the history stores only as
sums and which are rebuilt from the validated game with the system's own finish-order rules.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from pipeline.core.months import Month
from pipeline.reports.cells import (
    accuracy_text,
    clean_text,
    count_text,
    decimal_text,
    fraction_text,
    german_date,
    half_points,
    iso,
    month_name,
    seed_date,
    tendency,
    whole_text,
)
from pipeline.settings import ENV_WAREHOUSE_DIR
from pipeline.systems.diwz.finish import finish_keys, pairwise_score
from pipeline.systems.games import games_from_rows, responsible_player
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.store import Warehouse, is_local, read_parquet

CHART_PLAYERS = 10

TITLES = {
    "eagle": "Eagle table",
    "diwz": "DiWZ-Liste",
    "dip_pouch": "Dip Pouch Tournament Rating: international ranking",
    "club": "Club rankings",
    "ghost": "Ghost Ratings",
}
# What the rating is called on each system's chart axis.
RATING_LABELS = {
    "eagle": "Eagle points",
    "diwz": "DiWZ",
    "dip_pouch": "Dip Pouch rating",
    "club": "Club rating",
    "ghost": "Ghost Rating",
}

AWARD_TITLES = {
    "player_of_the_month": "Player of the Month",
    "king_of_the_mountain": "King of the Mountain",
    "most_valuable_victory": "Most Valuable Victory",
    "runner_of_the_year": "Runner of the Year",
    "rookie_of_the_year": "Rookie of the Year",
}
AWARD_ORDER = tuple(AWARD_TITLES)
AWARD_VALUES = {  # what each award's `value` is
    "player_of_the_month": "points gained",
    "king_of_the_mountain": "table points",
    "most_valuable_victory": "game value",
    "runner_of_the_year": "points in the year",
    "rookie_of_the_year": "points from a first game",
}

DIWZ_POOLED_NOTE = "* = Ergebnisse aus früheren Spielen zusammengefasst"

QUALITY = "quality"  # `diprank report quality`: the predictive quality of every system
QUALITY_HEADING = "Predictive quality"
QUALITY_NOTE = "0.5 is a coin's accuracy; 1.0 would predict every pair."


class ReportError(Exception):
    """A request the warehouse cannot answer: an unknown system, month, player or game."""


# --- the report as data ---------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column's heading and how its cells line up."""

    title: str
    align: str = "left"  # "left" or "right"
    css: str = ""  # class of the column's cells in HTML


@dataclass
class Row:
    """One table row. Fewer cells than columns: the last cell runs across the remaining columns."""

    cells: list[str]
    player_id: str | None = None
    css: str = ""


@dataclass
class Section:
    """One printed table with its title and the lines around it."""

    key: str  # "ranking", "awards", "evaluation", "player-history"
    title: str
    columns: list[Column]
    rows: list[Row]
    before: list[str] = field(default_factory=list)  # lines between the title and the table
    after: list[str] = field(default_factory=list)  # lines under the table
    framed: bool = False  # the DiWZ-Auswertung's "=" frame
    name_column: int | None = 1  # the column holding player names (isolated as bidi text in HTML)
    lang: str | None = None  # language of the section when it differs from the page's
    empty: str = "(no players listed)"


@dataclass
class Chart:
    """The month's top players and their month-end ratings over every month up to it."""

    label: str  # what the rating is called on the axis, e.g. "Eagle points"
    players: list[tuple[str, str]]  # (player_id, name) of the month's top 10, in rank order
    series: dict[str, list[tuple[Month, float]]]  # player_id -> (month, rating), oldest first


@dataclass
class QualityChart:
    """Every system's trailing 12-month pairwise accuracy at each month end up to the report's month."""

    systems: list[str]  # every system of the quality tables, by name
    series: dict[str, list[tuple[Month, float]]]  # system -> (month, trailing_accuracy), oldest first, nulls left out


@dataclass
class Report:
    """Everything a renderer prints for one system's month (or, for `quality`, every system's quality)."""

    system: str
    month: Month
    title: str  # the ranking's title, e.g. "Eagle table, December 2020"
    heading: str  # e.g. "Eagle table"
    sections: list[Section]
    chart: Chart | None = None  # None when only text is wanted: the chart reads every month's table
    quality: QualityChart | None = None  # None for text only, or before the first quality table


# --- reading the warehouse ------------------------------------------------------------------


def read_rows(path, columns: list[str] | None = None) -> list[dict]:
    """The rows of one Parquet file as dicts."""
    return read_parquet(path, columns=columns).to_pylist()


def read_filtered(paths: Iterable[Any], expression, columns: list[str] | None = None) -> pa.Table | None:
    """Rows of several Parquet files matching an expression (None when there are no files)."""
    found = [p for p in paths if p.exists()]
    if not found:
        return None
    if is_local(found[0]):
        return ds.dataset([str(p) for p in found], format="parquet").to_table(columns=columns, filter=expression)
    return ds.dataset([p.path for p in found], format="parquet", filesystem=found[0].fs).to_table(
        columns=columns, filter=expression
    )


class NameBook:
    """Names of players the month's table does not list: registry first, then the latest feed name."""

    def __init__(self, warehouse: Warehouse, feed: str):
        self.warehouse = warehouse
        self.feed = feed
        self._registry: dict[str, str] | None = None

    def registry(self) -> dict[str, str]:
        """player_id -> name from the validated player registry, read once."""
        if self._registry is None:
            path = self.warehouse.validated("players")
            self._registry = {}
            if path.exists():
                for row in read_rows(path, ["player_id", "name"]):
                    if row["name"]:
                        self._registry[row["player_id"]] = row["name"]
        return self._registry

    def feed_names(self, ids: set[str]) -> dict[str, str]:
        """The latest non-null feed name of each player (by date, then id, as the systems order rows)."""
        if not ids:
            return {}
        wanted = pc.field("player_id").isin(sorted(ids))
        found: list[tuple] = []
        if self.feed == "games":
            table = read_filtered(
                self.warehouse.validated_files("games"),
                wanted,
                ["player_id", "player_name", "finished_on", "game_id", "power"],
            )
            if table is not None:
                found = [
                    (r["finished_on"], r["game_id"], r["power"], r["player_id"], r["player_name"])
                    for r in table.to_pylist()
                ]
        else:
            table = read_filtered(
                [self.warehouse.validated("event_results")], wanted, ["event_id", "player_id", "player_name"]
            )
            events = self.warehouse.validated("events")
            ends = {}
            if events.exists():
                ends = {
                    r["event_id"]: (r["end_date"], r["start_date"])
                    for r in read_rows(events, ["event_id", "end_date", "start_date"])
                }
            if table is not None:
                found = [
                    (
                        *ends.get(r["event_id"], (dt.date.min, dt.date.min)),
                        r["event_id"],
                        r["player_id"],
                        r["player_name"],
                    )
                    for r in table.to_pylist()
                ]
        names: dict[str, str] = {}
        for *_order, player_id, name in sorted(found, key=lambda r: tuple(r[:3])):
            if name:
                names[player_id] = name
        return names

    def resolve(self, ids: Iterable[str], known: dict[str, str | None] | None = None) -> dict[str, str]:
        """player_id -> name for every id: `known` (the month's table), registry, feed, else the id."""
        ids = list(dict.fromkeys(ids))
        known = known or {}
        names = {pid: known[pid] for pid in ids if known.get(pid)}
        registry = self.registry()
        for pid in ids:
            if pid not in names and registry.get(pid):
                names[pid] = registry[pid]
        missing = {pid for pid in ids if pid not in names}
        names.update(self.feed_names(missing))
        return {pid: names.get(pid) or pid for pid in ids}


def feed_of(system: str) -> str:
    """The feed whose player names a system's reports fall back on."""
    return "events" if system == "dip_pouch" else "games"


# --- the sections ---------------------------------------------------------------------------


def player_name(row: dict) -> str:
    """The name a ranking row lists, else the player's id."""
    return row.get("player_name") or row["player_id"]


def eagle_ranking(rows: list[dict], month: Month) -> Section:
    """The Eagle table in Dip2000's seven columns."""
    columns = [
        Column("Ranking", "right"),
        Column("Name", css="name"),
        Column("Points", "right"),
        Column("Date of last finished game"),
        Column("Games", "right"),
        Column("Points to defend", "right"),
        Column("New Eagles", "right"),
    ]
    body = [
        Row(
            [
                str(r["rank"]),
                player_name(r),
                decimal_text(r["points"]),
                iso(r["last_game_date"]),
                "10+" if r["games"] > 10 else str(r["games"]),
                decimal_text(r["points_to_defend"]),
                decimal_text(r["new_eagles"]),
            ],
            r["player_id"],
        )
        for r in rows
    ]
    return Section(
        "ranking",
        f"Eagle table, {month_name(month)}",
        columns,
        body,
        before=[f"Points of each player's last 10 finished games, as of {month.last_day.isoformat()}."],
    )


def eagle_awards(awards: list[dict], month: Month, names: dict[str, str]) -> Section | None:
    """The month's Eagle awards in their published order; None when there are none."""
    if not awards:
        return None
    order = {name: i for i, name in enumerate(AWARD_ORDER)}
    awards = sorted(awards, key=lambda a: (order.get(a["award"], len(order)), a["player_id"]))
    body = []
    for award in awards:
        title = AWARD_TITLES.get(award["award"], award["award"])
        title += f" {month_name(month)}" if award["award"] == "player_of_the_month" else f" {award['period']}"
        value = award["value"]
        shown = (
            f"+{decimal_text(value)}" if award["award"] == "player_of_the_month" and value >= 0 else decimal_text(value)
        )
        body.append(
            Row(
                [
                    title,
                    names.get(award["player_id"], award["player_id"]),
                    shown,
                    AWARD_VALUES.get(award["award"], ""),
                    award.get("game_id") or "",
                ],
                award["player_id"],
            )
        )
    columns = [Column("Award"), Column("Name", css="name"), Column("Value", "right"), Column("Measure"), Column("Game")]
    return Section("awards", f"Awards, {month_name(month)}", columns, body)


def diwz_ranking(rows: list[dict], month: Month) -> Section:
    """The DiWZ-Liste: rank, name, rating with its count of evaluations, last evaluation."""
    columns = [
        Column("Rang", "right"),
        Column("Name", css="name"),
        Column("DiWZ", "right"),
        Column("Letzte Auswertung"),
    ]
    body = [
        Row([str(r["rank"]), player_name(r), r["display"], german_date(r["last_evaluated"])], r["player_id"])
        for r in rows
    ]
    return Section(
        "ranking",
        f"DiWZ-Liste, Stand {german_date(month.last_day)}",
        columns,
        body,
        lang="de",
        empty="(niemand gelistet)",
    )


def dip_pouch_ranking(rows: list[dict], month: Month) -> Section:
    """The Dip Pouch international ranking with each player's country and national rank."""
    columns = [
        Column("Rank", "right"),
        Column("Name", css="name"),
        Column("Country"),
        Column("Rating", "right"),
        Column("Events", "right"),
        Column("National rank", "right"),
    ]
    # The country is free text outside the name column, which neither renderer isolates: cleaned here.
    body = [
        Row(
            [
                str(r["rank"]),
                player_name(r),
                clean_text(r["country"]),
                decimal_text(r["rating"]),
                str(r["events"]),
                "" if r["national_rank"] is None else str(r["national_rank"]),
            ],
            r["player_id"],
        )
        for r in rows
    ]
    return Section(
        "ranking",
        f"Dip Pouch Tournament Rating, international ranking, {month_name(month)}",
        columns,
        body,
        before=[f"As of {month.last_day.isoformat()}; events of tournament value above 0."],
    )


def club_ranking(rows: list[dict], month: Month) -> Section:
    """The club rankings: record, P, W%, S, base, legacy and rating."""
    columns = [
        Column("Rank", "right"),
        Column("Name", css="name"),
        Column("W-L-D", "right"),
        Column("P", "right"),
        Column("W%", "right"),
        Column("S", "right"),
        Column("Base", "right"),
        Column("Legacy", "right"),
        Column("Rating", "right"),
    ]
    body = [
        Row(
            [
                str(r["rank"]),
                player_name(r),
                f"{r['wins']}-{r['losses']}-{r['draws']}",
                fraction_text(r["win_points"]),
                fraction_text(r["win_pct"]),
                fraction_text(r["schedule_strength"]),
                decimal_text(r["base_rating"]),
                decimal_text(r["legacy"]),
                decimal_text(r["rating"]),
            ],
            r["player_id"],
        )
        for r in rows
    ]
    note = f"Games of {month.year} up to {month.last_day.isoformat()}; rating = P × (W% + S) / 2 × 100 + legacy."
    return Section("ranking", f"Club rankings {month.year}, {month_name(month)}", columns, body, before=[note])


def ghost_ranking(rows: list[dict], month: Month, category: str = "overall") -> Section:
    """A Ghost Ratings category as webDiplomacy lists it: rank, name, rating, peak, games."""
    columns = [
        Column("Rank", "right"),
        Column("Name", css="name"),
        Column("GR", "right"),
        Column("Peak", "right"),
        Column("Games", "right"),
    ]
    body = [
        Row(
            [
                str(r["rank"]),
                player_name(r),
                decimal_text(r["rating"]),
                decimal_text(r["peak_rating"]),
                str(r["games"]),
            ],
            r["player_id"],
        )
        for r in rows
    ]
    note = (
        f"Players with a game counted in {category} in the six months to {month.last_day.isoformat()}; "
        "everyone starts at 100."
    )
    return Section(
        "ranking", f"Ghost Ratings, {category.capitalize()}, {month_name(month)}", columns, body, before=[note]
    )


RANKING_SECTIONS = {
    "eagle": eagle_ranking,
    "diwz": diwz_ranking,
    "dip_pouch": dip_pouch_ranking,
    "club": club_ranking,
    "ghost": ghost_ranking,
}


def dip_pouch_player_history(
    warehouse: Warehouse, player_id: str, month: Month, names: NameBook, listed: dict[str, dict]
) -> Section:
    """One player's Dip Pouch events up to the month, with the rating each moved."""
    months = [m for m in warehouse.written_months("history", "dip_pouch")]
    everything = read_filtered((warehouse.history("dip_pouch", m) for m in months), pc.field("player_id") == player_id)
    rows = [] if everything is None else everything.to_pylist()
    if not rows:
        raise ReportError(f"unknown player {player_id!r}: no Dip Pouch history in {warehouse.root}")
    rows.sort(key=lambda r: (r["source_date"], r["source_id"]))
    shown = [r for r in rows if r["source_date"] <= month.last_day]
    if not shown:
        raise ReportError(
            f"player {player_id!r} has no Dip Pouch event up to {month} "
            f"(the first ends {rows[0]['source_date'].isoformat()})"
        )
    event_names = {}
    events_path = warehouse.validated("events")
    if events_path.exists():
        event_names = {r["event_id"]: r["name"] for r in read_rows(events_path, ["event_id", "name"])}
    name = names.resolve([player_id], {pid: r.get("player_name") for pid, r in listed.items()})[player_id]
    columns = [
        Column("Event", css="event"),
        Column("Date"),
        Column("Place", "right"),
        Column("Percentile", "right"),
        Column("TV", "right"),
        Column("Rating", "right"),
    ]

    def rating_move(r: dict) -> str:
        """The rating before and after the event: 1510.20 → 1523.75."""
        before = decimal_text(r["rating_before"]) or "-"
        if r["rating_after"] is None:  # an event of value 0 moves nothing
            return f"{before} (unchanged)"
        return f"{before} → {decimal_text(r['rating_after'])}"

    body = [
        Row(
            [
                event_names.get(r["source_id"]) or r["source_id"],
                iso(r["source_date"]),
                f"{r['placement']}/{r['num_players']}",
                decimal_text(r["percentile"]),
                decimal_text(r["tournament_value"]),
                rating_move(r),
            ],
            player_id,
        )
        for r in shown
    ]
    standing = listed.get(player_id)
    as_of = month.last_day.isoformat()
    if standing is None:
        summary = f"Not listed as of {as_of}."
    else:
        national = f", {standing['country']} #{standing['national_rank']}" if standing.get("country") else ""
        summary = f"Rank {standing['rank']}, rating {decimal_text(standing['rating'])}{national} as of {as_of}."
    return Section(
        "player-history",
        f"Dip Pouch history of {name} ({player_id})",
        columns,
        body,
        before=[summary],
        name_column=None,
    )


# --- the DiWZ-Auswertung of one game --------------------------------------------------------


def game_results(warehouse: Warehouse, game_id: str, history: list[dict]) -> dict[str, list[tuple[float, int]]] | None:
    """Each player's pairwise results (score, opponent's rating) rebuilt from the validated game, else None."""
    # None when the game rows are gone or do not agree with the history; the finish-order rules
    # are the system's own, so the rebuilt results are the ones it rated.
    table = read_filtered(warehouse.validated_files("games"), pc.field("game_id") == game_id)
    if table is None or table.num_rows == 0:
        return None
    rows = sorted(table.to_pylist(), key=lambda r: r["power"])
    for row in rows:
        row["responsible_player_id"] = responsible_player(
            row["player_id"], row.get("original_player_id"), bool(row.get("replacement_denies"))
        )
    games = games_from_rows(pa.Table.from_pylist(rows))
    if len(games) != 1:
        return None
    game = games[0]
    before = {r["player_id"]: r["rating_before"] for r in history}
    players = [power.player_id for power in game.powers]
    if sorted(players) != sorted(before):
        return None
    keys = finish_keys(game)
    results = {}
    for i, pid in enumerate(players):
        results[pid] = [
            (pairwise_score(keys[i], keys[j]), int(before[other]))
            for j, other in enumerate(players)
            if j != i and before[other] is not None
        ]
    for r in history:  # the rebuilt results must add up to what the system recorded
        own = results[r["player_id"]]
        if r["rating_after"] is None and (len(own) != r["opponents"] or sum(s for s, _ in own) != r["score"]):
            return None
    return results


def result_list(results: list[tuple[float, int]]) -> str:
    """Waiting or collected results as the seed prints them: 1(1514), 0(1628), ½(1514)."""
    if not results:
        return "keine Gegner mit DiWZ"
    return ", ".join(f"{half_points(score)}({rating})" for score, rating in results)


def diwz_history_of_game(warehouse: Warehouse, game_id: str) -> list[dict]:
    """The game's DiWZ history rows: from the month the validated feed dates it in, else any month."""
    months = warehouse.written_months("history", "diwz")
    games = read_filtered(warehouse.validated_files("games"), pc.field("game_id") == game_id, ["finished_on", "rated"])
    if games is not None and games.num_rows:
        finished, rated = games.column("finished_on")[0].as_py(), games.column("rated")[0].as_py()
        if not rated:
            raise ReportError(f"unknown game {game_id!r}: no DiWZ evaluation (the game is not rated)")
        if Month.of(finished) in months:
            months = [Month.of(finished)]
    table = read_filtered((warehouse.history("diwz", m) for m in months), pc.field("source_id") == game_id)
    history = [] if table is None else table.to_pylist()
    if not history:
        known = games is not None and games.num_rows > 0
        hint = (
            " (the game is valid but its month has no DiWZ history: run diwz over it)"
            if known
            else " (no such game in the validated games)"
        )
        raise ReportError(f"unknown game {game_id!r}: no DiWZ evaluation{hint}")
    return history


def diwz_evaluation(warehouse: Warehouse, game_id: str, names: NameBook) -> Section:
    """The game's DiWZ-Auswertung in the layout of seed 004."""
    history = diwz_history_of_game(warehouse, game_id)
    day = history[0]["source_date"]
    rankings_path = warehouse.rankings("diwz", Month.of(day))
    listed = (
        {r["player_id"]: r["player_name"] for r in read_rows(rankings_path, ["player_id", "player_name"])}
        if rankings_path.exists()
        else {}
    )
    who = names.resolve([r["player_id"] for r in history], listed)
    collected = game_results(warehouse, game_id, history)
    body: list[Row] = []
    pooled_any = False
    for r in history:
        name = who[r["player_id"]]
        before, after, count = r["rating_before"], r["rating_after"], r["evaluations"]
        if after is not None:
            old = "-" if before is None else f"{int(before)}-{count - 1}"
            pooled_any = pooled_any or r["pooled"]
            points = f"{half_points(r['score']):<3}/{r['opponents']}" + ("*" if r["pooled"] else "")
            body.append(
                Row(
                    [
                        name,
                        old,
                        points,
                        whole_text(r["niveau"]),
                        decimal_text(r["expected"]),
                        whole_text(r["performance"]),
                        f"{int(after)}-{count}",
                        "" if before is None else tendency(after - before),
                    ],
                    r["player_id"],
                    "pooled" if r["pooled"] else "evaluated",
                )
            )
        else:
            old = "-" if before is None else f"{int(before)}-{count}"
            if collected is not None:
                waiting = result_list(collected[r["player_id"]])
            else:  # the game rows are gone: the sums the history keeps
                niveau = "" if r["niveau"] is None else f", Niv {whole_text(r['niveau'])}"
                waiting = f"{half_points(r['score'])} /{r['opponents']}{niveau}"
            body.append(Row([name, old, waiting], r["player_id"], "waiting" if before is not None else "unrated"))
    columns = [
        Column("Name, Vorname", css="name"),
        Column("DiWZalt"),
        Column("Pkt/Rd"),
        Column("Niv", "right"),
        Column("We", "right"),
        Column("TE", "right"),
        Column("DiWZneu"),
        Column("TD", "right"),
    ]
    after_lines = ([DIWZ_POOLED_NOTE] if pooled_any else []) + ["", f"Ende: {seed_date(day)}", ""]
    return Section(
        "evaluation",
        f"DiWZ-Auswertung '{game_id}'",
        columns,
        body,
        after=after_lines,
        framed=True,
        name_column=0,
        lang="de",
    )


# --- building a report ----------------------------------------------------------------------


def month_ranges(months: Sequence[Month]) -> str:
    """Months as compact runs: 2017-01 … 2020-12, 2022-03."""
    if not months:
        return "none"
    runs: list[tuple[Month, Month]] = []
    for month in months:
        if runs and runs[-1][1].next() == month:
            runs[-1] = (runs[-1][0], month)
        else:
            runs.append((month, month))
    return ", ".join(str(a) if a == b else f"{a} … {b}" for a, b in runs)


def _month_of(value) -> Month | None:
    """A month given as a Month or YYYY-MM text (None stays None); ReportError for anything else."""
    if value is None or isinstance(value, Month):
        return value
    try:
        return Month.parse(str(value))
    except ValueError:
        raise ReportError(f"not a month: {value!r} (expected YYYY-MM)") from None


def build_report(
    warehouse: Warehouse,
    system: str,
    month: Month | str | None = None,
    *,
    player: str | None = None,
    game: str | None = None,
    category: str | None = None,
    top: int | None = None,
    with_chart: bool = True,
) -> Report:
    """Every section of a system's month (or the quality table) and its charts; ReportError for a bad request."""
    if system not in SYSTEM_NAMES and system != QUALITY:
        raise ReportError(f"unknown system {system!r}; choose from {', '.join(SYSTEM_NAMES)}, or {QUALITY}")
    if player is not None and system != "dip_pouch":
        raise ReportError(f"--player shows a Dip Pouch history: use it with dip_pouch, not {system}")
    if game is not None and system != "diwz":
        raise ReportError(f"--game shows a DiWZ evaluation: use it with diwz, not {system}")
    lists = None if system == QUALITY else system_class(system).list_column
    if category is not None and lists is None:
        raise ReportError(f"--category chooses one of a system's lists: {system} has one list")
    if top is not None and top < 1:
        raise ReportError(f"--top must be at least 1, not {top}")
    if not warehouse.root.is_dir():
        raise ReportError(
            f"no warehouse at {warehouse.root} (run `diprank run` first, or set --warehouse or ${ENV_WAREHOUSE_DIR})"
        )
    if system == QUALITY:
        return build_quality_report(warehouse, _month_of(month), top=top, with_chart=with_chart)
    months = warehouse.written_months("rankings", system)
    if not months:
        raise ReportError(f"no {system} snapshots in {warehouse.root} (run `diprank run` first)")
    month = _month_of(month) or months[-1]
    if month not in months:
        raise ReportError(f"no {system} snapshot for {month}; months with snapshots: {month_ranges(months)}")

    rows = read_rows(warehouse.rankings(system, month))
    shown_list = None
    if lists is not None:
        known = system_class(system).lists
        if category is not None and category not in known:
            raise ReportError(f"unknown {lists} {category!r} of {system}; choose from {', '.join(known)}")
        shown_list = category or known[0]
        rows = [r for r in rows if r[lists] == shown_list]
    names = NameBook(warehouse, feed_of(system))
    in_list: dict[str, str] = {} if lists is None or shown_list is None else {lists: shown_list}
    sections = [RANKING_SECTIONS[system](rows[:top] if top else rows, month, **in_list)]
    if top and len(rows) > top:
        sections[0].after.append(f"… {len(rows) - top} more listed")
    if system == "eagle":
        path = warehouse.output("awards", "eagle", month)
        awards = read_rows(path) if path.exists() else []
        listed = {r["player_id"]: r["player_name"] for r in rows}
        section = eagle_awards(awards, month, names.resolve([a["player_id"] for a in awards], listed))
        if section:
            sections.append(section)
    if player is not None:
        sections.append(dip_pouch_player_history(warehouse, player, month, names, {r["player_id"]: r for r in rows}))
    if game is not None:
        sections.append(diwz_evaluation(warehouse, game, names))
    chart = (
        top_players_chart(warehouse, system, [m for m in months if m <= month], rows, shown_list)
        if with_chart
        else None
    )
    quality = quality_chart(warehouse, month) if with_chart else None
    return Report(system, month, sections[0].title, TITLES[system], sections, chart, quality)


def top_players_chart(
    warehouse: Warehouse, system: str, months: list[Month], rows: list[dict], shown_list: str | None = None
) -> Chart:
    """The month-end ratings, over the given months, of the first players of a month's table
    (of one of its lists, for a system with several)."""
    players = [(r["player_id"], player_name(r)) for r in rows[:CHART_PLAYERS]]
    series = rating_series(warehouse, system, months, [pid for pid, _ in players], shown_list)
    return Chart(RATING_LABELS[system], players, series)


def rating_series(
    warehouse: Warehouse, system: str, months: Iterable[Month], ids: list[str], shown_list: str | None = None
) -> dict[str, list[tuple[Month, float]]]:
    """Month-end ratings of the given players in the given months' tables (in one of their
    lists, for a system with several), oldest first."""
    series: dict[str, list[tuple[Month, float]]] = {pid: [] for pid in ids}
    if not ids:
        return series
    wanted = pc.field("player_id").isin(ids)
    if shown_list is not None:
        wanted = wanted & (pc.field(system_class(system).list_column) == shown_list)
    table = read_filtered((warehouse.rankings(system, m) for m in months), wanted, ["as_of", "player_id", "rating"])
    if table is None:
        return series
    for row in sorted(table.to_pylist(), key=lambda r: r["as_of"]):
        series[row["player_id"]].append((Month.of(row["as_of"]), row["rating"]))
    return series


# --- predictive quality ---------------------------------------------------------------------


def quality_section(rows: list[dict], month: Month) -> Section:
    """The month's quality of every system: the month's pairs, the trailing 12 months', the common games'."""
    columns = [
        Column("System"),
        Column("Games", "right"),
        Column("Pairs", "right"),
        Column("Accuracy", "right"),
        Column("Trailing pairs", "right"),
        Column("Trailing accuracy", "right"),
        Column("Common games", "right"),
        Column("Common accuracy", "right"),
    ]
    body = [
        Row(
            [
                r["system"],
                count_text(r["games"]),
                count_text(r["pairs"]),
                accuracy_text(r["pairwise_accuracy"]),
                count_text(r["trailing_pairs"]),
                accuracy_text(r["trailing_accuracy"]),
                count_text(r["common_games"]),
                accuracy_text(r["common_accuracy"]),
            ]
        )
        for r in rows
    ]
    before = [
        f"Pairwise accuracy of each system's table of {month.previous().last_day.isoformat()} on the results "
        f"it rated in {month_name(month)}; trailing: the 12 months up to {month.last_day.isoformat()}.",
        "Common: the games of the month that club, eagle and diwz all rated.",
    ]
    return Section(
        QUALITY,
        f"{QUALITY_HEADING}, {month_name(month)}",
        columns,
        body,
        before=before,
        after=[QUALITY_NOTE],
        name_column=None,
        empty="(no system covers the month)",
    )


def quality_chart(warehouse: Warehouse, month: Month) -> QualityChart | None:
    """Every system's trailing accuracy over the quality tables up to the month; None when there are none."""
    months = [m for m in warehouse.quality_months() if m <= month]
    table = read_filtered((warehouse.quality(m) for m in months), None, ["system", "as_of", "trailing_accuracy"])
    if table is None:
        return None
    rows = table.to_pylist()
    series: dict[str, list[tuple[Month, float]]] = {system: [] for system in sorted({r["system"] for r in rows})}
    for row in sorted(rows, key=lambda r: (r["system"], r["as_of"])):
        if row["trailing_accuracy"] is not None:
            series[row["system"]].append((Month.of(row["as_of"]), row["trailing_accuracy"]))
    return QualityChart(list(series), series)


def build_quality_report(
    warehouse: Warehouse, month: Month | None = None, *, top: int | None = None, with_chart: bool = True
) -> Report:
    """The month's quality table (default: the latest) and the chart of trailing accuracy up to it."""
    months = warehouse.quality_months()
    if not months:
        raise ReportError(f"no quality tables in {warehouse.root} (run `diprank run` first)")
    month = month or months[-1]
    if month not in months:
        raise ReportError(f"no quality table for {month}; months with quality tables: {month_ranges(months)}")
    rows = read_rows(warehouse.quality(month))
    section = quality_section(rows[:top] if top else rows, month)
    if top and len(rows) > top:
        section.after.insert(0, f"… {len(rows) - top} more listed")
    quality = quality_chart(warehouse, month) if with_chart else None
    return Report(QUALITY, month, section.title, QUALITY_HEADING, [section], quality=quality)
