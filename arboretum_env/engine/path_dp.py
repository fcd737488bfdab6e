"""The best-path dynamic programmes, written once for the scorer, the observation and the hints.

Paths climb strictly in rank, so the cards in rank order are a topological order:
``rank_buckets`` lists them so, with their lower and higher neighbours; ``forward`` climbs them
(the best path ending at each card, and the best path of a species), ``backward`` descends
them (the best path starting at each card). ``best_path`` (the scorer's, with the path's
cells) reads its cells back from ``forward``'s tables; ``best_points`` gives every species'
points; ``placement_gains`` joins a forward and a backward pass to price a card on each free
cell. Arboretums are ``dict[packed cell, card]`` (see :mod:`.cards`); ranks here are 0-based.
A path's points (the bonuses, the doubling) come from :mod:`.rules`, as in every other DP of
the engine (``paths``, ``jit_paths``, ``jit_gains``). The tests check all of it against a
brute-force enumeration of paths.
"""

from __future__ import annotations

from typing import Mapping, Optional

from .cards import CELL_STRIDE, NUM_SPECIES
from .rules import EIGHT, NEIGHBOURS, ONE, PURE_LENGTH, end_bonus, path_points, start_bonus

MIX, PURE, PURE_ONE = 0, 1, 2
"""Which table of ``forward`` holds the best path: mixed, all-species, all-species from a 1."""


def rank_buckets(arboretum: Mapping[int, int], higher: bool = True) -> list[list[tuple]]:
    """An arboretum's cards in rank order for the dynamic programmes: ``buckets[r]`` lists
    ``(cell, card, lower, higher)`` for the cards of rank r + 1 (in the arboretum's order),
    ``lower`` / ``higher`` the neighbouring cells with a lower / higher rank (in no set order:
    the DPs take maxima, and ``path_of`` walks back in a fixed order). ``higher=False``
    leaves the ``higher`` lists empty (``forward`` alone does not read them)."""
    get = arboretum.get
    lowers = {cell: [] for cell in arboretum}
    highers = {cell: [] for cell in arboretum} if higher else None
    for cell, card in arboretum.items():  # each adjacent pair once: east and south
        rank = card & 7
        for n in (cell + 1, cell + CELL_STRIDE):
            other = get(n)
            if other is not None:
                r = other & 7
                if r < rank:
                    lowers[cell].append(n)
                    if higher:
                        highers[n].append(cell)
                elif r > rank:
                    lowers[n].append(cell)
                    if higher:
                        highers[cell].append(n)
    buckets: list[list] = [[], [], [], [], [], [], [], []]
    none: tuple = ()
    for cell, card in arboretum.items():
        buckets[card & 7].append((cell, card, lowers[cell], highers[cell] if higher else none))
    return buckets


def forward(arboretum, buckets, species: int, low: int, high: int):
    """Forward DP for one species over the ranks ``low..high`` (0-based).

    Returns ``(mix, pure, pure_one, best, end, kind)``: per cell, ``mix`` = best length + start
    bonus of a climbing path from a ``species`` card to that cell; ``pure`` = longest
    all-species path ending there; ``pure_one`` = the same, starting with a 1; ``best`` = best
    path points, ``end`` its last cell and ``kind`` its table (``MIX``, ``PURE``, ``PURE_ONE``;
    ``end`` is ``None`` when there is no path). The first card in rank-bucket order to reach a
    score keeps it, so ties are broken the same way every time.
    """
    mix: dict[int, int] = {}
    pure: dict[int, int] = {}
    pure_one: dict[int, int] = {}
    best = 0
    end = kind = None
    for rank in range(low, high + 1):
        for cell, card, lower, _ in buckets[rank]:
            own = (card >> 3) == species
            ext = 0
            for n in lower:
                v = mix.get(n, 0)
                if v > ext:
                    ext = v
            if ext:
                mix[cell] = ext + 1
                if own:  # a mixed path ends here: its lower part, this card, its end bonus
                    pts = ext + 1 + end_bonus(rank)
                    if pts > best:
                        best, end, kind = pts, cell, MIX
            elif own:
                mix[cell] = 1 + start_bonus(rank)
            if own:
                length, length_one = 1, (1 if rank == ONE else 0)
                for n in lower:
                    if (arboretum[n] >> 3) == species:
                        v = pure[n] + 1
                        if v > length:
                            length = v
                        v = pure_one.get(n, 0)
                        if v and v + 1 > length_one:
                            length_one = v + 1
                pure[cell] = length
                if length_one:
                    pure_one[cell] = length_one
                if length >= PURE_LENGTH:
                    pts = path_points(length, True, False, rank == EIGHT)
                    if pts > best:
                        best, end, kind = pts, cell, PURE
                    if length_one >= PURE_LENGTH:
                        pts = path_points(length_one, True, True, rank == EIGHT)
                        if pts > best:
                            best, end, kind = pts, cell, PURE_ONE
    return mix, pure, pure_one, best, end, kind


def backward(arboretum, buckets, species: int, low: int, high: int):
    """Backward DP over the ranks ``high..low``: per cell, ``mix`` = best length + end bonus of
    a climbing path from that cell to a ``species`` card; ``pure`` = longest all-species path
    starting there; ``pure_eight`` = the same, ending with an 8."""
    mix: dict[int, int] = {}
    pure: dict[int, int] = {}
    pure_eight: dict[int, int] = {}
    for rank in range(high, low - 1, -1):
        for cell, card, _, higher in buckets[rank]:
            own = (card >> 3) == species
            ext = 0
            for m in higher:
                v = mix.get(m, 0)
                if v > ext:
                    ext = v
            if ext:
                mix[cell] = ext + 1
            elif own:
                mix[cell] = 1 + end_bonus(rank)
            if own:
                length, length_eight = 1, (1 if rank == EIGHT else 0)
                for m in higher:
                    if (arboretum[m] >> 3) == species:
                        v = pure[m] + 1
                        if v > length:
                            length = v
                        v = pure_eight.get(m, 0)
                        if v and v + 1 > length_eight:
                            length_eight = v + 1
                pure[cell] = length
                if length_eight:
                    pure_eight[cell] = length_eight
    return mix, pure, pure_eight


def species_ranges(cards):
    """Per species: lowest and highest rank (0-based; 8 and -1 when absent) and card count."""
    lows = [8] * NUM_SPECIES
    highs = [-1] * NUM_SPECIES
    counts = [0] * NUM_SPECIES
    for card in cards:
        s, r = card >> 3, card & 7
        counts[s] += 1
        if r < lows[s]:
            lows[s] = r
        if r > highs[s]:
            highs[s] = r
    return lows, highs, counts


def best_points(arboretum: Mapping[int, int], buckets=None) -> list[int]:
    """Points of the best current path of every species (10 values, canonical order); equal to
    ``best_path(arboretum, s)[0]`` for each species ``s``."""
    if buckets is None:
        buckets = rank_buckets(arboretum, higher=False)
    lows, highs, counts = species_ranges(arboretum.values())
    return [forward(arboretum, buckets, s, lows[s], highs[s])[3] if counts[s] >= 2 else 0
            for s in range(NUM_SPECIES)]


def best_path(arboretum: Mapping[int, int], species: int) -> tuple[int, tuple[int, ...]]:
    """Points and packed cells (from the lowest rank up) of the single highest-scoring path of
    ``species``; ``(0, ())`` when there is no path of at least two cards."""
    lows, highs, counts = species_ranges(arboretum.values())
    low, high, count = lows[species], highs[species], counts[species]
    if count < 2:
        return 0, ()
    return path_of(arboretum, forward(arboretum, rank_buckets(arboretum, higher=False), species, low, high), species)


def path_of(arboretum: Mapping[int, int], tables, species: int) -> tuple[int, tuple[int, ...]]:
    """``(points, cells)`` of the best path found by ``forward`` (its return value ``tables``).

    Walks down from the path's last card: each step goes to the first lower neighbour (in
    rank-bucket order, the order ``forward`` compares them in) whose table value is one less,
    which is the neighbour ``forward`` extended."""
    mix, pure, pure_one, best, cell, kind = tables
    if cell is None:
        return 0, ()
    table = mix if kind == MIX else pure if kind == PURE else pure_one
    own_only = kind != MIX
    cells = [cell]
    value = table[cell]
    while value > 1:
        rank = arboretum[cell] & 7
        for offset in NEIGHBOURS:
            n = cell + offset
            other = arboretum.get(n)
            if (other is not None and (other & 7) < rank and table.get(n, 0) == value - 1
                    and (not own_only or other >> 3 == species)):
                break
        else:  # a start card of a mixed path: no lower neighbour extended it
            break
        cells.append(n)
        cell, value = n, value - 1
    cells.reverse()
    return best, tuple(cells)


def placement_gains(arboretum: Mapping[int, int], card: int, cells, buckets=None,
                    points: Optional[list[int]] = None) -> dict[int, int]:
    """Per packed cell of ``cells`` (empty cells next to the arboretum): how much the best-path
    points of ``card``'s species grow if ``card`` is placed there.

    A new path passes through the new card; its part below the card and its part above cannot
    share cells (ranks climb), so the best path through a cell joins the best forward value of
    a lower neighbour and the best backward value of a higher one (mixed paths), or the longest
    all-species runs below and above (pure paths)."""
    species, rank = card >> 3, card & 7
    ranks = [c & 7 for c in arboretum.values() if c >> 3 == species]
    if not ranks:  # no other card of the species: no path
        return {cell: 0 for cell in cells}
    if buckets is None:
        buckets = rank_buckets(arboretum)
    old = (points if points is not None else best_points(arboretum, buckets))[species]
    mix_in, pure_in, one_in = forward(arboretum, buckets, species, min(ranks), rank - 1)[:3]
    mix_out, pure_out, eight_out = backward(arboretum, buckets, species, rank + 1, max(ranks))
    start_self = 1 + start_bonus(rank)  # the card alone, as the start of a path
    end_self = end_bonus(rank)
    one, eight = rank == ONE, rank == EIGHT
    get = arboretum.get
    gains = {}
    for cell in cells:
        a_ext = e_ext = 0
        pa = pa1 = pb = pb8 = 0
        for offset in NEIGHBOURS:
            n = cell + offset
            other = get(n)
            if other is None:
                continue
            r = other & 7
            if r < rank:
                v = mix_in.get(n, 0)
                if v > a_ext:
                    a_ext = v
                if (other >> 3) == species:
                    if pure_in[n] > pa:
                        pa = pure_in[n]
                    v = one_in.get(n, 0)
                    if v > pa1:
                        pa1 = v
            elif r > rank:
                v = mix_out.get(n, 0)
                if v > e_ext:
                    e_ext = v
                if (other >> 3) == species:
                    if pure_out[n] > pb:
                        pb = pure_out[n]
                    v = eight_out.get(n, 0)
                    if v > pb8:
                        pb8 = v
        if not a_ext and not e_ext:
            gains[cell] = 0
            continue
        best = 0
        if a_ext:
            best = a_ext + 1 + (e_ext if e_ext else end_self)
        if e_ext and start_self + e_ext > best:
            best = start_self + e_ext
        if (pa + 1 + pb >= PURE_LENGTH or (pa1 and pa1 + 1 + pb >= PURE_LENGTH)
                or (pb8 and pa + 1 + pb8 >= PURE_LENGTH)):
            for length, from_one, to_eight in ((pa + 1 + pb, one, eight),
                                               (pa1 + 1 + pb if pa1 else 0, True, eight),
                                               (pa + 1 + pb8 if pb8 else 0, one, True),
                                               (pa1 + 1 + pb8 if pa1 and pb8 else 0, True, True)):
                if length >= PURE_LENGTH:
                    pts = path_points(length, True, from_one, to_eight)
                    if pts > best:
                        best = pts
        gains[cell] = best - old if best > old else 0
    return gains


