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
gives the other 165 logits and the value.

``forward(obs [B, OBS_SIZE]) -> (logits [B, 489], value [B])``; the logits are not masked.
Parameters and multiply-adds per decision: ``PlaneNet.size_report()`` (docs/training.md lists
the default's).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..actions import DISCARD, FRAME, FRAME_CELLS, NUM_ACTIONS, PLAY_CELL
from ..observation import OBS_SIZE, SECTIONS

N_OTHER_LOGITS = NUM_ACTIONS - FRAME_CELLS
NEIGHBOUR_PLANES = 2
"""The first two planes (the observer's rank and species planes, ``arboretum_planes`` seat 0)
are also read on each cell's four neighbours."""


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
    summary. Cell features are kept channel-first (``[B, channels, 324]``) so that the shared
    per-cell layers are batched matrix products on views of the observation, without copies."""

    def __init__(self, channels: int = 8, hidden: int = 128):
        super().__init__()
        self.planes_at, n_planes = plane_block()
        self.n_planes, self.channels, self.hidden = n_planes, channels, hidden
        self.cell_in = nn.Parameter(torch.empty(channels, n_planes))
        self.near_in = nn.Parameter(torch.empty(channels, 4 * NEIGHBOUR_PLANES))
        self.cell_bias = nn.Parameter(torch.zeros(channels, 1))
        for w in (self.cell_in, self.near_in):
            nn.init.kaiming_uniform_(w, a=5 ** 0.5)
        self.other = nn.Linear(self.planes_at, hidden)
        self.join = nn.Linear(2 * channels + hidden, hidden)
        self.condition = nn.Linear(hidden, channels)
        self.cell_out = nn.Parameter(torch.zeros(1, channels))
        self.logits = nn.Linear(hidden, N_OTHER_LOGITS)
        self.value = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.logits.weight, gain=0.01)
        nn.init.zeros_(self.logits.bias)
        nn.init.normal_(self.cell_out, std=0.01)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits [B, 489], value [B])`` of observations ``[B, OBS_SIZE]``."""
        return self.forward_parts(*self.split(obs))

    def split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The observation's non-plane values and its planes, each contiguous (a trainer may
        store them apart so that minibatches need no further copy)."""
        return obs[:, :self.planes_at].contiguous(), obs[:, self.planes_at:].contiguous()

    def forward_parts(self, other: torch.Tensor, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = other.shape[0]
        planes = planes.view(batch, self.n_planes, FRAME_CELLS)
        own = F.pad(planes[:, :NEIGHBOUR_PLANES].view(batch, NEIGHBOUR_PLANES, FRAME, FRAME), (1, 1, 1, 1))
        near = torch.cat([own[:, :, :-2, 1:-1], own[:, :, 2:, 1:-1], own[:, :, 1:-1, :-2],
                          own[:, :, 1:-1, 2:]], dim=1).view(batch, 4 * NEIGHBOUR_PLANES, FRAME_CELLS)
        cell = torch.relu(self.cell_in @ planes + self.near_in @ near + self.cell_bias)  # [B, C, 324]
        pooled = torch.cat([cell.mean(dim=2), cell.amax(dim=2)], dim=1)
        other = torch.relu(self.other(other))
        h = torch.relu(self.join(torch.cat([pooled, other], dim=1)))
        cells = (self.cell_out @ torch.relu(cell + self.condition(h)[:, :, None])).view(batch, FRAME_CELLS)
        rest = self.logits(h)
        logits = torch.cat([rest[:, :PLAY_CELL], cells, rest[:, PLAY_CELL:]], dim=1)
        return logits, self.value(h).squeeze(1)

    def size_report(self) -> dict:
        """Parameters, and multiply-adds per decision (one observation)."""
        params = sum(p.numel() for p in self.parameters())
        c, h = self.channels, self.hidden
        macs = (FRAME_CELLS * c * (self.n_planes + 4 * NEIGHBOUR_PLANES + 1) + self.planes_at * h
                + (2 * c + h) * h + h * c + h * N_OTHER_LOGITS + h)
        return {"parameters": int(params), "multiply_adds": int(macs)}


assert DISCARD == PLAY_CELL + FRAME_CELLS
