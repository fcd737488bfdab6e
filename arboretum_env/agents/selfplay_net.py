"""``PlaneNet``: the self-play trainer's default network, sized for CPUs (torch only, no SB3).

The observation (``observation.SECTIONS``) holds 19 planes of 18 x 18 in the action frame (the
rank and species planes of the four seats' arboretums, the observer's ten species planes and
the gain plane) and 1,679 other values. Each cell reads the 19 plane values on it and the
observer's rank and species on its four neighbours (27 inputs), through one linear layer shared
by all cells (a 1 x 1 convolution, written as a matrix product: on CPUs torch's convolutions
cost several times more per multiply-add); each play-cell logit (ids 85..408 are the frame's
cells) comes from that cell's features plus a per-channel bias from the global summary, so a
placement is judged by what lies on and around its cell, the same way everywhere. The global
summary (the cell features pooled by mean and max, and one linear layer over the other values)
gives the other 165 logits and the value. With ``card_hidden > 0`` a ``CardHead``
(``card_head.py``) adds per-card logits for the card decisions (play, discard, take a pile's
top card), one small network shared by all cards; ``card_hidden = 0`` (the default, and every
policy file written before it existed) leaves it out. ``depth > 0`` adds that many residual
blocks over the global summary and a hidden layer before the cell logits and the card head's
logits; ``depth = 0`` (the default) is the network as it was before.

Most cells are empty, and every cell whose inputs are all zero gives the same features; so the
layers shared by the cells run on the active cells only (``cell_pack``: the same function and
parameters), except when traced for export and for batches under ``SPARSE_MIN_ROWS``.

``forward(obs [B, OBS_SIZE]) -> (logits [B, 489], value [B])``; the logits are not masked. With
``card_gains`` the head also reads each card's path gains (``batch.card_gains``), computed from
the observation; an exported network takes them after it (``[B, OBS_SIZE + 160]``, as
``batch.card_gains.with_card_gains`` writes them), since a compiled search cannot be traced.
Parameters and multiply-adds per decision: ``PlaneNet.size_report()`` (docs/training.md lists
the default's).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..actions import DISCARD, FRAME_CELLS, NUM_ACTIONS, PLAY_CELL
from ..batch.card_gains import GAIN_INPUTS, GAIN_SEATS
from ..engine import NUM_CARDS
from ..observation import OBS_SIZE, SECTIONS
from .card_head import CardHead, card_extras, frontier_flags
from .cell_pack import GAIN_PLANE, NEIGHBOUR_PLANES, CellPack, cell_inputs, pack_cells

N_OTHER_LOGITS = NUM_ACTIONS - FRAME_CELLS
DEEP_CELL = 4
"""With ``depth``, the hidden layer before each cell's logit has ``DEEP_CELL * channels`` units."""
SPARSE_MIN_ROWS = 32
"""Smaller batches go through the dense layout: measured on 2 threads, packing the active cells
saves time from about 32 rows up (128 rows: 18 against 23 us per row; 2 rows: 264 against 116)."""


def plane_block() -> tuple[int, int]:
    """Where the planes start in the observation and how many there are: the sections from
    ``arboretum_planes`` to the end are whole 18 x 18 planes, and nothing else is."""
    offset, start = 0, None
    for name, width, _ in SECTIONS:
        if name == "arboretum_planes":
            start = offset
        if start is not None:
            assert "plane" in name and width % FRAME_CELLS == 0, name
        offset += width
    assert offset == OBS_SIZE and start is not None
    return start, (OBS_SIZE - start) // FRAME_CELLS


class PlaneNet(nn.Module):
    """See the module doc. ``channels``: features per cell; ``hidden``: width of the global
    summary. Cells are kept cell-major (``[B, 324, features]``) so that the layers shared by all
    cells are plain matrix products over ``B * 324`` rows."""

    def __init__(self, channels: int = 8, hidden: int = 128, card_hidden: int = 0, card_gains: bool = False,
                 depth: int = 0):
        super().__init__()
        self.planes_at, n_planes = plane_block()
        self.n_planes, self.channels, self.hidden = n_planes, channels, hidden
        self.cell_in = nn.Linear(n_planes, channels)
        self.near_in = nn.Linear(4 * NEIGHBOUR_PLANES, channels, bias=False)
        self.other = nn.Linear(self.planes_at, hidden)
        self.join = nn.Linear(2 * channels + hidden, hidden)
        self.condition = nn.Linear(hidden, channels)
        # ``depth``: a hidden layer before the cell (and card) logits, and residual blocks over
        # the summary (0: the network of every policy file written before it existed; created
        # in this order so that a seed still gives it the same weights)
        self.depth = depth
        last = nn.Linear(DEEP_CELL * channels if depth else channels, 1)
        self.cell_out = (nn.Sequential(nn.Linear(channels, DEEP_CELL * channels), nn.ReLU(), last)
                         if depth else last)
        self.logits = nn.Linear(hidden, N_OTHER_LOGITS)
        self.value = nn.Linear(hidden, 1)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
                                    for _ in range(depth))
        self.card_hidden, self.card_gains = card_hidden, bool(card_gains)
        if card_gains and not card_hidden:
            raise ValueError("card_gains needs the card head (card_hidden > 0)")
        self.extra_inputs = GAIN_INPUTS if self.card_gains else 0
        """Values after the observation in an exported network's input (``batch.card_gains.with_card_gains``)."""
        self.sparse = True  # False: every cell, as when traced (the reference the tests compare)
        self.cards = CardHead(hidden, card_hidden, self.card_gains, deep=depth > 0) if card_hidden else None
        for layer in (self.logits, last):
            nn.init.orthogonal_(layer.weight, gain=0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, obs: torch.Tensor, with_summary: bool = False) -> tuple[torch.Tensor, ...]:
        """``(logits [B, 489], value [B])`` of observations ``[B, OBS_SIZE]`` (with ``card_gains``
        also ``[B, OBS_SIZE + 160]``: the observations followed by their card gains);
        ``with_summary``: also the global summary ``h`` ``[B, hidden]`` (what a trainer's critic
        reads, ``training.hand_critic``)."""
        extras = None
        if self.card_gains:
            if obs.shape[1] == OBS_SIZE + GAIN_INPUTS:  # the gains given (an exported network's input)
                gains = obs[:, OBS_SIZE:].reshape(obs.shape[0], NUM_CARDS, GAIN_SEATS)
                obs = obs[:, :OBS_SIZE]
                extras = torch.cat([card_extras(obs, self.planes_at, False), gains], dim=2)
            else:
                extras = self.card_extras(obs)
        return self.forward_parts(*self.split(obs), frontier=extras, with_summary=with_summary)

    def card_extras(self, obs: torch.Tensor) -> torch.Tensor:
        """The card head's per-card extras of observations (``card_head.card_extras``)."""
        return card_extras(obs, self.planes_at, self.card_gains)

    def split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The observation's non-plane values ``[B, planes_at]`` and its planes cell-major
        ``[B, 324, n_planes]`` (a trainer may store them so, and its minibatches need no
        further copy)."""
        batch = obs.shape[0]
        cells = obs[:, self.planes_at:].view(batch, self.n_planes, FRAME_CELLS).transpose(1, 2)
        return obs[:, :self.planes_at].contiguous(), cells.contiguous()

    def forward_parts(self, other: torch.Tensor, cells: torch.Tensor | None,
                      packed: CellPack | None = None, columns: torch.Tensor | None = None,
                      frontier: torch.Tensor | None = None, with_summary: bool = False) -> tuple[torch.Tensor, ...]:
        """``forward`` on the split observation. ``packed``: ``pack_cells(cells)``, when the
        caller has it (a trainer packs its rollout once for all its minibatches); ``cells`` may
        then be None unless the network has a ``CardHead``. ``columns``: ``other`` holds only
        these of the non-plane values, the others being zero in every row (in a 2-player game
        about 40% of them always are: the third and fourth seats' sections); not with a
        ``CardHead``, which reads them by place. ``frontier``: ``card_head.frontier_flags(cells)``,
        when the caller has it (then ``cells`` may be None with a ``CardHead`` too).
        ``with_summary``: also return the global summary ``h``, as ``forward``."""
        batch = other.shape[0]
        # the dense layout for tracing (TorchScript, ONNX); else the active cells only (cell_pack)
        # (and for small batches, where packing costs more than it saves: SB3 steps one at a time)
        sparse = self.sparse and (packed is not None or batch >= SPARSE_MIN_ROWS) and not (
            torch.jit.is_tracing() or torch.jit.is_scripting() or torch.onnx.is_in_onnx_export())
        if sparse:
            pack = pack_cells(cells) if packed is None else packed
            cell = self.cell_features(pack.inputs)  # [B, K, C]
            # [B, C]: what a blank cell gives (all inputs zero but the gain, the row's background)
            gain_weight = self.cell_in.weight[:, GAIN_PLANE]
            blank = torch.relu(self.cell_in.bias + pack.background[:, None] * gain_weight)
            k = cell.shape[1]
            total = cell.sum(dim=1) + (FRAME_CELLS - k) * blank  # spare slots give blank too
            top = torch.maximum(cell.max(dim=1).values, blank) if k < FRAME_CELLS else cell.max(dim=1).values
            crowded = pack.crowded.nonzero().squeeze(1) if bool(pack.crowded.any()) else None
            if crowded is not None:  # these rows densely
                full = self.cell_features(cell_inputs(pack.crowded_cells))
                total = total.index_copy(0, crowded, full.sum(dim=1))
                top = top.index_copy(0, crowded, full.max(dim=1).values)
        else:
            cell = self.cell_features(cell_inputs(cells))  # [B, 324, C]
            total, top = cell.sum(dim=1), cell.max(dim=1).values
        # max(dim).values, not amax: the same maximum, about 3x cheaper forward and backward over
        # the strided cell axis on CPUs (its gradient goes to one of tied cells)
        pooled = torch.cat([total / FRAME_CELLS, top], dim=1)  # mean and max over the 324 cells
        if columns is None:
            summary = self.other(other)
        else:
            assert self.cards is None, "a CardHead reads every non-plane value"
            summary = F.linear(other, self.other.weight.index_select(1, columns), self.other.bias)
        h = torch.relu(self.join(torch.cat([pooled, torch.relu(summary)], dim=1)))
        if self.depth:
            for block in self.blocks:
                h = h + block(h)
            h = torch.relu(h)
        condition = self.condition(h)[:, None, :]
        cells_out = self.cell_out(torch.relu(cell + condition)).squeeze(2)  # [B, K] or [B, 324]
        if sparse:  # blank cells all get the blank cell's logit, active ones their own
            blank_out = self.cell_out(torch.relu(blank[:, None, :] + condition)).view(batch, 1)
            placed = torch.zeros(batch, FRAME_CELLS + 1, dtype=cells_out.dtype, device=cells_out.device)
            placed = placed.scatter(1, pack.where, cells_out)[:, :FRAME_CELLS]  # spare slots: dropped
            cells_out = torch.where(pack.active, placed, blank_out)
            if crowded is not None:
                full_out = self.cell_out(torch.relu(full + condition[crowded])).squeeze(2)
                cells_out = cells_out.index_copy(0, crowded, full_out)
        rest = self.logits(h)
        logits = torch.cat([rest[:, :PLAY_CELL], cells_out, rest[:, PLAY_CELL:]], dim=1)
        if self.cards is not None:
            if frontier is None:
                assert cells is not None, "a CardHead reads the frontier off the cells"
                if self.card_gains:  # the gains read the whole observation
                    obs = torch.cat([other, cells.transpose(1, 2).reshape(batch, -1)], dim=1)
                    frontier = self.card_extras(obs)
                else:
                    frontier = frontier_flags(cells)
            logits = self.cards.add_to(logits, other, frontier, h)
        value = self.value(h).squeeze(1)
        return (logits, value, h) if with_summary else (logits, value)

    def cell_features(self, inputs: torch.Tensor) -> torch.Tensor:
        """``[..., C]`` features of cells' 27 inputs ``[..., 27]``: one linear layer shared by all
        cells (one matrix product: two thin ones and their sum cost about twice as much)."""
        weight = torch.cat([self.cell_in.weight, self.near_in.weight], dim=1)
        return torch.relu(F.linear(inputs, weight, self.cell_in.bias))

    def size_report(self) -> dict:
        """Parameters, and multiply-adds per decision (one observation)."""
        params = sum(p.numel() for p in self.parameters())
        c, h = self.channels, self.hidden
        cell_out = DEEP_CELL * c * (c + 1) if self.depth else c
        macs = (FRAME_CELLS * (c * (self.n_planes + 4 * NEIGHBOUR_PLANES) + cell_out) + self.planes_at * h
                + (2 * c + h) * h + h * c + h * N_OTHER_LOGITS + h + self.depth * 2 * h * h)
        if self.cards is not None:
            macs += self.cards.multiply_adds(h)
        return {"parameters": int(params), "multiply_adds": int(macs)}


assert DISCARD == PLAY_CELL + FRAME_CELLS
