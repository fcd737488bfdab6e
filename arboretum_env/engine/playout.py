"""Uniformly random legal play to the end of the game (rollouts, tests, benchmarks).

Each decision is drawn uniformly from the legal actions of its phase without listing them:
a play is a uniform hand card and a uniform legal cell, which is uniform over their product.
"""

from __future__ import annotations

import numpy as np

from .cards import unpack_cell
from .state import GameState, Phase

_BATCH = 512


def random_playout(state: GameState, rng: np.random.Generator) -> GameState:
    """Play ``state`` to the end with uniformly random legal decisions; returns ``state``."""
    draw, play, discard = state.draw, state.play, state.discard
    game_over, play_phase, discard_phase = Phase.GAME_OVER, Phase.PLAY, Phase.DISCARD
    uniforms = rng.random(_BATCH).tolist()
    i = 0
    while state.phase is not game_over:
        if i + 3 > _BATCH - 1:
            uniforms = rng.random(_BATCH).tolist()
            i = 0
        phase = state.phase
        if phase is play_phase:
            hand = sorted(state.hands[state.current_player])
            cells = state.playable_cells()
            card = hand[int(uniforms[i] * len(hand))]
            if cells is None:
                row, col = 0, 0
            else:
                cell = sorted(cells)[int(uniforms[i + 1] * len(cells))]
                row, col = unpack_cell(cell)
            play(card, row, col)
            i += 2
        elif phase is discard_phase:
            hand = sorted(state.hands[state.current_player])
            discard(hand[int(uniforms[i] * len(hand))])
            i += 1
        else:
            sources = state.draw_sources()
            draw(sources[int(uniforms[i] * len(sources))])
            i += 1
    return state
