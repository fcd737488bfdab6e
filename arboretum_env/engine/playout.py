"""Uniformly random legal play to the end of the game (rollouts, tests, benchmarks).

Each decision is drawn uniformly from the legal actions of its phase without listing them:
a play is a uniform hand card and a uniform legal cell, which is uniform over their product.
Draw sources are every non-empty pile then the deck (if not empty); hands are sampled in
sorted order and cells in the frontier's insertion order, so a seed gives the same playout on
every platform.
"""

from __future__ import annotations

import numpy as np

from .state import DECK, GameState, Phase

_BATCH = 256


def random_playout(state: GameState, rng: np.random.Generator) -> GameState:
    """Play ``state`` to the end with uniformly random legal decisions; returns ``state``."""
    # the unchecked transitions: every choice below is legal by construction
    draw, play_cell, discard = state._draw, state._play, state._discard
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
