"""Potential-based reward shaping for the self-play trainer (``reward_shaping``).

Ng, Harada and Russell (1999): each of a seat's decisions also gets ``gamma * phi(its next
decision's position) - phi(this one)``, with ``phi = 0`` once the game is over. Over a seat's
whole game the shaping sums to ``-phi(first decision)``, which is 0 on an empty table, so every
game's return is unchanged; it only moves credit to the decisions that change ``phi``. Both
potentials are the game's own score function (``RULES.md``), not a heuristic agent's advice,
and both are in the units of the ``score_margin`` reward (points / 20):

* ``path_potential``: the observer's best-path points summed over species minus the highest
  such sum of another seat, read from the observation's ``arboretum_summary`` (rights not
  counted).
* ``score_potential``: the seat's score margin if the game ended now (own total minus the best
  other total, / 20): the rights from the hands as they are and the best paths, scored by the
  compiled path's own ``score_game`` on the trainer's array state. It reads every hand, which
  no seat sees; that is fine for a training signal (the policy and the value never read it,
  only their rewards do), like an asymmetric critic. Scored at a finished game it would be the
  final margin; the trainer takes 0 there, as the shaping needs.

Layer: training (numpy and the env's compiled path).
"""

from __future__ import annotations

import numpy as np

from arboretum_env import actions
from arboretum_env.batch import table as batch_table
from arboretum_env.engine.cards import NUM_CARDS, NUM_SPECIES
from arboretum_env.engine.jit_playout import compile_kernel
from arboretum_env.observation import OFFSETS, SEATS, SUMMARY_BLOCK

_SUMMARY = OFFSETS["arboretum_summary"]
VIEW_COLUMNS = _SUMMARY + SEATS * SUMMARY_BLOCK
"""``path_potential`` reads only the observation's first ``VIEW_COLUMNS`` values."""
_T_WINNERS, _T_TOTALS = batch_table.T_WINNERS, batch_table.T_TOTALS
_score_game, _margin_of, _MARGIN_SCALE = batch_table.score_game, batch_table.margin_of, batch_table.MARGIN_SCALE


def potential(kind: str, tables: np.ndarray, views: np.ndarray, rows: np.ndarray,
              seats: np.ndarray) -> np.ndarray:
    """``phi`` (``kind``: ``path_potential`` or ``score_potential``) of seat ``seats[i]`` in row
    ``rows[i]`` of ``tables``, whose observation's first ``VIEW_COLUMNS`` values are ``views[i]``."""
    if kind == "path_potential":
        return path_potential(views)
    return score_potential(tables, rows, seats)


def path_potential(obs: np.ndarray) -> np.ndarray:
    """``phi`` of observations ``[B, >= VIEW_COLUMNS]`` (see the module doc)."""
    summary = obs[:, _SUMMARY:_SUMMARY + SEATS * SUMMARY_BLOCK].reshape(len(obs), SEATS, SUMMARY_BLOCK)
    points = summary[:, :, NUM_CARDS:NUM_CARDS + NUM_SPECIES].sum(axis=2)
    return points[:, 0] - points[:, 1:].max(axis=1)


def _score_margins(tables, rows, seats, out):  # pragma: no cover - compiled
    """``out[i]``: seat ``seats[i]``'s margin in game ``rows[i]`` if it ended now, / 20; each row
    is left as it was (``score_game`` writes only the totals and the winners)."""
    saved = np.zeros(SEATS + 1, np.int64)
    for i in range(rows.shape[0]):
        t = tables[rows[i]]
        saved[:] = t[_T_WINNERS:_T_TOTALS + SEATS]
        _score_game(t)
        out[i] = _margin_of(t, seats[i]) / _MARGIN_SCALE
        t[_T_WINNERS:_T_TOTALS + SEATS] = saved


if batch_table.available:
    _score_margins = compile_kernel(_score_margins, depends=(batch_table.__file__, actions.__file__))


def score_potential(tables: np.ndarray, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """``phi`` of seat ``seats[i]`` in row ``rows[i]`` of ``tables`` (``batch.table`` rows;
    see the module doc), float32."""
    out = np.zeros(len(rows), np.float32)
    _score_margins(tables, np.asarray(rows, np.int64), np.asarray(seats, np.int64), out)
    return out
