"""The self-play trainer's policy file (what ``PolicyAgent``, ``evaluate`` and ``play`` load)."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import torch
from torch import nn

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.fileio import atomic_write_bytes
from arboretum_env.observation import OBS_SIZE
from arboretum_env.versions import current_versions


class _Masked(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        logits, _ = self.net(obs)
        masked = logits.masked_fill(mask == 0, -1e9)
        return masked.argmax(dim=1), masked


def policy_metadata(trainer) -> dict:
    c = trainer.c
    return {"trainer": "selfplay", "network": "plane_net",
            "network_kwargs": {"channels": c.channels, "hidden": c.hidden},
            "hints": False, "num_players": c.num_players, "timesteps": trainer.steps,
            "trained_from": "self-play from scratch: the learner and frozen snapshots of it, "
                            "no heuristic, no imitation", "size": trainer.net.size_report()}


def export_selfplay_policy(trainer, path: Path) -> Path:
    module = _Masked(trainer.net).eval()
    obs = torch.zeros(2, OBS_SIZE)
    mask = torch.ones(2, NUM_ACTIONS, dtype=torch.int8)
    meta = {**policy_metadata(trainer), "versions": current_versions(), "format": "arboretum-policy/1"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.trace(module, (obs, mask))
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer, _extra_files={"metadata.json": json.dumps(meta)})
    atomic_write_bytes(path, buffer.getvalue())
    return path
