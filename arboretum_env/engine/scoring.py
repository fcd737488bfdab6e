"""Scoring per RULES.md: rights (1 cancels 8, ties including 0-0 all score), the single
highest-scoring path per species (the dynamic programme over the rank order of
:mod:`.path_dp`), totals, winners.

Arboretums here are ``dict[packed cell, card]`` (see :mod:`.cards`).
"""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from . import jit_paths
from .cards import SPECIES, unpack_cell
from .path_dp import best_path, forward, path_of, rank_buckets, species_ranges  # noqa: F401 (best_path)
from .rules import EIGHT, ONE, hand_sum

Arboretum = Mapping[int, int]


class SpeciesScore(NamedTuple):
    right: bool
    points: int
    path: tuple[tuple[int, int], ...] = ()
    """The scored path's cells ``(row, col)`` from its first card (lowest rank) to its last."""


class PlayerScore(NamedTuple):
    total: int
    species: dict[int, SpeciesScore]
    """Per species index in play."""


class ScoreResult(NamedTuple):
    players: tuple[PlayerScore, ...]
    winners: tuple[int, ...]
    """Winning player indexes after the tie-break (several only for a shared win)."""

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(p.total for p in self.players)

    def to_dict(self) -> dict:
        """The score calculator's JSON result (species by canonical name)."""
        return {
            "players": [
                {
                    "total": p.total,
                    "species": {
                        SPECIES[s]: {"right": sc.right, "points": sc.points,
                                     "path": [list(cell) for cell in sc.path]}
                        for s, sc in p.species.items()
                    },
                }
                for p in self.players
            ],
            "winners": list(self.winners),
        }


_NO_RIGHT = SpeciesScore(False, 0, ())
_RIGHT = SpeciesScore(True, 0, ())


def species_sums(hands: Sequence[Iterable[int]], species: int) -> list[int]:
    """Each player's hand sum of ``species`` after "1 cancels 8"."""
    return [sums[species] for sums in hand_sums(hands)]


def hand_sums(hands: Sequence[Iterable[int]]) -> list[list[int]]:
    """Per player, per species (all 10): the hand sum after "1 cancels 8" (an 8 counts 0 when
    another of ``hands`` holds the 1 of its species). The scorer applies it to whole hands,
    the observation to what one seat sees of them."""
    sums = [[0] * 10 for _ in hands]
    ones = [0] * 10  # how many players hold the 1 of each species
    for hand, row in zip(hands, sums):
        for card in hand:
            row[card >> 3] += (card & 7) + 1
            if card & 7 == ONE:
                ones[card >> 3] += 1
    for hand, row in zip(hands, sums):
        for card in hand:
            if card & 7 == EIGHT:
                s = card >> 3
                own_one = (card - EIGHT + ONE) in hand
                row[s] = hand_sum(row[s], own_one, True, ones[s] > own_one)
    return sums


def rights(hands: Sequence[Iterable[int]], species: int) -> list[bool]:
    """Who may score ``species``: every player with the highest sum (a 0-0 tie included)."""
    sums = species_sums(hands, species)
    top = max(sums)
    return [s == top for s in sums]


def score_position(
    hands: Sequence[Iterable[int]],
    arboretums: Sequence[Arboretum],
    species_in_play: Iterable[int],
) -> ScoreResult:
    """Score a finished (or any) position: hands and arboretums per player."""
    hands = [h if isinstance(h, (set, frozenset)) else set(h) for h in hands]
    species_in_play = sorted(species_in_play)
    sums = hand_sums(hands)
    right_table = {}
    for s in species_in_play:
        top = max(row[s] for row in sums)
        right_table[s] = [row[s] == top for row in sums]
    players = []
    for p, arboretum in enumerate(arboretums):
        if jit_paths.available:
            players.append(_player_compiled(arboretum, species_in_play, right_table, p))
            continue
        buckets = None
        low, high, count = species_ranges(arboretum.values())
        per_species = {}
        total = 0
        for s in species_in_play:
            if not right_table[s][p]:
                per_species[s] = _NO_RIGHT
                continue
            points, cells = 0, ()
            if count[s] >= 2:
                if buckets is None:
                    buckets = rank_buckets(arboretum, higher=False)
                points, cells = path_of(arboretum, forward(arboretum, buckets, s, low[s], high[s]), s)
            per_species[s] = SpeciesScore(True, points, tuple(map(unpack_cell, cells))) if points else _RIGHT
            total += points
        players.append(PlayerScore(total, per_species))
    return ScoreResult(tuple(players), _winners(players, arboretums))


def _player_compiled(arboretum: Arboretum, species_in_play, right_table, p: int) -> PlayerScore:
    """One player's scores with the compiled DP (``jit_paths``): the same paths as the
    interpreted one."""
    scored = [s for s in species_in_play if right_table[s][p]]
    rows = jit_paths.best_paths(np.fromiter(arboretum, np.int64, len(arboretum)),
                                np.fromiter(arboretum.values(), np.int64, len(arboretum)),
                                np.array(scored, np.int64)).tolist() if scored and arboretum else []
    per_species = {s: _NO_RIGHT for s in species_in_play}
    total = 0
    for s, row in zip(scored, rows):
        points = row[0]
        if points:
            cells = row[2:2 + 2 * row[1]]
            per_species[s] = SpeciesScore(True, points, tuple(zip(cells[::2], cells[1::2])))
            total += points
        else:
            per_species[s] = _RIGHT
    for s in scored[len(rows):]:  # an empty arboretum
        per_species[s] = _RIGHT
    return PlayerScore(total, per_species)


def _winners(players: Sequence[PlayerScore], arboretums: Sequence[Arboretum]) -> tuple[int, ...]:
    top = max(p.total for p in players)
    tied = [i for i, p in enumerate(players) if p.total == top]
    if len(tied) == 1:
        return tuple(tied)
    variety = {i: len({card >> 3 for card in arboretums[i].values()}) for i in tied}
    most = max(variety.values())
    return tuple(i for i in tied if variety[i] == most)
