"""Play whole games between agents straight on the engine (no PettingZoo in the loop).

``play_game`` gives every agent exactly what the environment gives it: the observation vector
(from the environment's encoder, :mod:`arboretum_env.observation`), the action mask and the
:class:`TableView` of its seat.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import numpy as np

from .. import actions as A
from ..engine import GameConfig, GameState, ScoreResult, new_game, score
from ..observation import encode
from ..table_view import table_view
from .base import as_policy

AgentLike = Callable[..., int]


def play_game(agents: Sequence[AgentLike], num_players: Optional[int] = None,
              seed: Union[int, np.random.Generator] = 0, *, state: Optional[GameState] = None,
              max_decisions: int = 100_000) -> ScoreResult:
    """Play one game; ``agents[p]`` plays player ``p``. Returns the final score.

    ``agents`` are agents (objects with ``act``) or callables ``(obs, mask, view) -> int``. The game
    is ``new_game(GameConfig(num_players), seed)`` unless a ``state`` is given (played on in
    place). An illegal action raises ``IllegalActionError`` naming the agent's seat.
    """
    if state is None:
        num_players = len(agents) if num_players is None else num_players
        state = new_game(GameConfig(num_players), seed)
    if len(agents) != state.num_players:
        raise ValueError(f"{len(agents)} agents for a {state.num_players}-player game")
    policies = [as_policy(a) for a in agents]
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    pending = None
    for _ in range(max_decisions):
        if state.game_over:
            return score(state)
        p = state.current_player
        A.write_mask(state, pending, mask)
        tv = table_view(state, p, pending)
        # fresh arrays: agents may keep them
        action = policies[p](encode(tv).copy(), mask.copy(), tv)
        pending = A.apply_id(state, pending, action)
    raise RuntimeError(f"game not over after {max_decisions} decisions")
