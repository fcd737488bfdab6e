"""The policy networks, in plain torch: ``NETWORKS`` maps a name to an ``nn.Module`` class, and
``build_network(name, kwargs)`` builds one from the project's own code. A policy file names the
network and its keyword arguments (JSON) next to the weights, so that loading a file never runs
code from the file.

Every network takes ``obs: float32 [B, D]`` (``D = OBS_SIZE``, plus ``HINT_SIZE`` when it reads
the hints) and returns ``(logits [B, 489], value [B])``; the logits are not masked (the caller
applies the action mask). The SB3 policy of ``training/network.py`` wraps these modules.

``"cnn"``: convolutions over the arboretum planes with per-cell play logits, an MLP over the rest
of the observation. The play-cell ids (85..408) are the 18 x 18 cells of the frame the planes are
drawn in, so the cell logits come straight out of a 1x1 convolution: a placement is judged by
what lies around that cell, the same way everywhere on the board. The other 165 logits and the
value come from a global summary (pooled convolution features + the MLP over the non-spatial
sections). With ``hints=True`` the advice one-hot is added to the logits through a learned gate
(the advisor's choice as a prior the policy can overrule).

``"mlp"``: two tanh layers for the policy and two for the value (SB3's ``MlpPolicy`` layout).

Layer: agents (torch only; no SB3, nothing from ``training``).
"""

from __future__ import annotations

import inspect

import numpy as np
import torch
from torch import nn

from ..actions import DISCARD, FRAME, FRAME_CELLS, NUM_ACTIONS, PLAY_CELL
from ..errors import UserError
from ..observation import OBS_SIZE, SECTIONS
from .hints import ADVICE_OFFSET, HINT_SIZE
from .selfplay_net import PlaneNet

N_GLOBAL_LOGITS = NUM_ACTIONS - FRAME_CELLS  # ids before and after the cell block

MAX_WIDTH = 4096
"""Largest ``channels`` / ``hidden`` a network description may ask for (a file cannot make the
loader allocate without bound)."""


class NetworkSpecError(UserError):
    """An unknown network name or bad network arguments."""


def input_size(hints: bool) -> int:
    return OBS_SIZE + (HINT_SIZE if hints else 0)


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


class CnnFeatures(nn.Module):
    """obs -> ``[h (hidden) | cell scores (324) | advice (489, with hints)]``; the heads below
    split it again."""

    def __init__(self, channels: int = 32, hidden: int = 256, hints: bool = False):
        super().__init__()
        obs_dim = input_size(hints)
        self.advice = hints
        self.features_dim = hidden + FRAME_CELLS + (NUM_ACTIONS if hints else 0)
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


class CnnNet(nn.Module):
    """``"cnn"``: :class:`CnnFeatures` shared by the :class:`SplitHead` and the :class:`ValueHead`."""

    def __init__(self, channels: int = 32, hidden: int = 256, hints: bool = False):
        super().__init__()
        self.features = CnnFeatures(channels, hidden, hints)
        self.action_net = SplitHead(hidden, advice=hints)
        self.value_net = ValueHead(hidden)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        latent = self.features(obs)
        return self.action_net(latent), self.value_net(latent)[:, 0]


class MlpNet(nn.Module):
    """``"mlp"``: SB3's ``MlpPolicy`` with ``net_arch=[hidden, hidden]`` (tanh), in plain torch."""

    def __init__(self, hidden: int = 256, hints: bool = False):
        super().__init__()
        size = input_size(hints)

        def body() -> nn.Sequential:
            return nn.Sequential(nn.Linear(size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())

        self.policy_net, self.value_body = body(), body()
        self.action_net = nn.Linear(hidden, NUM_ACTIONS)
        self.value_net = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.action_net(self.policy_net(obs)), self.value_net(self.value_body(obs))[:, 0]


NETWORKS: dict[str, type[nn.Module]] = {"cnn": CnnNet, "mlp": MlpNet, "plane_net": PlaneNet}
"""Network name (as stored in policy files and training configs) -> class."""


def _check_kwargs(name: str, cls: type, kwargs) -> dict:
    if not isinstance(kwargs, dict):
        raise NetworkSpecError(f"network {name!r}: its arguments must be a JSON object, got {type(kwargs).__name__}")
    params = {k: p for k, p in inspect.signature(cls.__init__).parameters.items() if k != "self"}
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        raise NetworkSpecError(f"network {name!r}: unknown argument(s) {', '.join(map(repr, unknown))} "
                               f"(expected {', '.join(params)})")
    for key, value in kwargs.items():
        default = params[key].default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise NetworkSpecError(f"network {name!r}: {key} must be true or false, got {value!r}")
        elif isinstance(default, int):
            low = 0 if default == 0 else 1  # 0 = "leave this part out" where that is the default
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_WIDTH:
                raise NetworkSpecError(f"network {name!r}: {key} must be an integer {low}..{MAX_WIDTH}, got {value!r}")
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty and k not in kwargs]
    if missing:
        raise NetworkSpecError(f"network {name!r}: missing argument(s) {', '.join(missing)}")
    return dict(kwargs)


def build_network(name: str, kwargs: dict) -> nn.Module:
    """A new network ``NETWORKS[name](**kwargs)`` (fresh weights, training mode); a one-line
    ``NetworkSpecError`` for an unknown name or bad arguments."""
    cls = NETWORKS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise NetworkSpecError(f"unknown network {name!r}: expected one of {', '.join(NETWORKS)}")
    try:
        return cls(**_check_kwargs(name, cls, kwargs))
    except NetworkSpecError:
        raise
    except (TypeError, ValueError, RuntimeError) as exc:
        raise NetworkSpecError(f"network {name!r} with {kwargs!r}: {exc}".splitlines()[0]) from None


def network_reads_hints(kwargs: dict) -> bool:
    """Whether a network built with ``kwargs`` takes the hints after the observation."""
    return bool(kwargs.get("hints", False))


assert DISCARD == PLAY_CELL + FRAME_CELLS
