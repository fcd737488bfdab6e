"""``PolicyAgent``: plays from a data-only policy file (``policy.safetensors``, see
:mod:`arboretum_env.agents.policy_file`; numpy + torch + safetensors only).

The network gives unmasked logits; the choice is made among the legal actions only (argmax or a
softmax sample over ``flatnonzero(mask)``), so no weights, however damaged, can make it return an
action outside the mask. Whether the network reads the hints, and whose advice, is read from the
file's description, never guessed from the length of a vector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from ..actions import NUM_ACTIONS
from ..observation import OBS_SIZE
from ..table_view import TableView
from .base import Agent
from .hints import HintWriter, with_hints
from .policy_file import PolicyFileError, load_policy_file

__all__ = ["PolicyAgent", "PolicyFileError", "load_policy_file", "choose"]


def choose(logits: np.ndarray, action_mask: np.ndarray, rng: Optional[np.random.Generator] = None) -> int:
    """An action id among the legal ones (``action_mask != 0``): the legal argmax of ``logits``
    (``rng`` None) or a sample from their softmax. Non-finite logits count as the lowest; if no
    legal logit is finite, the first legal action (or a uniform sample)."""
    mask = np.asarray(action_mask).reshape(-1)
    z = np.asarray(logits, dtype=np.float64).reshape(-1)
    if mask.shape != z.shape:
        raise ValueError(f"choose: one mask entry per logit, got {mask.size} for {z.size} logits")
    legal = np.flatnonzero(mask)
    if len(legal) == 0:
        raise ValueError("PolicyAgent: the action mask has no legal action")
    z = z[legal]
    finite = np.isfinite(z)
    if not finite.any():
        return int(legal[0] if rng is None else rng.choice(legal))
    z = np.where(finite, z, -np.inf)
    if rng is None:
        return int(legal[int(np.argmax(z))])
    p = np.exp(z - z.max())
    return int(rng.choice(legal, p=p / p.sum()))


class PolicyAgent(Agent):
    """Greedy (argmax) or sampled play from a policy file; the mask is applied to the choice."""

    def __init__(self, path: str | Path, seed: Optional[int] = None, deterministic: bool = True):
        import torch

        self._torch = torch
        self.module, self.metadata = load_policy_file(path)
        self.path = str(path)
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        spec = self.metadata.get("hints")
        self.hints = HintWriter(spec["advisor"]) if spec is not None else None

    def seed(self, seed: Optional[int]) -> None:
        self.rng = np.random.default_rng(seed)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The network's unmasked logits for one input vector (observation, plus hints if it
        reads them)."""
        torch = self._torch
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observation, dtype=np.float32)).reshape(1, -1)
            logits, _ = self.module(obs)
        return logits[0].numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view=None) -> int:
        if np.size(observation) != OBS_SIZE:
            raise ValueError(f"PolicyAgent.act: expected the env's observation ({OBS_SIZE} values), "
                             f"got {np.size(observation)}")
        if np.shape(action_mask) != (NUM_ACTIONS,):
            raise ValueError(f"PolicyAgent.act: the action mask must have shape ({NUM_ACTIONS},) "
                             f"(one entry per action id), got {np.shape(action_mask)}")
        if not np.any(action_mask):
            raise ValueError("PolicyAgent.act: the action mask has no legal action")
        if self.hints is not None and not isinstance(view, TableView):
            raise (ValueError if view is None else TypeError)(
                f"PolicyAgent.act: this policy reads hints; pass the TableView: view must be the "
                f"acting seat's TableView, got {type(view).__name__}")
        if self.hints is not None:
            observation = with_hints(observation, view, self.hints, action_mask)
        logits = self.logits(observation)
        return choose(logits, action_mask, None if self.deterministic else self.rng)
