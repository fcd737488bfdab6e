"""``HandCritic``: an asymmetric critic for the self-play trainer (``hand_critic`` in the config).

The policy reads only its seat's observation. Its value estimate, used only in training (as
the baseline of the advantages and for bootstrapping GAE), may read more: here every other
seat's hand, which the trainer has in its array state (``batch.table``). This is the
asymmetric actor-critic of Pinto et al. (2018) and the "perfect-training, imperfect-execution"
critic of PerfectDou (Yang et al., 2022). A baseline that depends on the hidden hands leaves
the policy gradient unbiased (the action is drawn from ``pi(a | observation)``, independent of
the hands given the observation); it only removes the part of the return's variance that the
hands explain, which in Arboretum is large (the rights are decided by the hands at the end).

The critic adds to ``PlaneNet``'s own value: ``value = net.value(h) + out(relu(layer([h,
hands])))``, ``h`` being the network's global summary, the last layer starting at zero (so at
the start it is the plain network's value). It is not part of the policy file, the snapshots or
an export: a policy never reads another seat's hand.

Layer: training (torch and the env's array state).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from arboretum_env.batch.table import SEATS, T_HAND, T_PLAYERS
from arboretum_env.engine.cards import NUM_CARDS

HAND_INPUTS = (SEATS - 1) * NUM_CARDS
"""The critic's extra inputs: the hands of the next ``SEATS - 1`` seats in turn order, 80 flags each
(zeros for seats the table does not have)."""


def other_hands(tables: np.ndarray, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """``[len(rows), HAND_INPUTS]`` float32: for game ``rows[i]`` of ``tables``, the hands of the
    seats after ``seats[i]`` in turn order (``seats[i] + 1``, ``+ 2``, ... modulo the player count),
    as card flags; the seat's own hand is not included (its observation has it)."""
    rows = np.asarray(rows, np.int64)
    seats = np.asarray(seats, np.int64)
    out = np.zeros((len(rows), SEATS - 1, NUM_CARDS), np.float32)
    players = tables[rows, T_PLAYERS]
    cards = np.arange(NUM_CARDS)
    for k in range(1, SEATS):
        has = k < players
        if not has.any():
            continue
        other = (seats[has] + k) % players[has]
        out[has, k - 1] = tables[rows[has][:, None], T_HAND + other[:, None] * NUM_CARDS + cards]
    return out.reshape(len(rows), HAND_INPUTS)


class HandCritic(nn.Module):
    """The value correction from the summary ``h`` ``[B, hidden]`` and the other seats' hands
    ``[B, HAND_INPUTS]`` (see the module doc); ``units``: its hidden layer's width."""

    def __init__(self, hidden: int, units: int):
        super().__init__()
        self.layer = nn.Linear(hidden + HAND_INPUTS, units)
        self.out = nn.Linear(units, 1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, h: torch.Tensor, hands: torch.Tensor) -> torch.Tensor:
        """``[B]``: what to add to the network's value."""
        return self.out(torch.relu(self.layer(torch.cat([h, hands], dim=1)))).squeeze(1)

    def multiply_adds(self) -> int:
        """Per decision (training only: a policy never runs it)."""
        return self.layer.in_features * self.layer.out_features + self.out.in_features
