"""Fast "what if this card went there" path scores for heuristic agents.

``PathTables(arboretum, species)`` runs, once per arboretum and species, the scoring dynamic
programme of :func:`engine.scoring.best_path` in both rank directions: for every card, the best
path part climbing *to* it (from a card of the species) and climbing *from* it (to a card of the
species), each in a mixed and an all-species variant. The best path through a new card at an
empty cell is then a combination of its neighbours' entries, so :meth:`PathTables.through` costs
a few dictionary look-ups instead of a new dynamic programme. Exact: the tests compare it with
``best_path`` on the arboretum with the card added.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .cards import NUM_RANKS
from .rules import EIGHT, NEIGHBOURS, ONE, PURE_LENGTH, end_bonus, path_points, start_bonus
from .scoring import best_path

_OFFSETS = NEIGHBOURS
_FIRST = tuple(1 + start_bonus(rank) for rank in range(NUM_RANKS))
_LAST = tuple(1 + end_bonus(rank) for rank in range(NUM_RANKS))
"""Per 0-based rank: a card's points as the first (last) card of a path, its start (end) bonus
included (looked up on the hot path of ``improvements`` instead of calling ``rules``)."""


class PathTables:
    """Path tables of one arboretum for the given species (indexes).

    Per card (cell): ``down[cell]`` maps a species slot to the best ``length + start bonus`` of a
    path climbing from a card of that species to this card; ``up[cell]`` the best ``length + end
    bonus`` of a path climbing from this card to a card of that species. ``pure_down``,
    ``pure_down1``, ``pure_up``, ``pure_up8`` are the longest paths of the card's own species
    only (ending here / ending here from a 1 / starting here / starting here up to an 8).
    """

    __slots__ = ("arboretum", "species", "base", "down", "up", "pure_down", "pure_down1",
                 "pure_up", "pure_up8", "_index", "_around")

    def __init__(self, arboretum: Mapping[int, int], species: Sequence[int]) -> None:
        self.arboretum = arboretum
        self.species = tuple(species)
        self._index = index = {s: i for i, s in enumerate(self.species)}
        self._around: dict[int, tuple[tuple[int, int], ...]] = {}
        self.base = [best_path(arboretum, s)[0] if arboretum else 0 for s in self.species]
        get = arboretum.get
        order = sorted(arboretum, key=lambda c: arboretum[c] & 7)
        lower: dict[int, list[int]] = {}
        higher: dict[int, list[int]] = {}
        for cell in order:
            rank = arboretum[cell] & 7
            lo, hi = [], []
            for off in _OFFSETS:
                other = get(cell + off)
                if other is not None:
                    if (other & 7) < rank:
                        lo.append(cell + off)
                    elif (other & 7) > rank:
                        hi.append(cell + off)
            lower[cell], higher[cell] = lo, hi
        self.down = down = {}
        self.pure_down = pure_down = {}
        self.pure_down1 = pure_down1 = {}
        for cell in order:
            card = arboretum[cell]
            rank, s = card & 7, card >> 3
            here: dict[int, int] = {}
            for n in lower[cell]:
                for si, v in down[n].items():
                    if v + 1 > here.get(si, 0):
                        here[si] = v + 1
            a, o = 1, 1 if rank == ONE else 0
            for n in lower[cell]:
                if arboretum[n] >> 3 == s:
                    if pure_down[n] + 1 > a:
                        a = pure_down[n] + 1
                    v = pure_down1[n]
                    if v and v + 1 > o:
                        o = v + 1
            si = index.get(s)
            if si is not None:  # a path may start here: the card and its start bonus
                v = _FIRST[rank]
                if here.get(si, 0) < v:
                    here[si] = v
            down[cell], pure_down[cell], pure_down1[cell] = here, a, o
        self.up = up = {}
        self.pure_up = pure_up = {}
        self.pure_up8 = pure_up8 = {}
        for cell in reversed(order):
            card = arboretum[cell]
            rank, s = card & 7, card >> 3
            here = {}
            for n in higher[cell]:
                for si, v in up[n].items():
                    if v + 1 > here.get(si, 0):
                        here[si] = v + 1
            a, e = 1, 1 if rank == EIGHT else 0
            for n in higher[cell]:
                if arboretum[n] >> 3 == s:
                    if pure_up[n] + 1 > a:
                        a = pure_up[n] + 1
                    v = pure_up8[n]
                    if v and v + 1 > e:
                        e = v + 1
            si = index.get(s)
            if si is not None:  # a path may end here: the card and its end bonus
                v = _LAST[rank]
                if here.get(si, 0) < v:
                    here[si] = v
            up[cell], pure_up[cell], pure_up8[cell] = here, a, e

    def through(self, cell: int, card: int) -> list[int]:
        """Per species (in ``self.species`` order): the best path's points once ``card`` is
        placed on the empty ``cell`` (never less than the current best)."""
        out = list(self.base)
        for si, v in self.improvements(cell, card).items():
            out[si] = v
        return out

    def gain(self, cell: int, card: int, weights: Sequence[float]) -> float:
        """``sum_s weights[s] * (through(cell, card)[s] - base[s])``."""
        base = self.base
        return sum(weights[si] * (v - base[si]) for si, v in self.improvements(cell, card).items())

    def improvements(self, cell: int, card: int) -> dict[int, int]:
        """``{species slot: new best points}`` for the species whose best path improves when
        ``card`` is placed on the empty ``cell``."""
        arboretum = self.arboretum
        rank = card & 7
        base = self.base
        out: dict[int, int] = {}
        around = self._around.get(cell)
        if around is None:
            get = arboretum.get
            around = self._around[cell] = tuple(
                (cell + off, get(cell + off) & 7) for off in _OFFSETS if (cell + off) in arboretum)
        if not around:
            return out
        lo = [n for n, r in around if r < rank]
        hi = [n for n, r in around if r > rank]
        down, up = self.down, self.up
        pre: dict[int, int] = {}
        for n in lo:
            for si, v in down[n].items():
                if v > pre.get(si, 0):
                    pre[si] = v
        post: dict[int, int] = {}
        for n in hi:
            for si, v in up[n].items():
                if v > post.get(si, 0):
                    post[si] = v
        if pre and post:
            for si, p in pre.items():
                u = post.get(si)
                if u and p + 1 + u > base[si] and p + 1 + u > out.get(si, 0):
                    out[si] = p + 1 + u
        s = card >> 3
        ti = self._index.get(s)
        if ti is None:
            return out
        p, u = pre.get(ti, 0), post.get(ti, 0)
        best = out.get(ti, base[ti])
        if u:  # a mixed path from the new card up
            v = _FIRST[rank] + u
            if v > best:
                best = v
        if p:  # a mixed path up to the new card
            v = p + _LAST[rank]
            if v > best:
                best = v
        da, d1 = 1, 1 if rank == ONE else 0
        for n in lo:
            if arboretum[n] >> 3 == s:
                if self.pure_down[n] + 1 > da:
                    da = self.pure_down[n] + 1
                v = self.pure_down1[n]
                if v and v + 1 > d1:
                    d1 = v + 1
        ua, u8 = 0, (0 if rank == EIGHT else -1)  # u8 -1: no all-species way up to an 8
        for n in hi:
            if arboretum[n] >> 3 == s:
                if self.pure_up[n] > ua:
                    ua = self.pure_up[n]
                v = self.pure_up8[n]
                if v and v > u8:
                    u8 = v
        if da + ua >= PURE_LENGTH:
            best = max(best, path_points(da + ua, True, False, False))
        if u8 >= 0 and da + u8 >= PURE_LENGTH:
            best = max(best, path_points(da + u8, True, False, True))
        if d1 and da + ua >= PURE_LENGTH and d1 + ua >= PURE_LENGTH:
            best = max(best, path_points(d1 + ua, True, True, False))
        if d1 and u8 >= 0 and d1 + u8 >= PURE_LENGTH:
            best = max(best, path_points(d1 + u8, True, True, True))
        if best > base[ti]:
            out[ti] = best
        return out
