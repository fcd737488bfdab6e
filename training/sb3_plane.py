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
    """``net_kwargs``: ``PlaneNet``'s (``channels``, ``hidden``, ``card_hidden``, ``card_gains``,
    ``depth``; ``training.selfplay_config.network_kwargs`` of a config)."""

    def __init__(self, observation_space: spaces.Box, **net_kwargs):
        super().__init__(observation_space, features_dim=NUM_ACTIONS + 1)
        self.net = PlaneNet(**net_kwargs)

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
    """``net_kwargs`` (``network_kwargs``): the ``PlaneNet`` it trains; ``self.net_kwargs``
    keeps them for the policy file (``training.network.sb3_network_state``)."""

    def __init__(self, *args, net_kwargs: dict | None = None, channels: int = 8, hidden: int = 128, **kwargs):
        # ``channels``, ``hidden``: what checkpoints written before ``net_kwargs`` name
        self.net_kwargs = dict(net_kwargs or {"channels": channels, "hidden": hidden})
        kwargs["features_extractor_class"] = PlaneExtractor
        kwargs["features_extractor_kwargs"] = dict(self.net_kwargs)
        kwargs["net_arch"] = {"pi": [], "vf": []}
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = Take(0, NUM_ACTIONS)
        self.value_net = Take(NUM_ACTIONS, NUM_ACTIONS + 1)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(net_kwargs=dict(self.net_kwargs))
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
            data.pop(key, None)
        return data
