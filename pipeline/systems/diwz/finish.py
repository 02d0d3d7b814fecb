"""DiWZ finish order (seed 004, rule 2.3; SPEC §3.4): which powers of a game did better than which.

The rule scores a power one point for every opponent that dropped out before it and half a point
for every opponent that dropped out at the same time. Every power therefore gets a finish key;
comparing two keys gives the pairwise score. Keys sort worst first:

    (0, eliminated_year)  eliminated during the game; the same year is the same group (2.3.2)
    (1, tier)             outside the solo or draw at the end: tier 0 below VZ/N centres,
                          tier 1 below 2·VZ/N, tier 2 the rest (2.3.4 a–c); anarchy counts here
    (2, 0)                the draw members, one group (2.3.3)
    (3, 0)                the soloist

pipeline.systems.diwz.kernel applies the same keys, with these category numbers, to the
month's rows in compiled code; these functions state the rule for readers and the reports.
"""

from __future__ import annotations

from pipeline.systems.games import Game, PowerResult

FinishKey = tuple[int, int]

ELIMINATED = 0
OUTSIDE_RESULT = 1
DRAW = 2
SOLO = 3


def end_of_game_tier(centres: int, powers_in_game: int, supply_centres: int) -> int:
    """Group (0, 1, 2) of a power left outside the solo or draw, by its centres."""
    # Compared in integers so that "fewer than VZ/N" is exact even when VZ/N is a whole number.
    if centres * powers_in_game < supply_centres:
        return 0
    if centres * powers_in_game < 2 * supply_centres:
        return 1
    return 2


def finish_key(power: PowerResult, powers_in_game: int, supply_centres: int) -> FinishKey:
    """Sortable finish group of one power, worst first."""
    if power.result == "solo":
        return (SOLO, 0)
    if power.result == "draw":
        return (DRAW, 0)
    if power.result == "eliminated":
        assert power.eliminated_year is not None, "validated games give every eliminated power its year"
        return (ELIMINATED, int(power.eliminated_year))
    # survived and anarchy: eliminated at the end with their centres (an anarchy power keeps them).
    return (OUTSIDE_RESULT, end_of_game_tier(power.centres, powers_in_game, supply_centres))


def finish_keys(game: Game) -> list[FinishKey]:
    """Finish key of every power of the game, in the game's power order."""
    count = len(game.powers)
    return [finish_key(power, count, game.supply_centres) for power in game.powers]


def pairwise_score(own: FinishKey, opponent: FinishKey) -> float:
    """1 for finishing in a better group than the opponent, 0.5 in the same group, 0 in a worse one."""
    if own > opponent:
        return 1.0
    if own == opponent:
        return 0.5
    return 0.0
