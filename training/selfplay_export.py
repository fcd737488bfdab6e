"""The self-play trainer's policy file: data only (``agents.policy_file``: safetensors weights and
a JSON description naming the network, ``plane_net``); what ``PolicyAgent``, ``evaluate``,
``play`` and ``export --format torchscript/onnx`` read."""

from __future__ import annotations

from pathlib import Path

from arboretum_env.agents.policy_file import save_policy_file

TRAINED_FROM = ("self-play from scratch: every seat played by the learner or frozen snapshots of it; "
                "no heuristic, no hints, no imitation")


def policy_metadata(trainer) -> dict:
    c = trainer.c
    return {"hints": False, "trainer": "selfplay", "num_players": c.num_players,
            "timesteps": trainer.steps, "trained_from": TRAINED_FROM,
            "reward_mode": c.reward_mode, "size": trainer.net.size_report()}


def network_kwargs(config) -> dict:
    return {"channels": config.channels, "hidden": config.hidden}


def export_selfplay_policy(trainer, path: Path) -> Path:
    return save_policy_file(path, "plane_net", network_kwargs(trainer.c), trainer.net.state_dict(),
                            policy_metadata(trainer))
