"""``SeededGames``: a PettingZoo wrapper that gives every game a seed from one generator.

Frameworks reset an env after each game with no seed (``reset()``), and seed it once, if at all.
This wrapper turns that into a reproducible sequence of games: ``reset(seed=s)`` restarts its
``numpy`` Generator from ``s`` and plays the first game of that sequence; ``reset()`` plays the
next one (``env.reset(seed=<next draw>)``). The generator starts from the ``seed`` given to the
constructor (``None``: fresh OS entropy). No global RNG is used.

Used by the TorchRL, Tianshou and RLlib constructors (``arboretum_env.integrations``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from pettingzoo.utils import BaseWrapper

GAME_SEED_BOUND = 2**63
"""Game seeds are drawn from ``[0, GAME_SEED_BOUND)``."""


class SeededGames(BaseWrapper):
    """See the module docstring. ``last_game_seed`` is the seed of the game in progress."""

    def __init__(self, env, seed: Optional[int] = None):
        super().__init__(env)
        self.reseed(seed)
        self.last_game_seed: Optional[int] = None

    def reseed(self, seed: Optional[int] = None) -> None:
        """Restart the sequence of game seeds (the next ``reset()`` plays its first game)."""
        self._games = np.random.default_rng(seed)

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        if seed is not None:
            self.reseed(seed)
        self.last_game_seed = int(self._games.integers(GAME_SEED_BOUND))
        self.env.reset(seed=self.last_game_seed, options=options)
