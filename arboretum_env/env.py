"""Arboretum as a PettingZoo AEC environment (``arboretum_v0``).

The docstring of ``raw_env`` is the environment's specification; ``docs/env.md`` is the guide.
Importing this module registers ``arboretum_v0`` with PettingZoo's registry (where the installed
PettingZoo has one): ``pettingzoo.make("aec", "arboretum_v0", num_players=3)``.
"""

from __future__ import annotations

import sys
import types
from typing import Optional

import gymnasium
import numpy as np
import pettingzoo
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .actions import (
    DISCARD,
    DRAW_DECK,
    DRAW_DISCARD,
    NUM_ACTIONS,
    PLAY_CARD,
    PLAY_CELL,
    apply_id,
    decision_of,
    write_mask,
)
from .batch import observe as batch_observe
from .batch import table as batch_table
from .engine import DECK, GameConfig, GameState, IllegalActionError, Phase, new_game, score, state_to_position
from .observation import OBS_SIZE, encode, layout_table
from .table_view import TableView, table_view
from .versions import ENV_NAME

REWARD_MODES = ("win_loss", "score_margin")
MARGIN_SCALE = 20.0

_GAME_OVER, _PLAY = Phase.GAME_OVER, Phase.PLAY


def env(**kwargs) -> AECEnv:
    """``raw_env(**kwargs)`` with PettingZoo's classic wrappers: an illegal action ends the game
    with reward -1 for its agent (``TerminateIllegalWrapper``), out-of-range actions assert
    (``AssertOutOfBoundsWrapper``), and calls out of order raise (``OrderEnforcingWrapper``)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


def win_loss_rewards(num_players: int, winners) -> list[float]:
    """Zero-sum end-of-game rewards: k tied winners of n players get (n - k) / (k (n - 1)) each,
    the others -1 / (n - 1)."""
    n, k = num_players, len(winners)
    win, loss = (n - k) / (k * (n - 1)), -1.0 / (n - 1)
    return [win if p in winners else loss for p in range(n)]


def score_margin_rewards(totals) -> list[float]:
    """Own score minus the best other score, / 20, clipped to [-1, 1]."""
    out = []
    for p, own in enumerate(totals):
        best_other = max(t for q, t in enumerate(totals) if q != p)
        out.append(float(min(1.0, max(-1.0, (own - best_other) / MARGIN_SCALE))))
    return out


class raw_env(AECEnv, EzPickle):
    __doc__ = f"""Arboretum for 2 to 4 players (PettingZoo AEC, ``{ENV_NAME}``).

| | |
|---|---|
| Import | `from arboretum_env import env, raw_env` |
| Registry | `pettingzoo.make("aec", "{ENV_NAME}")` (after `import arboretum_env.env`) |
| Actions | Discrete({NUM_ACTIONS}), the same for 2, 3 and 4 players |
| Parallel API | No |
| Agents | `player_0` .. `player_{{n-1}}` (agent index = engine player index) |
| Observation | `Dict(observation: Box(0, 1, ({OBS_SIZE},), float32), action_mask: Box(0, 1, ({NUM_ACTIONS},), int8))` |
| Observation values | [0, 1] |

**The game.** Ten species of trees, ranks 1 to 8 (2 players play 6 species, 3 play 8, 4 play
10). A turn is: draw two cards (each from the deck or from the top of any discard pile), play one
card into the own arboretum (a grid; every card after the first orthogonally next to one already
there), discard one card onto the own discard pile. When the last deck card is drawn that player
finishes the turn and the game is scored: for each species the players with the highest hand sum
of it (an 8 counts 0 if another player holds that species' 1) score their best climbing path that
starts and ends on that species. Full rules: ``RULES.md``.

**Turns and agents.** ``agent_selection`` is the player to move; a turn is that agent's
consecutive decisions: draw, draw, choose the card to play, choose its cell, discard (a draw with
no possible source is skipped).

**Why play is two decisions.** One decision per (card, cell) pair would need 80 x 324 = 25,920
ids; card then cell needs 80 + 324, keeps the action space small and the same for every table
size, and the policy sees the chosen card (``pending`` section, ``gain_plane``) when it picks the
cell. The cell ids are the cells of the 18 x 18 frame in which the observation draws that
arboretum, so a convolutional policy can score cells in place.

**Actions** (``arboretum_env.actions``):

| ids | meaning |
|---|---|
| 0 | draw the top card of the deck |
| 1 .. 4 | draw the top card of the discard pile of seat offset ``id - 1`` (0 = own, 1 = next player in turn order, ...) |
| 5 .. 84 | choose card ``id - 5`` (``species * 8 + rank - 1``) from hand to play |
| 85 .. 408 | play the chosen card on frame cell ``id - 85 = i * 18 + j`` |
| 409 .. 488 | discard card ``id - 409`` |

**The frame.** Each arboretum is seen through an 18 x 18 window recomputed at every decision: its
bounding box (h x w) is centred, ``origin_row = min_row - (18 - h) // 2`` (likewise for columns);
an empty arboretum has origin (-9, -9), so its first card on frame cell (9, 9) lands on engine
cell (0, 0). Before a play an arboretum holds at most 16 cards, so the bounding box plus a
one-cell margin always fits: every legal placement has an id. ``actions.frame_origin`` and
``actions.cell_id`` convert.

**Action mask.** ``observation["action_mask"][i] == 1`` exactly when the engine accepts id ``i``
now; agents not on turn get an all-zero mask. ``action_masks()`` returns the mask of the agent
to move (sb3-contrib's ``MaskablePPO`` reads it).

**Observation** (seat-relative: seat 0 is the observer, then the others in turn order, padded to
4 seats; species in canonical order; everything in [0, 1]; hidden information is never encoded:
reshuffling the deck or the cards of other hands the observer cannot know leaves its observation
unchanged). Layout, generated from ``arboretum_env.observation.SECTIONS``:

{layout_table()}

**Rewards**, at the end of the game only (all earlier rewards are 0):

* ``reward_mode="win_loss"`` (default), zero-sum. Winner: highest score, ties broken by the most
  species in the arboretum, then shared. A sole winner gets +1 and every other player
  -1/(n-1); k tied winners get (n-k)/(k(n-1)) each and the others -1/(n-1). Two players:
  +1/-1, a shared win 0/0. Three players: +1, -1/2, -1/2; two tied winners +1/4 each, the
  other -1/2; three tied 0. Four players: +1, -1/3 x 3; two tied winners +1/3 each, the others
  -1/3; three tied +1/9 each, the other -1/3; four tied 0.
* ``reward_mode="score_margin"``: own score minus the best other score, divided by 20 and
  clipped to [-1, 1].

Through ``env()`` an illegal action ends the game with -1 for its agent and 0 for the others
(PettingZoo's ``TerminateIllegalWrapper``); on ``raw_env`` it raises ``ValueError``
(``IllegalActionError``) naming the action, the decision and the legal ids, and changes nothing.

**Episode end.** When the player who drew the last deck card has discarded: every agent is
terminated (never truncated) and each steps once more with ``None``. ``infos[agent]`` then holds
``"score"`` (``ScoreResult.to_dict()``: per player the total and per species the right, points
and path) and ``"winners"`` (agent names); ``final_rewards`` keeps the rewards after the agents
are gone. ``position()`` writes the current state as a position document (the score
calculator's JSON) at any time.

**Arguments**

* ``num_players``: 2, 3 or 4.
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the text of the table as the player
  to move sees it), ``"human"`` (prints it after every step), ``"rgb_array"`` (an H x W x 3
  uint8 picture). ``render_viewer`` (attribute; ``None`` = the player to move) picks the seat.
* ``reward_mode``: ``"win_loss"`` or ``"score_margin"``.
* ``species``: the species in play (names or indexes; ``None``: drawn from the seed).
* ``starting_player``: ``None``: drawn from the seed.

``reset(seed=...)`` makes the whole game (species, deal, starting player) from
``numpy.random.default_rng(seed)``; ``seed=None`` draws fresh entropy (the seed used is
``state.seed``); ``reset_to(state, pending=None)`` starts from any engine state. Extra methods:
``table_view(agent)`` (what that agent may know, for heuristic agents), ``state`` (the engine
``GameState``; read it, do not change it; through wrappers ``env.unwrapped.state``: PettingZoo's
optional global ``state()`` is not provided), ``pending``, ``position()``, ``action_masks()``.

**Version history**

* v0: initial release (observation layout 1, action layout 1).
"""

    metadata = {
        "name": ENV_NAME,
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_mode: str = "win_loss", species=None,
                 starting_player: Optional[int] = None):
        EzPickle.__init__(self, num_players, render_mode, reward_mode, species, starting_player)
        super().__init__()
        self.config = GameConfig(num_players, species, starting_player)  # ConfigError: ValueError
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, "
                             f"got {render_mode!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.num_players = num_players
        self.render_mode = render_mode
        self.reward_mode = reward_mode
        self.render_viewer: Optional[int] = None
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        # The compiled fast path with one game (numba); without numba the plain reference.
        self._fast = batch_table.available
        self._table = batch_table.new_tables(1)
        self._observers = np.arange(num_players, dtype=np.int64).reshape(num_players, 1)
        self._state: Optional[GameState] = None
        self._pending: Optional[int] = None
        self._steps = 0
        self._mask_step = -1
        self._mask_array = np.zeros(NUM_ACTIONS, np.int8)
        self.final_rewards: Optional[dict[str, float]] = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """A new game made entirely from ``numpy.random.default_rng(seed)`` (species left out,
        starting player, deal); ``seed=None`` draws fresh entropy (kept in ``state.seed``)."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"reset: seed must be an int or None, got {seed!r} ({type(seed).__name__})")
        self._start(new_game(self.config, int(seed)), None)  # == new_game(config, default_rng(seed))

    def reset_to(self, state: GameState, pending: Optional[int] = None) -> None:
        """Start from a given engine state (e.g. ``GameState.from_dict(...)``, a clone), with
        ``pending`` the card already chosen to play in the PLAY phase. The env owns the state
        from then on. Its player count must be this env's."""
        if state.num_players != self.num_players:
            raise ValueError(f"this env has {self.num_players} players, the state {state.num_players}")
        if pending is not None and (state.phase is not _PLAY
                                    or pending not in state.hands[state.current_player]):
            raise ValueError(f"pending card {pending!r}: only a card of the mover's hand, in PLAY")
        self._start(state, pending)

    def _start(self, state: GameState, pending: Optional[int]) -> None:
        if self._fast:
            batch_table.load(self._table[0], state, pending)  # ValueError: does not fit the frame
        self._state = state
        self._pending = pending
        self._steps = 0
        self._mask_step = -1
        self.final_rewards = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._state.current_player]
        if self._state.phase is _GAME_OVER:  # not reachable with the standard rules
            self._finish()

    def last(self, observe: bool = True):
        self._require_game("last()")
        return super().last(observe)

    def _require_game(self, what: str) -> GameState:
        if self._state is None:
            raise RuntimeError(f"{ENV_NAME}: {what} before reset(): call reset() first")
        return self._state

    def step(self, action) -> None:
        state = self._require_game("step()")
        if not self.agents:
            raise RuntimeError(f"{ENV_NAME}: step() after the game ended and every agent stepped "
                               f"out: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = _action_id(action, state, self._pending)
        if self._fast:
            self._step_fast(state, action)
        else:
            self._pending = apply_id(state, self._pending, action)  # IllegalActionError: ValueError
        self._steps += 1
        if state.phase is _GAME_OVER:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[state.current_player]
        if self.render_mode == "human":
            self.render()

    def _step_fast(self, state: GameState, action: int) -> None:
        """Step the compiled row (which checks the action), then the engine state with the same
        transition, unchecked (tests/test_batch.py checks that both stay equal)."""
        t = self._table[0]
        p = state.current_player
        cell = batch_table.play_cell_of(t, p, action) if PLAY_CELL <= action < DISCARD else 0
        if batch_table.step_one(t, action) == batch_table.ILLEGAL:
            apply_id(state, self._pending, action)  # raises IllegalActionError, naming the reason
            raise AssertionError(f"the compiled path refused action {action}, the engine took it")
        if action < PLAY_CARD:
            state.draw_unchecked(DECK if action == DRAW_DECK
                                 else (p + action - DRAW_DISCARD) % state.num_players)
        elif action < PLAY_CELL:
            self._pending = action - PLAY_CARD
        elif action < DISCARD:
            state.play_cell_unchecked(self._pending, cell)
            self._pending = None
        else:
            state.discard_unchecked(action - DISCARD)

    def _finish(self) -> None:
        result = score(self._state)
        names = self.possible_agents
        if self.reward_mode == "win_loss":
            values = win_loss_rewards(self.num_players, result.winners)
        else:
            values = score_margin_rewards(result.totals)
        totals = [int(t) for t in result.totals]
        won = [int(p in result.winners) for p in range(self.num_players)]
        for p, a in enumerate(names):
            self.rewards[a] = values[p]
            self.terminations[a] = True
            self.infos[a] = {"score": totals[p], "won": won[p], "scores": totals, "winners": won}
        self._result = result
        self.final_rewards = dict(zip(names, values))
        self._accumulate_rewards()

    def score_breakdown(self) -> dict:
        """The score of the current state, per player the total and per species the right, the
        points and the path (``ScoreResult.to_dict()``; final once the game is over)."""
        return score(self._require_game("score_breakdown()")).to_dict()

    # ------------------------------------------------------------------ observations
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 (OBS_SIZE,), "action_mask": int8 (NUM_ACTIONS,)}``: fresh
        arrays, the caller's to keep or change (the env never reads them back)."""
        state = self._require_game("observe()")
        if agent not in self._index:
            raise KeyError(f"{ENV_NAME}: no agent {agent!r} (agents: {', '.join(self.possible_agents)})")
        p = self._index[agent]
        if self._fast:
            observation = np.empty((1, OBS_SIZE), np.float32)
            batch_observe.observe(self._table, self._observers[p], observation)
            observation = observation[0]
        else:
            observation = encode(table_view(state, p, self._pending))
        if p == state.current_player and state.phase is not _GAME_OVER:
            mask = self._mask().copy()
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": observation, "action_mask": mask}

    def action_masks(self) -> np.ndarray:
        """The legal-action mask (int8, a fresh array) of the agent to move; all zeros once the
        game is over."""
        if self._require_game("action_masks()").phase is _GAME_OVER:
            return np.zeros(NUM_ACTIONS, np.int8)
        return self._mask().copy()

    def _mask(self) -> np.ndarray:
        """The mask of the player to move, computed once per step (internal: hand out copies)."""
        if self._mask_step != self._steps:
            if self._fast:
                batch_observe.masks(self._table, self._mask_array.reshape(1, NUM_ACTIONS))
            else:
                write_mask(self._state, self._pending, self._mask_array)
            self._mask_step = self._steps
        return self._mask_array

    def table_view(self, agent: str) -> TableView:
        """What ``agent`` may know now (``TableView``): for heuristic agents."""
        return table_view(self._require_game("table_view()"), self._index[agent], self._pending)

    # ------------------------------------------------------------------ state access
    @property
    def state(self) -> GameState:
        """The engine state (all hidden information included): read it, do not change it."""
        return self._state

    @property
    def pending(self) -> Optional[int]:
        """The card chosen to play during PLAY_CELL (``None`` otherwise)."""
        return self._pending

    def position(self) -> dict:
        """The current state as a position document (``engine.state_to_position``)."""
        return state_to_position(self._require_game("position()"))

    # ------------------------------------------------------------------ copies
    def __getstate__(self) -> dict:
        """Pickling and ``copy.deepcopy`` keep the game in progress: the copy continues
        exactly as the original would."""
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ rendering
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from . import render as _render

        state = self._require_game("render()")
        viewer = state.current_player if self.render_viewer is None else self.render_viewer
        if self.render_mode == "rgb_array":
            return _render.render_rgb_array(state, viewer)
        text = _render.render_ansi(state, viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return ENV_NAME


def _action_id(action, state: GameState, pending: Optional[int]) -> int:
    """``action`` as an int id: ints and numpy integers only (0.7, "0", True are refused,
    never rounded), else ``IllegalActionError`` naming it."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise IllegalActionError(
        f"illegal action {action!r}: an action is an int id in 0..{NUM_ACTIONS - 1}, not "
        f"{type(action).__name__} (decision {decision_of(state, pending).name})")


def _register() -> None:
    if not hasattr(pettingzoo, "register"):
        return
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and "arboretum-v0" in registry:
        return
    pettingzoo.register("aec", ENV_NAME, entry_point="arboretum_env.env:env")


_register()


class _CallableModule(types.ModuleType):
    """This module doubles as ``env()``: ``arboretum_env.env`` is both the package attribute
    PettingZoo users call (``arboretum_env.env(num_players=3)``) and this submodule (Python sets
    the package attribute to the submodule once it is imported, so a plain function could not
    keep that name)."""

    def __call__(self, **kwargs) -> AECEnv:
        return env(**kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["ENV_NAME", "env", "raw_env", "win_loss_rewards", "score_margin_rewards"]

