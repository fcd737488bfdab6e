"""Per-card path gains read off observations (compiled): what each card in view would add to
an arboretum's best path of its species, for the card head's ``card_gains`` input.

``card_gains(obs, rows, first, out)`` writes, for each row ``obs[rows[i]]`` (``[N, OBS_SIZE]``,
as the env writes it), into ``out[first + i]`` (float32 ``[., 80, GAIN_SEATS]``): for every
card in the observer's hand, its pending card and every discard pile's top card, and for the
observer's arboretum (column 0) and the next seat's (column 1), ``(1 + gain) / 20`` where
``gain`` is the largest growth of that species' best-path points over the empty cells next to
that arboretum's cards (the gain plane's quantity, ``engine.path_dp.placement_gains``, for every
card in view at once; an empty arboretum gives gain 0). Other cards stay 0.

It reads the observation only (the arboretums' rank and species planes, the best-path points
of ``arboretum_summary``, the hand, pending card and pile tops), so it shows a policy nothing
its observation does not: it is a fixed function of it, computed outside the network because a
best-path search is no layer. Rules only (``jit_gains.frame_gains``), no heuristic's advice.
tests/test_card_gains.py checks it against ``placement_gains`` on the dict engine's positions.
"""

from __future__ import annotations

import numpy as np

from ..actions import FRAME, FRAME_CELLS
from ..engine import NUM_CARDS
from ..engine.jit_gains import frame_gains
from ..engine.jit_playout import available, compile_kernel
from .. import observation as _observation
from ..observation import OFFSETS, PILE_BLOCK, PLANES_BLOCK, POINTS_SCALE, RANK_SCALE, SEATS, SPECIES_SCALE, SUMMARY_BLOCK

GAIN_SEATS = 2
"""Arboretums whose gains are given: the observer's, then the next seat's."""
GAIN_INPUTS = NUM_CARDS * GAIN_SEATS
"""Values ``with_card_gains`` appends to an observation (card-major: card ``c``'s seats at
``2c, 2c + 1``)."""
GAIN_VALUES = np.array([(1 + g) / POINTS_SCALE for g in range(int(POINTS_SCALE))], np.float32)
"""``(1 + gain) / 20``, as in the gain plane."""

_O_HAND, _O_PENDING, _O_PILES = OFFSETS["hand"], OFFSETS["pending"], OFFSETS["discard_piles"]
_O_SUMMARY, _O_ARB = OFFSETS["arboretum_summary"], OFFSETS["arboretum_planes"]


def card_gains(obs, rows, first, out):  # pragma: no cover - compiled
    """See the module doc."""
    cells = np.empty(NUM_CARDS, np.int64)
    cards = np.empty(NUM_CARDS, np.int64)
    buf = np.zeros(FRAME_CELLS, np.float32)
    wanted = np.zeros(NUM_CARDS, np.bool_)
    for i in range(rows.shape[0]):
        o = obs[rows[i]]
        out[first + i] = 0.0
        for c in range(NUM_CARDS):
            take = o[_O_HAND + c] > 0 or o[_O_PENDING + c] > 0
            for k in range(SEATS):
                if o[_O_PILES + k * PILE_BLOCK + NUM_CARDS + c] > 0:
                    take = True
            wanted[c] = take
        for seat in range(GAIN_SEATS):
            ranks = _O_ARB + seat * PLANES_BLOCK
            size = 0
            for j in range(FRAME_CELLS):
                r = o[ranks + j]
                if r > 0:
                    species = int(round(o[ranks + FRAME_CELLS + j] * SPECIES_SCALE)) - 1
                    cells[size] = j
                    cards[size] = species * 8 + int(round(r * RANK_SCALE)) - 1
                    size += 1
            points = _O_SUMMARY + seat * SUMMARY_BLOCK + NUM_CARDS
            for c in range(NUM_CARDS):
                if not wanted[c]:
                    continue
                best = GAIN_VALUES[0]
                if size:
                    buf[:] = 0.0
                    old = int(round(o[points + (c >> 3)] * POINTS_SCALE))
                    frame_gains(cells[:size], cards[:size], c, old, FRAME, buf, 0, GAIN_VALUES)
                    best = max(best, buf.max())
                out[first + i, c, seat] = best


def with_card_gains(obs: np.ndarray) -> np.ndarray:
    """``obs`` (``[OBS_SIZE]`` or ``[B, OBS_SIZE]``) followed by its card gains (``GAIN_INPUTS``
    values): the input of an exported network that reads them (``arboretum export``)."""
    rows = np.atleast_2d(np.asarray(obs, np.float32))
    gains = np.zeros((rows.shape[0], NUM_CARDS, GAIN_SEATS), np.float32)
    card_gains(np.ascontiguousarray(rows), np.arange(rows.shape[0]), 0, gains)
    out = np.concatenate([rows, gains.reshape(rows.shape[0], GAIN_INPUTS)], axis=1)
    return out if np.ndim(obs) == 2 else out[0]


if available:
    card_gains = compile_kernel(card_gains, depends=(_observation.__file__,))  # its offsets are compiled in
