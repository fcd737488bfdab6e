"""The env's compiled observation path: the table mirrored in one int array, encoded by numba.

The interpreted encoders (``observation.ObservationEncoder`` and the env's
``incremental_encoder.IncrementalEncoder``) read the engine's Python containers; every step costs
them tens of small Python operations per seat. Here the env keeps a **mirror** of what
observations need in one ``int64`` array (``TABLE_SIZE`` values: per player the hand and known
cards as 80 flags, the discard pile bottom first, the arboretum's cells and cards in the order
they were played, and derived values kept up to date: hand and known counts, the arboretum's
frame origin, its best-path points and card count per species), changed by ``apply`` after each
action (a few array cells; after a play the arboretum's points are redone by the engine's
compiled best-path DP, ``engine.jit_paths.best_paths``). ``encode`` then writes a whole
observation from scratch into a fresh float32 array in one compiled call, and ``write_mask``
the action mask of the player to move.

The same layout (``observation.SECTIONS``) and the same numbers as the reference encoder:
tests/test_env_observation.py compares the env's observations, made here, with
``ObservationEncoder.encode`` of the agent's ``TableView`` at every step of many games, and
its masks with ``actions.legal_ids``. ``available`` is False without numba: the env then uses
the interpreted ``IncrementalEncoder``.

Layer: observation encoding (reads engine states; imports no RL library).
"""

from __future__ import annotations

import numpy as np

from .actions import DISCARD, DRAW_DISCARD, FRAME, FRAME_CELLS, PLAY_CARD, PLAY_CELL, Decision
from .engine import NUM_CARDS, NUM_SPECIES, GameState
from .engine.jit_gains import frame_gains
from .engine.jit_paths import best_paths
from .engine.jit_playout import available, compile_kernel
from .observation import (
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
    _O_ARB_PLANES,
    _O_DECISION,
    _O_DECK,
    _O_DRAWN,
    _O_GAIN,
    _O_HAND,
    _O_HAND_SIZES,
    _O_KNOWN,
    _O_PENDING,
    _O_PILES,
    _O_PLANES,
    _O_PLAYERS,
    _O_RIGHTS,
    _O_SPECIES,
    _O_SUMMARY,
    _O_SUMS,
    _O_TO_MOVE,
    _O_TURN,
)

# ----------------------------------------------------------------------------- the mirror
T_PLAYERS = 0
T_SPECIES = 1  # bits of the species in play
T_HAND = 8  # per player: 80 flags
T_HAND_SIZE = T_HAND + SEATS * NUM_CARDS  # per player
T_KNOWN = T_HAND_SIZE + SEATS  # per player: 80 flags
T_PILE = T_KNOWN + SEATS * NUM_CARDS  # per player: up to 80 cards, bottom first
T_PILE_LEN = T_PILE + SEATS * NUM_CARDS  # per player
T_CELLS = T_PILE_LEN + SEATS  # per player: packed cells in the order played
T_CARDS = T_CELLS + SEATS * NUM_CARDS  # per player: the cards on those cells
T_SIZE = T_CARDS + SEATS * NUM_CARDS  # per player: cards in the arboretum
T_ORIGIN = T_SIZE + SEATS  # per player: frame origin row, col (actions.frame_origin)
T_POINTS = T_ORIGIN + 2 * SEATS  # per player, per species: best-path points
T_COUNTS = T_POINTS + SEATS * NUM_SPECIES  # per player, per species: cards in the arboretum
TABLE_SIZE = T_COUNTS + SEATS * NUM_SPECIES

DRAW, PLAY, DISCARD_KIND = 0, 1, 2
"""``apply``'s action kinds."""
NO_CARD = -1

# (numba freezes module constants, the observation offsets included, into the kernels)
_DRAW_SECOND_D, _PLAY_CARD_D = int(Decision.DRAW_SECOND), int(Decision.PLAY_CARD)
_PLAY_CELL_D, _DISCARD_D = int(Decision.PLAY_CELL), int(Decision.DISCARD)
_ALL_SPECIES = np.arange(NUM_SPECIES, dtype=np.int64)
_GAIN_VALUES = np.array([(1 + g) / POINTS_SCALE for g in range(int(POINTS_SCALE))], np.float32)

# The sections this module writes, with the widths it assumes (checked against SECTIONS).
assert (WIDTHS["hand"], WIDTHS["drawn"], WIDTHS["pending"], WIDTHS["known_cards"]) == (
    NUM_CARDS, NUM_CARDS, NUM_CARDS, SEATS * NUM_CARDS)
assert (WIDTHS["rights"], WIDTHS["hand_sums"], WIDTHS["hand_sizes"]) == (
    NUM_SPECIES, SEATS * NUM_SPECIES, SEATS)
assert PILE_BLOCK == 2 * NUM_CARDS and WIDTHS["discard_piles"] == SEATS * PILE_BLOCK
assert SUMMARY_BLOCK == NUM_CARDS + 2 * NUM_SPECIES and WIDTHS["arboretum_summary"] == SEATS * SUMMARY_BLOCK
assert PLANES_BLOCK == 2 * FRAME_CELLS and WIDTHS["arboretum_planes"] == SEATS * PLANES_BLOCK
assert WIDTHS["own_species_planes"] == NUM_SPECIES * FRAME_CELLS and WIDTHS["gain_plane"] == FRAME_CELLS


def load(table: np.ndarray, state: GameState) -> None:
    """Fill the mirror from a state (a reset, or ``reset_to`` any state)."""
    table[:] = 0
    table[T_PLAYERS] = state.num_players
    table[T_SPECIES] = sum(1 << s for s in state.species)
    for p in range(state.num_players):
        for c in state.hands[p]:
            table[T_HAND + p * NUM_CARDS + c] = 1
        table[T_HAND_SIZE + p] = len(state.hands[p])
        for c in state.known[p]:
            table[T_KNOWN + p * NUM_CARDS + c] = 1
        pile = state.discards[p]
        table[T_PILE + p * NUM_CARDS:T_PILE + p * NUM_CARDS + len(pile)] = pile
        table[T_PILE_LEN + p] = len(pile)
        arboretum = state.arboretums[p]
        table[T_CELLS + p * NUM_CARDS:T_CELLS + p * NUM_CARDS + len(arboretum)] = list(arboretum)
        table[T_CARDS + p * NUM_CARDS:T_CARDS + p * NUM_CARDS + len(arboretum)] = list(arboretum.values())
        table[T_SIZE + p] = len(arboretum)
        if not _refresh_arboretum(table, p):
            raise ValueError(f"the arboretum of player {p} does not fit the {FRAME} x {FRAME} frame")


def _refresh_arboretum(table, p):  # pragma: no cover - compiled
    """Frame origin, best-path points and species counts of player ``p``'s arboretum; returns
    False if its bounding box does not fit the frame."""
    k = table[T_SIZE + p]
    for s in range(NUM_SPECIES):
        table[T_POINTS + p * NUM_SPECIES + s] = 0
        table[T_COUNTS + p * NUM_SPECIES + s] = 0
    if k == 0:
        table[T_ORIGIN + 2 * p] = -(FRAME // 2)
        table[T_ORIGIN + 2 * p + 1] = -(FRAME // 2)
        return True
    cells = table[T_CELLS + p * NUM_CARDS:T_CELLS + p * NUM_CARDS + k].copy()
    cards = table[T_CARDS + p * NUM_CARDS:T_CARDS + p * NUM_CARDS + k].copy()
    r_min = c_min = 1 << 20
    r_max = c_max = -(1 << 20)
    for i in range(k):
        row = (cells[i] + 128) >> 8
        col = cells[i] - (row << 8)
        r_min, r_max = min(r_min, row), max(r_max, row)
        c_min, c_max = min(c_min, col), max(c_max, col)
        table[T_COUNTS + p * NUM_SPECIES + (cards[i] >> 3)] += 1
    table[T_ORIGIN + 2 * p] = r_min - (FRAME - (r_max - r_min + 1)) // 2
    table[T_ORIGIN + 2 * p + 1] = c_min - (FRAME - (c_max - c_min + 1)) // 2
    paths = best_paths(cells, cards, _ALL_SPECIES)
    for s in range(NUM_SPECIES):
        table[T_POINTS + p * NUM_SPECIES + s] = paths[s, 0]
    return r_max - r_min < FRAME and c_max - c_min < FRAME


def _leave_hand(table, p, card):  # pragma: no cover - compiled
    table[T_HAND + p * NUM_CARDS + card] = 0
    table[T_HAND_SIZE + p] -= 1
    table[T_KNOWN + p * NUM_CARDS + card] = 0


def apply(table, kind, p, card, where):  # pragma: no cover - compiled
    """Mirror one engine transition of player ``p``: ``DRAW`` of ``card`` from the pile of
    player ``where`` (``-1``: the deck), ``PLAY`` of ``card`` on packed cell ``where``,
    ``DISCARD_KIND`` of ``card`` (a legal game's arboretums always fit their frames)."""
    if kind == DRAW:
        if where >= 0:
            table[T_PILE_LEN + where] -= 1
            table[T_KNOWN + p * NUM_CARDS + card] = 1
        table[T_HAND + p * NUM_CARDS + card] = 1
        table[T_HAND_SIZE + p] += 1
        return
    _leave_hand(table, p, card)
    if kind == PLAY:
        k = table[T_SIZE + p]
        table[T_CELLS + p * NUM_CARDS + k] = where
        table[T_CARDS + p * NUM_CARDS + k] = card
        table[T_SIZE + p] = k + 1
        _refresh_arboretum(table, p)
        return
    top = table[T_PILE_LEN + p]
    table[T_PILE + p * NUM_CARDS + top] = card
    table[T_PILE_LEN + p] = top + 1


def encode(table, out, observer, current, decision, deck_size, turn, drawn0, drawn1,
           pending):  # pragma: no cover - compiled
    """Write the observation of ``observer`` into ``out`` (float32, ``OBS_SIZE``), every value.

    ``decision``: the mover's ``actions.Decision``; ``drawn0``, ``drawn1``: the cards drawn this
    turn (``NO_CARD`` for none); ``pending``: the card chosen to play (``NO_CARD`` for none)."""
    out[:] = 0.0
    n = table[T_PLAYERS]
    to_move = (current - observer) % n
    species = table[T_SPECIES]
    out[_O_PLAYERS + n - 2] = 1.0
    out[_O_DECISION + decision] = 1.0
    out[_O_TO_MOVE + to_move] = 1.0
    out[_O_DECK] = deck_size / DECK_SCALE
    out[_O_TURN] = turn / TURN_SCALE
    for s in range(NUM_SPECIES):
        if species >> s & 1:
            out[_O_SPECIES + s] = 1.0

    # hand, drawn, pending; visible sums per seat ('1 cancels 8' below), with the bits
    # (seat * 10 + species) of the visible 1s and 8s
    sums = np.zeros((SEATS, NUM_SPECIES), np.int64)
    ones = eights = 0
    base = T_HAND + observer * NUM_CARDS
    for c in range(NUM_CARDS):
        if table[base + c]:
            out[_O_HAND + c] = 1.0
            sums[0, c >> 3] += (c & 7) + 1
            if c & 7 == 0:
                ones |= 1 << (c >> 3)
            elif c & 7 == 7:
                eights |= 1 << (c >> 3)
    for d in (drawn0, drawn1):
        if d >= 0 and (to_move == 0 or table[T_KNOWN + current * NUM_CARDS + d]):
            out[_O_DRAWN + d] = 1.0
    if to_move == 0 and pending >= 0:
        out[_O_PENDING + pending] = 1.0

    for k in range(n):
        i = (observer + k) % n
        out[_O_HAND_SIZES + k] = table[T_HAND_SIZE + i] / HAND_SCALE
        base = T_KNOWN + i * NUM_CARDS
        for c in range(NUM_CARDS):
            if table[base + c]:
                out[_O_KNOWN + k * NUM_CARDS + c] = 1.0
                if k:
                    sums[k, c >> 3] += (c & 7) + 1
                    if c & 7 == 0:
                        ones |= 1 << (k * NUM_SPECIES + (c >> 3))
                    elif c & 7 == 7:
                        eights |= 1 << (k * NUM_SPECIES + (c >> 3))
        # discard pile: (80 - depth) / 80 per card, then the top card
        size = table[T_PILE_LEN + i]
        o = _O_PILES + k * PILE_BLOCK
        for j in range(size):
            out[o + table[T_PILE + i * NUM_CARDS + j]] = (PILE_SCALE - (size - 1 - j)) / PILE_SCALE
        if size:
            out[o + NUM_CARDS + table[T_PILE + i * NUM_CARDS + size - 1]] = 1.0
        # arboretum: summary, planes (and the observer's species planes)
        size = table[T_SIZE + i]
        if size:
            o = _O_SUMMARY + k * SUMMARY_BLOCK
            for s in range(NUM_SPECIES):
                out[o + NUM_CARDS + s] = table[T_POINTS + i * NUM_SPECIES + s] / POINTS_SCALE
                out[o + NUM_CARDS + NUM_SPECIES + s] = table[T_COUNTS + i * NUM_SPECIES + s] / COUNT_SCALE
            r0, c0 = table[T_ORIGIN + 2 * i], table[T_ORIGIN + 2 * i + 1]
            for j in range(size):
                cell, card = table[T_CELLS + i * NUM_CARDS + j], table[T_CARDS + i * NUM_CARDS + j]
                out[o + card] = 1.0
                row = (cell + 128) >> 8
                index = (row - r0) * FRAME + cell - (row << 8) - c0
                rank = ((card & 7) + 1) / RANK_SCALE
                planes = _O_ARB_PLANES + k * PLANES_BLOCK
                out[planes + index] = rank
                out[planes + FRAME_CELLS + index] = ((card >> 3) + 1) / SPECIES_SCALE
                if k == 0:
                    out[_O_PLANES + (card >> 3) * FRAME_CELLS + index] = rank

    # hand_sums and rights: an 8 counts 0 where another seat visibly holds the 1
    for k in range(n):
        for s in range(NUM_SPECIES):
            bit = k * NUM_SPECIES + s
            if eights >> bit & 1:
                for other in range(n):
                    if other != k and ones >> (other * NUM_SPECIES + s) & 1:
                        sums[k, s] -= 8
                        break
    for s in range(NUM_SPECIES):
        if not species >> s & 1:
            continue
        own = sums[0, s]
        if own:
            out[_O_SUMS + s] = own / SUM_SCALE
        right = True
        for k in range(1, n):
            v = sums[k, s]
            if v:
                out[_O_SUMS + k * NUM_SPECIES + s] = v / SUM_SCALE
                if v > own:
                    right = False
        if right:
            out[_O_RIGHTS + s] = 1.0

    # gain_plane: the mover's pending card on every legal cell
    if to_move == 0 and pending >= 0 and decision == _PLAY_CELL_D:
        size = table[T_SIZE + observer]
        if size == 0:
            out[_O_GAIN:_O_GAIN + FRAME_CELLS] = _GAIN_VALUES[0]
        else:
            r0, c0 = table[T_ORIGIN + 2 * observer], table[T_ORIGIN + 2 * observer + 1]
            cells = np.empty(size, np.int64)
            cards = np.empty(size, np.int64)
            for j in range(size):
                cell = table[T_CELLS + observer * NUM_CARDS + j]
                row = (cell + 128) >> 8
                cells[j] = (row - r0) * FRAME + cell - (row << 8) - c0
                cards[j] = table[T_CARDS + observer * NUM_CARDS + j]
            frame_gains(cells, cards, pending, table[T_POINTS + observer * NUM_SPECIES + (pending >> 3)],
                        FRAME, out, _O_GAIN, _GAIN_VALUES)


def write_mask(table, mask, p, decision, deck_size, pending):  # pragma: no cover - compiled
    """Set ``mask[i] = 1`` for every legal id of player ``p``, who faces ``decision``
    (``mask`` comes in all zeros)."""
    n = table[T_PLAYERS]
    if decision <= _DRAW_SECOND_D:
        if deck_size:
            mask[0] = 1
        for k in range(n):
            if table[T_PILE_LEN + (p + k) % n]:
                mask[DRAW_DISCARD + k] = 1
    elif decision == _PLAY_CARD_D or decision == _DISCARD_D:
        at = PLAY_CARD if decision == _PLAY_CARD_D else DISCARD
        for c in range(NUM_CARDS):
            if table[T_HAND + p * NUM_CARDS + c]:
                mask[at + c] = 1
    elif decision == _PLAY_CELL_D:
        size = table[T_SIZE + p]
        if size == 0:
            mask[PLAY_CELL:PLAY_CELL + FRAME_CELLS] = 1
            return
        r0, c0 = table[T_ORIGIN + 2 * p], table[T_ORIGIN + 2 * p + 1]
        taken = np.zeros((FRAME + 2) * (FRAME + 2), np.bool_)  # the frame with a border
        at = np.empty(size, np.int64)
        for j in range(size):
            cell = table[T_CELLS + p * NUM_CARDS + j]
            row = (cell + 128) >> 8
            at[j] = (row - r0 + 1) * (FRAME + 2) + cell - (row << 8) - c0 + 1
            taken[at[j]] = True
        for j in range(size):
            for d in (-(FRAME + 2), 1, FRAME + 2, -1):
                a = at[j] + d
                if not taken[a]:
                    row, col = a // (FRAME + 2) - 1, a % (FRAME + 2) - 1
                    if 0 <= row < FRAME and 0 <= col < FRAME:
                        mask[PLAY_CELL + row * FRAME + col] = 1


if available:
    _refresh_arboretum = compile_kernel(_refresh_arboretum)
    _leave_hand = compile_kernel(_leave_hand)
    apply = compile_kernel(apply)
    encode = compile_kernel(encode)
    write_mask = compile_kernel(write_mask)
