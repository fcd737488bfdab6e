"""N games of Arboretum in lockstep in one process, for all-seats self-play (``VectorEnv``).

Every game of the batch lives in one row of the compiled fast path's table (``batch.table``);
one ``step`` applies one action per game, scores the games that end, starts the next game in
their rows and writes, for every game, the observation of the player to move and its mask into
preallocated arrays, all in a few compiled calls (as EnvPool and Pgx batch their envs).

| attribute | shape, dtype | meaning |
|---|---|---|
| ``observations`` | ``[N, OBS_SIZE]`` float32 | the view of the player to move in each game (``observation.SECTIONS``) |
| ``masks`` | ``[N, 489]`` int8 | that player's legal actions (``actions``) |
| ``to_move`` | ``[N]`` int64 | the seat (player index) to move |
| ``rewards`` | ``[N, num_players]`` float32 | after ``step``: every seat's end-of-game reward in the games that just ended, else 0 |
| ``dones`` | ``[N]`` bool | after ``step``: the game in that row ended (and a new one started there) |
| ``final_scores`` | ``[N, num_players]`` int64 | after ``step``: the totals of the games that just ended |
| ``game_seeds`` | ``[N]`` int64 | the seed of the game now in each row |
| ``final_tables`` | ``[N, TABLE_SIZE]`` int64 | after ``step``: the finished game of each row that just ended (``observe(..., final=True)`` reads it) |

``step(actions)`` takes one id per game, or ``NO_ACTION`` (-1) to leave a game as it is (for
callers that move only some games, e.g. a learner's seat and batched opponents).

The arrays are the env's own and are overwritten by the next ``reset``/``step``: copy what you
keep. The env never reads them back: legality is checked against its private copy of the masks.

**Rewards** are the AEC env's (``reward_mode``: ``"win_loss"`` or ``"score_margin"``), all at
the end: the row's ``rewards`` give every seat its own, the loser's included, at the step that
ended the game; a trainer credits each seat's reward to that seat's last decision.

**Seeds.** ``reset(seed=s)`` starts game ``i`` from seed ``s + i``; each later game takes the next
unused seed (``s + N``, ``s + N + 1``, ... in the order the rows finish, lower rows first), so
the same seed and the same actions give the same games. Each game equals the AEC env's
``reset(seed=game_seeds[i])`` (tests/test_vector.py steps both side by side).

Illegal actions raise ``IllegalActionError`` naming the game, the action and the legal ids; no
game is stepped then. Requires numba (the compiled path).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .actions import NUM_ACTIONS, describe
from .batch import observe as batch_observe
from .batch import table as batch_table
from .batch.table import NO_ACTION
from .checks import SEED_LIMIT, index_array, plain_int, seed_value
from .engine import GameConfig, IllegalActionError, new_game
from .observation import OBS_SIZE

REWARD_MODES = ("win_loss", "score_margin")


class VectorEnv:
    """``num_envs`` games of ``num_players`` players, stepped together (see the module doc)."""

    def __init__(self, num_envs: int, num_players: int = 2, reward_mode: str = "win_loss",
                 species=None, starting_player: Optional[int] = None):
        if not batch_table.available:
            raise RuntimeError("VectorEnv needs numba (the compiled fast path): pip install numba")
        num_envs, num_players = plain_int(num_envs), plain_int(num_players)
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.config = GameConfig(num_players, species, plain_int(starting_player))  # ConfigError
        self.num_envs, self.num_players, self.reward_mode = num_envs, num_players, reward_mode
        self._mode = REWARD_MODES.index(reward_mode)
        n = self.num_envs
        self.tables = batch_table.new_tables(n)
        self.observations = np.zeros((n, OBS_SIZE), np.float32)
        self.masks = np.zeros((n, NUM_ACTIONS), np.int8)
        self.to_move = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, num_players), np.float32)
        self.dones = np.zeros(n, bool)
        self.final_scores = np.zeros((n, num_players), np.int64)
        self.game_seeds = np.zeros(n, np.int64)
        self.final_tables = batch_table.new_tables(n)
        self._legal = np.zeros((n, NUM_ACTIONS), np.int8)
        self._dirty = np.zeros((n, batch_observe.DIRTY_SIZE), np.int64)  # what to clear next time
        self._status = np.zeros(n, np.int64)
        self._end_rewards = np.zeros((n, batch_table.SEATS))
        self._rows = np.arange(n)
        self._next_seed: Optional[int] = None

    # ------------------------------------------------------------------ API
    def reset(self, seed: Optional[int] = None):
        """Start a game in every row; returns ``(observations, masks, to_move)``. Game ``i``
        takes seed ``seed + i``, so ``seed + num_envs - 1`` must be below 2**63 too."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 62))
        seed = seed_value(seed, int64=True)
        if seed + self.num_envs > SEED_LIMIT:
            raise ValueError(f"reset: seed must be a non-negative integer below 2**63 (or None), "
                             f"with room for {self.num_envs} games (seed + {self.num_envs - 1} "
                             f"< 2**63), got {seed}")
        self._next_seed = seed
        for i in range(self.num_envs):
            self._new_game(i)
        self.rewards[:] = 0.0
        self.dones[:] = False
        self.final_scores[:] = 0
        self._observe()
        return self.observations, self.masks, self.to_move

    def step(self, actions):
        """One action per game (for its player to move); returns ``(observations, masks,
        to_move, rewards, dones)`` (see the module doc)."""
        if self._next_seed is None:
            raise RuntimeError("VectorEnv.step() before reset(): call reset() first")
        if self._next_seed + self.num_envs > SEED_LIMIT:  # the next games' seeds must fit int64
            raise RuntimeError("VectorEnv: the game seeds reached 2**63: reset() with a smaller seed")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be {self.num_envs} int ids, got shape "
                                     f"{actions.shape} of {actions.dtype}")
        if actions.dtype != np.int64:
            if actions.dtype == np.uint64 and (actions >= NUM_ACTIONS).any():  # would wrap
                self._refuse(actions, actions < NUM_ACTIONS)
            actions = actions.astype(np.int64)
        inside = (actions >= 0) & (actions < NUM_ACTIONS)
        ok = inside | (actions == NO_ACTION)
        ok[inside] = self._legal[self._rows[inside], actions[inside]] == 1
        if not ok.all():
            self._refuse(actions, ok)
        batch_table.step(self.tables, actions, self._mode, self._status, self._end_rewards)
        ended = self._status == batch_table.ENDED
        self.dones[:] = ended
        self.rewards[:] = 0.0
        self.final_scores[:] = 0
        if ended.any():
            p = self.num_players
            rows = np.flatnonzero(ended)
            self.rewards[rows] = self._end_rewards[rows, :p]
            self.final_scores[rows] = self.tables[rows, batch_table.T_TOTALS:batch_table.T_TOTALS + p]
            self.final_tables[rows] = self.tables[rows]
            for i in rows:
                self._new_game(int(i))
        self._observe()
        return self.observations, self.masks, self.to_move, self.rewards, self.dones

    def observe(self, observers: np.ndarray, rows: Optional[np.ndarray] = None,
                final: bool = False) -> np.ndarray:
        """A fresh array with the observation of seat ``observers[k]`` in game ``rows[k]`` (all
        games if ``rows`` is None), e.g. for a value of every seat; ``final``: in the game that
        last ended in that row (``final_tables``; only rows that ended)."""
        if rows is not None:
            rows = index_array(rows, "rows", self.num_envs, "game rows")
        observers = index_array(observers, "observers", self.num_players, "seats")
        rows = self._rows if rows is None else rows
        if observers.shape != rows.shape:
            raise ValueError(f"observers must be one seat per row: {len(observers)} observers "
                             f"for {len(rows)} rows")
        tables = (self.final_tables if final else self.tables)[rows]
        if final and len(rows) and (tables[:, batch_table.T_PLAYERS] == 0).any():
            raise ValueError("final=True: a row asked for has not finished a game yet")
        out = np.empty((len(rows), OBS_SIZE), np.float32)
        batch_observe.observe(tables, observers, out)
        return out

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ internals
    def _refuse(self, actions: np.ndarray, ok: np.ndarray) -> None:
        """Raise ``IllegalActionError`` for the first game whose action is not ``ok``."""
        i = int(np.flatnonzero(~ok)[0])
        a = actions[i].item()  # the value given (never wrapped)
        if not NO_ACTION <= a < NUM_ACTIONS:
            raise IllegalActionError(f"illegal action {a} in game {i}: ids are 0..{NUM_ACTIONS - 1}, "
                                     f"or {NO_ACTION} to leave the game as it is")
        legal = ", ".join(str(x) for x in np.flatnonzero(self._legal[i])) or "none"
        raise IllegalActionError(f"illegal action {a} ({describe(a)}) in game {i} by player "
                                 f"{int(self.to_move[i])}; legal ids: {legal}")

    def _new_game(self, i: int) -> None:
        seed = self._next_seed
        self._next_seed += 1
        self.game_seeds[i] = seed
        batch_table.load(self.tables[i], new_game(self.config, seed))

    def _observe(self) -> None:
        self.to_move[:] = self.tables[:, batch_table.T_CURRENT]
        batch_observe.observe_sparse(self.tables, self.to_move, self.observations, self._dirty)
        batch_observe.masks(self.tables, self._legal)
        np.copyto(self.masks, self._legal)
