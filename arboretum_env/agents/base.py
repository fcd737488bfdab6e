"""The agent interface: given an observation, its action mask and (optionally) the table view,
return a legal action id of the flat action space (``arboretum_env.actions``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Optional

import numpy as np

from ..table_view import TableView


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """The legal ids of a mask; ``ValueError`` with a clear message when there is none."""
    legal = np.flatnonzero(np.asarray(action_mask))
    if legal.size == 0:
        raise ValueError("the action mask has no legal action (all zeros): an agent was asked "
                         "to act while it is not its decision, or after the game ended")
    return legal


def as_policy(agent) -> Callable[..., int]:
    """The ``(observation, mask, view) -> int`` function of an agent: its ``act`` method when it
    has one (any object with ``act``, not only :class:`Agent` subclasses), else the callable."""
    act = getattr(agent, "act", None)
    if callable(act):
        return act
    if callable(agent):
        return agent
    raise TypeError(f"not an agent: {agent!r} has no act() method and is not callable "
                    f"as (observation, action_mask, view) -> int")


class Agent(ABC):
    """One player. ``act`` must return an id whose mask entry is 1.

    ``observation`` is the env's flat float32 vector, ``action_mask`` the int8 mask of
    ``NUM_ACTIONS``; ``view`` is the :class:`TableView` of the acting seat (heuristic agents need
    it, learned agents use the observation). Agents keep no memory between calls unless they say
    so; ``seed`` makes their choices reproducible.
    """

    name: str = "agent"

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray,
            view: Optional[TableView] = None) -> int:
        ...

    def seed(self, seed: Optional[int] = None) -> None:  # noqa: B027 - optional override
        """Reseed the agent's generator (agents without randomness ignore it)."""

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray,
                 view: Optional[TableView] = None) -> int:
        return self.act(observation, action_mask, view)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own numpy Generator."""

    name = "random"

    def __init__(self, seed: Optional[int] = None) -> None:
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: Optional[int] = None) -> None:
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask, view=None) -> int:
        legal = legal_actions(action_mask)
        return int(legal[self.rng.integers(legal.size)])

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self._seed!r})"
