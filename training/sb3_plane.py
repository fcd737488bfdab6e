"""``PlanePolicy``: the self-play trainer's network (``agents.selfplay_net.PlaneNet``) as a
sb3-contrib ``MaskableActorCriticPolicy``, for users of the SB3 path (``network: plane_net``)
and for ``benchmarks/train_speed.py``, which compares both trainers on the same network.

The features extractor is the whole ``PlaneNet`` (its output: the 489 logits and the value);
the policy and value heads take their slice of it, so one forward gives both, as in the
self-play trainer. ``policy.features_extractor.net`` is a plain ``PlaneNet``: its state dict
is what a ``plane_net`` policy file holds.
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents.selfplay_net import PlaneNet


class PlaneExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space: spaces.Box, channels: int = 8, hidden: int = 128):
        super().__init__(observation_space, features_dim=NUM_ACTIONS + 1)
        self.net = PlaneNet(channels, hidden)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        logits, value = self.net(obs)
        return torch.cat([logits, value[:, None]], dim=1)


class Take(nn.Module):
    """Columns ``start:stop`` of its input."""

    def __init__(self, start: int, stop: int):
        super().__init__()
        self.start, self.stop = start, stop

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, self.start:self.stop]


class PlanePolicy(MaskableActorCriticPolicy):
    def __init__(self, *args, channels: int = 8, hidden: int = 128, **kwargs):
        kwargs["features_extractor_class"] = PlaneExtractor
        kwargs["features_extractor_kwargs"] = {"channels": channels, "hidden": hidden}
        kwargs["net_arch"] = {"pi": [], "vf": []}
        self._channels, self._hidden = channels, hidden
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = Take(0, NUM_ACTIONS)
        self.value_net = Take(NUM_ACTIONS, NUM_ACTIONS + 1)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(channels=self._channels, hidden=self._hidden)
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
            data.pop(key, None)
        return data
