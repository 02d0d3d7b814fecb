"""Synthetic result feeds in the SPEC §2 format, deterministic for a seed.

Two layers:

- `write_feeds` writes the four feeds (games/, events/, event_results/, players/) at any size.
  Games are generated with numpy, one chunk of games at a time, and each chunk is written as
  one file, so memory stays bounded and 10 million games take minutes. The same arguments
  always give byte-identical files.
- `game_rows` and `synthetic_games` give small feeds as row dicts for tests. They share the
  outcome and replacement code with `write_feeds`, so every row follows the same rules.

What the generator models: 7-power standard games (plus a few variants with their own powers
and supply-centre totals), solos, draws of 2 to 5, simultaneous eliminations, survivors,
anarchies, replacements (some declining responsibility), unrated games, each game's scoring
system, press and live play (SPEC §3.6, from a random stream of their own); players who join,
leave for 2 to 8 years and return; face-to-face events of 10 to 80 players with shared places,
one- and multi-round, world and continental championships, results lists that sometimes cover
only the top of the field; and a players registry with countries and Unicode names.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.feed_spec import FEEDS
from schemas.games import PRESS_KINDS as PRESSES
from schemas.games import SCORINGS

# --------------------------------------------------------------------------------------------
# Feed columns (SPEC §2), in file order
# --------------------------------------------------------------------------------------------

# Generated games are played one power per player: the optional `multi_site` column is left out.
GAMES_SCHEMA = pa.schema([f for f in FEEDS["games"].arrow_schema if f.name != "multi_site"])
EVENTS_SCHEMA = FEEDS["events"].arrow_schema
EVENT_RESULTS_SCHEMA = FEEDS["event_results"].arrow_schema
PLAYERS_SCHEMA = FEEDS["players"].arrow_schema

FEED_SCHEMAS = {
    "games": GAMES_SCHEMA,
    "events": EVENTS_SCHEMA,
    "event_results": EVENT_RESULTS_SCHEMA,
    "players": PLAYERS_SCHEMA,
}
FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}

RESULTS = ("solo", "draw", "survived", "eliminated", "anarchy")
SOLO, DRAW, SURVIVED, ELIMINATED, ANARCHY = range(5)

# --------------------------------------------------------------------------------------------
# Maps and variants
# --------------------------------------------------------------------------------------------

POWERS = ("Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey")


@dataclass(frozen=True)
class Variant:
    name: str
    powers: tuple[str, ...]
    supply_centres: int
    share: float  # share of generated games
    unrated_rate: float  # share of its games that are unrated


VARIANTS: tuple[Variant, ...] = (
    Variant("standard", POWERS, 34, 0.930, 0.03),
    Variant("fleet_rome", POWERS, 34, 0.020, 0.25),
    Variant("ancient_mediterranean", ("Carthage", "Egypt", "Greece", "Persia", "Rome"), 34, 0.025, 0.25),
    Variant("colonial", ("Britain", "China", "France", "Holland", "Japan", "Russia", "Turkey"), 58, 0.025, 0.25),
)

SITES = ("dip2000", "deac", "webdiplomacy", "vdiplomacy", None)
SITE_SHARES = (0.35, 0.25, 0.20, 0.15, 0.05)

SOLO_RATE = 0.32
# The spread of a player's form on the day around their latent skill (whose spread is 1).
SKILL_NOISE = 1.0
DRAW_SIZES, DRAW_SIZE_SHARES = (2, 3, 4, 5), (0.30, 0.36, 0.23, 0.11)
REPLACEMENT_RATE = 0.04  # per power
DENY_RATE = 0.3  # per replacement
# Share of games with each scoring system, each kind of press, and played live (SPEC §3.6).
SCORING_SHARES = (0.75, 0.15, 0.06, 0.04)  # of SCORINGS: draw_size, sum_of_squares, ppsc, unranked
PRESS_SHARES = (0.70, 0.08, 0.04, 0.18)  # of PRESSES: full, rulebook, public, gunboat
LIVE_RATE = 0.10
# Spawn key of the stream the game-level columns are drawn from: a child of the generator's seed
# that SeedSequence.spawn never hands out (it counts from 0), so no other column changes.
GAME_KIND_STREAM = 0x6B696E64

# --------------------------------------------------------------------------------------------
# Names and places
# --------------------------------------------------------------------------------------------

# country: (share of players, continent, first names, last names, cities that host events)
COUNTRIES: dict[str, tuple[float, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "USA": (
        0.20,
        "North America",
        (
            "James",
            "Michael",
            "David",
            "Jennifer",
            "Sarah",
            "Robert",
            "Emily",
            "Daniel",
            "Laura",
            "Kevin",
            "Andrew",
            "Megan",
            "Christopher",
            "Rachel",
            "Brandon",
            "Ashley",
            "Tyler",
            "Nicole",
            "Gregory",
            "Heather",
        ),
        (
            "Smith",
            "Johnson",
            "Carter",
            "Walker",
            "Hughes",
            "Bennett",
            "Foster",
            "Reyes",
            "Nguyen",
            "Sullivan",
            "Price",
            "Coleman",
            "Delgado",
            "Fitzgerald",
            "Brennan",
            "Kowalski",
            "Lindgren",
            "Okafor",
            "Harper",
            "Castillo",
        ),
        ("Chapel Hill", "Chicago", "Baltimore", "San Diego", "Seattle", "Boston"),
    ),
    "United Kingdom": (
        0.11,
        "Europe",
        (
            "Oliver",
            "Harry",
            "Charlotte",
            "Amelia",
            "George",
            "Thomas",
            "Sophie",
            "William",
            "Eleanor",
            "Jack",
            "Imogen",
            "Rhys",
            "Fiona",
            "Alistair",
        ),
        (
            "Thompson",
            "Clarke",
            "Wright",
            "Edwards",
            "Harrison",
            "Whitfield",
            "Pembroke",
            "Ashworth",
            "Fairbairn",
            "Hollis",
            "Llewellyn",
            "MacLeod",
            "Pritchard",
            "Oakley",
        ),
        ("Birmingham", "London", "Manchester", "Cambridge"),
    ),
    "France": (
        0.09,
        "Europe",
        (
            "Benoît",
            "Élodie",
            "François",
            "Hélène",
            "Jérôme",
            "Cécile",
            "Grégoire",
            "Anaïs",
            "Loïc",
            "Noël",
            "Thérèse",
            "Raphaël",
        ),
        (
            "Lefèvre",
            "Dupré",
            "Gérard",
            "Bérenger",
            "Moreau",
            "Rousseau",
            "Lemaître",
            "Faure",
            "Chevalier",
            "Mercier",
            "Renaud",
            "Crémieux",
        ),
        ("Paris", "Besançon", "Lyon", "Nantes"),
    ),
    "Germany": (
        0.08,
        "Europe",
        (
            "Jürgen",
            "Jörg",
            "Björn",
            "Günter",
            "Käthe",
            "Sören",
            "Uwe",
            "Anja",
            "Lukas",
            "Henrike",
            "Matthias",
            "Mareike",
        ),
        (
            "Müller",
            "Schröder",
            "Köhler",
            "Weiß",
            "Groß",
            "Brückner",
            "Hoffmann",
            "Krüger",
            "Schäfer",
            "Bäcker",
            "Vogel",
            "Lößner",
        ),
        ("Köln", "München", "Hamburg", "Düsseldorf"),
    ),
    "Belgium": (
        0.03,
        "Europe",
        ("Wouter", "Gilles", "Ann-Sophie", "Pieter", "Maëlle", "Joris", "Benoît", "Lien"),
        ("Peeters", "Janssens", "Maes", "Delvaux", "Van den Broeck", "Dubois", "Lambrechts", "Verhaegen"),
        ("Namur", "Liège", "Leuven", "Gent"),
    ),
    "Netherlands": (
        0.04,
        "Europe",
        ("Sjoerd", "Maarten", "Anouk", "Joost", "Floor", "Daan", "Lieke", "Bram"),
        ("de Vries", "van Dijk", "Bakker", "Visser", "Smit", "Meijer", "de Jong", "Hoekstra"),
        ("Utrecht", "Amsterdam"),
    ),
    "Sweden": (
        0.04,
        "Europe",
        ("Björn", "Åsa", "Göran", "Linnéa", "Måns", "Ingrid", "Per", "Sofia"),
        ("Åström", "Lindqvist", "Söderberg", "Bergström", "Ekström", "Nyström", "Hägglund", "Sjögren"),
        ("Göteborg", "Malmö", "Uppsala", "Stockholm"),
    ),
    "Norway": (
        0.03,
        "Europe",
        ("Øystein", "Håkon", "Ingrid", "Sigrid", "Ståle", "Bjørn", "Kari", "Eirik"),
        ("Øhrn", "Haugen", "Lærum", "Kjøl", "Bråten", "Sæther", "Dahl", "Nygård"),
        ("Oslo", "Tromsø", "Bergen"),
    ),
    "Denmark": (
        0.02,
        "Europe",
        ("Søren", "Mette", "Jens", "Birgitte", "Anders", "Freja", "Rasmus", "Sørine"),
        ("Jørgensen", "Sørensen", "Kjær", "Mølgaard", "Nørgaard", "Østergaard", "Holm", "Lauridsen"),
        ("København", "Aarhus"),
    ),
    "Finland": (
        0.02,
        "Europe",
        ("Jyrki", "Päivi", "Mikko", "Eeva", "Jaakko", "Sanna", "Tuomas", "Riikka"),
        ("Mäkinen", "Järvinen", "Hämäläinen", "Virtanen", "Korhonen", "Lähteenmäki", "Nieminen", "Räsänen"),
        ("Helsinki", "Jyväskylä"),
    ),
    "Poland": (
        0.04,
        "Europe",
        ("Łukasz", "Małgorzata", "Paweł", "Agnieszka", "Wojciech", "Zuzanna", "Michał", "Katarzyna"),
        ("Wiśniewski", "Wójcik", "Kowalczyk", "Dąbrowski", "Zieliński", "Szymański", "Kozłowski", "Jabłoński"),
        ("Kraków", "Warszawa", "Wrocław"),
    ),
    "Czech Republic": (
        0.02,
        "Europe",
        ("Jiří", "Tomáš", "Lucie", "Petr", "Kateřina", "Ondřej", "Zdeněk", "Markéta"),
        ("Dvořák", "Novák", "Černý", "Procházka", "Kučera", "Veselý", "Horák", "Růžička"),
        ("Praha", "Brno"),
    ),
    "Italy": (
        0.04,
        "Europe",
        ("Niccolò", "Giulia", "Matteo", "Francesca", "Lorenzo", "Chiara", "Andrea", "Federico"),
        ("Rossi", "Bianchi", "Ferrari", "Esposito", "Colombo", "Ricci", "Marino", "Galli"),
        ("Roma", "Milano", "Bologna"),
    ),
    "Spain": (
        0.03,
        "Europe",
        ("José", "María", "Íñigo", "Lucía", "Álvaro", "Begoña", "Sergio", "Nuria"),
        ("García", "Martínez", "Sánchez", "López", "Gómez", "Muñoz", "Jiménez", "Peña"),
        ("Madrid", "Málaga", "Barcelona"),
    ),
    "Portugal": (
        0.02,
        "Europe",
        ("João", "Inês", "Gonçalo", "Leonor", "Tomás", "Mariana", "Rui", "Conceição"),
        ("Gonçalves", "Simões", "Magalhães", "Araújo", "Brandão", "Guimarães", "Lourenço", "Fernandes"),
        ("Lisboa", "Porto"),
    ),
    "Austria": (
        0.02,
        "Europe",
        ("Lukas", "Veronika", "Florian", "Theresa", "Maximilian", "Johanna"),
        ("Gruber", "Huber", "Pöltl", "Wagner", "Pichler", "Bauer", "Steiner"),
        ("Wien", "Graz"),
    ),
    "Switzerland": (
        0.01,
        "Europe",
        ("Urs", "Reto", "Seraina", "Beat", "Mélanie", "Luca"),
        ("Meier", "Zürcher", "Brunner", "Käser", "Favre", "Bühler"),
        ("Zürich", "Genève"),
    ),
    "Australia": (
        0.05,
        "Asia-Pacific",
        ("Liam", "Chloe", "Jack", "Olivia", "Lachlan", "Isla"),
        ("Wilson", "Taylor", "Anderson", "Mitchell", "O'Connor", "Murray"),
        ("Canberra", "Melbourne", "Sydney"),
    ),
    "New Zealand": (
        0.01,
        "Asia-Pacific",
        ("Aroha", "Nikau", "Ethan", "Mere", "Hemi", "Ruby"),
        ("Ngata", "Parata", "Campbell", "Te Rangi", "Walker", "Tāwhiri"),
        ("Wellington", "Auckland"),
    ),
    "Canada": (
        0.04,
        "North America",
        ("Étienne", "Mathieu", "Geneviève", "Connor", "Maude", "Ryan"),
        ("Tremblay", "Gagnon", "Côté", "Bouchard", "Roy", "MacDonald"),
        ("Toronto", "Montréal", "Ottawa"),
    ),
    "Brazil": (
        0.03,
        "South America",
        ("João", "Luíza", "Thiago", "Fernanda", "Caio", "Letícia"),
        ("Silva", "Souza", "Conceição", "Araújo", "Gonçalves", "Magalhães"),
        ("São Paulo", "Curitiba"),
    ),
    "Ireland": (
        0.02,
        "Europe",
        ("Seán", "Siobhán", "Ciarán", "Aoife", "Pádraig", "Niamh"),
        ("Ó Briain", "Murphy", "Kelly", "Byrne", "Walsh", "Ní Bhriain"),
        ("Dublin",),
    ),
    "Iceland": (
        0.005,
        "Europe",
        ("Sigurður", "Guðrún", "Þórir", "Ásdís", "Einar", "Hildur"),
        ("Ólafsson", "Þórsdóttir", "Jónsson", "Guðmundsdóttir", "Sigurðsson", "Árnason"),
        ("Reykjavík",),
    ),
    "Turkey": (
        0.01,
        "Europe",
        ("Çağlar", "Şule", "Emre", "Gülşen", "Oğuz", "Ayşe"),
        ("Şahin", "Yılmaz", "Öztürk", "Çelik", "Doğan", "Kılıç"),
        ("İstanbul",),
    ),
    "Greece": (
        0.01,
        "Europe",
        ("Γιώργος", "Ελένη", "Νίκος", "Δήμητρα", "Kostas", "Maria"),
        ("Παπαδόπουλος", "Γεωργίου", "Βλάχος", "Karagiannis", "Oikonomou", "Nikolaidis"),
        ("Αθήνα",),
    ),
    "Hungary": (
        0.01,
        "Europe",
        ("Ádám", "Zsófia", "Gábor", "Réka", "Bálint", "Enikő"),
        ("Kovács", "Szabó", "Tóth", "Horváth", "Nagy", "Fülöp"),
        ("Budapest",),
    ),
    "Japan": (
        0.01,
        "Asia-Pacific",
        ("Haruto", "Yui", "Sōta", "Aoi", "Ren", "Yūki"),
        ("Satō", "Suzuki", "Takahashi", "Itō", "Watanabe", "Yamamoto"),
        ("Tōkyō", "Ōsaka"),
    ),
}
COUNTRY_NAMES = tuple(COUNTRIES)
_FIRST = [name for c in COUNTRY_NAMES for name in COUNTRIES[c][2]]
_LAST = [name for c in COUNTRY_NAMES for name in COUNTRIES[c][3]]
_FIRST_OFF = np.cumsum([0] + [len(COUNTRIES[c][2]) for c in COUNTRY_NAMES])
_LAST_OFF = np.cumsum([0] + [len(COUNTRIES[c][3]) for c in COUNTRY_NAMES])
_COUNTRY_SHARE = np.array([COUNTRIES[c][0] for c in COUNTRY_NAMES])
_COUNTRY_SHARE = _COUNTRY_SHARE / _COUNTRY_SHARE.sum()
_HOSTS = [(city, c) for c in COUNTRY_NAMES for city in COUNTRIES[c][4]]
_HOST_SHARE = np.array([COUNTRIES[c][0] / len(COUNTRIES[c][4]) for _, c in _HOSTS])
_HOST_SHARE = _HOST_SHARE / _HOST_SHARE.sum()

_EPOCH = dt.date(1970, 1, 1)
EARLIEST_DAY = dt.date(1954, 1, 1)


def _day_number(day: dt.date) -> int:
    return (day - _EPOCH).days


def _years_of(days: np.ndarray) -> np.ndarray:
    """Calendar year of each day number (days since 1970-01-01)."""
    return days.astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970


def random_names(
    gen: np.random.Generator, n: int, country_codes: np.ndarray | None = None
) -> tuple[pa.Array, np.ndarray]:
    """n "First Last" names, each from its country's lists; returns (names, country codes)."""
    if country_codes is None:
        country_codes = gen.choice(len(COUNTRY_NAMES), size=n, p=_COUNTRY_SHARE)
    nf = np.diff(_FIRST_OFF)[country_codes]
    nl = np.diff(_LAST_OFF)[country_codes]
    first = _FIRST_OFF[country_codes] + np.floor(gen.random(n) * nf).astype(np.int64)
    last = _LAST_OFF[country_codes] + np.floor(gen.random(n) * nl).astype(np.int64)
    names = pc.binary_join_element_wise(
        pa.array(_FIRST, pa.string()).take(pa.array(first)),
        pa.array(_LAST, pa.string()).take(pa.array(last)),
        " ",
    )
    return names, country_codes


def _ids(prefix: str, start: int, count: int, width: int) -> pa.Array:
    """prefix + zero-padded numbers start .. start+count-1, as strings."""
    numbers = pc.cast(pa.array(np.arange(start, start + count, dtype=np.int64)), pa.string())
    padded = pc.utf8_lpad(numbers, width=width, padding="0")
    return (
        pc.binary_join_element_wise(pa.array([prefix] * count, pa.string()), padded, "")
        if count
        else pa.array([], pa.string())
    )


def _null_where(values: pa.Array, mask: np.ndarray) -> pa.Array:
    """values with nulls where mask is true."""
    if not mask.any():
        return values
    return pc.if_else(pa.array(mask), pa.scalar(None, values.type), values)


# --------------------------------------------------------------------------------------------
# Players: who exists, when they are active, how much they play
# --------------------------------------------------------------------------------------------


@dataclass
class PlayerPool:
    """Players with activity windows. Index i refers to ids[i], names[i], country[i]."""

    ids: pa.Array
    names: pa.Array
    country: np.ndarray  # index into COUNTRY_NAMES, -1 = unknown
    weight: np.ndarray  # relative activity (how many games a player takes on)
    first_year: int
    active: list[np.ndarray]  # per year from first_year: indices of active players
    in_registry: np.ndarray  # listed in the players feed
    face_to_face: np.ndarray  # also plays tournaments

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def last_year(self) -> int:
        return self.first_year + len(self.active) - 1

    def countries(self) -> pa.Array:
        codes = np.where(self.country >= 0, self.country, 0)
        return _null_where(pa.array(COUNTRY_NAMES, pa.string()).take(pa.array(codes)), self.country < 0)

    def registry(self) -> pa.Table:
        """The players feed: registered players, with name and (mostly) country."""
        keep = pa.array(self.in_registry)
        return pa.table(
            [self.ids.filter(keep), self.names.filter(keep), self.countries().filter(keep)],
            schema=PLAYERS_SCHEMA,
        )

    def sample(self, gen: np.random.Generator, years: np.ndarray, k: int, *, weighted: bool = True) -> np.ndarray:
        """For each entry of years, k distinct players active in that year, shape (len(years), k)."""
        out = np.empty((len(years), k), dtype=np.int64)
        for year in np.unique(years):
            rows = np.flatnonzero(years == year)
            out[rows] = self._sample_year(gen, int(year), len(rows), k, weighted)
        return out

    def _year_pool(self, year: int) -> np.ndarray:
        i = min(max(year - self.first_year, 0), len(self.active) - 1)
        return self.active[i]

    def _sample_year(self, gen: np.random.Generator, year: int, n: int, k: int, weighted: bool) -> np.ndarray:
        pool = self._year_pool(year)
        if len(pool) < k:
            raise ValueError(f"{len(pool)} active players in {year}, {k} needed")
        if weighted:
            cum = np.cumsum(self.weight[pool])

            def draw(m):
                return np.minimum(np.searchsorted(cum, gen.random((m, k)) * cum[-1], side="right"), len(pool) - 1)
        else:

            def draw(m):
                return gen.integers(0, len(pool), (m, k))

        picks = draw(n)
        todo = np.arange(n)
        for _ in range(12):
            s = np.sort(picks[todo], axis=1)
            dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
            todo = todo[dup]
            if len(todo) == 0:
                break
            picks[todo] = draw(len(todo))
        else:
            s = np.sort(picks[todo], axis=1)
            todo = todo[(s[:, 1:] == s[:, :-1]).any(axis=1)]
            for row in todo:  # crowded years only: a few rows
                picks[row] = gen.choice(len(pool), size=k, replace=False)
        return pool[picks]


def player_pool(
    gen: np.random.Generator,
    n: int,
    first_year: int,
    last_year: int,
    *,
    id_prefix: str = "p",
    id_width: int | None = None,
    id_start: int = 0,
    min_active: int = 40,
    windows: bool = True,
) -> PlayerPool:
    """n players active within [first_year, last_year].

    With windows, each player has a first stint of a few years; about 30% return after an absence
    of 2 to 8 years for a second stint. Every year keeps at least min(n, min_active) players.
    """
    if n < 1:
        raise ValueError("at least one player is needed")
    width = id_width or max(5, len(str(id_start + n - 1)))
    ids = _ids(id_prefix, id_start, n, width)
    names, country = random_names(gen, n)
    country = np.where(gen.random(n) < 0.08, -1, country)  # some registry rows without a country
    weight = np.clip(gen.lognormal(0.0, 0.8, n), 0.15, 6.0)
    if windows:
        s1 = np.maximum(gen.integers(first_year - 4, last_year + 1, n), first_year)
        e1 = s1 + gen.geometric(0.25, n) - 1
        back = gen.random(n) < 0.30
        s2 = np.where(back, e1 + gen.integers(2, 9, n) + 1, last_year + 100)
        e2 = s2 + gen.geometric(0.30, n) - 1
    floor = min(n, min_active)
    active = []
    for year in range(first_year, last_year + 1):
        if windows:
            on = ((s1 <= year) & (year <= e1)) | ((s2 <= year) & (year <= e2))
        else:
            on = np.ones(n, dtype=bool)
        short = floor - int(on.sum())
        if short > 0:  # a thin year: a few players drop in for that year only
            on[gen.choice(np.flatnonzero(~on), size=short, replace=False)] = True
        active.append(np.flatnonzero(on))
    return PlayerPool(
        ids=ids,
        names=names,
        country=country,
        weight=weight,
        first_year=first_year,
        active=active,
        in_registry=gen.random(n) >= 0.03,
        face_to_face=gen.random(n) < 0.35,
    )


# --------------------------------------------------------------------------------------------
# Game outcomes, vectorised over games of one shape (n games x k powers)
# --------------------------------------------------------------------------------------------


def outcomes(
    gen: np.random.Generator, n: int, k: int, supply_centres: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Results, centres and eliminated years (-1 = none) of n valid games of k powers.

    Every game has one solo or a draw of 2..5 (at most k); the others are eliminated (in years
    that often coincide), survive with at least one centre, or are in anarchy. Centres sum to at
    most supply_centres, a soloist holds a majority and a draw member does not.
    """
    need = supply_centres // 2 + 1
    if k < 2:
        raise ValueError("a game needs at least 2 powers")
    if supply_centres < need + k - 1:
        raise ValueError(f"{supply_centres} supply centres are too few for {k} powers")
    rank = np.argsort(gen.random((n, k)), axis=1).argsort(axis=1)
    solo = gen.random(n) < SOLO_RATE
    size = np.minimum(gen.choice(DRAW_SIZES, size=n, p=DRAW_SIZE_SHARES), k)
    winners = np.where(solo, 1, size)
    won = rank < winners[:, None]
    fate = gen.random((n, k))
    p_elim = np.where(solo, 0.55, 0.42)[:, None]
    result = np.full((n, k), SURVIVED, dtype=np.int8)
    result[~won & (fate < p_elim)] = ELIMINATED
    result[~won & (fate >= p_elim) & (fate < p_elim + 0.08)] = ANARCHY
    result[won & solo[:, None]] = SOLO
    result[won & ~solo[:, None]] = DRAW

    # Eliminations: a few years before the game ended, often in the same year.
    game_end = 1905 + gen.integers(0, 11, n)
    back = gen.choice(6, size=(n, k), p=(0.30, 0.25, 0.18, 0.12, 0.09, 0.06))
    elim = np.where(result == ELIMINATED, np.maximum(game_end[:, None] - back, 1902), -1)

    # Centres: the minimum each result needs, then the rest shared out at random within caps
    # (a soloist ends with a majority, draw members without one, survivors smaller), so that
    # all but a few neutral centres are owned.
    neutral = np.where(gen.random(n) < 0.8, 0, gen.integers(1, 3, n))
    minimum = np.select([result == SOLO, (result == DRAW) | (result == SURVIVED)], [need, 1], 0)
    others = ((result == SURVIVED) | (result == ANARCHY)).any(axis=1)
    cap = np.select(
        [result == SOLO, result == DRAW, result == SURVIVED, result == ANARCHY],
        [
            np.where(others, need + 6, supply_centres)[:, None],
            need - 1,
            max(2, supply_centres * 10 // 34),
            max(1, supply_centres * 6 // 34),
        ],
        0,
    )
    cap = np.maximum(cap, minimum)
    pull = np.array([0.6, 3.0, 1.0, 0.0, 0.4])[result] * gen.exponential(size=(n, k))
    centres = minimum.astype(np.int64)
    spare = np.maximum(supply_centres - neutral - centres.sum(axis=1), 0)
    for _ in range(3):
        room = cap - centres
        weight = np.where(room > 0, pull, 0.0)
        centres += np.minimum(_apportion(spare, weight), room)
        spare = np.maximum(supply_centres - neutral - centres.sum(axis=1), 0)
    return result, centres, elim


def seats_by_skill(
    gen: np.random.Generator, seats: np.ndarray, result: np.ndarray, centres: np.ndarray, elim: np.ndarray, skill
) -> np.ndarray:
    """The seats of each game given to its powers so that players who perform better on the day
    (latent skill plus noise of the same spread) take the better results: solo, draw, survived
    with more centres, eliminated later, anarchy."""
    quality = np.select(
        [result == SOLO, result == DRAW, result == SURVIVED, result == ELIMINATED],
        [4e6, 3e6, 2e6 + centres, 1e6 + elim],
        0.0,
    )
    performance = skill[seats] + gen.normal(0.0, SKILL_NOISE, seats.shape)
    rows = np.arange(len(seats))[:, None]
    placed = np.empty_like(seats)
    placed[rows, np.argsort(-quality, axis=1, kind="stable")] = seats[
        rows, np.argsort(-performance, axis=1, kind="stable")
    ]
    return placed


def _apportion(total: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Split total[i] into whole parts proportional to weight[i, :] (largest remainders)."""
    wsum = weight.sum(axis=1)
    wsum[wsum == 0] = 1.0
    exact = total[:, None] * weight / wsum[:, None]
    share = np.floor(exact).astype(np.int64)
    left = np.where(weight.sum(axis=1) > 0, total - share.sum(axis=1), 0)
    frac = np.where(weight > 0, exact - share, -1.0)
    order = np.argsort(-frac, axis=1, kind="stable").argsort(axis=1)
    share += (order < left[:, None]) & (weight > 0)
    return share


def replacements(
    gen: np.random.Generator,
    players: np.ndarray,
    draw_substitutes,
    *,
    rate: float = REPLACEMENT_RATE,
    deny_rate: float = DENY_RATE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replacements for some powers: (player at the end, original player or -1, denies).

    draw_substitutes(rows) returns one candidate per entry of rows (game indices). A
    replacement is nobody else in the game, so no player holds two powers as player or
    original player.
    """
    n, k = players.shape
    sub = np.full((n, k), -1, dtype=np.int64)
    rows, cols = np.nonzero(gen.random((n, k)) < rate)
    if len(rows):
        for attempt in range(8):
            sub[rows, cols] = draw_substitutes(rows)
            games = np.unique(rows)
            block = sub[games]
            clash = (block[:, :, None] == players[games][:, None, :]).any(axis=2)
            same = (block[:, :, None] == block[:, None, :]) & (block[:, :, None] >= 0)
            same &= ~np.eye(k, dtype=bool)[None, :, :]
            bad = (clash | same.any(axis=2)) & (block >= 0)
            bad_rows, bad_cols = np.nonzero(bad)
            if len(bad_rows) == 0:
                break
            rows, cols = games[bad_rows], bad_cols
            if attempt == 7:
                sub[rows, cols] = -1
    replaced = sub >= 0
    holder = np.where(replaced, sub, players)
    original = np.where(replaced, players, -1)
    denies = replaced & (gen.random((n, k)) < deny_rate)
    return holder, original, denies


def game_kind_generator(gen: np.random.Generator) -> np.random.Generator:
    """The generator of the game-level columns for a table drawn with gen: seeded from gen's own
    SeedSequence under GAME_KIND_STREAM, without drawing from gen or spawning from its seed."""
    seq = gen.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):
        raise ValueError("the generator must be seeded from a SeedSequence (np.random.default_rng(seed))")
    child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, GAME_KIND_STREAM), pool_size=seq.pool_size)
    return np.random.default_rng(child)


def game_kinds(gen: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scoring system and press (indices into SCORINGS and PRESSES) and live play of n games."""
    scoring = gen.choice(len(SCORINGS), size=n, p=SCORING_SHARES)
    press = gen.choice(len(PRESSES), size=n, p=PRESS_SHARES)
    live = gen.random(n) < LIVE_RATE
    return scoring, press, live


def _pick_variants(gen: np.random.Generator, n: int, variants: Sequence[Variant]) -> np.ndarray:
    share = np.array([v.share for v in variants], dtype=float)
    return gen.choice(len(variants), size=n, p=share / share.sum())


def games_table(
    gen: np.random.Generator,
    pool: PlayerPool,
    days: np.ndarray,
    game_ids: pa.Array,
    *,
    variants: Sequence[Variant] = VARIANTS,
    sites: Sequence[str | None] = SITES,
    site_shares: Sequence[float] = SITE_SHARES,
    replacement_rate: float = REPLACEMENT_RATE,
    deny_rate: float = DENY_RATE,
    name_missing_rate: float = 0.04,
    unrated_rate: float | None = None,
    skill: np.ndarray | None = None,
) -> pa.Table:
    """Rows of len(days) games (one per power, powers in map order), in the order given.

    days: finishing day of each game, as days since 1970-01-01. unrated_rate, when given,
    replaces the variants' own shares of unrated games. skill, when given (one value per player
    of the pool), makes the better players take the better results (`seats_by_skill`); without
    it, results fall to the seats at random. Each game's scoring, press and live play come from
    `game_kind_generator(gen)`, so the other columns are what they would be without them.
    """
    n = len(days)
    if n == 0:
        return GAMES_SCHEMA.empty_table()
    scoring, press, live = game_kinds(game_kind_generator(gen), n)
    years = _years_of(np.asarray(days))
    vchoice = _pick_variants(gen, n, variants)
    power_names: list[str] = []
    power_base = []
    for v in variants:
        power_base.append(len(power_names))
        power_names.extend(v.powers)
    parts = []
    for vi, v in enumerate(variants):
        games = np.flatnonzero(vchoice == vi)
        if len(games) == 0:
            continue
        k = len(v.powers)
        result, centres, elim = outcomes(gen, len(games), k, v.supply_centres)
        seats = pool.sample(gen, years[games], k)
        if skill is not None:
            seats = seats_by_skill(gen, seats, result, centres, elim, skill)
        gy = years[games]
        holder, original, denies = replacements(
            gen,
            seats,
            lambda rows, gy=gy: pool.sample(gen, gy[rows], 1)[:, 0],
            rate=replacement_rate,
            deny_rate=deny_rate,
        )
        parts.append(
            (
                np.repeat(games, k),
                np.tile(power_base[vi] + np.arange(k), len(games)),
                result.ravel(),
                centres.ravel(),
                elim.ravel(),
                holder.ravel(),
                original.ravel(),
                denies.ravel(),
            )
        )
    cols = [np.concatenate(c) for c in zip(*parts)]
    order = np.argsort(cols[0], kind="stable")
    game, power, result, centres, elim, holder, original, denies = (c[order] for c in cols)

    site_code = gen.choice(len(sites), size=n, p=np.asarray(site_shares) / np.sum(site_shares))
    if unrated_rate is None:
        unrated = gen.random(n) < np.array([v.unrated_rate for v in variants])[vchoice]
    else:
        unrated = gen.random(n) < unrated_rate
    rows = len(game)
    name = pool.names.take(pa.array(holder))
    name = _null_where(name, (gen.random(rows) < name_missing_rate) & pool.in_registry[holder])
    vnames = pa.array([v.name for v in variants], pa.string())
    vsc = np.array([v.supply_centres for v in variants], dtype=np.int64)
    columns = {
        "game_id": game_ids.take(pa.array(game)),
        "site": pa.array(list(sites), pa.string()).take(pa.array(site_code[game])),
        "variant": vnames.take(pa.array(vchoice[game])),
        "supply_centres": pa.array(vsc[vchoice[game]]),
        "finished_on": pa.array(np.asarray(days, dtype=np.int32)[game], pa.date32()),
        "rated": pa.array(~unrated[game]),
        "power": pa.array(power_names, pa.string()).take(pa.array(power)),
        "player_id": pool.ids.take(pa.array(holder)),
        "player_name": name,
        "original_player_id": pool.ids.take(pa.array(original, mask=original < 0)),
        "replacement_denies": pa.array(denies),
        "result": pa.array(RESULTS, pa.string()).take(pa.array(result)),
        "centres": pa.array(centres.astype(np.int64)),
        "eliminated_year": pa.array(elim.astype(np.int64), mask=elim < 0),
        "scoring": pa.array(SCORINGS, pa.string()).take(pa.array(scoring[game])),
        "press": pa.array(PRESSES, pa.string()).take(pa.array(press[game])),
        "live": pa.array(live[game]),
    }
    return pa.table([columns[f.name] for f in GAMES_SCHEMA], schema=GAMES_SCHEMA)


def game_days(
    gen: np.random.Generator, n_games: int, first_day: dt.date, last_day: dt.date, growth: float = 1.5
) -> np.ndarray:
    """Games per day (length = days in the range): more games later on when growth > 0."""
    span = (last_day - first_day).days + 1
    t = np.linspace(0.0, 1.0, span)
    share = 1.0 + growth * t
    return gen.multinomial(n_games, share / share.sum())


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------

_CONTINENTAL = {
    "Europe": "European Championship",
    "North America": "North American Championship",
    "Asia-Pacific": "Asia-Pacific Championship",
    "South America": "South American Championship",
}
_EVENT_STYLES = (
    "{city} Open {year}",
    "{city} Diplomacy Cup {year}",
    "{city} Masters {year}",
    "{city} Invitational {year}",
    "DipCon {city} {year}",
)


def placements(gen: np.random.Generator, listed: int, tie_rate: float = 0.06) -> np.ndarray:
    """Placements 1..listed where some places are shared: 1, 2, 3, 4, 5, 5, 7, ..."""
    pos = np.arange(1, listed + 1)
    tie = gen.random(listed) < tie_rate
    tie[0] = False
    head = np.maximum.accumulate(np.where(tie, 0, np.arange(listed)))
    return pos[head]


def events_tables(
    gen: np.random.Generator,
    pool: PlayerPool,
    n_events: int,
    first_year: int,
    last_year: int,
    *,
    id_prefix: str = "e",
    skill: np.ndarray | None = None,
) -> tuple[pa.Table, pa.Table]:
    """n_events face-to-face events over the years and their results lists (placed by latent
    skill plus noise when `skill` is given, else at random)."""
    if n_events == 0:
        return EVENTS_SCHEMA.empty_table(), EVENT_RESULTS_SCHEMA.empty_table()
    span = last_year - first_year + 1
    per_year = gen.multinomial(n_events, np.full(span, 1.0 / span))
    records = []
    for j, count in enumerate(per_year):
        year = first_year + j
        world = int(gen.integers(0, count)) if count >= 2 else -1
        continental_done: set[str] = set()
        for i in range(count):
            city, country = _HOSTS[gen.choice(len(_HOSTS), p=_HOST_SHARE)]
            continent = COUNTRIES[country][1]
            if i == world:
                rounds = int(gen.integers(3, 6))
                field = int(gen.integers(50, 81))
                name = f"World DipCon {year}"
            elif gen.random() < 0.12 and continent not in continental_done:
                continental_done.add(continent)
                rounds = int(gen.integers(3, 5))
                field = int(gen.integers(25, 81))
                name = f"{_CONTINENTAL[continent]} {year}"
            else:
                rounds = 1 if gen.random() < 0.3 else int(gen.choice((2, 3, 3, 3, 4, 5, 7)))
                field = int(gen.integers(10, 36)) if rounds == 1 else int(gen.integers(14, 81))
                name = _EVENT_STYLES[int(gen.integers(0, len(_EVENT_STYLES)))].format(city=city, year=year)
            days = 1 if rounds == 1 else (2 if rounds <= 3 and gen.random() < 0.5 else 3)
            start = dt.date(year, 1, 1) + dt.timedelta(days=int(gen.integers(0, 355)))
            start += dt.timedelta(days=(4 - start.weekday()) % 7 + (1 if days <= 2 else 0))  # Fri or Sat
            end = start + dt.timedelta(days=days - 1)
            if end.year > year:
                start, end = start - dt.timedelta(days=7), end - dt.timedelta(days=7)
            records.append((end, start, name, city, country, rounds, field, i == world))
    records.sort(key=lambda r: (r[0], r[1], r[2]))
    width = max(5, len(str(len(records))))
    event_ids = _ids(id_prefix, 1, len(records), width).to_pylist()
    country_index = {c: i for i, c in enumerate(COUNTRY_NAMES)}

    res_event, res_player, res_place = [], [], []
    tournament_players: dict[int, np.ndarray] = {}
    for eid, (end, _start, _name, _city, country, _rounds, field, world) in zip(event_ids, records):
        pool_year = pool._year_pool(end.year)
        if end.year not in tournament_players:
            tournament_players[end.year] = pool_year[pool.face_to_face[pool_year]]
        f2f = tournament_players[end.year]
        candidates = f2f if len(f2f) >= 2 * field else pool_year
        listed = field if gen.random() < 0.7 else max(2, int(np.ceil(field * gen.uniform(0.5, 0.95))))
        listed = min(listed, len(candidates))
        take = min(len(candidates), 3 * listed)
        picked = candidates[gen.choice(len(candidates), size=take, replace=False)]
        local = pool.country[picked] == country_index[country]
        key = gen.random(take) - np.where(local, 0.6 if not world else 0.2, 0.0)
        picked = picked[np.argsort(key, kind="stable")[:listed]]
        if skill is not None:
            performance = skill[picked] + gen.normal(0.0, SKILL_NOISE, len(picked))
            picked = picked[np.argsort(-performance, kind="stable")]
        res_event.extend([eid] * listed)
        res_player.append(picked)
        res_place.append(placements(gen, listed))
    events = pa.table(
        [
            pa.array(event_ids, pa.string()),
            pa.array([r[2] for r in records], pa.string()),
            pa.array([r[1] for r in records], pa.date32()),
            pa.array([r[0] for r in records], pa.date32()),
            pa.array([r[3] for r in records], pa.string()),
            pa.array([r[4] for r in records], pa.string()),
            pa.array([r[5] for r in records], pa.int64()),
            pa.array([r[6] for r in records], pa.int64()),
            pa.array([r[7] for r in records], pa.bool_()),
        ],
        schema=EVENTS_SCHEMA,
    )
    who = np.concatenate(res_player) if res_player else np.zeros(0, dtype=np.int64)
    nationality = _null_where(pool.countries().take(pa.array(who)), gen.random(len(who)) < 0.1)
    results = pa.table(
        [
            pa.array(res_event, pa.string()),
            pool.ids.take(pa.array(who)),
            pool.names.take(pa.array(who)),
            nationality,
            pa.array(np.concatenate(res_place) if res_place else np.zeros(0, dtype=np.int64), pa.int64()),
        ],
        schema=EVENT_RESULTS_SCHEMA,
    )
    return events, results


# --------------------------------------------------------------------------------------------
# Writing files
# --------------------------------------------------------------------------------------------


def write_table(table: pa.Table, path: str | os.PathLike, fmt: str) -> None:
    """Write one delivery file atomically (temporary name, then rename).

    CSV: UTF-8 with a header, ISO dates, true/false, an empty field for null, quotes only
    where needed. JSON Lines: one object per row with the columns in order, null for null.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, tmp, compression="zstd")
    elif fmt == "csv":
        import pyarrow.csv as pacsv

        quoting = _csv_quoting(table)
        header = ",".join(
            f'"{n}"' if quoting == "needed" and re.search(r'[,"\r\n]', n) else n for n in table.column_names
        )
        with open(tmp, "wb") as sink:
            sink.write((header + "\n").encode("utf-8"))
            if table.num_rows:
                pacsv.write_csv(
                    table, sink, write_options=pacsv.WriteOptions(include_header=False, quoting_style=quoting)
                )
    elif fmt == "jsonl":
        _write_jsonl(table, tmp)
    else:
        raise ValueError(f"unknown format {fmt!r} (parquet, csv or jsonl)")
    os.replace(tmp, path)


def _csv_quoting(table: pa.Table) -> str:
    """Plain fields unless some string holds a delimiter, a quote or a line break."""
    for column in table.columns:
        if pa.types.is_string(column.type) and pc.any(pc.match_substring_regex(column, r'[,"\r\n]')).as_py():
            return "needed"
    return "none"


def _write_jsonl(table: pa.Table, path: Path) -> None:
    from pipeline.warehouse.store import connect

    con = connect()
    try:
        con.execute("SET threads = 1")
        con.register("feed_rows", table)
        target = str(path).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM feed_rows) TO '{target}' (FORMAT JSON)")
    finally:
        con.close()


def _clear_parts(folder: Path, feed: str) -> None:
    """Remove earlier generator output of this feed (so a smaller run leaves no stale parts)."""
    if not folder.is_dir():
        return
    pattern = re.compile(rf"^{re.escape(feed)}-\d{{5}}\.(parquet|csv|jsonl)$")
    for entry in folder.iterdir():
        if pattern.match(entry.name):
            entry.unlink()


def write_feeds(
    out_dir: str | os.PathLike,
    *,
    games: int,
    players: int,
    years: int,
    events: int,
    seed: int,
    end_year: int = 2025,
    fmt: str = "parquet",
    chunk_games: int = 200_000,
) -> dict:
    """Write synthetic feeds under out_dir/{games,events,event_results,players}/ and return counts.

    Dates lie in [end_year - years + 1, end_year]. Games are written chunk_games at a time, one
    file per chunk (games/games-00000.<ext>, ... in finishing order); events, event_results and
    players go to one file each (more above a million rows). Files this function wrote before
    under those names are replaced. Prints nothing.

    Returns {"rows": {feed: rows}, "files": {feed: files}, "games": games}.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (parquet, csv or jsonl)")
    if games < 0 or events < 0 or years < 1 or chunk_games < 1:
        raise ValueError("games and events must be >= 0, years and chunk_games >= 1")
    first_year = end_year - years + 1
    first_day, last_day = dt.date(first_year, 1, 1), dt.date(end_year, 12, 31)
    if first_day < EARLIEST_DAY:
        raise ValueError(f"results before {EARLIEST_DAY} are not accepted (first year {first_year})")
    if last_day > dt.date.today():
        raise ValueError(f"end_year {end_year} would put results in the future")
    max_powers = max(len(v.powers) for v in VARIANTS)
    if players < max_powers + 1 and (games or events):
        raise ValueError(f"at least {max_powers + 1} players are needed")

    out = Path(out_dir)
    ext = FORMATS[fmt]
    rows = {feed: 0 for feed in FEED_SCHEMAS}
    files = {feed: 0 for feed in FEED_SCHEMAS}
    for feed in FEED_SCHEMAS:
        _clear_parts(out / feed, feed)

    def emit(feed: str, table: pa.Table) -> None:
        write_table(table, out / feed / f"{feed}-{files[feed]:05d}.{ext}", fmt)
        rows[feed] += table.num_rows
        files[feed] += 1

    root = np.random.SeedSequence(seed)
    pool_seed, event_seed, day_seed, chunk_root = root.spawn(4)
    pool = player_pool(
        np.random.default_rng(pool_seed), max(players, 1), first_year, end_year, min_active=min(players, 60)
    )
    # Every player's latent skill, which results follow (so that a rating has something to find).
    (skill_seed,) = root.spawn(1)
    skill = np.random.default_rng(skill_seed).normal(0.0, 1.0, len(pool))

    registry = pool.registry()
    for start in range(0, max(registry.num_rows, 1), 1_000_000):
        emit("players", registry.slice(start, 1_000_000))

    ev, results = events_tables(np.random.default_rng(event_seed), pool, events, first_year, end_year, skill=skill)
    emit("events", ev)
    for start in range(0, max(results.num_rows, 1), 1_000_000):
        emit("event_results", results.slice(start, 1_000_000))

    per_day = game_days(np.random.default_rng(day_seed), games, first_day, last_day)
    ends = np.cumsum(per_day)
    width = max(7, len(str(games)))
    n_chunks = (games + chunk_games - 1) // chunk_games
    for c, chunk_seed in enumerate(chunk_root.spawn(n_chunks)):
        a, b = c * chunk_games, min(games, (c + 1) * chunk_games)
        day_index = np.searchsorted(ends, np.arange(a, b), side="right")
        days = _day_number(first_day) + day_index
        table = games_table(np.random.default_rng(chunk_seed), pool, days, _ids("g", a + 1, b - a, width), skill=skill)
        emit("games", table)
    if n_chunks == 0:
        emit("games", GAMES_SCHEMA.empty_table())
    return {"rows": rows, "files": files, "games": games}


# --------------------------------------------------------------------------------------------
# Small feeds as row dicts (tests)
# --------------------------------------------------------------------------------------------


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
    scoring: str | None = None,
    press: str | None = None,
    live: bool | None = None,
) -> list[dict]:
    """One valid finished game: one row per power (in map order), with a solo or a draw of 2–5.

    players[i] starts power i; with substitutes, some powers end in a substitute's hands
    (original_player_id set, some with replacement_denies). Only substitutes not in the game
    are used, and each at most once. scoring, press and live, when not given, are drawn with
    the shares of `game_kinds` (from a stream of their own, as in `games_table`).
    """
    k = len(players)
    if len(set(players)) != k:
        raise ValueError("a player holds at most one power")
    if scoring is not None and scoring not in SCORINGS:
        raise ValueError(f"scoring {scoring!r} is not one of {', '.join(SCORINGS)}")
    if press is not None and press not in PRESSES:
        raise ValueError(f"press {press!r} is not one of {', '.join(PRESSES)}")
    gen = np.random.default_rng(rng.getrandbits(64))
    drawn_scoring, drawn_press, drawn_live = game_kinds(game_kind_generator(gen), 1)
    kind = {
        "scoring": SCORINGS[drawn_scoring[0]] if scoring is None else scoring,
        "press": PRESSES[drawn_press[0]] if press is None else press,
        "live": bool(drawn_live[0]) if live is None else bool(live),
    }
    result, centres, elim = outcomes(gen, 1, k, supply_centres)
    free = [p for p in dict.fromkeys(substitutes or []) if p not in set(players)]
    ids = list(players) + free
    seats = np.arange(k, dtype=np.int64)[None, :]
    if free:

        def draw(rows):
            return k + gen.integers(0, len(free), len(rows))

        holder, original, denies = replacements(gen, seats, draw, rate=replacement_rate)
    else:
        holder, original, denies = seats, np.full((1, k), -1), np.zeros((1, k), dtype=bool)
    names = POWERS if k <= len(POWERS) else tuple(f"Power{i + 1}" for i in range(k))
    rows = []
    for i in range(k):
        pid = ids[holder[0, i]]
        row = {
            "game_id": game_id,
            "site": "synthetic",
            "variant": variant,
            "supply_centres": supply_centres,
            "finished_on": finished_on,
            "rated": rated,
            "power": names[i],
            "player_id": pid,
            "player_name": f"Player {pid}",
            "original_player_id": ids[original[0, i]] if original[0, i] >= 0 else None,
            "replacement_denies": bool(denies[0, i]),
            "result": RESULTS[result[0, i]],
            "centres": int(centres[0, i]),
            "eliminated_year": int(elim[0, i]) if elim[0, i] >= 0 else None,
            **kind,
        }
        rows.append({f.name: row[f.name] for f in GAMES_SCHEMA})
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
    """Rows of n_games valid games between two dates, in finishing order.

    Players are p00000.. with activity windows (some leave and return); games have
    min(powers, n_players) powers. With variant_mix, a few games are on other maps with the
    same number of powers (colonial has 58 supply centres).
    """
    k = min(powers, n_players)
    if n_games == 0:
        return
    gen = np.random.default_rng(seed)
    pool = player_pool(gen, n_players, first_day.year, last_day.year, min_active=max(3 * k, 20))
    span = (last_day - first_day).days
    days = _day_number(first_day) + np.sort(gen.integers(0, span + 1, n_games))
    if variant_mix and k == len(POWERS):
        variants = tuple(v for v in VARIANTS if len(v.powers) == k)
    elif variant_mix and k == 5:
        variants = (Variant("standard", POWERS[:k], 34, 0.93, 0.0), VARIANTS[2])
    else:
        variants = (Variant("standard", POWERS[:k], 34, 1.0, 0.0),)
    table = games_table(
        gen,
        pool,
        days,
        _ids("g", 0, n_games, 7),
        variants=variants,
        sites=("synthetic",),
        site_shares=(1.0,),
        replacement_rate=0.05 if n_players > k else 0.0,
        unrated_rate=unrated_rate,
    )
    yield from table.to_pylist()
