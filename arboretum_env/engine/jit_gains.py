"""``path_dp.placement_gains`` for every free cell of an arboretum laid out in a square frame,
compiled with numba (the observation's gain plane, written straight into its buffer).

``frame_gains(cells, cards, card, old, frame, out, offset, values)``: the arboretum is given as
its cards (``cards``) and their frame indices (``cells``, ``row * frame + col``, every card at
least one cell away from the frame's edge, as the action frame guarantees). For every empty
frame cell next to a card it writes ``values[gain]`` into ``out[offset + index]``, where
``gain`` is what ``placement_gains`` gives for ``card`` on that cell (``old``: the current
best-path points of ``card``'s species); other cells are left as they are. The same dynamic
programme as ``placement_gains`` (a forward pass below the card's rank joined with a backward
pass above it), so the same numbers: tests/test_env_observation.py compares the env's
observation, which uses this kernel, with the reference encoder's, which uses
``placement_gains``, at every step of many games. ``available`` is False without numba.
"""

from __future__ import annotations

import numpy as np

from .jit_playout import available, compile_kernel
from .rules import EIGHT, ONE, PURE_LENGTH, end_bonus, next_cell, path_points, start_bonus


def frame_gains(cells, cards, card, old, frame, out, offset, values):  # pragma: no cover - compiled
    k = cells.shape[0]
    w = frame + 2  # a border of empty cells all round: neighbours need no bounds checks
    slot = np.full(w * w, -1, np.int64)  # card index per padded cell, -1 where empty
    at = np.empty(k, np.int64)  # padded cell of each card
    for i in range(k):
        c = cells[i]
        at[i] = (c // frame + 1) * w + c % frame + 1
        slot[at[i]] = i
    species, rank = card >> 3, card & 7
    # offsets of the four neighbours in the padded frame, in rules.next_cell's order
    near = (next_cell(0, 0, w), next_cell(0, 1, w), next_cell(0, 2, w), next_cell(0, 3, w))
    # forward below the card's rank: mixed paths from a species card (length + start bonus),
    # all-species runs, all-species runs from a 1
    mix_in = np.zeros(k, np.int64)
    pure_in = np.zeros(k, np.int64)
    one_in = np.zeros(k, np.int64)
    # backward above it: mixed paths to a species card (length + end bonus), runs, runs to an 8
    mix_out = np.zeros(k, np.int64)
    pure_out = np.zeros(k, np.int64)
    eight_out = np.zeros(k, np.int64)
    for r in range(rank):
        for i in range(k):
            if cards[i] & 7 != r:
                continue
            own = cards[i] >> 3 == species
            ext = 0
            length, length_one = 1, 1 if r == ONE else 0
            for d in near:
                n = slot[at[i] + d]
                if n < 0 or cards[n] & 7 >= r:
                    continue
                if mix_in[n] > ext:
                    ext = mix_in[n]
                if own and cards[n] >> 3 == species:
                    if pure_in[n] + 1 > length:
                        length = pure_in[n] + 1
                    if one_in[n] and one_in[n] + 1 > length_one:
                        length_one = one_in[n] + 1
            if ext:
                mix_in[i] = ext + 1
            elif own:
                mix_in[i] = 1 + start_bonus(r)
            if own:
                pure_in[i] = length
                one_in[i] = length_one
    for r in range(EIGHT, rank, -1):
        for i in range(k):
            if cards[i] & 7 != r:
                continue
            own = cards[i] >> 3 == species
            ext = 0
            length, length_eight = 1, 1 if r == EIGHT else 0
            for d in near:
                n = slot[at[i] + d]
                if n < 0 or cards[n] & 7 <= r:
                    continue
                if mix_out[n] > ext:
                    ext = mix_out[n]
                if own and cards[n] >> 3 == species:
                    if pure_out[n] + 1 > length:
                        length = pure_out[n] + 1
                    if eight_out[n] and eight_out[n] + 1 > length_eight:
                        length_eight = eight_out[n] + 1
            if ext:
                mix_out[i] = ext + 1
            elif own:
                mix_out[i] = 1 + end_bonus(r)
            if own:
                pure_out[i] = length
                eight_out[i] = length_eight
    start_self = 1 + start_bonus(rank)  # the card alone, as the start of a path
    end_self = end_bonus(rank)
    one, eight = rank == ONE, rank == EIGHT
    top = values.shape[0] - 1
    for row in range(frame):
        for col in range(frame):
            a = (row + 1) * w + col + 1
            if slot[a] >= 0:
                continue
            adjacent = False
            a_ext = e_ext = pa = pa1 = pb = pb8 = 0
            for d in near:
                n = slot[a + d]
                if n < 0:
                    continue
                adjacent = True
                r = cards[n] & 7
                own = cards[n] >> 3 == species
                if r < rank:
                    a_ext = max(a_ext, mix_in[n])
                    if own:
                        pa = max(pa, pure_in[n])
                        pa1 = max(pa1, one_in[n])
                elif r > rank:
                    e_ext = max(e_ext, mix_out[n])
                    if own:
                        pb = max(pb, pure_out[n])
                        pb8 = max(pb8, eight_out[n])
            if not adjacent:
                continue
            best = 0
            if a_ext or e_ext:
                if a_ext:
                    best = a_ext + 1 + (e_ext if e_ext else end_self)
                if e_ext and start_self + e_ext > best:
                    best = start_self + e_ext
                length = pa + 1 + pb
                if length >= PURE_LENGTH:
                    best = max(best, path_points(length, True, one, eight))
                if pa1:
                    length = pa1 + 1 + pb
                    if length >= PURE_LENGTH:
                        best = max(best, path_points(length, True, True, eight))
                if pb8:
                    length = pa + 1 + pb8
                    if length >= PURE_LENGTH:
                        best = max(best, path_points(length, True, one, True))
                if pa1 and pb8:
                    length = pa1 + 1 + pb8
                    if length >= PURE_LENGTH:
                        best = max(best, path_points(length, True, True, True))
            gain = best - old if best > old else 0
            out[offset + row * frame + col] = values[min(gain, top)]


if available:
    frame_gains = compile_kernel(frame_gains)
