"""Rollout search over a policy network: one policy-improvement step on the compiled engine.

``RolloutSearch(net).choose(row, rng)`` picks the action of the player to move in a game row
(``arboretum_env.batch.table``) as determinized Monte Carlo search does (perfect-information
Monte Carlo, with the network as the rollout policy):

1. the ``candidates`` legal actions with the largest policy logits are the candidates (every
   legal action when there are no more; a forced action, or the only candidate, is returned
   at once);
2. ``determinizations`` deals of the cards the mover cannot see are drawn
   (``batch.determinize``); every candidate is tried on every deal (common random numbers: the
   candidates are compared on the same deals);
3. each of those games is played to its end by the network for every seat (its most likely
   legal action, or with ``temperature > 0`` an action sampled from its masked softmax at that
   temperature, by the Gumbel-max trick on the generator passed in), all of them in lockstep:
   one compiled observation pass and one batched forward per step;
4. the candidate with the best mean score margin of the mover (own total minus the best other
   total) is chosen; ties go to the larger logit.

No heuristic is involved: the rules (the compiled engine) and the network only. It costs about
``determinizations * candidates`` games played out per decision, so it is a measurement and a
teacher for expert iteration (``benchmarks/search_strength.py``), not a real-time agent.
Layer: training (torch and the env's compiled path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.batch import observe as batch_observe
from arboretum_env.batch import table as batch_table
from arboretum_env.batch.determinize import determinize
from arboretum_env.engine import Phase
from arboretum_env.observation import OBS_SIZE

T_TOTALS, T_PLAYERS, T_CURRENT = batch_table.T_TOTALS, batch_table.T_PLAYERS, batch_table.T_CURRENT


@dataclass
class SearchResult:
    action: int
    candidates: np.ndarray
    """The candidate ids, in order of decreasing logit."""
    values: np.ndarray
    """Their mean margins over the deals (empty for a forced action)."""
    rollouts: int
    """Games played out for this decision."""


class RolloutSearch:
    """Determinized rollout search with ``net`` (``forward(obs) -> (logits, value)``) as the
    prior and rollout policy (see the module doc)."""

    def __init__(self, net: torch.nn.Module, determinizations: int = 8, candidates: int = 6,
                 temperature: float = 0.0):
        if determinizations < 1 or candidates < 1:
            raise ValueError(f"determinizations and candidates must be >= 1, got "
                             f"{determinizations} and {candidates}")
        if not 0.0 <= temperature < float("inf"):
            raise ValueError(f"temperature must be a finite number >= 0 (0: the most likely action), got {temperature}")
        self.net = net.eval()
        self.determinizations, self.candidates = int(determinizations), int(candidates)
        self.temperature = float(temperature)

    @torch.inference_mode()
    def logits(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(masked logits [R, 489], mask [R, 489])`` of the player to move in each row."""
        rows = len(tables)
        obs = np.empty((rows, OBS_SIZE), np.float32)
        mask = np.empty((rows, NUM_ACTIONS), np.int8)
        batch_observe.observe(tables, np.ascontiguousarray(tables[:, T_CURRENT]), obs)
        batch_observe.masks(tables, mask)
        logits = self.net(torch.from_numpy(obs))[0].numpy()
        return np.where(mask == 1, logits, -np.inf), mask

    def choose(self, row: np.ndarray, rng: np.random.Generator) -> SearchResult:
        """The searched action of the player to move in ``row`` (not modified)."""
        if row[batch_table.T_PHASE] == int(Phase.GAME_OVER):
            raise ValueError("RolloutSearch.choose: the game is over")
        seat = int(row[T_CURRENT])
        logits, mask = self.logits(row[None])
        legal = np.flatnonzero(mask[0])
        candidates = legal[np.argsort(-logits[0, legal], kind="stable")][:self.candidates]
        if len(candidates) == 1:
            return SearchResult(int(candidates[0]), candidates, np.zeros(0), 0)
        deals = [determinize(row, seat, rng) for _ in range(self.determinizations)]
        tables = np.repeat(np.stack(deals), len(candidates), axis=0)  # deal-major
        first = np.tile(candidates, len(deals))
        margins = self.play_out(tables, first, seat, rng)
        values = margins.reshape(len(deals), len(candidates)).mean(axis=0)
        best = int(np.flatnonzero(values == values.max())[0])  # candidates are in logit order
        return SearchResult(int(candidates[best]), candidates, values, len(tables))

    def pick(self, logits: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The play-out policy's action per row of masked logits: the argmax, or with
        ``temperature > 0`` a sample of ``softmax(logits / temperature)`` (Gumbel-max)."""
        if self.temperature > 0:
            if rng is None:
                raise ValueError("sampled play-outs (temperature > 0) need a generator")
            logits = logits / self.temperature + rng.gumbel(size=logits.shape)
        return logits.argmax(axis=1)

    def play_out(self, tables: np.ndarray, first: np.ndarray, seat: int,
                 rng: np.random.Generator | None = None) -> np.ndarray:
        """Apply ``first[i]`` to row ``i``, play every row to its end with the network (step 3
        of the module doc; ``rng`` draws the samples when ``temperature > 0``); returns
        ``seat``'s final margin in each row (``tables`` is overwritten)."""
        rows = len(tables)
        status = np.zeros(rows, np.int64)
        rewards = np.zeros((rows, batch_table.SEATS))
        actions = np.asarray(first, np.int64).copy()
        live = np.ones(rows, bool)
        while live.any():
            batch_table.step(tables, actions, batch_table.SCORE_MARGIN, status, rewards)
            if (status == batch_table.ILLEGAL).any():
                raise RuntimeError("rollout search stepped an illegal action")  # a bug, not input
            live &= status != batch_table.ENDED
            actions[:] = batch_table.NO_ACTION
            if live.any():
                idx = np.flatnonzero(live)
                actions[idx] = self.pick(self.logits(tables[idx])[0], rng)
        totals = tables[:, T_TOTALS:T_TOTALS + int(tables[0, T_PLAYERS])].astype(float)
        others = np.delete(totals, seat, axis=1).max(axis=1)
        return totals[:, seat] - others
