"""The self-play trainer's policy file: data only (``agents.policy_file``: safetensors weights and
a JSON description naming the network, ``plane_net``); what ``PolicyAgent``, ``evaluate``,
``play`` and ``export --format torchscript/onnx`` read. A run's checkpoints
(``checkpoints/step_N.pt``) become policy files the same way, so ``evaluate``, ``play`` and
``export`` also take a checkpoint or a run folder in the middle of a run."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Optional

import torch

from arboretum_env.agents.policy_file import save_policy_file

from .sb3_safe import CheckpointError
from .selfplay_config import config_getter, network_kwargs

TRAINED_FROM = ("self-play from scratch: every seat played by the learner or frozen snapshots of it; "
                "no heuristic, no hints, no imitation")


def trained_from(config) -> str:
    """What a policy learned from: ``TRAINED_FROM`` for a run from scratch, else the self-play
    policy it started from (``init_policy``) and the fixed ones it met (``league``)."""
    get = config_getter(config)
    init, league = get("init_policy", "") or "", get("league", []) or []
    if not init and not league:
        return TRAINED_FROM
    text = ("self-play, no heuristic, no hints, no imitation: every seat played by the learner, "
            "frozen snapshots of it")
    if league:
        text += " or the fixed self-play policies " + ", ".join(map(str, league))
    if init:
        text += f"; started from the self-play policy {init}"
    return text


def training_signal(config) -> dict:
    """What a policy's training read beyond its own observation, for its file's description:
    ``reward_mode``, ``reward_shaping`` and, when on, ``hand_critic`` (its value, in training
    only, read the other seats' hands; the policy never does)."""
    get = config_getter(config)
    out = {"reward_mode": get("reward_mode"), "reward_shaping": get("reward_shaping", "none") or "none"}
    if int(get("hand_critic", 0) or 0):
        out["hand_critic"] = int(get("hand_critic"))
    return out


def policy_metadata(trainer) -> dict:
    c = trainer.c
    return {"hints": False, "trainer": "selfplay", "num_players": c.num_players,
            "timesteps": trainer.steps, "trained_from": trained_from(c), **training_signal(c),
            "size": trainer.net.size_report()}


def export_selfplay_policy(trainer, path: Path) -> Path:
    return save_policy_file(path, "plane_net", network_kwargs(trainer.c), trainer.net.state_dict(),
                            policy_metadata(trainer))


# ----------------------------------------------------------------------------- checkpoints as policies
def checkpoint_files(checkpoints: Path) -> list[Path]:
    """A self-play run's ``checkpoints/step_N.pt`` files, newest first (``step_N`` exactly: not an
    export such as ``step_N_policy.pt`` that older versions wrote there)."""
    if not checkpoints.is_dir():
        return []
    found = [(int(p.stem[5:]), p) for p in checkpoints.glob("step_*.pt")
             if p.stem[5:].isascii() and p.stem[5:].isdigit()]
    return [p for _, p in sorted(found, reverse=True)]


def _checkpoint_meta(pt: Path) -> Optional[dict]:
    """The JSON beside a self-play checkpoint (None if it is missing, damaged or not a
    self-play checkpoint's)."""
    try:
        meta = json.loads(pt.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(meta, dict) and isinstance(meta.get("config"), dict) and "steps" in meta
    return meta if ok and meta["config"].get("trainer") == "selfplay" else None


def selfplay_checkpoint(source) -> Optional[Path]:
    """The self-play checkpoint ``source`` names: ``checkpoints/step_N.pt`` itself, or a run
    folder's newest whole checkpoint (its ``.json`` written last marks it whole); None when
    ``source`` is neither (an SB3 checkpoint, a policy file, a folder without self-play
    checkpoints)."""
    path = Path(source)
    if path.is_file() and path.suffix == ".pt":
        return path if _checkpoint_meta(path) is not None else None
    if path.is_dir():
        for pt in checkpoint_files(path / "checkpoints"):
            if _checkpoint_meta(pt) is not None:
                return pt
    return None


def export_selfplay_checkpoint(pt: Path, target: Path) -> Path:
    """Write the learner's network of self-play checkpoint ``pt`` as a policy file ``target``
    (tensors read with ``weights_only=True``: nothing in the file is run). A damaged checkpoint
    is one ``CheckpointError`` line."""
    meta = _checkpoint_meta(pt)
    try:
        tensors = torch.load(pt, map_location="cpu", weights_only=True)
        state, config = tensors["net"], meta["config"]
        kwargs = network_kwargs(config)
    except Exception as exc:  # damaged, half-written, or another trainer's file
        raise CheckpointError(f"{pt}: not a readable self-play checkpoint ({type(exc).__name__})") from None
    metadata = {"hints": False, "trainer": "selfplay", "num_players": config.get("num_players"),
                "timesteps": int(meta["steps"]), "trained_from": trained_from(config),
                **training_signal(config), "checkpoint": str(pt)}
    return save_policy_file(target, "plane_net", kwargs, state, metadata)


def selfplay_checkpoint_agent(pt: Path, seed: Optional[int] = None):
    """A ``PolicyAgent`` playing the learner of self-play checkpoint ``pt`` (through a policy
    file in a temporary folder, so it is read and checked exactly as a policy file is)."""
    from arboretum_env.agents.policy import PolicyAgent

    with tempfile.TemporaryDirectory() as tmp:
        agent = PolicyAgent(export_selfplay_checkpoint(pt, Path(tmp) / "policy.safetensors"), seed=seed)
    agent.path = str(pt)
    return agent
