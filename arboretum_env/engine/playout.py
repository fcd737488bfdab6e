"""Uniformly random legal play to the end of the game (rollouts, tests, benchmarks).

Each decision is drawn uniformly from the legal actions of its phase without listing them:
a play is a uniform hand card and a uniform legal cell, which is uniform over their product.
Draw sources are every non-empty pile then the deck (if not empty); hands are sampled in
sorted order and cells in the frontier's insertion order, so a seed gives the same playout on
every platform.

``random_playout`` runs the compiled playout of :mod:`.jit_playout` (the same decisions, much
faster) where numba is installed and the state fits its grid, and ``random_playout_python``
otherwise; tests/test_engine_jit.py checks that both end in identical states.
"""

from __future__ import annotations

import numpy as np

from . import jit_playout as jit
from .cards import NUM_CARDS
from .state import DECK, GameState, Phase

_BATCH = jit.BATCH


def random_playout(state: GameState, rng: np.random.Generator) -> GameState:
    """Play ``state`` to the end with uniformly random legal decisions; returns ``state``."""
    if jit.available and _fits(state):
        return _random_playout_compiled(state, rng)
    return random_playout_python(state, rng)


def random_playout_python(state: GameState, rng: np.random.Generator) -> GameState:
    """``random_playout`` in plain Python (the reference the compiled one is checked against)."""
    # the unchecked transitions: every choice below is legal by construction
    draw, play_cell, discard = state.draw_unchecked, state.play_cell_unchecked, state.discard_unchecked
    draw_first, draw_second = Phase.DRAW_FIRST, Phase.DRAW_SECOND
    play_phase, game_over = Phase.PLAY, Phase.GAME_OVER
    deck, discards, hands = state.deck, state.discards, state.hands
    arboretums, frontiers = state.arboretums, state.frontier
    players = range(state.num_players)
    uniforms = rng.random(_BATCH).tolist()
    i = 0
    while state.phase is not game_over:
        if i > _BATCH - 6:
            uniforms = rng.random(_BATCH).tolist()
            i = 0
        # one whole turn: draws (unless skipped or already made), play, discard
        while state.phase is draw_first or state.phase is draw_second:
            sources = [p for p in players if discards[p]] if any(discards) else []
            if deck:
                sources.append(DECK)
            draw(sources[int(uniforms[i] * len(sources))])
            i += 1
        p = state.current_player
        hand = sorted(hands[p])
        if state.phase is play_phase:
            card = hand[int(uniforms[i] * len(hand))]
            if arboretums[p]:
                cells = list(frontiers[p])
                play_cell(card, cells[int(uniforms[i + 1] * len(cells))])
            else:
                play_cell(card, 0)
            i += 2
            hand.remove(card)
        discard(hand[int(uniforms[i] * len(hand))])
        i += 1
    return state


def _fits(state: GameState) -> bool:
    """Whether every cell the playout could reach stays on the compiled playout's grid: a card
    not yet in an arboretum moves a bound by at most one."""
    free = NUM_CARDS - sum(len(a) for a in state.arboretums)
    reach = jit.GRID_REACH - 1 - free
    for arboretum in state.arboretums:
        for cell in arboretum:
            row = (cell + 128) >> 8
            if abs(row) > reach or abs(cell - (row << 8)) > reach:
                return False
    return True


def _random_playout_compiled(state: GameState, rng: np.random.Generator) -> GameState:
    n = state.num_players
    work = np.zeros(jit.workspace_size(n), np.int64)
    grid = jit.grids(n)
    packed = np.array(jit.pack(state), np.int64)
    log = state.history
    h0 = jit.history_offset(n)
    h1 = h0 + 5 * _BATCH
    try:
        jit._load(packed, work, grid, n)
        while True:
            status = jit._turns(rng.random(_BATCH), work, grid, n)
            count = work[jit.S_HISTORY]
            log.extend(zip(*work[h0:h1].reshape(5, _BATCH)[:, :count].tolist()))
            if status == jit.GAME_OVER:
                break
        out = jit._dump(work, grid, packed, n).tolist()
    except BaseException:  # e.g. KeyboardInterrupt: the grids may hold cards
        jit.drop_grids(n)
        raise
    # back into the state's own containers (caches elsewhere key on their identity)
    phase, state.current_player, state.turn, last_turn, deck_size = out[:5]
    state.phase = _PHASES[phase]
    state.last_turn = bool(last_turn)
    state.drawn = []
    del state.deck[deck_size:]
    j = 5
    for p in range(n):
        for cards in (state.hands[p], state.known[p]):
            count = out[j]
            cards.clear()
            cards.update(out[j + 1:j + 1 + count])
            j += 1 + count
        count = out[j]
        state.discards[p][:] = out[j + 1:j + 1 + count]
        j += 1 + count
        count = out[j]
        if count:
            pairs = out[j + 1:j + 1 + 2 * count]
            state.arboretums[p].update(zip(pairs[::2], pairs[1::2]))
        j += 1 + 2 * count
        count = out[j]
        if count:
            cells = state.frontier[p]
            cells.clear()
            cells.update(dict.fromkeys(out[j + 1:j + 1 + count]))
        j += 1 + count
    return state


_PHASES = tuple(Phase)
