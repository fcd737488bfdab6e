"""Checkpoints and policy files.

A checkpoint is SB3's ``.zip`` plus a ``.json`` beside it (config, versions, timesteps). A policy
file is TorchScript: ``forward(obs float32 [B, OBS_SIZE], mask int8 [B, 489]) -> (action [B],
masked logits [B, 489])`` with the mask applied inside, and its metadata stored in the file
(``metadata.json``), so that ``PolicyAgent`` needs only numpy and torch.
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from pathlib import Path

import torch
from torch import nn

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.errors import UserError
from arboretum_env.fileio import OutputPathError, atomic_write_bytes, atomic_write_text, check_writable
from arboretum_env.observation import OBS_SIZE
from arboretum_env.versions import check_versions, current_versions


class CheckpointError(UserError):
    """A missing, corrupt or mismatched checkpoint."""


class _MaskedPolicy(nn.Module):
    def __init__(self, policy):
        super().__init__()
        self.features = policy.pi_features_extractor if not policy.share_features_extractor else policy.features_extractor
        self.actor = policy.mlp_extractor.policy_net
        self.action_net = policy.action_net

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        logits = self.action_net(self.actor(self.features(obs)))
        masked = logits.masked_fill(mask == 0, -1e9)
        return masked.argmax(dim=1), masked


def export_policy(model, path: str | Path, metadata: dict) -> Path:
    """Write ``model``'s policy (deterministic mode) as a TorchScript policy file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = _MaskedPolicy(model.policy).eval().cpu()
    obs = torch.zeros(2, model.observation_space.shape[0])
    mask = torch.ones(2, NUM_ACTIONS, dtype=torch.int8)
    meta = {**metadata, "versions": current_versions(), "format": "arboretum-policy/1"}
    buffer = io.BytesIO()  # torch writes to memory; a full disk is then an OSError, not an abort
    with torch.no_grad(), warnings.catch_warnings():  # TorchScript: deprecated, still supported
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.trace(module, (obs, mask))
        torch.jit.save(scripted, buffer, _extra_files={"metadata.json": json.dumps(meta)})
    atomic_write_bytes(path, buffer.getvalue())
    return path


def checkpoint_meta_path(zip_path: Path) -> Path:
    return zip_path.with_suffix(".json")


class _KeptBuffer(io.BytesIO):
    """SB3 closes the file it saves to; this one keeps its bytes readable."""

    def close(self) -> None:
        pass


def save_checkpoint(model, folder: Path, timesteps: int, config: dict, extra: dict | None = None) -> Path:
    """The ``.zip`` and then its ``.json``, each written whole under its real name or not at all:
    a checkpoint with its ``.json`` is complete."""
    folder.mkdir(parents=True, exist_ok=True)
    zip_path = folder / f"step_{timesteps:09d}.zip"
    buffer = _KeptBuffer()
    model.save(buffer)
    atomic_write_bytes(zip_path, buffer.getvalue())
    meta = {"timesteps": timesteps, "config": config, "versions": current_versions(), **(extra or {})}
    atomic_write_text(checkpoint_meta_path(zip_path), json.dumps(meta, indent=2))
    return zip_path


def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint ``.zip``, or the newest one inside a run folder (or its ``checkpoints/``)."""
    path = Path(path)
    if path.is_dir():
        folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
        zips = sorted(folder.glob("step_*.zip"))
        if not zips:
            raise CheckpointError(f"{path}: no checkpoint (step_*.zip) in this folder")
        return zips[-1]
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    return path


def read_checkpoint_meta(zip_path: Path) -> dict:
    meta_path = checkpoint_meta_path(zip_path)
    try:
        meta = json.loads(meta_path.read_text())
    except OSError:
        raise CheckpointError(f"{zip_path}: its metadata {meta_path.name} is missing") from None
    except (ValueError, RecursionError):
        raise CheckpointError(f"{meta_path}: corrupt metadata (not JSON)") from None
    if not isinstance(meta, dict) or type(meta.get("timesteps")) is not int or meta["timesteps"] < 0:
        raise CheckpointError(f"{meta_path}: corrupt metadata (no timesteps)")
    check_versions(meta.get("versions"), str(zip_path))
    return meta


def load_checkpoint(path: str | Path, env=None, **kwargs):
    """Load a MaskablePPO checkpoint after checking its metadata; one-line errors."""
    from sb3_contrib import MaskablePPO

    zip_path = find_checkpoint(path)
    meta = read_checkpoint_meta(zip_path)
    if not zipfile.is_zipfile(zip_path):
        raise CheckpointError(f"{zip_path}: corrupt checkpoint (not a zip archive)")
    try:
        model = MaskablePPO.load(zip_path, env=env, device="cpu", **kwargs)
    except Exception as exc:  # SB3 raises many kinds on damaged archives
        raise CheckpointError(f"{zip_path}: cannot load checkpoint: {type(exc).__name__}: {exc}".splitlines()[0]) from None
    return model, meta, zip_path


def export_command(checkpoint: str, out: str | None) -> str:
    """``arboretum export CHECKPOINT [-o FILE]``: returns the text to print."""
    zip_path = find_checkpoint(checkpoint)
    target = check_writable(out if out else zip_path.with_name(zip_path.stem + "_policy.pt"), "-o")
    model, meta, zip_path = load_checkpoint(zip_path)
    hints = model.observation_space.shape[0] != OBS_SIZE
    try:
        export_policy(model, target, {"timesteps": meta.get("timesteps"), "source": str(zip_path),
                                      "num_players": meta.get("config", {}).get("num_players"),
                                      "hints": hints,
                                      "advisor": meta.get("config", {}).get("teacher", "greedy")})
    except OSError as exc:  # a full disk, a folder gone since the check: nothing is left behind
        raise OutputPathError(f"-o {target}: cannot write: {exc.strerror or exc}") from None
    return f"wrote {target}"
