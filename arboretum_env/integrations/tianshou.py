"""Arboretum in Tianshou (``pip install -e .[tianshou]``; tested with tianshou 2.0.1).

The lines a user writes::

    from tianshou.env import DummyVectorEnv
    from tianshou.data import VectorReplayBuffer
    from arboretum_env.integrations.tianshou import make_env, make_collector

    envs = DummyVectorEnv([lambda i=i: make_env(num_players=2, seed=i) for i in range(4)])
    collector = make_collector(algorithm, envs, VectorReplayBuffer(20_000, 4))
    collector.collect(n_episode=8)          # whole games (see "Final rewards")

``algorithm`` is a ``MultiAgentOffPolicyAlgorithm`` (or ``MultiAgentOnPolicyAlgorithm``) built
with ``env=make_env()``: Tianshou 2's successor of ``MultiAgentPolicyManager``. With the trainer,
collect whole games too: ``OffPolicyTrainerParams(collection_step_num_episodes=...,
collection_step_num_env_steps=None)``.

**The env.** ``make_env`` wraps ``arboretum_env.env(...)`` (PettingZoo's
``TerminateIllegalWrapper`` included) in ``SeatedGames``, a subclass of Tianshou's own
``tianshou.env.PettingZooEnv``, so everything Tianshou's multi-agent code expects holds: one
transition per decision; ``obs`` is ``{"agent_id": "player_k", "obs": float32 (7835,),
"mask": bool (489,)}`` for the agent who decides; ``rew`` is a float32 vector over the seats
(entry ``k`` is ``player_k``), 0 until the step that ends the game, which carries every seat's
final reward; that step is ``terminated`` (an illegal action also sets ``truncated``). A turn is
several consecutive decisions of the same seat, so one seat often has many transitions in a row.

**Infos** have the same flat keys at every step (so they stack in ``DummyVectorEnv``,
``SubprocVectorEnv`` and the replay buffer whatever the mix of finished and running games):
``INFO_KEYS`` = ``"game_over"`` (0/1), ``"scores"`` (int per seat; zeros until the game is
scored), ``"winners"`` (0/1 per seat), ``"illegal_action"`` (1 when the action just taken was
masked out; ``TerminateIllegalWrapper`` then ended the game with -1 for that seat, 0 for the
others). Illegal actions are never replaced by legal ones (the game has no no-op); each env also
counts them in its attribute ``illegal_actions`` (``venv.get_env_attr("illegal_actions")``).

**Final rewards.** Tianshou's multi-agent algorithms give seat ``k`` the column ``rew[:, k]`` of
its *own* transitions only, so a seat that did not make the game's last move would never see its
final reward. ``make_collector`` therefore passes ``SeatFinalRewards``, a Tianshou
``on_episode_done_hook``: when a game ends it moves each seat's final reward onto that seat's own
last transition (``rew[t_k, k] = final_k``, and 0 in column ``k`` everywhere else) and marks
that transition ``terminated`` (no bootstrapping past a seat's last decision; ``done`` stays
only on the game's last step, so each game stays one episode in the buffer). Hence, per game,
column ``k`` sums to seat ``k``'s final reward, which sits exactly once, on its last decision.
Tianshou applies hooks that write to the buffer only when collecting whole episodes
(``collect(n_episode=...)``; with ``n_step`` it raises ``ValueError``).

**Caveat.** As in every Tianshou AEC env, ``obs_next`` of a seat's turn-ending discard is the
*next* seat's observation; prefer ``n_step_return_horizon=1``.

**Seeds.** ``make_env(seed=s)`` draws each game's seed from ``numpy.random.default_rng(s)``
(``reset(seed=s)`` restarts that sequence), so a vector env of ``make_env(seed=i)`` replays the
same games. Tianshou's epsilon-greedy and its masked random policy draw from NumPy's global RNG.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from tianshou.data import Collector, ReplayBuffer
from tianshou.env import PettingZooEnv
from tianshou.env.venvs import BaseVectorEnv

from ..env import env as arboretum_env
from ..seeded_games import SeededGames

INFO_KEYS = ("game_over", "scores", "winners", "illegal_action")


class SeatedGames(PettingZooEnv):
    """``tianshou.env.PettingZooEnv`` over ``arboretum_env.env(...)`` with flat infos, a fast
    boolean mask, seeded games and a count of illegal actions (see the module docstring)."""

    def __init__(self, aec_env, seed: Optional[int] = None):
        aec_env = SeededGames(aec_env, seed)
        self.illegal_actions = 0
        self._mask = np.zeros(0, dtype=bool)
        super().__init__(aec_env)  # Tianshou's __init__ resets once: the first game of the seed

    def seed(self, seed: Optional[int] = None) -> None:
        """Restart the sequence of game seeds (the next ``reset()`` plays its first game)."""
        self.env.reseed(seed)

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None,
              **kwargs: Any) -> tuple[dict, dict]:
        self.env.reset(seed=seed, options=options)  # SeededGames: None plays the next game
        observation, _, _, _, _ = self.env.last()
        return self._tianshou_obs(observation), self._info(game_over=False, illegal=False)

    def step(self, action: Any) -> tuple[dict, np.ndarray, bool, bool, dict]:
        action = int(action)
        illegal = not (0 <= action < len(self._mask) and self._mask[action])
        self.illegal_actions += int(illegal)
        self.env.step(action)
        observation, _, terminated, truncated, _ = self.env.last()
        rewards = np.array([self.env.rewards.get(a, 0.0) for a in self.agents], dtype=np.float32)
        info = self._info(game_over=bool(terminated or truncated), illegal=illegal)
        return self._tianshou_obs(observation), rewards, terminated, truncated, info

    def _tianshou_obs(self, observation: dict) -> dict:
        self._mask = observation["action_mask"].astype(bool)
        return {"agent_id": self.env.agent_selection, "obs": observation["observation"],
                "mask": self._mask}

    def _info(self, game_over: bool, illegal: bool) -> dict:
        n = len(self.agents)
        scores, winners = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        if game_over:
            final = self.env.unwrapped.infos.get(self.agents[0], {})
            if "scores" in final:  # a game ended by an illegal action is not scored
                scores[:], winners[:] = final["scores"], final["winners"]
        return {"game_over": int(game_over), "scores": scores, "winners": winners,
                "illegal_action": int(illegal)}


def make_env(num_players: int = 2, seed: Optional[int] = None, **env_kwargs: Any) -> SeatedGames:
    """A Tianshou-ready Arboretum env: ``SeatedGames(arboretum_env.env(num_players, ...), seed)``.
    ``env_kwargs`` go to ``arboretum_env.env`` (``reward_mode``, ``species``, ...)."""
    return SeatedGames(arboretum_env(num_players=num_players, **env_kwargs), seed=seed)


class SeatFinalRewards:
    """Tianshou ``on_episode_done_hook`` that puts each seat's final reward on its own last
    transition and marks that transition terminated (module docstring, "Final rewards").

    ``agents``: the seat names in column order; ``None``: ``player_0 .. player_{n-1}`` for the
    ``n`` columns of ``rew``."""

    def __init__(self, agents: Optional[Sequence[str]] = None):
        self.agents = None if agents is None else list(agents)

    def __call__(self, episode_batch) -> Optional[dict[str, np.ndarray]]:
        rew = np.array(episode_batch.rew, dtype=np.float32)  # a copy: (decisions, seats)
        if rew.ndim != 2 or len(rew) == 0:
            return None
        agents = self.agents or [f"player_{k}" for k in range(rew.shape[1])]
        deciders = np.asarray(episode_batch.obs.agent_id)
        terminated = np.array(episode_batch.terminated, dtype=bool)
        final = rew[-1].copy()
        rew[-1] = 0.0
        for k, agent in enumerate(agents):
            own = np.flatnonzero(deciders == agent)
            last = own[-1] if len(own) else len(rew) - 1
            rew[last, k] += final[k]
            terminated[last] = True
        return {"rew": rew, "terminated": terminated}


def make_collector(policy, env: BaseVectorEnv, buffer: Optional[ReplayBuffer] = None,
                   exploration_noise: bool = False, **kwargs: Any) -> Collector:
    """``tianshou.data.Collector`` with ``SeatFinalRewards`` as its episode hook; collect whole
    games with it (``collect(n_episode=...)``). ``kwargs`` go to ``Collector``."""
    return Collector(policy, env, buffer, exploration_noise=exploration_noise,
                     on_episode_done_hook=SeatFinalRewards(), **kwargs)
