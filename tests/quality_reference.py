"""A plain-Python reference of the predictive quality tables (SPEC §3.5), read from the warehouse's
rankings, history and validated games, for comparison with the pipeline's `quality/` files.

It uses nothing of the pipeline's own computation: pyarrow reads the Parquet files and every figure
is a loop over rows, written to be read against the specification line by line.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.core.months import Month

SYSTEMS = ("club", "dip_pouch", "diwz", "eagle", "ghost")  # sorted by name: the row order of a month's table
NEWCOMER_RATING = {"dip_pouch": 40.0, "club": 0.0, "eagle": 0.0, "diwz": 1600.0, "ghost": 100.0}
SCORED_CATEGORY = {"ghost": "overall"}  # a system of several tables is scored on this one
COMMON_SYSTEMS = ("club", "eagle", "diwz")  # the online systems compared on the same games
TRAILING_MONTHS = 12

# Outcome of a game row as a key, higher is better: solo > draw member > survived > eliminated > anarchy.
OUTCOME_RANK = {"solo": 4, "draw": 3, "survived": 2, "eliminated": 1, "anarchy": 0}
# The result a merged multi-site power keeps: the best of its powers' in this order (best first).
MERGE_ORDER = ("solo", "draw", "survived", "anarchy", "eliminated")

COLUMNS = (
    "system",
    "as_of",
    "games",
    "pairs",
    "concordant",
    "pairwise_accuracy",
    "trailing_pairs",
    "trailing_concordant",
    "trailing_accuracy",
    "common_games",
    "common_pairs",
    "common_accuracy",
)


def month_folder(month: Month) -> str:
    return f"year={month.year:04d}/month={month.month:02d}"


def system_months(warehouse_root: Path, system: str) -> set[Month]:
    """The months for which the system has a rankings file."""
    months = set()
    base = warehouse_root / "rankings" / system
    if not base.is_dir():
        return months
    for path in base.glob("year=*/month=*/rankings.parquet"):
        year = int(path.parent.parent.name.split("=", 1)[1])
        month = int(path.parent.name.split("=", 1)[1])
        months.add(Month(year, month))
    return months


def read_ratings(warehouse_root: Path, system: str, month: Month) -> dict[str, float]:
    """player_id -> rating in the system's rankings of the month (empty without a file)."""
    path = warehouse_root / "rankings" / system / month_folder(month) / "rankings.parquet"
    if not path.exists():
        return {}
    ratings = {}
    for row in pq.read_table(path).to_pylist():
        if system not in SCORED_CATEGORY or row["category"] == SCORED_CATEGORY[system]:
            ratings[row["player_id"]] = row["rating"]
    return ratings


def read_history(warehouse_root: Path, system: str, month: Month) -> list[dict]:
    """The system's history rows of the month (empty without a file)."""
    path = warehouse_root / "history" / system / month_folder(month) / "history.parquet"
    if not path.exists():
        return []
    rows = pq.read_table(path).to_pylist()
    if system in SCORED_CATEGORY:
        rows = [r for r in rows if r["category"] == SCORED_CATEGORY[system]]
    return rows


def responsible_player(row: dict) -> str:
    """Who a power's result belongs to (SPEC §2)."""
    if row["replacement_denies"] and row["original_player_id"] is not None:
        return row["original_player_id"]
    return row["player_id"]


def merge_powers(powers: list[dict]) -> tuple[str, int, int | None]:
    """(result, centres, eliminated_year) of one responsible player's powers in one game."""
    result = powers[0]["result"]
    for power in powers[1:]:
        if MERGE_ORDER.index(power["result"]) < MERGE_ORDER.index(result):
            result = power["result"]
    centres = 0
    for power in powers:
        centres += power["centres"]
    eliminated_year = None
    if result == "eliminated":
        for power in powers:
            year = power["eliminated_year"]
            if year is not None and (eliminated_year is None or year > eliminated_year):
                eliminated_year = year
    return result, centres, eliminated_year


def game_outcome_key(result: str, centres: int, eliminated_year: int | None) -> tuple[int, int]:
    """The outcome key of a (merged) power: compared as a tuple, higher is better."""
    if result == "survived":
        return (OUTCOME_RANK[result], centres)
    if result == "eliminated":
        return (OUTCOME_RANK[result], eliminated_year)
    return (OUTCOME_RANK[result], 0)


def read_game_outcomes(warehouse_root: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(game_id, responsible player) -> outcome key, over every validated game."""
    powers_by_player: dict[tuple[str, str], list[dict]] = {}
    folder = warehouse_root / "validated" / "games"
    columns = [
        "game_id",
        "player_id",
        "original_player_id",
        "replacement_denies",
        "result",
        "centres",
        "eliminated_year",
    ]
    for path in sorted(folder.glob("*.parquet")):
        for row in pq.read_table(path, columns=columns).to_pylist():
            key = (row["game_id"], responsible_player(row))
            powers_by_player.setdefault(key, []).append(row)
    outcomes = {}
    for key, powers in powers_by_player.items():
        outcomes[key] = game_outcome_key(*merge_powers(powers))
    return outcomes


def count_pairs(entries: list[tuple[float, tuple]]) -> tuple[int, float]:
    """(pairs, concordant) of one game or event: entries are (pre-month rating, outcome key)."""
    pairs = 0
    concordant = 0.0
    for i in range(len(entries)):
        for j in range(i + 1, len(entries)):
            rating_i, outcome_i = entries[i]
            rating_j, outcome_j = entries[j]
            if outcome_i == outcome_j:
                continue
            pairs += 1
            if rating_i == rating_j:
                concordant += 0.5
            elif (rating_i > rating_j) == (outcome_i > outcome_j):
                concordant += 1.0
    return pairs, concordant


def accuracy(concordant: float, pairs: int) -> float | None:
    return concordant / pairs if pairs else None


def reference_quality(warehouse_root: Path) -> dict[str, list[dict]]:
    """Each month's quality rows by "YYYY-MM": dicts in the column order, sorted by system."""
    warehouse_root = Path(warehouse_root)
    months_of = {system: system_months(warehouse_root, system) for system in SYSTEMS}
    all_months = set()
    for months in months_of.values():
        all_months |= months
    outcomes = read_game_outcomes(warehouse_root) if all_months else {}

    # Per system and month: source_id -> [(pre-month rating, outcome key)], one entry per history row.
    entries: dict[tuple[str, Month], dict[str, list[tuple[float, tuple]]]] = {}
    for system in SYSTEMS:
        for month in months_of[system]:
            ratings = read_ratings(warehouse_root, system, month.previous())
            by_source: dict[str, list[tuple[float, tuple]]] = {}
            for row in read_history(warehouse_root, system, month):
                rating = ratings.get(row["player_id"], NEWCOMER_RATING[system])
                if system == "dip_pouch":
                    outcome = (-row["placement"],)
                else:
                    key = (row["source_id"], row["player_id"])
                    if key not in outcomes:
                        raise KeyError(
                            f"{system} history of {month} names {key}, not a responsible player of a valid game"
                        )
                    outcome = outcomes[key]
                by_source.setdefault(row["source_id"], []).append((rating, outcome))
            entries[(system, month)] = by_source

    # Per system and month: (games, pairs, concordant) over all its sources, and over the common ones.
    figures: dict[tuple[str, Month], tuple[int, int, float]] = {}
    common_figures: dict[tuple[str, Month], tuple[int, int, float]] = {}
    for (system, month), by_source in entries.items():
        common_sources: set[str] = set()
        if all(month in months_of[other] for other in COMMON_SYSTEMS):
            common_sources = set(entries[(COMMON_SYSTEMS[0], month)])
            for other in COMMON_SYSTEMS[1:]:
                common_sources &= set(entries[(other, month)])
        games = pairs = common_games = common_pairs = 0
        concordant = common_concordant = 0.0
        for source_id, source_entries in by_source.items():
            source_pairs, source_concordant = count_pairs(source_entries)
            if source_pairs:
                games += 1
            pairs += source_pairs
            concordant += source_concordant
            if source_id in common_sources:
                if source_pairs:
                    common_games += 1
                common_pairs += source_pairs
                common_concordant += source_concordant
        figures[(system, month)] = (games, pairs, concordant)
        common_figures[(system, month)] = (common_games, common_pairs, common_concordant)

    tables: dict[str, list[dict]] = {}
    for month in sorted(all_months):
        rows = []
        for system in SYSTEMS:
            if month not in months_of[system]:
                continue
            games, pairs, concordant = figures[(system, month)]
            trailing_pairs = 0
            trailing_concordant = 0.0
            for back in range(TRAILING_MONTHS):
                earlier = month.shift(-back)
                if (system, earlier) in figures:
                    trailing_pairs += figures[(system, earlier)][1]
                    trailing_concordant += figures[(system, earlier)][2]
            if system in COMMON_SYSTEMS:
                common_games, common_pairs, common_concordant = common_figures[(system, month)]
                common_accuracy = accuracy(common_concordant, common_pairs)
            else:
                common_games = common_pairs = common_accuracy = None
            row = {
                "system": system,
                "as_of": month.last_day,
                "games": games,
                "pairs": pairs,
                "concordant": concordant,
                "pairwise_accuracy": accuracy(concordant, pairs),
                "trailing_pairs": trailing_pairs,
                "trailing_concordant": trailing_concordant,
                "trailing_accuracy": accuracy(trailing_concordant, trailing_pairs),
                "common_games": common_games,
                "common_pairs": common_pairs,
                "common_accuracy": common_accuracy,
            }
            assert tuple(row) == COLUMNS
            assert isinstance(row["as_of"], dt.date)
            rows.append(row)
        tables[str(month)] = rows
    return tables
