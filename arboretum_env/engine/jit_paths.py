"""The scorer's best-path dynamic programme compiled with numba: ``path_dp.forward`` followed by
``path_dp.path_of``, the same paths with the same tie-breaks, for several species of one
arboretum in one call (tests/test_engine_jit.py checks it against the interpreted DP and the
brute-force enumerator).

``best_paths(cells, cards, species)`` takes an arboretum as two arrays in its insertion order
(packed cells, cards) and returns, per species asked for, ``[points, length, row, col, row,
col, ...]`` (a path climbs strictly in rank, so it has at most 8 cells). ``available`` is False
without numba; the scorer then uses the interpreted DP.
"""

from __future__ import annotations

import numpy as np

from .jit_playout import available, compile_kernel
from .rules import EIGHT, ONE, PURE_LENGTH, end_bonus, next_cell, path_points, start_bonus

MAX_PATH = 8
ROW_WIDTH = 2 + 2 * MAX_PATH
"""Values per species in ``best_paths``' result: points, length, then (row, col) per cell."""
_MIX, _PURE, _PURE_ONE = 0, 1, 2


def best_paths(cells, cards, species):  # pragma: no cover - compiled
    k = cells.shape[0]
    out = np.zeros((species.shape[0], ROW_WIDTH), np.int64)
    if k == 0:
        return out
    rows = np.empty(k, np.int64)
    cols = np.empty(k, np.int64)
    for i in range(k):
        rows[i] = (cells[i] + 128) >> 8
        cols[i] = cells[i] - (rows[i] << 8)
    r0, r1, c0, c1 = rows.min(), rows.max(), cols.min(), cols.max()
    width = c1 - c0 + 3  # a border of empty cells all round: neighbours need no bounds checks
    slot = np.full((r1 - r0 + 3) * width, -1, np.int64)
    for i in range(k):
        slot[(rows[i] - r0 + 1) * width + cols[i] - c0 + 1] = i
    at = np.empty(k, np.int64)  # index of each card's cell in ``slot``
    for i in range(k):
        at[i] = (rows[i] - r0 + 1) * width + cols[i] - c0 + 1
    # neighbours in path_of's order (rules.next_cell's): -1 where empty
    near = np.empty((k, 4), np.int64)
    for i in range(k):
        for d in range(4):
            near[i, d] = slot[next_cell(at[i], d, width)]
    # the cards in rank-bucket order: by rank, then insertion order
    order = np.empty(k, np.int64)
    m = 0
    for r in range(8):
        for i in range(k):
            if cards[i] & 7 == r:
                order[m] = i
                m += 1
    mix = np.zeros(k, np.int64)
    pure = np.zeros(k, np.int64)
    pure_one = np.zeros(k, np.int64)
    for q in range(species.shape[0]):
        s = species[q]
        low, high, count = 8, -1, 0
        for i in range(k):
            if cards[i] >> 3 == s:
                count += 1
                r = cards[i] & 7
                low = min(low, r)
                high = max(high, r)
        if count < 2:
            continue
        mix[:] = 0
        pure[:] = 0
        pure_one[:] = 0
        best, end, kind = 0, -1, _MIX
        for o in range(k):
            i = order[o]
            rank = cards[i] & 7
            if rank < low:
                continue
            if rank > high:
                break
            own = cards[i] >> 3 == s
            ext = 0
            for d in range(4):
                n = near[i, d]
                if n >= 0 and (cards[n] & 7) < rank and mix[n] > ext:
                    ext = mix[n]
            if ext:
                mix[i] = ext + 1
                if own:  # a mixed path ends here: its lower part, this card, its end bonus
                    pts = ext + 1 + end_bonus(rank)
                    if pts > best:
                        best, end, kind = pts, i, _MIX
            elif own:
                mix[i] = 1 + start_bonus(rank)
            if own:
                length = 1
                length_one = 1 if rank == ONE else 0
                for d in range(4):
                    n = near[i, d]
                    if n >= 0 and (cards[n] & 7) < rank and cards[n] >> 3 == s:
                        if pure[n] + 1 > length:
                            length = pure[n] + 1
                        if pure_one[n] and pure_one[n] + 1 > length_one:
                            length_one = pure_one[n] + 1
                pure[i] = length
                pure_one[i] = length_one
                if length >= PURE_LENGTH:
                    pts = path_points(length, True, False, rank == EIGHT)
                    if pts > best:
                        best, end, kind = pts, i, _PURE
                    if length_one >= PURE_LENGTH:
                        pts = path_points(length_one, True, True, rank == EIGHT)
                        if pts > best:
                            best, end, kind = pts, i, _PURE_ONE
        if end < 0:
            continue
        table = mix if kind == _MIX else pure if kind == _PURE else pure_one
        path = np.empty(MAX_PATH, np.int64)
        path[0] = end
        length = 1
        i = end
        value = table[i]
        while value > 1:
            rank = cards[i] & 7
            step = -1
            for d in range(4):
                n = near[i, d]
                if (n >= 0 and (cards[n] & 7) < rank and table[n] == value - 1
                        and (kind == _MIX or cards[n] >> 3 == s)):
                    step = n
                    break
            if step < 0:  # a start card of a mixed path: no lower neighbour extended it
                break
            path[length] = step
            length += 1
            i, value = step, value - 1
        out[q, 0] = best
        out[q, 1] = length
        for j in range(length):  # lowest rank first
            c = path[length - 1 - j]
            out[q, 2 + 2 * j] = rows[c]
            out[q, 3 + 2 * j] = cols[c]
    return out


if available:
    best_paths = compile_kernel(best_paths)
