"""The random playout compiled with numba: the same decisions as ``playout.random_playout_python``.

``playout.random_playout`` packs the state into one flat list of ints (``pack``), ``_load``
unpacks it into a workspace, ``_turns`` plays whole turns in machine code, one batch of
uniforms at a time (a new batch when fewer than 6 are left at the start of a turn, exactly as
the interpreted playout draws them), and ``_dump`` writes the result back as a flat array that
``playout`` puts into the state's own containers (dicts, sets, lists). So a compiled and an
interpreted playout of the same state with the same Generator end in identical states, and
leave the Generator in the same state (tests/test_engine_jit.py checks this on many games).

The workspace is one ``int64`` array (offsets from ``_offsets``) and an ``int8`` grid per
player: ``grid[p, cell + GRID_OFFSET]`` is 0 for an empty cell, 1 for a frontier cell and
``2 + card`` for a card (rows and columns -128..127). Frontier cells are kept in the order
``rules.place`` gives the state's frontier dict (neighbours from ``rules.neighbour``). The
grids are kept between playouts (one set per thread and player count, ``grids``) and cleared
cell by cell at the end of each, which is much cheaper than a fresh 64 KiB per player.
Without numba ``available`` is False and the interpreted playout is used.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from .rules import neighbour

try:  # numba is a dependency, but the engine also runs (slower) without it
    from numba import njit
    available = True
except ImportError:  # pragma: no cover - exercised only where numba is missing
    available = False

BATCH = 256
"""Uniforms per batch, as ``playout.random_playout_python`` draws them."""
GRID_OFFSET = 128 * 256 + 128
"""``cell + GRID_OFFSET`` = ``(row + 128) * 256 + (col + 128)``: a packed cell's grid index."""
GRID_SIZE = 256 * 256
GRID_REACH = 127
"""Rows and columns the grid holds: -128..127 (``playout`` checks that no placement can leave it)."""
NEED_UNIFORMS, GAME_OVER = 1, 0
"""``_turns``'s return values: a new batch of uniforms is needed / the game is over."""

_CARDS = 80
_FRONTIER_CAP = 200  # a connected arboretum of k <= 80 cards has at most 2k + 2 free neighbours
# scalars at the start of the workspace
S_PHASE, S_PLAYER, S_TURN, S_LAST_TURN, S_DECK, S_UNIFORM, S_HISTORY = range(7)
_SCALARS = 8
# phases and action kinds (engine.state.Phase / ActionKind values)
_DRAW_FIRST, _DRAW_SECOND, _PLAY, _DISCARD, _GAME_OVER = 0, 1, 2, 3, 4
_DRAW, _PLAYK, _DISCARDK = 0, 1, 2
_DECK = -1


_local = threading.local()


KERNEL_SOURCES = tuple(str(Path(__file__).with_name(name))
                       for name in ("rules.py", "jit_paths.py", "jit_gains.py"))
"""Engine files whose functions other kernels compile in (``rules``' functions, ``best_paths``,
``frame_gains``): a cached kernel is stale when one of them changes."""


def compile_kernel(fn, depends=(), **options):
    """``numba.njit`` with its on-disk cache (compiled once per machine), or without the cache
    where numba finds no writable place for it (a read-only install and no user cache).

    numba checks a cached kernel against its own source file only, not against the functions
    from other files that it compiles in; so the cache's stamp here also covers
    ``KERNEL_SOURCES`` and the files ``depends`` names (the callers' own jitable helpers): a
    change to any of them recompiles the kernel."""
    try:
        kernel = njit(cache=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(**options)(fn)
    try:
        cache_file = kernel._cache._cache_file  # numba internals: without them, numba's own stamp
        stamps = [cache_file._source_stamp]
        for path in (*KERNEL_SOURCES, *depends):
            st = os.stat(path)
            stamps.append((st.st_mtime, st.st_size))
        cache_file._source_stamp = tuple(stamps)
    except (AttributeError, OSError):  # pragma: no cover - another numba, or a missing file
        pass
    return kernel


def grids(num_players: int) -> np.ndarray:
    """This thread's all-empty grids for ``num_players`` players (``_dump`` leaves them empty)."""
    cache = getattr(_local, "grids", None)
    if cache is None:
        cache = _local.grids = {}
    grid = cache.get(num_players)
    if grid is None:
        grid = cache[num_players] = np.zeros((num_players, GRID_SIZE), np.int8)
    return grid


def drop_grids(num_players: int) -> None:
    """Forget this thread's grids (after a playout that did not finish: they may not be empty)."""
    getattr(_local, "grids", {}).pop(num_players, None)


def workspace_size(num_players: int) -> int:
    return _offsets(num_players)[-1]


def history_offset(num_players: int) -> int:
    """Where ``_turns`` writes a batch's decisions: 5 columns (kind, card, row, col, source) of
    ``BATCH`` entries each (a decision uses at least one uniform)."""
    return _offsets(num_players)[9]


def _offsets(n):  # compiled too (see the end of the module)
    """Start of each part of the workspace, and its end."""
    deck = _SCALARS
    hands = deck + _CARDS  # per player: 80 flags
    known = hands + n * _CARDS
    piles = known + n * _CARDS  # per player: 80 cards, bottom first
    pile_len = piles + n * _CARDS
    frontier = pile_len + n
    frontier_len = frontier + n * _FRONTIER_CAP
    size = frontier_len + n  # arboretum sizes
    placed = size + n  # per player: 80 (cell, card) pairs, the cards placed by this playout
    placed_len = placed + n * 2 * _CARDS
    history = placed_len + n
    end = history + 5 * BATCH
    return deck, hands, known, piles, pile_len, frontier, frontier_len, size, placed, history, \
        placed_len, end


def pack(state) -> list:
    """The state as the flat list ``_load`` reads: scalars, deck, then per player its hand,
    known cards, pile, arboretum (cell, card pairs in order) and frontier, each after its
    length."""
    out = [int(state.phase), state.current_player, state.turn, int(state.last_turn),
           len(state.deck), *state.deck]
    for p in range(state.num_players):
        hand, known, pile = state.hands[p], state.known[p], state.discards[p]
        arboretum, frontier = state.arboretums[p], state.frontier[p]
        out.append(len(hand))
        out += hand
        out.append(len(known))
        out += known
        out.append(len(pile))
        out += pile
        out.append(len(arboretum))
        for item in arboretum.items():
            out += item
        out.append(len(frontier) if arboretum else 0)
        if arboretum:
            out += frontier
    return out


def _load(packed, work, grid, n):  # pragma: no cover - compiled
    deck, hands, known, piles, pile_len, frontier, frontier_len, size, placed, history, \
        placed_len, end = _offsets(n)
    for k in range(4):
        work[k] = packed[k]
    count = packed[4]
    work[S_DECK] = count
    for k in range(count):
        work[deck + k] = packed[5 + k]
    j = 5 + count
    for p in range(n):
        count = packed[j]
        for k in range(count):
            work[hands + p * _CARDS + packed[j + 1 + k]] = 1
        j += 1 + count
        count = packed[j]
        for k in range(count):
            work[known + p * _CARDS + packed[j + 1 + k]] = 1
        j += 1 + count
        count = packed[j]
        work[pile_len + p] = count
        for k in range(count):
            work[piles + p * _CARDS + k] = packed[j + 1 + k]
        j += 1 + count
        count = packed[j]
        work[size + p] = count
        for k in range(count):
            grid[p, packed[j + 1 + 2 * k] + GRID_OFFSET] = 2 + packed[j + 2 + 2 * k]
        j += 1 + 2 * count
        count = packed[j]
        work[frontier_len + p] = count
        for k in range(count):
            cell = packed[j + 1 + k]
            work[frontier + p * _FRONTIER_CAP + k] = cell
            grid[p, cell + GRID_OFFSET] = 1
        j += 1 + count


def _turns(uniforms, work, grid, n):  # pragma: no cover - compiled
    """Play whole turns until the game is over or the batch may not last a turn. The batch's
    decisions go to the history part of the workspace (their count in ``S_HISTORY``)."""
    deck, hands, known, piles, pile_len, frontier, frontier_len, size, placed, history, \
        placed_len, end = _offsets(n)
    i = 0
    h = 0
    sources = np.empty(n + 1, np.int64)
    hand = np.empty(_CARDS, np.int64)
    status = GAME_OVER
    while work[S_PHASE] != _GAME_OVER:
        if i > BATCH - 6:
            status = NEED_UNIFORMS
            break
        p = work[S_PLAYER]
        # draws (unless skipped or already made)
        while work[S_PHASE] == _DRAW_FIRST or work[S_PHASE] == _DRAW_SECOND:
            count = 0
            for q in range(n):
                if work[pile_len + q] > 0:
                    sources[count] = q
                    count += 1
            if work[S_DECK] > 0:
                sources[count] = _DECK
                count += 1
            source = sources[int(uniforms[i] * count)]
            i += 1
            if source == _DECK:
                work[S_DECK] -= 1
                card = work[deck + work[S_DECK]]
                if work[S_DECK] == 0:
                    work[S_LAST_TURN] = 1
            else:
                work[pile_len + source] -= 1
                card = work[piles + source * _CARDS + work[pile_len + source]]
                work[known + p * _CARDS + card] = 1
            work[hands + p * _CARDS + card] = 1
            _record(work, history, h, _DRAW, -1, 0, 0, source)
            h += 1
            any_pile = False
            for q in range(n):
                if work[pile_len + q] > 0:
                    any_pile = True
            if work[S_PHASE] == _DRAW_FIRST:
                work[S_PHASE] = _DRAW_SECOND
                if work[S_DECK] == 0 and not any_pile:
                    work[S_PHASE] = _PLAY  # no source for the second draw: it is skipped
            else:
                work[S_PHASE] = _PLAY
        count = 0
        for c in range(_CARDS):  # the hand in sorted order
            if work[hands + p * _CARDS + c]:
                hand[count] = c
                count += 1
        if work[S_PHASE] == _PLAY:
            k = int(uniforms[i] * count)
            card = hand[k]
            f = frontier + p * _FRONTIER_CAP
            if work[size + p] > 0:
                length = work[frontier_len + p]
                j = int(uniforms[i + 1] * length)
                cell = work[f + j]
                for m in range(j, length - 1):  # del frontier[cell], the others keep their order
                    work[f + m] = work[f + m + 1]
                work[frontier_len + p] = length - 1
            else:
                cell = 0
            i += 2
            work[hands + p * _CARDS + card] = 0
            work[known + p * _CARDS + card] = 0
            grid[p, cell + GRID_OFFSET] = 2 + card
            for d in range(4):
                nb = neighbour(cell, d)
                if grid[p, nb + GRID_OFFSET] == 0:
                    grid[p, nb + GRID_OFFSET] = 1
                    work[f + work[frontier_len + p]] = nb
                    work[frontier_len + p] += 1
            work[size + p] += 1
            m = placed + p * 2 * _CARDS + 2 * work[placed_len + p]
            work[m] = cell
            work[m + 1] = card
            work[placed_len + p] += 1
            row = (cell + 128) >> 8
            _record(work, history, h, _PLAYK, card, row, cell - (row << 8), _DECK)
            h += 1
            for m in range(k, count - 1):  # hand.remove(card)
                hand[m] = hand[m + 1]
            count -= 1
            work[S_PHASE] = _DISCARD
        card = hand[int(uniforms[i] * count)]
        i += 1
        work[hands + p * _CARDS + card] = 0
        work[known + p * _CARDS + card] = 0
        work[piles + p * _CARDS + work[pile_len + p]] = card
        work[pile_len + p] += 1
        _record(work, history, h, _DISCARDK, card, 0, 0, _DECK)
        h += 1
        work[S_TURN] += 1
        if work[S_LAST_TURN]:
            work[S_PHASE] = _GAME_OVER
            break
        work[S_PLAYER] = (p + 1) % n
        work[S_PHASE] = _DRAW_FIRST  # never skipped here: a discard pile just grew
    work[S_HISTORY] = h
    return status


def _record(work, history, h, kind, card, row, col, source):  # pragma: no cover - compiled
    work[history + h] = kind
    work[history + BATCH + h] = card
    work[history + 2 * BATCH + h] = row
    work[history + 3 * BATCH + h] = col
    work[history + 4 * BATCH + h] = source


def _dump(work, grid, packed, n):  # pragma: no cover - compiled
    """Scalars (phase, player, turn, last_turn, deck size), then per player: hand, known cards,
    pile, placed (cell, card) pairs and frontier, each after its length. Clears the grid (every
    cell of the arboretums, the loaded ones read from ``packed``, and of the frontiers) for the
    next playout."""
    deck, hands, known, piles, pile_len, frontier, frontier_len, size, placed, history, \
        placed_len, end = _offsets(n)
    j = 5 + packed[4]
    for p in range(n):
        for part in range(3):  # hand, known cards, pile
            j += 1 + packed[j]
        count = packed[j]
        for k in range(count):
            grid[p, packed[j + 1 + 2 * k] + GRID_OFFSET] = 0
        j += 1 + 2 * count
        j += 1 + packed[j]  # the loaded frontier: placed on since, or still the frontier
        for k in range(work[placed_len + p]):
            grid[p, work[placed + p * 2 * _CARDS + 2 * k] + GRID_OFFSET] = 0
        for k in range(work[frontier_len + p]):
            grid[p, work[frontier + p * _FRONTIER_CAP + k] + GRID_OFFSET] = 0
    out = np.empty(5 + n * (5 + 3 * _CARDS + 2 * _CARDS + _FRONTIER_CAP), np.int64)
    for k in range(5):
        out[k] = work[k]
    j = 5
    for p in range(n):
        for base in (hands, known):
            start = j
            j += 1
            for c in range(_CARDS):
                if work[base + p * _CARDS + c]:
                    out[j] = c
                    j += 1
            out[start] = j - start - 1
        count = work[pile_len + p]
        out[j] = count
        for k in range(count):
            out[j + 1 + k] = work[piles + p * _CARDS + k]
        j += 1 + count
        count = work[placed_len + p]
        out[j] = count
        for k in range(2 * count):
            out[j + 1 + k] = work[placed + p * 2 * _CARDS + k]
        j += 1 + 2 * count
        count = work[frontier_len + p] if count else 0  # unchanged unless cards were placed
        out[j] = count
        for k in range(count):
            out[j + 1 + k] = work[frontier + p * _FRONTIER_CAP + k]
        j += 1 + count
    return out[:j]


if available:
    _offsets = compile_kernel(_offsets)
    _record = compile_kernel(_record, inline="always")
    _load = compile_kernel(_load)
    _turns = compile_kernel(_turns)
    _dump = compile_kernel(_dump)
