"""The compiled fast path's observations and masks, for N games at once.

``observe(tables, observers, out)`` writes, for each game row ``i`` of ``tables`` (see
``batch.table``), the observation of seat ``observers[i]`` into ``out[i]`` (float32
``[N, OBS_SIZE]``, preallocated by the caller); ``masks(tables, out)`` the legal-action mask of
each game's player to move into ``out[i]`` (int8 ``[N, NUM_ACTIONS]``; all zeros once a game
is over). The AEC env calls them with N = 1, the vector env with N games.

The same layout (``observation.SECTIONS``) and the same numbers as the plain reference encoder
``observation.encode`` (tests/test_env_observation.py compares them at every step of many
games, and the masks with ``actions.legal_ids``).
"""

from __future__ import annotations

import numpy as np

from ..actions import DISCARD, DRAW_DISCARD, FRAME, FRAME_CELLS, PLAY_CARD, PLAY_CELL, Decision
from ..engine import NUM_CARDS, NUM_SPECIES
from ..engine.jit_gains import frame_gains
from ..engine.jit_playout import available, compile_kernel
from .. import actions as _actions
from ..engine.rules import hand_sum, next_cell
from ..observation import (
    COUNT_SCALE,
    DECK_SCALE,
    HAND_SCALE,
    PILE_BLOCK,
    PILE_SCALE,
    PLANES_BLOCK,
    POINTS_SCALE,
    RANK_SCALE,
    SEATS,
    SPECIES_SCALE,
    SUM_SCALE,
    SUMMARY_BLOCK,
    TURN_SCALE,
    WIDTHS,
    OFFSETS,
)
from .table import (
    T_CARDS,
    T_CELLS,
    T_COUNTS,
    T_CURRENT,
    T_DECK_LEN,
    T_DRAWN,
    T_DRAWN_LEN,
    T_HAND,
    T_HAND_SIZE,
    T_KNOWN,
    T_ORIGIN,
    T_PENDING,
    T_PILE,
    T_PILE_LEN,
    T_PLAYERS,
    T_POINTS,
    T_SIZE,
    T_SPECIES,
    T_TURN,
)
from .table import decision as game_decision
from . import table as _table

_NEAR = tuple(next_cell(0, d, FRAME + 2) for d in range(4))
"""Offsets of a cell's four neighbours in the frame with a border (``rules.next_cell``'s order)."""

# (numba freezes module constants, the observation offsets included, into the kernels)
_O_PLAYERS, _O_DECISION, _O_TO_MOVE = OFFSETS["player_count"], OFFSETS["decision"], OFFSETS["to_move"]
_O_DECK, _O_TURN, _O_SPECIES = OFFSETS["deck_size"], OFFSETS["turn"], OFFSETS["species_in_play"]
_O_HAND, _O_DRAWN, _O_PENDING = OFFSETS["hand"], OFFSETS["drawn"], OFFSETS["pending"]
_O_RIGHTS, _O_HAND_SIZES, _O_SUMS = OFFSETS["rights"], OFFSETS["hand_sizes"], OFFSETS["hand_sums"]
_O_KNOWN, _O_PILES, _O_SUMMARY = OFFSETS["known_cards"], OFFSETS["discard_piles"], OFFSETS["arboretum_summary"]
_O_ARB_PLANES, _O_PLANES = OFFSETS["arboretum_planes"], OFFSETS["own_species_planes"]
_O_GAIN = OFFSETS["gain_plane"]
_DRAW_SECOND_D, _PLAY_CARD_D = int(Decision.DRAW_SECOND), int(Decision.PLAY_CARD)
_PLAY_CELL_D, _DISCARD_D = int(Decision.PLAY_CELL), int(Decision.DISCARD)
_GAIN_VALUES = np.array([(1 + g) / POINTS_SCALE for g in range(int(POINTS_SCALE))], np.float32)

# The sections written here, with the widths they assume (checked against SECTIONS).
assert (WIDTHS["player_count"], WIDTHS["to_move"], WIDTHS["deck_size"], WIDTHS["turn"]) == (3, SEATS, 1, 1)
assert WIDTHS["decision"] == len(Decision) and WIDTHS["species_in_play"] == NUM_SPECIES
assert (WIDTHS["hand"], WIDTHS["drawn"], WIDTHS["pending"], WIDTHS["known_cards"]) == (
    NUM_CARDS, NUM_CARDS, NUM_CARDS, SEATS * NUM_CARDS)
assert (WIDTHS["rights"], WIDTHS["hand_sums"], WIDTHS["hand_sizes"]) == (
    NUM_SPECIES, SEATS * NUM_SPECIES, SEATS)
assert PILE_BLOCK == 2 * NUM_CARDS and WIDTHS["discard_piles"] == SEATS * PILE_BLOCK
assert SUMMARY_BLOCK == NUM_CARDS + 2 * NUM_SPECIES and WIDTHS["arboretum_summary"] == SEATS * SUMMARY_BLOCK
assert PLANES_BLOCK == 2 * FRAME_CELLS and WIDTHS["arboretum_planes"] == SEATS * PLANES_BLOCK
assert WIDTHS["own_species_planes"] == NUM_SPECIES * FRAME_CELLS and WIDTHS["gain_plane"] == FRAME_CELLS


DIRTY_SIZE = 2048
"""Room in a ``dirty`` list: at most ~1,000 values of an observation are nonzero."""


def _put(out, dirty, i, value):  # pragma: no cover - compiled
    out[i] = value
    if dirty[0] + 1 >= DIRTY_SIZE:
        raise RuntimeError("observation dirty list overflow")
    dirty[0] += 1
    dirty[dirty[0]] = i


def encode(t, out, observer, dirty):  # pragma: no cover - compiled
    """Write the observation of seat ``observer`` of game row ``t`` into ``out`` (float32,
    ``OBS_SIZE``), every value. ``dirty`` lists the nonzero values ``out`` holds (``dirty[0]``
    of them, their indexes after it): they are zeroed first, then the list is rebuilt (cheaper
    than zeroing all 7,835 values for the vector env's persistent buffers)."""
    for j in range(1, dirty[0] + 1):
        out[dirty[j]] = 0.0
    dirty[0] = 0
    current = t[T_CURRENT]
    decision = game_decision(t)
    deck_size, turn = t[T_DECK_LEN], t[T_TURN]
    pending = t[T_PENDING]
    n = t[T_PLAYERS]
    to_move = (current - observer) % n
    species = t[T_SPECIES]
    _put(out, dirty, _O_PLAYERS + n - 2, 1.0)
    _put(out, dirty, _O_DECISION + decision, 1.0)
    _put(out, dirty, _O_TO_MOVE + to_move, 1.0)
    _put(out, dirty, _O_DECK, deck_size / DECK_SCALE)
    _put(out, dirty, _O_TURN, turn / TURN_SCALE)
    for s in range(NUM_SPECIES):
        if species >> s & 1:
            _put(out, dirty, _O_SPECIES + s, 1.0)

    # hand, drawn, pending; visible sums per seat ('1 cancels 8' below), with the bits
    # (seat * 10 + species) of the visible 1s and 8s
    sums = np.zeros((SEATS, NUM_SPECIES), np.int64)
    ones = eights = 0
    base = T_HAND + observer * NUM_CARDS
    for c in range(NUM_CARDS):
        if t[base + c]:
            _put(out, dirty, _O_HAND + c, 1.0)
            sums[0, c >> 3] += (c & 7) + 1
            if c & 7 == 0:
                ones |= 1 << (c >> 3)
            elif c & 7 == 7:
                eights |= 1 << (c >> 3)
    for j in range(t[T_DRAWN_LEN]):
        d = t[T_DRAWN + j]
        if (to_move == 0 or t[T_KNOWN + current * NUM_CARDS + d]):
            _put(out, dirty, _O_DRAWN + d, 1.0)
    if to_move == 0 and pending >= 0:
        _put(out, dirty, _O_PENDING + pending, 1.0)

    for k in range(n):
        i = (observer + k) % n
        _put(out, dirty, _O_HAND_SIZES + k, t[T_HAND_SIZE + i] / HAND_SCALE)
        base = T_KNOWN + i * NUM_CARDS
        for c in range(NUM_CARDS):
            if t[base + c]:
                _put(out, dirty, _O_KNOWN + k * NUM_CARDS + c, 1.0)
                if k:
                    sums[k, c >> 3] += (c & 7) + 1
                    if c & 7 == 0:
                        ones |= 1 << (k * NUM_SPECIES + (c >> 3))
                    elif c & 7 == 7:
                        eights |= 1 << (k * NUM_SPECIES + (c >> 3))
        # discard pile: (80 - depth) / 80 per card, then the top card
        size = t[T_PILE_LEN + i]
        o = _O_PILES + k * PILE_BLOCK
        for j in range(size):
            _put(out, dirty, o + t[T_PILE + i * NUM_CARDS + j], (PILE_SCALE - (size - 1 - j)) / PILE_SCALE)
        if size:
            _put(out, dirty, o + NUM_CARDS + t[T_PILE + i * NUM_CARDS + size - 1], 1.0)
        # arboretum: summary, planes (and the observer's species planes)
        size = t[T_SIZE + i]
        if size:
            o = _O_SUMMARY + k * SUMMARY_BLOCK
            for s in range(NUM_SPECIES):
                _put(out, dirty, o + NUM_CARDS + s, t[T_POINTS + i * NUM_SPECIES + s] / POINTS_SCALE)
                _put(out, dirty, o + NUM_CARDS + NUM_SPECIES + s, t[T_COUNTS + i * NUM_SPECIES + s] / COUNT_SCALE)
            r0, c0 = t[T_ORIGIN + 2 * i], t[T_ORIGIN + 2 * i + 1]
            for j in range(size):
                cell, card = t[T_CELLS + i * NUM_CARDS + j], t[T_CARDS + i * NUM_CARDS + j]
                _put(out, dirty, o + card, 1.0)
                row = (cell + 128) >> 8
                index = (row - r0) * FRAME + cell - (row << 8) - c0
                rank = ((card & 7) + 1) / RANK_SCALE
                planes = _O_ARB_PLANES + k * PLANES_BLOCK
                _put(out, dirty, planes + index, rank)
                _put(out, dirty, planes + FRAME_CELLS + index, ((card >> 3) + 1) / SPECIES_SCALE)
                if k == 0:
                    _put(out, dirty, _O_PLANES + (card >> 3) * FRAME_CELLS + index, rank)

    # hand_sums and rights: an 8 counts 0 where another seat visibly holds the 1
    for k in range(n):
        for s in range(NUM_SPECIES):
            bit = k * NUM_SPECIES + s
            if eights >> bit & 1:
                elsewhere = False
                for other in range(n):
                    if other != k and ones >> (other * NUM_SPECIES + s) & 1:
                        elsewhere = True
                sums[k, s] = hand_sum(sums[k, s], ones >> bit & 1, 1, elsewhere)
    for s in range(NUM_SPECIES):
        if not species >> s & 1:
            continue
        own = sums[0, s]
        if own:
            _put(out, dirty, _O_SUMS + s, own / SUM_SCALE)
        right = True
        for k in range(1, n):
            v = sums[k, s]
            if v:
                _put(out, dirty, _O_SUMS + k * NUM_SPECIES + s, v / SUM_SCALE)
                if v > own:
                    right = False
        if right:
            _put(out, dirty, _O_RIGHTS + s, 1.0)

    # gain_plane: the mover's pending card on every legal cell
    if to_move == 0 and pending >= 0 and decision == _PLAY_CELL_D:
        size = t[T_SIZE + observer]
        if size == 0:
            for j in range(FRAME_CELLS):
                _put(out, dirty, _O_GAIN + j, _GAIN_VALUES[0])
        else:
            r0, c0 = t[T_ORIGIN + 2 * observer], t[T_ORIGIN + 2 * observer + 1]
            cells = np.empty(size, np.int64)
            cards = np.empty(size, np.int64)
            for j in range(size):
                cell = t[T_CELLS + observer * NUM_CARDS + j]
                row = (cell + 128) >> 8
                cells[j] = (row - r0) * FRAME + cell - (row << 8) - c0
                cards[j] = t[T_CARDS + observer * NUM_CARDS + j]
            frame_gains(cells, cards, pending, t[T_POINTS + observer * NUM_SPECIES + (pending >> 3)],
                        FRAME, out, _O_GAIN, _GAIN_VALUES)
            for j in range(_O_GAIN, _O_GAIN + FRAME_CELLS):
                if out[j] != 0.0:
                    dirty[0] += 1
                    dirty[dirty[0]] = j


def write_mask(t, mask):  # pragma: no cover - compiled
    """Set ``mask[i] = 1`` for every legal id of the player to move (``mask`` comes in all
    zeros; it stays so once the game is over)."""
    n = t[T_PLAYERS]
    p = t[T_CURRENT]
    decision = game_decision(t)
    deck_size = t[T_DECK_LEN]
    if decision <= _DRAW_SECOND_D:
        if deck_size:
            mask[0] = 1
        for k in range(n):
            if t[T_PILE_LEN + (p + k) % n]:
                mask[DRAW_DISCARD + k] = 1
    elif decision == _PLAY_CARD_D or decision == _DISCARD_D:
        at = PLAY_CARD if decision == _PLAY_CARD_D else DISCARD
        for c in range(NUM_CARDS):
            if t[T_HAND + p * NUM_CARDS + c]:
                mask[at + c] = 1
    elif decision == _PLAY_CELL_D:
        size = t[T_SIZE + p]
        if size == 0:
            mask[PLAY_CELL:PLAY_CELL + FRAME_CELLS] = 1
            return
        r0, c0 = t[T_ORIGIN + 2 * p], t[T_ORIGIN + 2 * p + 1]
        taken = np.zeros((FRAME + 2) * (FRAME + 2), np.bool_)  # the frame with a border
        at = np.empty(size, np.int64)
        for j in range(size):
            cell = t[T_CELLS + p * NUM_CARDS + j]
            row = (cell + 128) >> 8
            at[j] = (row - r0 + 1) * (FRAME + 2) + cell - (row << 8) - c0 + 1
            taken[at[j]] = True
        for j in range(size):
            for d in _NEAR:
                a = at[j] + d
                if not taken[a]:
                    row, col = a // (FRAME + 2) - 1, a % (FRAME + 2) - 1
                    if 0 <= row < FRAME and 0 <= col < FRAME:
                        mask[PLAY_CELL + row * FRAME + col] = 1




def observe(tables, observers, out):  # pragma: no cover - compiled
    """Every game's observation into ``out`` (any contents: every value is written)."""
    dirty = np.zeros(DIRTY_SIZE, np.int64)
    for i in range(tables.shape[0]):
        out[i, :] = 0.0
        dirty[0] = 0
        encode(tables[i], out[i], observers[i], dirty)


def observe_sparse(tables, observers, out, dirty):  # pragma: no cover - compiled
    """``observe`` into buffers written only by this function before, with their ``dirty``
    lists (``[N, DIRTY_SIZE]``, all zeros at first): only the values written last time are
    cleared."""
    for i in range(tables.shape[0]):
        encode(tables[i], out[i], observers[i], dirty[i])


def masks(tables, out):  # pragma: no cover - compiled
    for i in range(tables.shape[0]):
        out[i, :] = 0
        write_mask(tables[i], out[i])


if available:
    _DEPENDS = (_actions.__file__, _table.__file__)  # box_origin and table's kernels, compiled in
    _put = compile_kernel(_put, inline="always")
    encode = compile_kernel(encode, depends=_DEPENDS)
    observe_sparse = compile_kernel(observe_sparse, depends=_DEPENDS)
    write_mask = compile_kernel(write_mask, depends=_DEPENDS)
    observe = compile_kernel(observe, depends=_DEPENDS)
    masks = compile_kernel(masks, depends=_DEPENDS)
