"""RLlib (``ray[rllib]`` 2.60, new API stack) over Arboretum: a turn-based ``MultiAgentEnv`` and a
one-line ``PPOConfig`` with RLlib's shipped action-masking RLModule.

The lines a user writes (``pip install -e .[rllib]``)::

    from arboretum_env.integrations.rllib import ppo_config
    algo = ppo_config(num_players=2).build_algo()      # self-play: every seat is policy "main"
    for _ in range(20):
        result = algo.train()                             # result["env_runners"]["illegal_actions"]
    module = algo.get_module("main")                      # an ActionMaskingTorchRLModule

A pool of frozen opponents (only "main" learns; ``load_state_path`` is what
``module.save_to_path(path)`` wrote, ``None`` leaves that opponent freshly initialised)::

    config = ppo_config(num_players=3, pool={"past_1": "runs/m1", "past_2": None})

**Conventions**

* Turn-based: ``reset`` and ``step`` return the observation of the agent to move only (the same
  agent is often asked several times in a row: draw, draw, play card, play cell, discard).
  Observations are ``{"observations": float32 (OBS_SIZE,), "action_mask": float32 (NUM_ACTIONS,)}``,
  the keys and dtypes RLlib's ``ActionMaskingTorchRLModule`` reads.
* The reward of an ordinary step is 0 for the agent that acted. At game end *every* seat gets its
  final observation (all-zero mask), its reward (``raw_env`` reward mode, default win/loss),
  ``terminateds[seat] = True`` and ``"__all__": True``; ``truncateds`` stay False. RLlib's
  ``MultiAgentEpisode`` adds a reward given to an agent that did not act on that step to the
  reward of that agent's last (hanging) action, so the loser's -1 reaches its last decision.
* Illegal action (e.g. RLlib's env pre-check, which steps one unmasked random action): never
  replaced by a legal one; the game ends at once, -1 for the offender and 0 for every other seat,
  ``infos[seat]["illegal_action"]`` is 1 for the offender and 0 for the others. The env counts
  them in ``illegal_actions`` (every illegal action it ever received, the pre-check's included);
  the callback :func:`count_illegal_actions` sums those of sampled episodes into the
  ``env_runners/illegal_actions`` metric (with masking it stays 0).
* Seeds: ``reset(seed=s)`` reseeds the env's own ``numpy`` Generator (``SeededGames``), and
  every game is ``raw_env.reset(seed=<next draw>)``; RLlib seeds the first reset of each env
  runner from ``config.debugging(seed=...)``, so a seeded run replays its games. No global RNG
  is used.
* Seats ``player_0`` .. ``player_{n-1}``; all map to :data:`MAIN_POLICY` in self-play. With a
  pool, each game seats "main" at one seat and pool members at the others, chosen from the
  episode id (:class:`PoolMapping`).
"""

from __future__ import annotations

import zlib
from typing import Mapping, Optional, Sequence, Union

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from ..actions import NUM_ACTIONS
from ..env import raw_env
from ..observation import OBS_SIZE
from ..seeded_games import SeededGames
from ..versions import ENV_NAME

RLLIB_ENV_NAME = ENV_NAME
"""The name :func:`register` gives the env in Ray Tune's registry (``config.environment(...)``)."""
MAIN_POLICY = "main"
"""The module id of the trained policy (every seat in self-play)."""
ILLEGAL_ACTION_REWARD = -1.0
ILLEGAL_ACTIONS_METRIC = "illegal_actions"
DEFAULT_HIDDENS = (128,)


class ArboretumMultiAgentEnv(MultiAgentEnv):
    """``raw_env`` as a turn-based RLlib ``MultiAgentEnv`` (module docstring: conventions).

    ``config`` (RLlib's ``env_config``): ``num_players`` (2..4, default 2) and ``reward_mode``
    (``"win_loss"`` or ``"score_margin"``).
    """

    def __init__(self, config: Optional[Mapping] = None):
        super().__init__()
        config = dict(config or {})
        # the games draw their seeds from one Generator (SeededGames): seed=None, fresh OS entropy
        self.game = SeededGames(raw_env(num_players=int(config.get("num_players", 2)),
                                        reward_mode=config.get("reward_mode", "win_loss")))
        self.possible_agents = list(self.game.possible_agents)
        self.agents = list(self.possible_agents)  # every seat plays until the game ends
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.illegal_actions = 0
        self._game_over = True

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self.game.reset(seed=seed)  # None: the next game of the sequence
        self._game_over = False
        mover = self.game.agent_selection
        return {mover: self._observe(mover)}, {}

    def step(self, action_dict: Mapping):
        if self._game_over:
            raise RuntimeError(f"{RLLIB_ENV_NAME}: step() after the game ended: call reset()")
        agent = self.game.agent_selection
        if agent not in action_dict:
            raise KeyError(f"{RLLIB_ENV_NAME}: no action for {agent}, the agent to move "
                           f"(got {sorted(action_dict)})")
        action = int(action_dict[agent])
        if not (0 <= action < NUM_ACTIONS and self.game.action_masks()[action]):
            self.illegal_actions += 1
            rewards = {a: ILLEGAL_ACTION_REWARD if a == agent else 0.0 for a in self.agents}
            infos = {a: {"illegal_action": int(a == agent)} for a in self.agents}
            return self._end(rewards, infos)
        self.game.step(action)
        if all(self.game.terminations.values()):
            infos = {a: {**self.game.infos[a], "illegal_action": 0} for a in self.agents}
            return self._end(dict(self.game.final_rewards), infos)
        mover = self.game.agent_selection
        return ({mover: self._observe(mover)}, {agent: 0.0},
                {"__all__": False}, {"__all__": False}, {})

    def _end(self, rewards: dict, infos: dict):
        """The last step: every seat's final observation, reward and ``terminated``."""
        self._game_over = True
        obs = {a: self._observe(a, final=True) for a in self.agents}
        terminateds = {a: True for a in self.agents}
        truncateds = {a: False for a in self.agents}
        terminateds["__all__"], truncateds["__all__"] = True, False
        return obs, {a: float(r) for a, r in rewards.items()}, terminateds, truncateds, infos

    def _observe(self, agent: str, final: bool = False) -> dict:
        o = self.game.observe(agent)
        mask = np.zeros(NUM_ACTIONS, np.float32) if final else o["action_mask"].astype(np.float32)
        return {"observations": o["observation"], "action_mask": mask}

    def render(self):
        return self.game.render()


def make_env(config: Optional[Mapping] = None) -> ArboretumMultiAgentEnv:
    """The env creator that :func:`register` registers."""
    return ArboretumMultiAgentEnv(config)


def register(name: str = RLLIB_ENV_NAME) -> str:
    """Register the env in Ray Tune's registry under ``name`` (idempotent); returns the name."""
    register_env(name, make_env)
    return name


def seat_of(agent_id: str) -> int:
    """``"player_2"`` -> 2."""
    return int(str(agent_id).rsplit("_", 1)[1])


def count_illegal_actions(*, episode, metrics_logger=None, **kwargs) -> None:
    """``on_episode_end`` callback: adds the episode's illegal actions (the offender's last info
    has ``illegal_action == 1``) to the lifetime sum ``env_runners/illegal_actions``."""
    infos = episode.get_infos(-1)
    count = sum(int(info.get("illegal_action", 0)) for info in infos.values() if info)
    if metrics_logger is not None:
        metrics_logger.log_value(ILLEGAL_ACTIONS_METRIC, count, reduce="lifetime_sum")


class PoolMapping:
    """Policy mapping for training "main" against a pool: in each game one seat (from a hash of
    the episode id) plays :data:`MAIN_POLICY`, every other seat a pool member (also from the
    hash, by seat). Deterministic given the episode id; no global RNG."""

    def __init__(self, num_players: int, pool: Sequence[str]):
        if not pool:
            raise ValueError("PoolMapping needs at least one pool policy")
        self.num_players = num_players
        self.pool = list(pool)

    def __call__(self, agent_id, episode, **kwargs) -> str:
        h = zlib.crc32(str(episode.id_).encode())
        seat = seat_of(agent_id)
        if seat == h % self.num_players:
            return MAIN_POLICY
        return self.pool[(h // self.num_players + seat) % len(self.pool)]


def self_play_mapping(agent_id, episode, **kwargs) -> str:
    """Every seat plays :data:`MAIN_POLICY` (one shared policy)."""
    return MAIN_POLICY


def module_spec(hiddens: Sequence[int] = DEFAULT_HIDDENS,
                load_state_path: Optional[str] = None) -> RLModuleSpec:
    """RLlib's shipped ``ActionMaskingTorchRLModule`` with a small MLP (shared by policy and value
    function); spaces are filled in from the env."""
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, load_state_path=load_state_path,
                        model_config={"fcnet_hiddens": list(hiddens), "vf_share_layers": True})


def ppo_config(num_players: int = 2, num_env_runners: int = 1,
               pool: Union[None, Sequence[str], Mapping[str, Optional[str]]] = None, *,
               reward_mode: str = "win_loss", hiddens: Sequence[int] = DEFAULT_HIDDENS,
               train_batch_size: int = 2048, minibatch_size: int = 256, num_epochs: int = 4,
               lr: float = 3e-4, seed: Optional[int] = None) -> PPOConfig:
    """A ``PPOConfig`` (new API stack) on the registered env with action masking.

    ``pool=None``: self-play, every seat is :data:`MAIN_POLICY`. ``pool``: module ids of frozen
    opponents (a list, or a mapping id -> ``load_state_path`` or ``None``); only "main" trains.
    Override anything afterwards with the usual ``config.training(...)`` etc.
    """
    pool_paths = dict(pool) if isinstance(pool, Mapping) else {p: None for p in (pool or ())}
    if MAIN_POLICY in pool_paths:
        raise ValueError(f"the pool may not contain {MAIN_POLICY!r}, the trained policy")
    specs = {MAIN_POLICY: module_spec(hiddens)}
    specs.update({p: module_spec(hiddens, path) for p, path in pool_paths.items()})
    mapping = PoolMapping(num_players, list(pool_paths)) if pool_paths else self_play_mapping
    return (
        PPOConfig()
        .environment(register(), env_config={"num_players": num_players,
                                             "reward_mode": reward_mode})
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping,
                     policies_to_train=[MAIN_POLICY])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr)
        .callbacks(on_episode_end=count_illegal_actions)
        .debugging(seed=seed)
    )
