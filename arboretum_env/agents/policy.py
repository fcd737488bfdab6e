"""``PolicyAgent``: plays from an exported TorchScript policy file (numpy + torch only)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Optional

import numpy as np

from ..errors import UserError
from .hints import ADVISORS, HintWriter, with_hints
from ..observation import OBS_SIZE
from .base import Agent
from ..versions import check_versions


class PolicyFileError(UserError):
    """A missing, corrupt or mismatched policy file."""


def load_policy_file(path: str | Path):
    """The TorchScript module and its metadata; one-line errors for bad files."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such policy file")
    extra = {"metadata.json": ""}
    try:
        with warnings.catch_warnings():  # TorchScript is deprecated upstream, still supported
            warnings.simplefilter("ignore", DeprecationWarning)
            module = torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
    except Exception as exc:  # torch raises RuntimeError and others on damaged files
        raise PolicyFileError(f"{path}: not a policy file ({type(exc).__name__})") from None
    try:
        meta = json.loads(extra["metadata.json"])
    except json.JSONDecodeError:
        raise PolicyFileError(f"{path}: policy file without valid metadata") from None
    check_versions(meta.get("versions"), str(path))
    return module.eval(), meta


class PolicyAgent(Agent):
    """Greedy (argmax) or sampled play from a policy file; the mask is applied in the file."""

    def __init__(self, path: str | Path, seed: Optional[int] = None, deterministic: bool = True):
        import torch

        self._torch = torch
        self.module, self.metadata = load_policy_file(path)
        self.path = str(path)
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.hints = None
        if self.metadata.get("hints"):
            advisor = self.metadata.get("advisor", "greedy")  # files before the advisor was recorded
            if advisor not in ADVISORS:
                raise PolicyFileError(f"{path}: reads the advice of {advisor!r}, which this version does "
                                      f"not have (advisors: {', '.join(ADVISORS)})")
            self.hints = HintWriter(advisor)

    def seed(self, seed: Optional[int]) -> None:
        self.rng = np.random.default_rng(seed)

    def logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observation, dtype=np.float32)).reshape(1, -1)
            mask = torch.as_tensor(np.asarray(action_mask, dtype=np.int8)).reshape(1, -1)
            _, logits = self.module(obs, mask)
        return logits[0].numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view=None) -> int:
        if not np.any(action_mask):
            raise ValueError("PolicyAgent.act: the action mask has no legal action")
        if self.hints is not None and len(observation) == OBS_SIZE:
            if view is None:
                raise ValueError("PolicyAgent.act: this policy reads hints; pass the TableView")
            observation = with_hints(observation, view, self.hints, action_mask)
        logits = self.logits(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(logits))
        legal = np.flatnonzero(action_mask)
        z = logits[legal] - logits[legal].max()
        p = np.exp(z) / np.exp(z).sum()
        return int(self.rng.choice(legal, p=p))
