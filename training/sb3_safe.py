"""Loading an SB3 checkpoint (``step_*.zip``) without running anything from it.

An SB3 ``.zip`` holds a JSON ``data`` entry, some of whose values are cloudpickles
(``{":serialized:": ...}``: the policy class, the spaces, the schedules), and ``.pth`` members
(the policy and optimizer state, torch pickles). Unpickling either can run any code its author put
there. Here:

* every pickled ``data`` value is supplied by ``custom_objects`` built from the run's config (the
  ``.json`` beside the checkpoint, plain JSON checked by ``training.config``), so SB3 never
  unpickles one; a pickled entry we do not know is refused;
* every ``.pth`` member is first read with ``torch.load(weights_only=True)`` (tensors and plain
  containers only) here, whatever the installed SB3 does; any other member is refused;
* all of it before ``MaskablePPO.load`` sees the file; every failure is one ``CheckpointError``.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import torch
from gymnasium import spaces

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents.networks import input_size
from arboretum_env.errors import UserError
from training.network import learning_rate_schedule, policy_spec

PLAIN_MEMBERS = ("data", "_stable_baselines3_version", "system_info.txt")
TENSOR_MEMBERS = ("policy.pth", "policy.optimizer.pth", "pytorch_variables.pth")
MAX_DATA_BYTES = 16 * 2**20


class CheckpointError(UserError):
    """A missing, corrupt, unsafe or mismatched checkpoint."""


def custom_objects(config) -> dict:
    """Every value SB3 would otherwise unpickle from ``data``, from our own code and ``config``."""
    policy, policy_kwargs = policy_spec(config)
    schedule = learning_rate_schedule(config)
    return {
        "policy_class": policy,
        "policy_kwargs": dict(policy_kwargs),
        "observation_space": spaces.Box(0.0, 1.0, (input_size(config.hints),), np.float32),
        "action_space": spaces.Discrete(NUM_ACTIONS),
        "learning_rate": schedule,
        "lr_schedule": schedule,  # rebuilt from learning_rate by _setup_model
        "clip_range": config.clip_range,
        "clip_range_vf": None,
        "rollout_buffer_class": None,  # MaskablePPO picks its own
        "rollout_buffer_kwargs": {},
        # the rollout state of the saving process: rebuilt by learn() when None (a resumed run
        # starts its environments afresh and its episode statistics window empty)
        "_last_obs": None,
        "_last_original_obs": None,
        "_last_episode_starts": None,
        "ep_info_buffer": None,
        "ep_success_buffer": None,
    }


def check_archive(zip_path: Path, supplied: dict) -> None:
    """Refuse (``CheckpointError``) an archive with a pickled ``data`` value that ``supplied``
    does not replace, a member that is neither plain text nor tensors, or tensor members that
    need more than ``weights_only`` unpickling."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            names = archive.namelist()
            unknown = [n for n in names if n not in PLAIN_MEMBERS + TENSOR_MEMBERS]
            if unknown:
                raise CheckpointError(f"{zip_path}: unexpected member(s) {', '.join(unknown[:3])} "
                                      f"(an SB3 checkpoint holds only {', '.join(PLAIN_MEMBERS + TENSOR_MEMBERS)})")
            if "data" not in names:
                raise CheckpointError(f"{zip_path}: not an SB3 checkpoint (no 'data' entry)")
            info = archive.getinfo("data")
            if info.file_size > MAX_DATA_BYTES:
                raise CheckpointError(f"{zip_path}: its 'data' entry is too large ({info.file_size} bytes)")
            try:
                data = json.loads(archive.read("data").decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise CheckpointError(f"{zip_path}: its 'data' entry is not JSON") from None
            if not isinstance(data, dict):
                raise CheckpointError(f"{zip_path}: its 'data' entry is not a JSON object")
            pickled = [k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v]
            foreign = [k for k in pickled if k not in supplied]
            if foreign:
                raise CheckpointError(f"{zip_path}: pickled entr{'y' if len(foreign) == 1 else 'ies'} "
                                      f"{', '.join(map(repr, foreign))} that this project does not supply "
                                      f"(refused: unpickling can run code)")
            for name in names:
                if name in TENSOR_MEMBERS:
                    try:
                        torch.load(io.BytesIO(archive.read(name)), map_location="cpu", weights_only=True)
                    except Exception as exc:  # UnpicklingError for anything but tensors and containers
                        first = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                        raise CheckpointError(f"{zip_path}: {name} is not plain tensor data ({first})") from None
    except zipfile.BadZipFile:
        raise CheckpointError(f"{zip_path}: corrupt checkpoint (not a zip archive)") from None


def safe_load(zip_path: Path, config, env=None, extra: dict | None = None):
    """``MaskablePPO.load`` of ``zip_path`` with every pickled value from ``config`` (and
    ``extra``: plain values such as ``tensorboard_log``), after :func:`check_archive`."""
    from sb3_contrib import MaskablePPO

    supplied = {**custom_objects(config), **(extra or {})}
    check_archive(zip_path, supplied)
    try:
        return MaskablePPO.load(zip_path, env=env, device="cpu", custom_objects=supplied)
    except UserError:
        raise
    except Exception as exc:  # SB3 raises many kinds on damaged or mismatched archives
        raise CheckpointError(f"{zip_path}: cannot load checkpoint: {type(exc).__name__}: {exc}".splitlines()[0]) from None
