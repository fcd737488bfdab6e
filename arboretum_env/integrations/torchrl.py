"""Arboretum in TorchRL (``pip install -e .[torchrl]``; tested with torchrl 0.14).

The lines a user writes::

    from arboretum_env.integrations.torchrl import make_env, turn_based_returns

    env = make_env(num_players=2, seed=0)       # a TorchRL EnvBase (PettingZooWrapper)
    rollout = env.rollout(500, policy, break_when_any_done=False)
    rollout = turn_based_returns(rollout, gamma=1.0)
    # ("agents", "return") holds each decision's return from its own seat's final reward

**The env.** ``make_env`` wraps ``arboretum_env.env(...)`` (PettingZoo's
``TerminateIllegalWrapper`` included: an illegal action ends the game, -1 for its agent, 0 for the
others) in TorchRL's own ``PettingZooWrapper(..., use_mask=True)``, its support for turn-based
AEC envs. Every seat sits in one group, ``GROUP = "agents"`` (``MarlGroupMapType.ALL_IN_ONE_GROUP``),
so one shared network reads all seats at once; along the group dimension seat ``i`` is
``player_i``. The keys of a step (batch shape ``[]``, group dimension ``n`` = players):

* ``OBSERVATION_KEY`` ``("agents", "observation", "observation")``: float32 ``[n, 7835]``, each
  seat's own seat-relative observation.
* ``ACTION_MASK_KEY`` ``("agents", "action_mask")``: bool ``[n, 489]``, the legal actions of
  the seat on turn; TorchRL leaves the rows of the seats *not* on turn all True (their action
  is ignored), so ``MaskedCategorical(logits, mask)`` never sees an all-False row there.
* ``ACTING_KEY`` ``("agents", "mask")``: bool ``[n]``, True for the one seat on turn: its entry
  of ``ACTION_KEY`` ``("agents", "action")`` (int64 ``[n]``) is the action played.
* ``("next", "agents", "reward")``: float32 ``[n, 1]``, 0 except on the step that ends the game,
  where every seat gets its final reward; ``("next", "done")`` is True there (all agents
  terminated; TorchRL, and collectors, reset then).

A turn is several consecutive decisions of the same seat, so one seat often acts many steps in a
row. **Seeds:** ``make_env(seed=s)`` makes the whole sequence of games reproducible: the games
draw their seeds from ``numpy.random.default_rng(s)`` (``SeededGames``), since TorchRL resets the
PettingZoo env without a seed after the first game; ``seed=None`` draws fresh entropy.

**Returns.** TorchRL's value estimators (GAE, TD(lambda)) assume one agent acting at every step;
``turn_based_returns`` computes returns for turn-based games, per seat, along that seat's own
decisions (see its docstring).
"""

from __future__ import annotations

import warnings
from typing import Optional

import torch
from tensordict import TensorDictBase
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType

from ..env import env as arboretum_env
from ..seeded_games import SeededGames

GROUP = "agents"
OBSERVATION_KEY = (GROUP, "observation", "observation")
ACTION_MASK_KEY = (GROUP, "action_mask")
ACTING_KEY = (GROUP, "mask")
ACTION_KEY = (GROUP, "action")
REWARD_KEY = (GROUP, "reward")
RETURN_KEY = (GROUP, "return")
RETURN_KNOWN_KEY = (GROUP, "return_known")


def make_env(num_players: int = 2, seed: Optional[int] = None, *, device="cpu",
             **env_kwargs) -> PettingZooWrapper:
    """Arboretum for ``num_players`` seats as a TorchRL env (``PettingZooWrapper``,
    ``use_mask=True``, all seats in the group ``GROUP``). ``env_kwargs`` go to
    ``arboretum_env.env`` (``reward_mode``, ``species``, ``starting_player``). Passes
    ``torchrl.envs.utils.check_env_specs``."""
    aec = SeededGames(arboretum_env(num_players=num_players, **env_kwargs), seed)
    with warnings.catch_warnings():  # "tested using version == 1.24.3": our range is tested here
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(aec, use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
                                 categorical_actions=True, seed=seed, device=device)


def turn_based_returns(rollout: TensorDictBase, gamma: float = 1.0,
                       bootstrap: Optional[torch.Tensor] = None) -> TensorDictBase:
    """Write each decision's return into ``rollout`` (in place; also returned).

    ``rollout``: steps of an env from ``make_env``, time as the last batch dimension (``[T]``
    from ``env.rollout`` or a single-env collector, ``[B, T]`` from ``env.rollout`` on a batched
    env), steps consecutive within each row (games follow one another, separated by
    ``("next", "done")``). Reads ``ACTING_KEY``, ``("next",) + REWARD_KEY`` and
    ``("next", "done")``.

    **Convention.** Each seat is treated as its own episode made of its own decisions: the
    reward a seat receives at any step (in this env only at the end of the game, also when the
    game ends on another seat's move) belongs to that seat's latest decision at or before that
    step, and the discount counts the seat's own decisions. For seat ``i`` with decisions
    ``d_1 < ... < d_m`` in one game::

        G(d_j) = sum(r_i[t] for d_j <= t < d_(j+1)) + gamma * G(d_(j+1))
        G(d_m) = sum(r_i[t] for t >= d_m up to the game's end)

    so with ``gamma=1`` every decision of a seat gets that seat's final reward (+1 winner, -1
    loser with 2 players).

    **A game cut by the end of the rollout** (no ``done`` after its last steps): without
    ``bootstrap`` its decisions get ``return`` NaN and ``return_known`` False (drop them, e.g.
    ``rollout[GROUP][rollout[ACTING_KEY] & rollout[RETURN_KNOWN_KEY].squeeze(-1)]``); with
    ``bootstrap``, a tensor ``[..., n]`` (or ``[..., n, 1]``) of value estimates of each seat at
    the cut (e.g. the critic on ``("next",) + OBSERVATION_KEY`` of the last step), each seat's
    last decision there gets ``rewards + gamma * bootstrap`` and all are known. The env never
    truncates; a truncated game would be treated as ended.

    Written keys: ``RETURN_KEY`` float32 ``[..., T, n, 1]`` (0 on rows where the seat did not
    act) and ``RETURN_KNOWN_KEY`` bool ``[..., T, n, 1]`` (True on the rows where the return
    is meaningful: the seat acted and its game's end, or a bootstrap, is in the rollout).
    """
    acting = rollout.get(ACTING_KEY).bool()
    reward = rollout.get(("next",) + REWARD_KEY)
    done = rollout.get(("next", "done"))
    lead, (steps, seats) = acting.shape[:-2], acting.shape[-2:]
    acting = acting.reshape(-1, steps, seats)
    reward = reward.reshape(-1, steps, seats).to(torch.float32)
    done = done.reshape(-1, steps).bool()
    rows = acting.shape[0]

    returns = torch.zeros(rows, steps, seats)
    known = torch.zeros(rows, steps, seats, dtype=torch.bool)
    if bootstrap is None:
        carry = torch.zeros(rows, seats)  # gamma * G(next own decision) + rewards since
        carry_known = torch.zeros(rows, seats, dtype=torch.bool)
    else:
        carry = gamma * bootstrap.reshape(rows, seats).to(torch.float32).detach().cpu()
        carry_known = torch.ones(rows, seats, dtype=torch.bool)
    for t in range(steps - 1, -1, -1):
        ended = done[:, t].unsqueeze(-1)  # a game ends with this step: a new tail starts
        carry = torch.where(ended, torch.zeros_like(carry), carry) + reward[:, t]
        carry_known = carry_known | ended
        act = acting[:, t]
        returns[:, t] = torch.where(act, carry, torch.zeros_like(carry))
        known[:, t] = act & carry_known
        carry = torch.where(act, gamma * carry, carry)
    returns = torch.where(acting & ~known, torch.full_like(returns, float("nan")), returns)
    shape = lead + (steps, seats, 1)
    rollout.set(RETURN_KEY, returns.reshape(shape).to(reward.device))
    rollout.set(RETURN_KNOWN_KEY, known.reshape(shape).to(reward.device))
    return rollout


__all__ = ["GROUP", "OBSERVATION_KEY", "ACTION_MASK_KEY", "ACTING_KEY", "ACTION_KEY",
           "REWARD_KEY", "RETURN_KEY", "RETURN_KNOWN_KEY", "SeededGames", "make_env",
           "turn_based_returns"]
