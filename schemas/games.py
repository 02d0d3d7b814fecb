"""The games feed (SPEC §2): one row per power per finished game; a game is valid only as a whole."""

from __future__ import annotations

import datetime

import pandera.ibis as pdi
from pandera.ibis import Field

from schemas.feed_common import (
    DATE_BEFORE_1954,
    DATE_IN_FUTURE,
    date_not_ancient,
    date_not_future,
    delivered_rows,
    rowwise,
)

RESULTS = ("solo", "draw", "survived", "eliminated", "anarchy")
# Game modes (SPEC §3.6), the first of each the default of a file without the column.
SCORINGS = ("draw_size", "sum_of_squares", "ppsc", "unranked")
PRESS_KINDS = ("full", "rulebook", "public", "gunboat")
FIRST_GAME_YEAR, LAST_GAME_YEAR = 1, 9999  # any calendar a variant may use; beyond is a typo

UNKNOWN_RESULT = "unknown_result"
UNKNOWN_SCORING = "unknown_scoring"
UNKNOWN_PRESS = "unknown_press"
CENTRES_OUT_OF_RANGE = "centres_out_of_range"
BAD_SUPPLY_CENTRES = "bad_supply_centres"
ELIMINATED_WITH_CENTRES = "eliminated_with_centres"
ELIMINATED_WITHOUT_YEAR = "eliminated_without_year"
YEAR_WITHOUT_ELIMINATION = "year_without_elimination"
YEAR_OUT_OF_RANGE = "eliminated_year_out_of_range"
ACTIVE_WITHOUT_CENTRES = "active_power_without_centres"
DENY_WITHOUT_ORIGINAL = "deny_without_original_player"
TOO_FEW_POWERS = "too_few_powers"
GAME_FIELDS_DIFFER = "game_fields_differ"
NO_SINGLE_WINNER = "not_one_solo_or_a_draw"
CENTRES_OVER_TOTAL = "centres_over_total"
PLAYER_ON_TWO_POWERS = "player_on_two_powers"
GAME_REJECTED = "game_has_invalid_row"

REQUIRED = ["game_id", "finished_on", "power", "player_id", "result", "centres"]


class GamesFeed(delivered_rows(tuple(REQUIRED))):
    """Validated games: every row rule and every whole-game rule of SPEC §2, with the game modes of §3.6."""

    game_id: str = Field(nullable=True, description="Game identifier; with power the key.")
    site: str = Field(nullable=True, description="Site the game was played on.")
    variant: str = Field(nullable=True, description="Map variant (default standard); same for every row of a game.")
    supply_centres: int = Field(nullable=True, description="Supply centres on the map (default 34).")
    finished_on: datetime.date = Field(nullable=True, description="Date the game finished.")
    rated: bool = Field(nullable=True, description="False excludes the game from DiWZ.")
    power: str = Field(nullable=True, description="Power, unique within the game.")
    player_id: str = Field(nullable=True, description="Who held the power at the end.")
    player_name: str = Field(nullable=True, description="Name of player_id.")
    original_player_id: str = Field(nullable=True, description="Who started the power, when a replacement took over.")
    replacement_denies: bool = Field(nullable=True, description="The replacement declined responsibility.")
    result: str = Field(nullable=True, description="solo, draw, survived, eliminated or anarchy.")
    centres: int = Field(nullable=True, description="Centres held at the end.")
    eliminated_year: int = Field(nullable=True, description="Game year the power lost its last centre.")
    multi_site: bool = Field(
        nullable=True, description="Played under multi-site access: one player may hold several powers."
    )
    scoring: str = Field(
        nullable=True,
        description="Scoring system: draw_size (default), sum_of_squares, ppsc or unranked; same for every row of a game.",
    )
    press: str = Field(
        nullable=True,
        description="Press rules: full (default), rulebook, public or gunboat; same for every row of a game.",
    )
    live: bool = Field(
        nullable=True,
        description="Live game, phases shorter than an hour (default false); same for every row of a game.",
    )
    # Whole-game facts, aggregated once per game in SQL before validation (null without a game_id).
    powers: int = Field(alias="_powers", nullable=True, description="Rows (powers) in the game.")
    solos: int = Field(alias="_solos", nullable=True, description="Powers with result solo.")
    draws: int = Field(alias="_draws", nullable=True, description="Powers with result draw.")
    centre_total: int = Field(alias="_centre_total", nullable=True, description="Centres held by all powers.")
    fields_agree: bool = Field(
        alias="_fields_agree",
        nullable=True,
        description="variant, supply_centres, finished_on, rated, multi_site, scoring, press and live agree.",
    )
    player_conflict: bool = Field(
        alias="_player_conflict",
        description="A player id is on two powers (as holder or original), beyond what a multi-site game allows.",
    )

    @pdi.dataframe_check(name=UNKNOWN_RESULT)
    def result_known(cls, data):
        return rowwise(data.table.result.isnull() | data.table.result.isin(RESULTS))

    @pdi.dataframe_check(name=UNKNOWN_SCORING)
    def scoring_known(cls, data):
        return rowwise(data.table.scoring.isnull() | data.table.scoring.isin(SCORINGS))

    @pdi.dataframe_check(name=UNKNOWN_PRESS)
    def press_known(cls, data):
        return rowwise(data.table.press.isnull() | data.table.press.isin(PRESS_KINDS))

    @pdi.dataframe_check(name=BAD_SUPPLY_CENTRES)
    def supply_centres_positive(cls, data):
        return rowwise(data.table.supply_centres.isnull() | (data.table.supply_centres >= 1))

    @pdi.dataframe_check(name=CENTRES_OUT_OF_RANGE)
    def centres_in_range(cls, data):
        t = data.table
        return rowwise(t.centres.isnull() | ((t.centres >= 0) & (t.centres <= t.supply_centres.fill_null(34))))

    @pdi.dataframe_check(name=DATE_IN_FUTURE)
    def finished_not_future(cls, data):
        return rowwise(date_not_future(data.table.finished_on))

    @pdi.dataframe_check(name=DATE_BEFORE_1954)
    def finished_not_ancient(cls, data):
        return rowwise(date_not_ancient(data.table.finished_on))

    @pdi.dataframe_check(name=ELIMINATED_WITH_CENTRES)
    def eliminated_hold_nothing(cls, data):
        t = data.table
        return rowwise((t.result != "eliminated").fill_null(True) | (t.centres == 0).fill_null(True))

    @pdi.dataframe_check(name=ACTIVE_WITHOUT_CENTRES)
    def active_hold_something(cls, data):
        t = data.table
        active = t.result.isin(("solo", "draw", "survived")).fill_null(False)
        return rowwise(~active | (t.centres >= 1).fill_null(True))

    @pdi.dataframe_check(name=ELIMINATED_WITHOUT_YEAR)
    def eliminated_have_year(cls, data):
        t = data.table
        return rowwise((t.result != "eliminated").fill_null(True) | t.eliminated_year.notnull())

    @pdi.dataframe_check(name=YEAR_WITHOUT_ELIMINATION)
    def year_only_when_eliminated(cls, data):
        t = data.table
        return rowwise((t.result == "eliminated").fill_null(False) | t.eliminated_year.isnull())

    @pdi.dataframe_check(name=YEAR_OUT_OF_RANGE)
    def year_in_range(cls, data):
        y = data.table.eliminated_year
        return rowwise(y.isnull() | ((y >= FIRST_GAME_YEAR) & (y <= LAST_GAME_YEAR)))

    @pdi.dataframe_check(name=DENY_WITHOUT_ORIGINAL)
    def deny_names_original(cls, data):
        t = data.table
        return rowwise(~t.replacement_denies.fill_null(False) | t.original_player_id.notnull())

    @pdi.dataframe_check(name=TOO_FEW_POWERS)
    def at_least_two_powers(cls, data):
        t = data.table
        return rowwise(t.game_id.isnull() | (t._powers >= 2))

    @pdi.dataframe_check(name=GAME_FIELDS_DIFFER)
    def game_fields_agree(cls, data):
        t = data.table
        return rowwise(t.game_id.isnull() | t._fields_agree)

    @pdi.dataframe_check(name=NO_SINGLE_WINNER)
    def one_solo_or_a_draw(cls, data):
        t = data.table
        return rowwise(t.game_id.isnull() | ((t._solos == 1) & (t._draws == 0)) | ((t._solos == 0) & (t._draws >= 2)))

    @pdi.dataframe_check(name=CENTRES_OVER_TOTAL)
    def centres_fit_map(cls, data):
        t = data.table
        return rowwise(t.game_id.isnull() | (t._centre_total <= t.supply_centres.fill_null(34)))

    @pdi.dataframe_check(name=PLAYER_ON_TWO_POWERS)
    def player_holds_one_power(cls, data):
        t = data.table
        return rowwise(t.game_id.isnull() | ~t._player_conflict)
