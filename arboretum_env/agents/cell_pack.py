"""``CellPack``: the cells of ``PlaneNet`` that need computing, packed (torch only).

``PlaneNet`` reads each of the 324 cells of the action frame through one layer shared by all
cells, from 27 inputs: the cell's 19 plane values and the observer's two own planes on its four
neighbours. Most cells are empty: in a 2-player game about 30 of the 324 have any input that is
not zero (a card on them in some arboretum, a card of the observer's beside them, or a gain),
and every other cell gives the same features, ``relu(bias)``. So ``PlaneNet`` computes the
*active* cells only and the blank value once per row: the same function, about twice as fast
forward and backward. In a first placement the gain plane holds one value on every cell (every
cell is legal): there a cell counts as blank when its gain equals that *background* and all its
other inputs are zero, and the blank value is that of such a cell. A row with more than
``MAX_ACTIVE`` active cells is *crowded* and computed densely.

The planes are never negative (``observation.SECTIONS``), yet "active" is tested on absolute
values, so any input is packed exactly.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from ..actions import FRAME, FRAME_CELLS
from ..observation import OFFSETS

NEIGHBOUR_PLANES = 2
"""The first two planes (the observer's rank and species planes, ``arboretum_planes`` seat 0)
are also read on each cell's four neighbours."""
GAIN_PLANE = (OFFSETS["gain_plane"] - OFFSETS["arboretum_planes"]) // FRAME_CELLS
"""The gain plane's place among the planes (and in each cell's inputs)."""
MAX_ACTIVE = 96
"""Rows with more active cells than this are computed densely (packing them would widen every
row of the batch to their count)."""


class CellPack(NamedTuple):
    """A batch of cells, packed. ``inputs [B, K, 27]``: each active cell's inputs (its planes,
    then the own planes of the cells above, below, left and right), K the most active cells of
    any uncrowded row (at least 1), spare slots all zero; ``where [B, K]``: their cell ids, 324
    for a spare slot; ``active [B, 324]``; ``crowded [B]``: rows computed densely instead
    (nothing of theirs is packed); ``crowded_cells [M, 324, n_planes]``: those rows' cells, in
    row order; ``background [B]``: the gain a blank cell of the row has (0 unless the gain plane holds one
    value other than 0 on every cell), which spare slots hold too."""

    inputs: torch.Tensor
    where: torch.Tensor
    active: torch.Tensor
    crowded: torch.Tensor
    crowded_cells: torch.Tensor
    background: torch.Tensor

    def rows(self, index: torch.Tensor) -> CellPack:
        """The pack of rows ``index`` (a trainer packs a rollout once, then takes minibatches)."""
        # index_select, not [index]: on CPUs it gathers rows 4-6x faster (measured on [1024, 968])
        def take(t: torch.Tensor) -> torch.Tensor:
            return t.index_select(0, index)

        crowded = take(self.crowded)
        at = take(torch.cumsum(self.crowded, 0) - 1)  # each row's place in crowded_cells
        return CellPack(take(self.inputs), take(self.where), take(self.active), crowded,
                        self.crowded_cells[at[crowded]], take(self.background))


def own_grid(cells: torch.Tensor) -> torch.Tensor:
    """The observer's own planes ``[B, 20, 20, 2]`` with a border of empty cells, from
    cell-major planes ``[B, 324, n_planes]``: what each cell reads on its neighbours."""
    own = cells[:, :, :NEIGHBOUR_PLANES].view(cells.shape[0], FRAME, FRAME, NEIGHBOUR_PLANES)
    return F.pad(own, (0, 0, 1, 1, 1, 1))


def cell_inputs(cells: torch.Tensor) -> torch.Tensor:
    """Every cell's 27 inputs, ``[B, 324, 27]``, from cell-major planes ``[B, 324, n_planes]``
    (the dense layout ``CellPack.inputs`` follows)."""
    batch, _, n_planes = cells.shape
    own = own_grid(cells)
    inputs = torch.cat([cells.view(batch, FRAME, FRAME, n_planes), own[:, :-2, 1:-1],
                        own[:, 2:, 1:-1], own[:, 1:-1, :-2], own[:, 1:-1, 2:]], dim=3)
    return inputs.view(batch, FRAME_CELLS, n_planes + 4 * NEIGHBOUR_PLANES)


@torch.no_grad()
def pack_cells(cells: torch.Tensor, max_active: int = MAX_ACTIVE) -> CellPack:
    """Pack cell-major planes ``[B, 324, n_planes]`` (see ``CellPack``)."""
    batch, _, n_planes = cells.shape
    # "some input is not zero" as a sum of absolute values: a matrix-vector product, several
    # times cheaper on CPUs than comparing and reducing over the planes
    gain = cells[:, :, GAIN_PLANE]
    uniform = (gain == gain[:, :1]).all(dim=1) & (gain[:, 0] != 0)
    background = torch.where(uniform, gain[:, 0], torch.zeros_like(gain[:, 0]))
    magnitude = cells.abs()
    if bool(uniform.any()):  # a blank cell's gain is the background
        magnitude[:, :, GAIN_PLANE] = (gain - background[:, None]).abs()
    filled = (magnitude.view(-1, n_planes) @ magnitude.new_ones(n_planes)).view(batch, FRAME, FRAME) > 0
    mine = magnitude[:, :, 0] + magnitude[:, :, 1]  # the NEIGHBOUR_PLANES
    near = F.pad((mine > 0).view(batch, FRAME, FRAME), (1, 1, 1, 1))
    active = (filled | near[:, :-2, 1:-1] | near[:, 2:, 1:-1] | near[:, 1:-1, :-2]
              | near[:, 1:-1, 2:]).view(batch, FRAME_CELLS)
    count = active.sum(dim=1)
    crowded = count > max_active
    if bool(crowded.any()):
        active = active & ~crowded[:, None]
        count = count * ~crowded
    k = max(1, int(count.max())) if batch else 1
    row, cell = active.nonzero(as_tuple=True)
    slot = torch.arange(row.shape[0], device=cells.device) - (torch.cumsum(count, 0) - count)[row]
    where = torch.full((batch, k), FRAME_CELLS, dtype=torch.long, device=cells.device)
    where[row, slot] = cell
    inputs = cells.new_zeros(batch, k, n_planes + 4 * NEIGHBOUR_PLANES)
    inputs[:, :, GAIN_PLANE] = background[:, None]  # spare slots: blank cells of their row
    inputs[row, slot, :n_planes] = cells[row, cell]
    side = FRAME + 2  # the neighbours' own planes, from the grid with a border of empty cells
    own = own_grid(cells).view(batch * side * side, NEIGHBOUR_PLANES)
    at = row * side * side + (cell // FRAME + 1) * side + cell % FRAME + 1  # the cell in that grid
    steps = torch.tensor([-side, side, -1, 1], device=cells.device)  # above, below, left, right
    inputs[row, slot, n_planes:] = own[at[:, None] + steps].view(-1, 4 * NEIGHBOUR_PLANES)
    return CellPack(inputs, where, active, crowded, cells[crowded], background)
