"""The vector env as a stable-baselines3 ``VecEnv``: the learner in one seat of each of N games,
the opponents (random, or policy snapshots) evaluated in batches inside ``step``.

``SelfPlayVecEnv(num_envs, opponents=[...])``: each new game seats the learner at a random seat
(from the env's seeded generator) and draws one opponent from the pool for all other seats.
``step(actions)`` applies the learner's action in every game, then lets the opponents move,
one batched call per opponent for all the games where it is to move, until every game waits
for the learner again. The reward is the learner's own end-of-game reward, a loss decided on
an opponent's move included; a finished game's ``info`` holds ``terminal_observation`` (the
learner's view of the final table), ``is_success`` (a sole or shared win) and ``final_scores``;
the row then holds the next game.

An opponent is ``"random"`` or a batch policy ``(observations [B, OBS_SIZE], masks [B, 489]) ->
actions [B]`` (e.g. ``SnapshotPolicy`` around a frozen copy of a network). ``action_masks()``
gives the learner's masks (sb3-contrib's ``MaskablePPO`` reads them through ``env_method``).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.engine import IllegalActionError
from arboretum_env.observation import OBS_SIZE
from arboretum_env.vector import NO_ACTION, VectorEnv

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def random_policy(rng: np.random.Generator) -> BatchPolicy:
    """Uniform legal actions."""

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        keys = rng.random(masks.shape) * masks
        return keys.argmax(axis=1)

    return act


class SnapshotPolicy:
    """A frozen torch network ``obs -> (logits, value)`` as a batch policy (sampled actions)."""

    def __init__(self, net, seed: int = 0):
        import torch

        self.torch, self.net = torch, net.eval()
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.inference_mode():
            logits, _ = self.net(torch.from_numpy(obs))
            logits = logits.masked_fill(torch.from_numpy(masks) == 0, -1e9)
            probs = torch.softmax(logits, dim=1)
            return torch.multinomial(probs, 1, generator=self.generator).squeeze(1).numpy()


def _refuse(actions: list) -> None:
    """Raise ``IllegalActionError`` for the first learner action that is not an id in 0..488."""
    for k, x in enumerate(actions):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise IllegalActionError(f"env {k}: action {x!r} ({type(x).__name__}) is not an integer "
                                     f"action id; nothing is rounded")
        if not 0 <= x < NUM_ACTIONS:
            raise IllegalActionError(f"env {k}: action {x} is not an action id in 0..{NUM_ACTIONS - 1} "
                                     f"(the learner acts in every env; {NO_ACTION} = no action is "
                                     f"not allowed here)")
    raise AssertionError(f"no bad action in {actions}")


class SelfPlayVecEnv(VecEnv):
    def __init__(self, num_envs: int, num_players: int = 2,
                 opponents: Sequence[Union[str, BatchPolicy]] = ("random",),
                 reward_mode: str = "win_loss", seed: Optional[int] = None):
        self.venv = VectorEnv(num_envs, num_players, reward_mode)
        num_envs, num_players = self.venv.num_envs, self.venv.num_players  # plain ints, checked
        observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))
        self.num_players = num_players
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        self.set_opponents(opponents)
        self.learner_seat = np.zeros(num_envs, np.int64)
        self.opponent_of = np.zeros(num_envs, np.int64)
        self._actions: Optional[np.ndarray] = None

    # ------------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Sequence[Union[str, BatchPolicy]]) -> None:
        """Replace the pool (used for games that start from now on)."""
        if isinstance(opponents, str) or callable(opponents):
            opponents = [opponents]
        pool = [random_policy(self.rng) if o == "random" else o for o in opponents]
        if not pool or not all(callable(o) for o in pool):
            raise ValueError("opponents must be a non-empty list of 'random' or batch policies")
        self.pool = pool

    def _seat(self, rows: np.ndarray) -> None:
        for g in rows:
            self.learner_seat[g] = self.rng.integers(self.num_players)
            self.opponent_of[g] = self.rng.integers(len(self.pool))

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seed if self._seed is not None else int(self.rng.integers(2**62))
        self._seed = None  # later resets continue the same stream of games
        self.venv.reset(seed=seed)
        everyone = np.arange(self.num_envs)
        self._seat(everyone)
        rewards, dones, infos = self._advance(np.zeros(self.num_envs, np.float32),
                                              np.zeros(self.num_envs, bool), [{} for _ in everyone])
        return self.venv.observations.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """One action id in 0..488 per env (the learner acts in every game; no ``NO_ACTION``):
        anything else (a float, None, -1, a wrong length) raises ``IllegalActionError`` naming
        the env and the value, before any game moves."""
        self._actions = None
        a = np.asarray(actions)
        n = self.num_envs
        if a.shape != (n,):
            if a.shape != (n, 1):
                raise IllegalActionError(f"actions must be one action id per env, shape ({n},), "
                                         f"got shape {a.shape}")
            a = a.reshape(n)
        # one vectorised check, on the given dtype (nothing cast or wrapped yet)
        if a.dtype.kind not in "iu" or ((a < 0) | (a >= NUM_ACTIONS)).any():
            listed = isinstance(actions, (list, tuple)) and np.shape(actions) == (n,)
            _refuse(list(actions) if listed else a.tolist())  # as given: numpy may make floats
        self._actions = a.astype(np.int64, copy=False)

    def step_wait(self):
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self._step(self._actions, rewards, dones, infos)
        self._advance(rewards, dones, infos)
        return self.venv.observations.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.masks.astype(bool)

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        result = getattr(self, method_name)(*args, **kwargs)
        return [result] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def seed(self, seed: Optional[int] = None):
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        return [seed] * self.num_envs

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    # ------------------------------------------------------------------ internals
    def _step(self, actions: np.ndarray, rewards, dones, infos) -> None:
        """Step the games with ``actions`` (``NO_ACTION`` rows untouched); record the learner's
        result in games that end."""
        venv = self.venv
        venv.step(actions)
        ended = np.flatnonzero(venv.dones)
        if not len(ended):
            return
        seats = self.learner_seat[ended]
        final = venv.observe(seats, rows=ended, final=True)
        for k, (g, seat) in enumerate(zip(ended, seats)):
            won = venv.rewards[g, seat] >= max(venv.rewards[g])
            rewards[g] = venv.rewards[g, seat]
            dones[g] = True
            infos[g] = {"terminal_observation": final[k], "is_success": bool(won),
                        "final_scores": venv.final_scores[g].tolist(), "learner_seat": int(seat)}
        self._seat(ended)

    def _advance(self, rewards, dones, infos):
        """Let the opponents move until every game waits for the learner."""
        venv = self.venv
        for _ in range(10_000):
            waiting = venv.to_move != self.learner_seat
            if not waiting.any():
                return rewards, dones, infos
            actions = np.full(self.num_envs, NO_ACTION, np.int64)
            for k in np.unique(self.opponent_of[waiting]):
                rows = np.flatnonzero(waiting & (self.opponent_of == k))
                out = np.asarray(self.pool[k](venv.observations[rows], venv.masks[rows]))
                if (out.shape != rows.shape or out.dtype.kind not in "iu"
                        or ((out < 0) | (out >= NUM_ACTIONS)).any()):  # never cast or wrapped
                    raise IllegalActionError(
                        f"opponent {k} ({self.pool[k]!r}) must return {len(rows)} action ids in "
                        f"0..{NUM_ACTIONS - 1}, got {out.dtype} of shape {out.shape}: {out.tolist()}")
                actions[rows] = out
            self._step(actions, rewards, dones, infos)
        raise RuntimeError("opponents made 10,000 decisions in a row")
