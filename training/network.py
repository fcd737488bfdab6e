"""The SB3 side of the policy networks: ``ArboretumPolicy``, a ``MaskableActorCriticPolicy``
whose parts are the plain-torch modules of ``arboretum_env.agents.networks`` (``"cnn"``), so that
a checkpoint's weights map one to one onto the network a policy file names.

``sb3_network_state(policy)`` gives ``(name, kwargs, state_dict)`` of the plain network for any
policy this project trains (``"cnn"``: ``ArboretumPolicy``; ``"mlp"``: SB3's ``MlpPolicy`` with
``net_arch=[hidden, hidden]``; ``"plane_net"``: ``training.sb3_plane.PlanePolicy``), which
``training.export`` writes as a policy file.
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from arboretum_env.agents.networks import CnnFeatures, SplitHead, ValueHead, input_size, plane_layout  # noqa: F401

from .sb3_plane import PlanePolicy
from .selfplay_config import network_kwargs


class ArboretumExtractor(BaseFeaturesExtractor):
    """SB3's features extractor around :class:`CnnFeatures` (under ``.features``)."""

    def __init__(self, observation_space: spaces.Box, channels: int = 32, hidden: int = 256,
                 hints: bool = False):
        if observation_space.shape != (input_size(hints),):
            raise ValueError(f"ArboretumExtractor(hints={hints}) reads {input_size(hints)} values, "
                             f"the observation space has shape {observation_space.shape}")
        features = CnnFeatures(channels, hidden, hints)
        super().__init__(observation_space, features_dim=features.features_dim)
        self.features = features
        self.advice = hints
        self._register_load_state_dict_pre_hook(_old_keys)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.features(obs)


def _old_keys(state_dict, prefix, *args) -> None:
    """Checkpoints written before the modules moved under ``.features``."""
    for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(prefix + "features.")]:
        state_dict[prefix + "features." + key[len(prefix):]] = state_dict.pop(key)


class ArboretumPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the extractor above and split heads (no extra MLP layers)."""

    def __init__(self, *args, channels: int = 32, hidden: int = 256, hints: bool = False, **kwargs):
        kwargs["features_extractor_class"] = ArboretumExtractor
        kwargs["features_extractor_kwargs"] = {"channels": channels, "hidden": hidden, "hints": hints}
        kwargs["net_arch"] = {"pi": [], "vf": []}
        self._channels, self._hidden, self._hints = channels, hidden, hints
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = SplitHead(self._hidden, advice=self._hints)
        self.value_net = ValueHead(self._hidden)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(channels=self._channels, hidden=self._hidden, hints=self._hints)
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
            data.pop(key, None)
        return data


class LinearSchedule:
    """The learning rate from ``start`` (progress 1) down to ``end`` (progress 0)."""

    def __init__(self, start: float, end: float):
        self.start, self.end = float(start), float(end)

    def __call__(self, progress: float) -> float:
        return self.end + (self.start - self.end) * progress


def policy_spec(config) -> tuple[object, dict]:
    """``(policy class or name, policy_kwargs)`` of a training config (``network``, ``channels``,
    ``hidden``, ``hints``; ``plane_net``: also ``card_hidden``, ``card_gains``, ``depth``): used
    to build a model and, from our own code, to load a checkpoint."""
    if config.network == "cnn":
        return ArboretumPolicy, {"channels": config.channels, "hidden": config.hidden, "hints": bool(config.hints)}
    if config.network == "plane_net":
        return PlanePolicy, {"net_kwargs": network_kwargs(config)}
    return MaskableActorCriticPolicy, {"net_arch": [config.hidden, config.hidden]}


def learning_rate_schedule(config) -> LinearSchedule:
    return LinearSchedule(config.learning_rate, config.learning_rate * 0.1)


def sb3_network_state(policy, hints: bool) -> tuple[str, dict, dict]:
    """``(network name, kwargs, state_dict)`` of the plain network equal to ``policy``'s actor
    and critic (``arboretum_env.agents.networks``); ``hints``: whether it was trained with them
    (from the run's config, never guessed from the input size)."""
    state = {k: v.detach().cpu().clone() for k, v in policy.state_dict().items()}
    if policy.observation_space.shape != (input_size(hints),):
        raise ValueError(f"a policy trained with hints={hints} reads {input_size(hints)} values, "
                         f"this one {policy.observation_space.shape}")
    if isinstance(policy, ArboretumPolicy):
        if policy._hints != hints:
            raise ValueError(f"the policy was built with hints={policy._hints}, the config says {hints}")
        kwargs = {"channels": policy._channels, "hidden": policy._hidden, "hints": policy._hints}
        out = {k[len("features_extractor."):]: v for k, v in state.items() if k.startswith("features_extractor.")}
        out.update({k: v for k, v in state.items() if k.startswith(("action_net.", "value_net."))})
        return "cnn", kwargs, out
    if isinstance(policy, PlanePolicy):  # the whole network is the extractor's PlaneNet
        if hints:
            raise ValueError("a plane_net policy reads the observation alone (hints=False)")
        prefix = "features_extractor.net."
        return ("plane_net", dict(policy.net_kwargs),
                {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
    arch = policy.net_arch
    pi, vf = (arch.get("pi"), arch.get("vf")) if isinstance(arch, dict) else (arch, arch)
    if list(pi) != list(vf) or len(pi) != 2 or pi[0] != pi[1] or policy.activation_fn is not torch.nn.Tanh:
        raise ValueError(f"no plain network matches this policy (net_arch {arch!r})")
    out = {}
    for key, value in state.items():
        for old, new in (("mlp_extractor.policy_net.", "policy_net."), ("mlp_extractor.value_net.", "value_body."),
                         ("action_net.", "action_net."), ("value_net.", "value_net.")):
            if key.startswith(old):
                out[new + key[len(old):]] = value
    return "mlp", {"hidden": int(pi[0]), "hints": hints}, out
