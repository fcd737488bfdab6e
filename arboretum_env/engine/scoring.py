"""Scoring per RULES.md: rights (1 cancels 8, ties including 0-0 all score), the single
highest-scoring path per species (a dynamic programme over the rank order), totals, winners.

Arboretums here are ``dict[packed cell, card]`` (see :mod:`.cards`).
"""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple, Sequence

from .cards import CELL_STRIDE, NUM_RANKS, SPECIES, unpack_cell

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


def _pure_points(length: int) -> int:
    return 2 * length if length >= 4 else length


def best_path(arboretum: Arboretum, species: int) -> tuple[int, tuple[int, ...]]:
    """Points and packed cells of the single highest-scoring path of ``species``.

    A dynamic programme over the cards in rank order (paths climb strictly in rank, so the rank
    order is a topological order). Per card it keeps three values with parent pointers:

    * ``mix``: the best ``length + start bonus`` of a path from a ``species`` card to this card;
    * ``pure_any``: the longest all-``species`` path ending here;
    * ``pure_one``: the longest all-``species`` path ending here that starts with a 1.

    Points are increasing in length for a fixed pair of end bonuses, so these suffice. Returns
    ``(0, ())`` when there is no path of at least two cards.
    """
    ranks = [card & 7 for card in arboretum.values() if card >> 3 == species]
    if len(ranks) < 2:
        return 0, ()
    return _best_path(arboretum, species, _predecessors(arboretum), min(ranks), max(ranks))


def _predecessors(arboretum: Arboretum) -> tuple[list[tuple[int, int, list[int]]], list[int]]:
    """``(cell, card, lower-ranked neighbour cells)`` in rank order, and the index where each
    rank starts in that list (9 entries). The rank order is the DP's topological order; cards
    of equal rank keep the arboretum's order (which only decides between equal paths)."""
    by_rank: list[list] = [[], [], [], [], [], [], [], []]
    get = arboretum.get
    for cell, card in arboretum.items():
        rank = card & 7
        preds = []
        for n in (cell - CELL_STRIDE, cell + 1, cell + CELL_STRIDE, cell - 1):
            other = get(n)
            if other is not None and (other & 7) < rank:
                preds.append(n)
        by_rank[rank].append((cell, card, preds))
    ordered, starts = [], []
    for bucket in by_rank:
        starts.append(len(ordered))
        ordered += bucket
    starts.append(len(ordered))
    return ordered, starts


def _best_path(arboretum: Arboretum, species: int, predecessors, low: int, high: int) -> tuple[int, tuple[int, ...]]:
    """The DP over the ranks ``low..high`` of the species' own cards (no path leaves them)."""
    mix: dict[int, int] = {}
    mix_parent: dict[int, int] = {}
    pure_any: dict[int, int] = {}
    any_parent: dict[int, int] = {}
    pure_one: dict[int, int] = {}
    one_parent: dict[int, int] = {}
    best = 0
    best_end = None
    best_table = None
    ordered, starts = predecessors
    for cell, card, preds in ordered[starts[low]:starts[high + 1]]:
        rank = card & 7
        is_species = (card >> 3) == species
        ext = 0
        ext_parent = None
        for n in preds:
            v = mix.get(n)
            if v is not None and v + 1 > ext:
                ext = v + 1
                ext_parent = n
        if ext_parent is not None:
            mix[cell] = ext
            mix_parent[cell] = ext_parent
        elif is_species:
            mix[cell] = 2 if rank == 0 else 1
        if not is_species:
            continue
        end_bonus = 2 if rank == NUM_RANKS - 1 else 0
        if ext_parent is not None and ext + end_bonus > best:
            best, best_end, best_table = ext + end_bonus, cell, mix_parent
        length_any, parent_any = 1, None
        length_one, parent_one = (1 if rank == 0 else 0), None
        for n in preds:
            if (arboretum[n] >> 3) != species:
                continue
            v = pure_any[n]
            if v + 1 > length_any:
                length_any, parent_any = v + 1, n
            v = pure_one.get(n, 0)
            if v and v + 1 > length_one:
                length_one, parent_one = v + 1, n
        pure_any[cell] = length_any
        if parent_any is not None:
            any_parent[cell] = parent_any
        if length_one:
            pure_one[cell] = length_one
            if parent_one is not None:
                one_parent[cell] = parent_one
        if length_any >= 4 and _pure_points(length_any) + end_bonus > best:
            best, best_end, best_table = _pure_points(length_any) + end_bonus, cell, any_parent
        if length_one >= 4 and _pure_points(length_one) + 1 + end_bonus > best:
            best, best_end, best_table = _pure_points(length_one) + 1 + end_bonus, cell, one_parent
    if best_end is None:
        return 0, ()
    cells = [best_end]
    while cells[-1] in best_table:
        cells.append(best_table[cells[-1]])
    cells.reverse()
    return best, tuple(cells)


def species_sums(hands: Sequence[Iterable[int]], species: int) -> list[int]:
    """Each player's hand sum of ``species`` after "1 cancels 8"."""
    return [sums[species] for sums in _all_sums(hands)]


def _all_sums(hands: Sequence[Iterable[int]]) -> list[list[int]]:
    """Per player, per species (all 10): the hand sum after "1 cancels 8"."""
    sums = [[0] * 10 for _ in hands]
    ones = [0] * 10  # how many players hold the 1 of each species
    for hand, row in zip(hands, sums):
        for card in hand:
            row[card >> 3] += (card & 7) + 1
            if card & 7 == 0:
                ones[card >> 3] += 1
    for hand, row in zip(hands, sums):
        for card in hand:
            if card & 7 == NUM_RANKS - 1:
                s = card >> 3
                own_one = (card - 7) in hand
                if ones[s] > own_one:  # another player holds the 1: this 8 counts 0
                    row[s] -= NUM_RANKS
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
    sums = _all_sums(hands)
    right_table = {}
    for s in species_in_play:
        top = max(row[s] for row in sums)
        right_table[s] = [row[s] == top for row in sums]
    players = []
    for p, arboretum in enumerate(arboretums):
        by_rank = None
        count = [0] * 10
        low = [7] * 10
        high = [0] * 10
        for card in arboretum.values():
            sp, rank = card >> 3, card & 7
            count[sp] += 1
            if rank < low[sp]:
                low[sp] = rank
            if rank > high[sp]:
                high[sp] = rank
        per_species = {}
        total = 0
        for s in species_in_play:
            if not right_table[s][p]:
                per_species[s] = _NO_RIGHT
                continue
            points, cells = 0, ()
            if count[s] >= 2:
                if by_rank is None:
                    by_rank = _predecessors(arboretum)
                points, cells = _best_path(arboretum, s, by_rank, low[s], high[s])
            per_species[s] = SpeciesScore(True, points, tuple(map(unpack_cell, cells))) if points else _RIGHT
            total += points
        players.append(PlayerScore(total, per_species))
    return ScoreResult(tuple(players), _winners(players, arboretums))


def _winners(players: Sequence[PlayerScore], arboretums: Sequence[Arboretum]) -> tuple[int, ...]:
    top = max(p.total for p in players)
    tied = [i for i, p in enumerate(players) if p.total == top]
    if len(tied) == 1:
        return tuple(tied)
    variety = {i: len({card >> 3 for card in arboretums[i].values()}) for i in tied}
    most = max(variety.values())
    return tuple(i for i in tied if variety[i] == most)
