"""``PackedRows``: decisions' observations stored as ``PlaneNet`` reads them, for the batched
self-play trainer (``training.selfplay``).

Each row holds the observation's non-plane values and its active cells, packed once by the
compiled ``batch.cells.pack_rows`` straight from the vector env's observations (no cell-major
copy of the 19 planes, no packing again per forward or per minibatch: see
``agents.cell_pack``). The dense cells are kept only for crowded rows (computed densely by
``PlaneNet``). For a network with a ``CardHead``, each row also keeps the frontier flags that
head reads (``card_head.frontier_flags``, and with ``card_gains`` the per-card path gains of
``batch.card_gains``), computed once when the row is written, not again in every forward and
every epoch's minibatch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from arboretum_env.actions import FRAME_CELLS
from arboretum_env.agents.card_head import FRONTIER_PLANES, FRONTIER_SEATS, card_extra_width, card_extras
from arboretum_env.agents.cell_pack import MAX_ACTIVE, NEIGHBOUR_PLANES, CellPack
from arboretum_env.agents.selfplay_net import PlaneNet, plane_block
from arboretum_env.batch.card_gains import card_gains
from arboretum_env.batch.cells import pack_rows
from arboretum_env.engine.cards import NUM_CARDS


class PackedRows:
    """``size`` rows of decisions for ``PlaneNet``s; ``card_frontier``: keep every row's frontier
    flags (for a network with a ``CardHead``), and with ``card_gains`` its per-card gains too
    (for a ``CardHead`` that reads them)."""

    def __init__(self, size: int, card_frontier: bool = False, max_active: int = MAX_ACTIVE,
                 card_gains: bool = False):
        assert card_frontier or not card_gains
        self.planes_at, self.n_planes = plane_block()
        self.card_frontier, self.card_gains, self.max_active = card_frontier, card_gains, max_active
        self.other = np.zeros((size, self.planes_at), np.float32)
        self.inputs = np.zeros((size, max_active, self.n_planes + 4 * NEIGHBOUR_PLANES), np.float32)
        self.where = np.zeros((size, max_active), np.int64)
        self.active = np.zeros((size, FRAME_CELLS), np.bool_)
        self.count = np.zeros(size, np.int64)
        self.background = np.zeros(size, np.float32)
        self.cells = np.zeros((size, FRAME_CELLS, self.n_planes), np.float32)  # cell-major, crowded rows
        self.frontier = np.zeros((size if card_frontier else 0, NUM_CARDS, card_extra_width(card_gains)), np.float32)

    def write(self, obs: np.ndarray, rows: np.ndarray, first: int) -> None:
        """Store observations ``obs[rows]`` (``[., OBS_SIZE]``) in rows ``first, first + 1, ...``."""
        last = first + len(rows)
        pack_rows(obs, rows, self.max_active, first,
                  self.inputs, self.where, self.active, self.count, self.background)
        self.other[first:last] = obs[rows, :self.planes_at]
        if self.card_frontier:
            planes = torch.from_numpy(obs[rows, self.planes_at:self.planes_at + FRONTIER_PLANES * FRAME_CELLS])
            self.frontier[first:last, :, :FRONTIER_SEATS] = card_extras(planes, 0, False).numpy()  # planes only
            if self.card_gains:
                card_gains(obs, rows, first, self.frontier[:, :, FRONTIER_SEATS:])
        dense = first + np.flatnonzero(self.count[first:last] > self.max_active)  # crowded rows
        if len(dense):
            planes = obs[rows[dense - first], self.planes_at:].reshape(len(dense), self.n_planes, FRAME_CELLS)
            self.cells[dense] = planes.transpose(0, 2, 1)

    def pack(self, first: int, last: int) -> CellPack:
        """Rows ``first .. last - 1`` as ``PlaneNet.forward_parts`` takes them (their spare
        slots cut to the most active cells of any uncrowded row among them)."""
        count = self.count[first:last]
        crowded = count > self.max_active
        k = max(1, int(count[~crowded].max(initial=0)))
        return CellPack(torch.from_numpy(self.inputs[first:last, :k]),
                        torch.from_numpy(self.where[first:last, :k]), torch.from_numpy(self.active[first:last]),
                        torch.from_numpy(crowded), torch.from_numpy(self.cells[first:last][crowded]),
                        torch.from_numpy(self.background[first:last]))

    def forward(self, net: PlaneNet, first: int, last: int, with_summary: bool = False) -> tuple[torch.Tensor, ...]:
        """``net``'s ``(logits, value)`` of rows ``first .. last - 1`` (``with_summary``: and ``h``)."""
        # a head without gains reads the flags only (the gains come after them)
        width = card_extra_width(net.card_gains)
        frontier = torch.from_numpy(self.frontier[first:last, :, :width]) if self.card_frontier else None
        return net.forward_parts(torch.from_numpy(self.other[first:last]), None, self.pack(first, last),
                                 frontier=frontier, with_summary=with_summary)

    def minibatches(self, size: int) -> Minibatches:
        """Rows ``0 .. size - 1`` (a rollout) ready for many minibatches: packed once, and their
        non-plane values cut to the columns that are not zero in some row (unless
        ``card_frontier``: a ``CardHead`` reads them by place)."""
        other = torch.from_numpy(self.other[:size])
        if self.card_frontier:
            return Minibatches(other, torch.from_numpy(self.frontier[:size]), self.pack(0, size), None)
        columns = torch.from_numpy(np.flatnonzero(self.other[:size].any(axis=0)))
        return Minibatches(other.index_select(1, columns), None, self.pack(0, size), columns)


class Minibatches(NamedTuple):
    """A rollout's rows as ``PackedRows.minibatches`` prepares them."""

    other: torch.Tensor
    frontier: torch.Tensor | None
    pack: CellPack
    columns: torch.Tensor | None

    def forward(self, net: PlaneNet, rows: torch.Tensor, with_summary: bool = False) -> tuple[torch.Tensor, ...]:
        """``net``'s ``(logits, value)`` of ``rows`` (a minibatch; ``with_summary``: and ``h``)."""
        frontier = None if self.frontier is None else self.frontier.index_select(0, rows)
        return net.forward_parts(self.other.index_select(0, rows), None, self.pack.rows(rows), self.columns,
                                 frontier=frontier, with_summary=with_summary)
