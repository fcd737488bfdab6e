"""A single-agent gymnasium view of the AEC environment, for stable-baselines3 / sb3-contrib.

``SingleAgentEnv`` seats one learner at the table; the other seats are played inside ``step()``
by opponents (agents, agent specs such as ``"greedy"``, or callables ``(obs, mask, view) -> int``)
until it is the learner's decision again or the game is over. The reward is the learner's own
final reward from the AEC env, **including a loss decided on an opponent's move** (the game ends
after the discard of whoever drew the last card; PettingZoo's SB3 tutorial drops that -1).

* ``observation_space``: the flat ``Box(0, 1, (OBS_SIZE,), float32)`` observation vector (the
  ``"observation"`` entry of the AEC env's Dict), followed by ``HINT_SIZE`` hint values when
  ``hints=True`` (:mod:`arboretum_env.agents.hints`); ``action_space``: ``Discrete(489)``.
* ``action_masks()``: the learner's legal-action mask (sb3-contrib's ``MaskablePPO`` reads it).
  It is never all-zero while the learner has a decision; after the episode ends it is all-zero.
* An illegal learner action raises ``ValueError`` naming the action and the legal ids; nothing
  is replaced silently. An opponent's action that is not an integer id, or not legal, raises
  ``IllegalActionError`` naming the opponent and ends the episode (call ``reset()``).
  ``action_space.sample()`` samples a *legal* action of the learner's current decision (so
  random rollouts and SB3's ``check_env`` work); ``sample(mask)`` is the plain gymnasium
  behaviour.
* Seats: the learner sits in a random seat each episode (from the env's seeded generator)
  unless ``learner_seat`` is given. ``reset(seed=s)`` makes the whole episode reproducible:
  the seat, the game, the choice of opponents and the opponents' own random choices.
* Opponents: ``set_opponents(pool)`` replaces the pool from the next ``reset``; each episode
  draws one opponent per non-learner seat from the pool (uniformly, with replacement). For
  self-play with vectorised envs: ``vec_env.env_method("set_opponents", pool)``.
* ``info`` at the end of an episode: ``score`` (the learner's total; the breakdown is
  ``env.env.score_breakdown()``), ``winners`` (player indexes), ``learner_seat``,
  ``final_scores``, ``win`` (the learner is among the winners),
  ``shared_win``, ``is_success`` (= ``win``; SB3 logs it as the success rate).
* Pickling keeps the configuration (arguments and the current opponent pool), not the game in
  progress, as PettingZoo's ``EzPickle`` does: call ``reset()`` after unpickling. Opponents must
  be picklable for that (specs and the shipped agents are).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import NUM_ACTIONS, describe
from .agents import Agent, as_policy, make_agent
from .env import raw_env
from .agents.hints import HINT_SIZE, HintWriter, with_hints
from .checks import plain_int
from .engine import IllegalActionError
from .observation import OBS_SIZE

OpponentLike = Union[str, Agent, Callable[..., int]]

_MAX_OPPONENT_DECISIONS = 10_000


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws a legal action of the owning
    env's current decision. Pickles as a plain ``Discrete`` (the link to the env is dropped)."""

    def __init__(self, n: int, owner: Optional["SingleAgentEnv"] = None, seed=None) -> None:
        super().__init__(n, seed=seed)
        self._owner = weakref.ref(owner) if owner is not None else None

    def sample(self, mask: Optional[np.ndarray] = None, probability=None) -> np.int64:
        if mask is None and probability is None and self._owner is not None:
            owner = self._owner()
            if owner is not None:
                legal = owner.action_masks()
                if legal.any():
                    mask = legal
        if probability is not None:
            return super().sample(probability=probability)
        return super().sample(mask=mask)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_owner"] = None
        return state


def _resolve(opponent: OpponentLike, seed: Optional[int]):
    """An agent object (with ``act``) or a callable, checked."""
    if isinstance(opponent, str):
        return make_agent(opponent, seed)
    if callable(getattr(opponent, "act", None)) or callable(opponent):
        return opponent
    raise TypeError(f"an opponent must be an agent spec (str), an agent (with act()) or a "
                    f"callable (obs, mask, view) -> int, got {type(opponent).__name__}")


class SingleAgentEnv(gymnasium.Env):
    """One learner against opponents; see the module docstring."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(self, num_players: int = 2, opponents: Union[OpponentLike, Sequence[OpponentLike]] = ("random",),
                 reward_mode: str = "win_loss", seed: Optional[int] = None,
                 learner_seat: Optional[int] = None, render_mode: Optional[str] = None,
                 hints: bool = False, advisor: str = "greedy", **env_kwargs: Any) -> None:
        super().__init__()
        self._args = dict(num_players=num_players, reward_mode=reward_mode, seed=seed,
                          learner_seat=learner_seat, render_mode=render_mode, hints=hints, advisor=advisor,
                          **env_kwargs)
        num_players, learner_seat = plain_int(num_players), plain_int(learner_seat)
        self.env = raw_env(num_players=num_players, reward_mode=reward_mode,
                           render_mode=render_mode, **env_kwargs)  # checks num_players
        if learner_seat is not None and (isinstance(learner_seat, bool) or not isinstance(learner_seat, int)
                                         or not 0 <= learner_seat < num_players):
            raise ValueError(f"learner_seat must be None or 0..{num_players - 1}, got {learner_seat!r}")
        self._hints = HintWriter(advisor) if hints else None
        self.num_players = num_players
        self.learner_seat = learner_seat
        self.render_mode = render_mode
        size = OBS_SIZE + (HINT_SIZE if hints else 0)
        self.observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        self.action_space = LegalDiscrete(NUM_ACTIONS, owner=self)
        self._initial_seed = seed
        self._seeded = False
        self._pool: list = []
        self._pool_spec: list[OpponentLike] = []
        self.set_opponents(opponents)
        self.seat: Optional[int] = None
        self.agent: Optional[str] = None
        self.opponents: dict[int, Callable[..., int]] = {}
        self._done = True
        self._zero_mask = np.zeros(NUM_ACTIONS, np.int8)

    # ------------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Union[OpponentLike, Sequence[OpponentLike]]) -> None:
        """Replace the opponent pool (used from the next ``reset``). A single opponent or a
        non-empty list of agent specs, agents or callables; listing one several times weights
        it (a repeated spec is built once and shared)."""
        if isinstance(opponents, str) or callable(opponents) or hasattr(opponents, "act"):
            opponents = [opponents]
        if not hasattr(opponents, "__iter__"):
            raise TypeError(f"opponents must be an agent spec (str), an agent (with act()), a callable "
                            f"(obs, mask, view) -> int, or a non-empty list of them, got {opponents!r}")
        opponents = list(opponents)
        if not opponents:
            raise ValueError("the opponent pool is empty: give at least one opponent")
        built: dict[str, Any] = {}  # a spec listed several times (a weight) is built once
        pool = []
        for o in opponents:
            if isinstance(o, str):
                if o not in built:
                    built[o] = _resolve(o, None)
                pool.append(built[o])
            else:
                pool.append(_resolve(o, None))
        self._pool = pool
        self._pool_spec = opponents

    @property
    def opponent_pool(self) -> list:
        return list(self._pool)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is None and not self._seeded and self._initial_seed is not None:
            seed = self._initial_seed
        super().reset(seed=seed)
        self._seeded = True
        rng = self.np_random
        if seed is not None:
            self.action_space.seed(int(rng.integers(2**31)))
            for opponent in {id(o): o for o in self._pool}.values():
                if callable(getattr(opponent, "seed", None)):
                    opponent.seed(int(rng.integers(2**31)))
        n = self.num_players
        self.seat = int(rng.integers(n)) if self.learner_seat is None else int(self.learner_seat)
        self.agent = self.env.possible_agents[self.seat]
        self.opponents = {p: as_policy(self._pool[int(rng.integers(len(self._pool)))])
                          for p in range(n) if p != self.seat}
        self.env.reset(seed=int(rng.integers(2**63)))
        self._done = False
        self._play_opponents()
        if self._done:  # unreachable with the standard rules: every player gets turns
            raise RuntimeError("the game ended before the learner's first decision")
        return self._observation(), {"learner_seat": self.seat}

    def step(self, action):
        if self._done:
            if self.seat is None:
                raise RuntimeError("step() before reset(): call reset() first")
            raise RuntimeError("step() called after the episode ended (or an opponent failed): "
                               "call reset()")
        mask = self.env.action_masks()
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()  # SB3 hands out 0-d or 1-element arrays
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
            raise ValueError(f"action must be an integer id, got {action!r} ({type(action).__name__}); "
                             f"nothing is rounded")
        a = int(action)
        if not (0 <= a < NUM_ACTIONS) or not mask[a]:
            legal = ", ".join(str(i) for i in np.flatnonzero(mask))
            raise ValueError(f"illegal action {action!r} ({describe(a)}) for the learner "
                             f"(player {self.seat}) in decision "
                             f"{self.env.table_view(self.agent).decision.name}; legal ids: {legal}")
        self.env.step(a)
        self._play_opponents()
        if self._done:
            reward = float(self.env.final_rewards[self.agent])
            return self._observation(), reward, True, False, self._final_info()
        return self._observation(), 0.0, False, False, {}

    def action_masks(self) -> np.ndarray:
        """The learner's legal-action mask (int8); all zeros once the episode is over."""
        if self._done:
            return self._zero_mask.copy()
        return self.env.action_masks()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        self.env.render_viewer = self.seat
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    # ------------------------------------------------------------------ internals
    def _observation(self) -> np.ndarray:
        obs = self.env.observe(self.agent)["observation"]
        if self._hints is None:
            return obs
        return with_hints(obs, self.env.table_view(self.agent), self._hints, self.action_masks())

    def _play_opponents(self) -> None:
        """Play the other seats until the learner must decide or the game is over."""
        env = self.env
        for _ in range(_MAX_OPPONENT_DECISIONS):
            if env.state.game_over:
                self._done = True
                return
            player = env.state.current_player
            if player == self.seat:
                return
            agent = env.agent_selection
            obs = env.observe(agent)
            action = self.opponents[player](obs["observation"], obs["action_mask"],
                                            env.table_view(agent))
            try:  # an opponent's bad action raises (a bug in the opponent); the episode is over
                env.step(self._opponent_action(player, action))
            except IllegalActionError as e:
                self._done = True
                raise IllegalActionError(f"{self._opponent_name(player)}: {e}") from None
        raise RuntimeError(f"opponents made {_MAX_OPPONENT_DECISIONS} decisions in a row")

    def _opponent_action(self, player: int, action) -> int:
        """An opponent's action as an int id; anything but an integer (a float, a bool, None)
        is refused, never rounded."""
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(f"returned {action!r} ({type(action).__name__}), not an integer "
                                     f"action id in 0..{NUM_ACTIONS - 1}; nothing is rounded")
        return int(action)

    def _opponent_name(self, player: int) -> str:
        policy = self.opponents[player]
        owner = getattr(policy, "__self__", policy)  # an agent's bound act()
        name = getattr(owner, "name", None) or getattr(policy, "__name__", None) or type(owner).__name__
        return f"opponent {name!r} (player {player})"

    def _final_info(self) -> dict:
        info = self.env.infos[self.agent]
        winners = [p for p, won in enumerate(info["winners"]) if won]
        win = self.seat in winners
        return {
            "score": info["score"],
            "winners": winners,
            "learner_seat": self.seat,
            "final_scores": info["scores"],
            "win": win,
            "shared_win": win and len(winners) > 1,
            "is_success": win,
        }

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        return {"args": self._args, "opponents": self._pool_spec}

    def __setstate__(self, state: dict) -> None:
        self.__init__(opponents=state["opponents"], **state["args"])


def make_single_agent_env(**kwargs: Any) -> Callable[[], SingleAgentEnv]:
    """A picklable env factory for ``SubprocVecEnv([make_single_agent_env(...)] * n)``."""
    return _Factory(kwargs)


class _Factory:
    def __init__(self, kwargs: dict) -> None:
        self.kwargs = kwargs

    def __call__(self) -> SingleAgentEnv:
        return SingleAgentEnv(**self.kwargs)
