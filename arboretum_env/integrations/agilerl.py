"""Arboretum for AgileRL (``pip install -e .[agilerl]``): one game, one player per seat, and
each seat's transitions in the form AgileRL's ``ReplayBuffer`` stores.

The lines a user writes (the self-play path of AgileRL's connect-four DQN tutorial)::

    from agilerl.algorithms.dqn import DQN
    from agilerl.components.replay_buffer import ReplayBuffer
    from arboretum_env.integrations.agilerl import AgileRLGame

    game = AgileRLGame(num_players=2)
    dqn = DQN(game.observation_space, game.action_space)
    memory = ReplayBuffer(max_size=10_000)
    record = game.play([dqn, dqn], seed=0, epsilon=0.2)   # or [dqn, "random"]
    memory.add(record.transitions)
    dqn.learn(memory.sample(dqn.batch_size))

Conventions:

* **Seats.** ``players[i]`` plays seat ``i`` (agent ``player_i``). A player is an AgileRL
  algorithm (anything with ``get_action(obs, epsilon=..., action_mask=...)``, e.g. ``DQN``; one
  object in several seats is self-play), an agent of ``arboretum_env.agents`` (``act``), or an
  agent spec string (``"random"``, ``"greedy"``: ``make_agent(spec, seed)``).
* **Transitions.** Only the seats of ``record_seats`` are recorded (default: the seats played by
  an AgileRL algorithm). A seat's transition runs from one of its decisions to its next decision:
  ``obs`` and ``action`` at the decision, ``next_obs`` the seat's observation when it next has
  to act (often the very next decision: a turn is several decisions of the same seat), or its
  final observation once the game is over. ``reward`` is 0 and ``done`` 0, except on each
  recorded seat's last transition, which carries that seat's final reward (winner and loser
  alike: +1 / -1 for 2 players, 0 / 0 for a shared win) and ``done`` 1. Transitions are
  grouped by seat, in the order of play within a seat (``record.seats``).
* **Shapes.** ``obs`` / ``next_obs`` float32 ``(n, OBS_SIZE)``, ``action`` / ``reward`` /
  ``done`` ``(n,)``: an AgileRL ``Transition`` with batch size ``n``, as a ``TensorDict`` for
  ``ReplayBuffer.add``. The masks stay out of it (AgileRL's DQN does not read them); they are
  in ``record.action_masks`` / ``record.next_action_masks`` (int8 ``(n, NUM_ACTIONS)``).
* **Exploration.** With probability ``epsilon`` an AgileRL player takes a uniform legal action
  from ``rng`` (default ``numpy.random.default_rng(seed)``), else
  ``get_action(obs, epsilon=0.0, action_mask=mask)``: the masked greedy action. Never the global
  RNG.
* **Illegal actions.** The game runs through ``arboretum_env.env.env`` (an illegal action ends
  it, -1 for its seat); ``record.illegal_actions`` counts the actions the AgileRL players chose
  outside their mask (0 when masking works).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
from agilerl.components.data import Transition, transition_to_tensordict
from gymnasium import spaces
from tensordict import TensorDict

from ..actions import NUM_ACTIONS
from ..agents import as_policy, legal_actions, make_agent
from ..env import env as make_env
from ..observation import OBS_SIZE


@dataclass
class GameRecord:
    """One game played by :meth:`AgileRLGame.play`."""

    transitions: Optional[TensorDict]
    """The recorded seats' transitions, batch size ``n`` (``None`` when no seat is recorded)."""
    seats: np.ndarray
    """int64 ``(n,)``: the seat of each transition."""
    action_masks: np.ndarray
    """int8 ``(n, NUM_ACTIONS)``: the mask at each transition's decision."""
    next_action_masks: np.ndarray
    """int8 ``(n, NUM_ACTIONS)``: the mask of ``next_obs`` (all zeros when ``done``)."""
    rewards: list[float]
    """The final reward of every seat."""
    scores: list[int] = field(default_factory=list)
    """The final score of every seat (empty when an illegal action ended the game)."""
    won: list[int] = field(default_factory=list)
    """1 for each winning seat (shared wins: several 1s; empty after an illegal action)."""
    env_steps: int = 0
    """Decisions taken in the game (``env.step`` calls with an action, every seat)."""
    illegal_actions: int = 0
    """Actions the AgileRL players chose outside their action mask."""


def _is_algorithm(player: Any) -> bool:
    return callable(getattr(player, "get_action", None))


class AgileRLGame:
    """Plays Arboretum games with one player per seat and hands back AgileRL transitions.

    ``AgileRLGame(num_players=2, **env_kwargs)``: the keyword arguments go to the env
    (``reward_mode``, ``species``, ...). ``observation_space`` and ``action_space`` are what an
    AgileRL algorithm is built with: ``Box(0, 1, (OBS_SIZE,), float32)`` and
    ``Discrete(NUM_ACTIONS)``.
    """

    def __init__(self, num_players: int = 2, **env_kwargs: Any) -> None:
        self.env = make_env(num_players=num_players, **env_kwargs)
        self.num_players = num_players
        self.agents = list(self.env.possible_agents)
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    def play(self, players: Sequence[Any], seed: int, *, epsilon: float = 0.0,
             rng: Optional[np.random.Generator] = None,
             record_seats: Optional[Sequence[int]] = None) -> GameRecord:
        """Play one game from ``reset(seed=seed)``; see the module docstring for the
        conventions."""
        if len(players) != self.num_players:
            raise ValueError(f"{self.num_players} players needed, got {len(players)}")
        rng = np.random.default_rng(seed) if rng is None else rng
        algorithms = [_is_algorithm(p) for p in players]
        policies = [None if algo else as_policy(make_agent(p, seed + i) if isinstance(p, str)
                                                else p)
                    for i, (p, algo) in enumerate(zip(players, algorithms))]
        if record_seats is None:
            record_seats = [i for i, algo in enumerate(algorithms) if algo]
        recorded = set(record_seats)
        rows: list[list[tuple]] = [[] for _ in range(self.num_players)]
        waiting: list[Optional[tuple]] = [None] * self.num_players  # (obs, mask, action)
        rewards = [0.0] * self.num_players
        infos: dict = {}
        env_steps = illegal = 0
        env = self.env
        env.reset(seed=seed)
        for agent in env.agent_iter():
            seat = self.agents.index(agent)
            observation, reward, termination, truncation, info = env.last()
            done = termination or truncation
            if waiting[seat] is not None:
                obs, mask, action = waiting[seat]
                rows[seat].append((obs, mask, action, float(reward), observation["observation"],
                                   observation["action_mask"], float(done)))
                waiting[seat] = None
            if done:
                rewards[seat] = float(reward)
                infos = info or infos
                env.step(None)
                continue
            mask = observation["action_mask"]
            if algorithms[seat]:
                action = self._algorithm_action(players[seat], observation, epsilon, rng)
                illegal += int(not mask[action])
            else:
                action = int(policies[seat](observation["observation"], mask,
                                            env.unwrapped.table_view(agent)))
            if seat in recorded:
                waiting[seat] = (observation["observation"], mask, action)
            env.step(action)
            env_steps += 1
        return self._record(rows, record_seats, rewards, infos, env_steps, illegal)

    @staticmethod
    def _algorithm_action(algorithm: Any, observation: dict, epsilon: float,
                          rng: np.random.Generator) -> int:
        mask = observation["action_mask"]
        if epsilon > 0.0 and rng.random() < epsilon:
            legal = legal_actions(mask)
            return int(legal[rng.integers(legal.size)])
        action = algorithm.get_action(observation["observation"][None], epsilon=0.0,
                                      action_mask=mask[None])
        return int(np.asarray(action).reshape(-1)[0])

    @staticmethod
    def _record(rows: list[list[tuple]], record_seats: Sequence[int], rewards: list[float],
                infos: dict, env_steps: int, illegal: int) -> GameRecord:
        ordered = [(seat, row) for seat in sorted(record_seats) for row in rows[seat]]
        empty_masks = np.zeros((0, NUM_ACTIONS), np.int8)
        record = GameRecord(None, np.array([s for s, _ in ordered], np.int64), empty_masks,
                            empty_masks, rewards, list(infos.get("scores", [])),
                            list(infos.get("winners", [])), env_steps, illegal)
        if not ordered:
            return record
        obs, masks, actions, reward, next_obs, next_masks, done = zip(*(row for _, row in ordered))
        transition = Transition(obs=np.stack(obs), action=np.array(actions, np.int64),
                                reward=np.array(reward, np.float32), next_obs=np.stack(next_obs),
                                done=np.array(done, np.float32), batch_size=[len(ordered)])
        record.transitions = transition_to_tensordict(transition)
        record.action_masks = np.stack(masks)
        record.next_action_masks = np.stack(next_masks)
        return record


def evaluate(player: Any, opponent: Any = "random", *, num_players: int = 2, games: int = 10,
             seed: int = 0) -> dict:
    """Games of ``player`` (an AgileRL algorithm or agent, greedy: ``epsilon=0``) against
    ``opponent`` in every other seat, the player's seat rotating from game to game; game ``g``
    is ``reset(seed=seed + g)``. Returns ``wins`` (sole wins), ``ties`` (shared wins),
    ``losses``, ``win_rate`` = (wins + ties / 2) / games, ``mean_reward`` and
    ``illegal_actions``."""
    game = AgileRLGame(num_players=num_players)
    wins = ties = illegal = 0
    reward_sum = 0.0
    for g in range(games):
        seat = g % num_players
        players = [opponent] * num_players
        players[seat] = player
        record = game.play(players, seed + g, record_seats=[])
        illegal += record.illegal_actions
        reward_sum += record.rewards[seat]
        if record.won and record.won[seat]:
            if sum(record.won) == 1:
                wins += 1
            else:
                ties += 1
    return {"games": games, "wins": wins, "ties": ties, "losses": games - wins - ties,
            "win_rate": (wins + ties / 2) / max(games, 1),
            "mean_reward": reward_sum / max(games, 1),
            "illegal_actions": illegal}
