"""The policy network: convolutions over the arboretum planes with per-cell play logits, an MLP
over the rest of the observation.

The play-cell ids (85..408) are the 18 x 18 cells of the frame the planes are drawn in, so the
cell logits come straight out of a 1x1 convolution: a placement is judged by what lies around
that cell, the same way everywhere on the board. The other 165 logits and the value come from a
global summary (pooled convolution features + the MLP over the non-spatial sections).
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from arboretum_env.actions import FRAME, FRAME_CELLS, NUM_ACTIONS, PLAY_CELL, DISCARD
from arboretum_env.hints import ADVICE_OFFSET, HINT_SIZE
from arboretum_env.observation import OBS_SIZE, SECTIONS

N_GLOBAL_LOGITS = NUM_ACTIONS - FRAME_CELLS  # ids before and after the cell block


def plane_layout(obs_dim: int = OBS_SIZE) -> tuple[np.ndarray, np.ndarray, int]:
    """Indexes of the plane values (channel-major, then frame row, then column), indexes of
    the other values (hints, if any, come after the standard sections), and the number of
    planes, read off the encoder's ``SECTIONS``."""
    planes, offset = [], 0
    for name, width, _ in SECTIONS:
        if width % FRAME_CELLS == 0 and "plane" in name:
            planes.append(np.arange(offset, offset + width))
        offset += width
    assert offset == OBS_SIZE, (offset, OBS_SIZE)
    plane_idx = np.concatenate(planes)
    others = np.setdiff1d(np.arange(obs_dim), plane_idx)
    return plane_idx, others, len(plane_idx) // FRAME_CELLS


class ArboretumExtractor(BaseFeaturesExtractor):
    """obs -> ``[h (hidden) | cell scores (324)]``; the heads below split it again."""

    def __init__(self, observation_space: spaces.Box, channels: int = 32, hidden: int = 256):
        obs_dim = observation_space.shape[0]
        self.advice = obs_dim == OBS_SIZE + HINT_SIZE
        super().__init__(observation_space,
                         features_dim=hidden + FRAME_CELLS + (NUM_ACTIONS if self.advice else 0))
        plane_idx, other_idx, n_planes = plane_layout(obs_dim)
        self.register_buffer("plane_idx", torch.as_tensor(plane_idx, dtype=torch.long), persistent=False)
        self.register_buffer("other_idx", torch.as_tensor(other_idx, dtype=torch.long), persistent=False)
        self.n_planes, self.hidden = n_planes, hidden
        self.conv = nn.Sequential(
            nn.Conv2d(n_planes, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
        )
        self.vector = nn.Sequential(nn.Linear(len(other_idx), hidden), nn.ReLU())
        self.join = nn.Sequential(nn.Linear(2 * channels + hidden, hidden), nn.ReLU())
        self.condition = nn.Linear(hidden, channels)
        self.cell = nn.Conv2d(channels, 1, 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        batch = obs.shape[0]
        planes = obs.index_select(1, self.plane_idx).view(batch, self.n_planes, FRAME, FRAME)
        grid = self.conv(planes)
        pooled = torch.cat([grid.mean(dim=(2, 3)), grid.amax(dim=(2, 3))], dim=1)
        h = self.join(torch.cat([pooled, self.vector(obs.index_select(1, self.other_idx))], dim=1))
        cond = self.condition(h)[:, :, None, None]
        cells = self.cell(torch.relu(grid + cond)).view(batch, FRAME_CELLS)
        if self.advice:  # passed through to the head, which adds it to the logits
            return torch.cat([h, cells, obs[:, OBS_SIZE + ADVICE_OFFSET:]], dim=1)
        return torch.cat([h, cells], dim=1)


class SplitHead(nn.Module):
    """Logits in action-id order: draws and card choices, then the 324 cell scores, then discards;
    with the advice hint, plus ``gate * advice`` (the advisor's choice as a learned prior)."""

    def __init__(self, hidden: int, advice: bool = False, gate: float = 2.0):
        super().__init__()
        self.hidden = hidden
        self.linear = nn.Linear(hidden, N_GLOBAL_LOGITS)
        nn.init.orthogonal_(self.linear.weight, gain=0.01)
        nn.init.zeros_(self.linear.bias)
        self.advice = advice
        self.gate = nn.Parameter(torch.tensor(gate if advice else 0.0))

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h = latent[:, :self.hidden]
        cells = latent[:, self.hidden:self.hidden + FRAME_CELLS]
        logits = self.linear(h)
        logits = torch.cat([logits[:, :PLAY_CELL], cells, logits[:, PLAY_CELL:]], dim=1)
        if self.advice:
            logits = logits + self.gate * latent[:, self.hidden + FRAME_CELLS:]
        return logits


class ValueHead(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.linear = nn.Linear(hidden, 1)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.linear(latent[:, :self.hidden])


class ArboretumPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the extractor above and split heads (no extra MLP layers)."""

    def __init__(self, *args, channels: int = 32, hidden: int = 256, **kwargs):
        kwargs["features_extractor_class"] = ArboretumExtractor
        kwargs["features_extractor_kwargs"] = {"channels": channels, "hidden": hidden}
        kwargs["net_arch"] = {"pi": [], "vf": []}
        self._channels, self._hidden = channels, hidden
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = SplitHead(self._hidden, advice=self.features_extractor.advice)
        self.value_net = ValueHead(self._hidden)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(channels=self._channels, hidden=self._hidden)
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
            data.pop(key, None)
        return data


assert DISCARD == PLAY_CELL + FRAME_CELLS
