"""What a policy file or checkpoint must match: env name, observation and action layouts."""

from __future__ import annotations

from . import __version__
from .actions import ACTION_LAYOUT_VERSION, NUM_ACTIONS
from .errors import UserError

ENV_NAME = "arboretum_v0"


class VersionMismatchError(UserError):
    """A policy file or checkpoint made for another env or layout version."""


def current_versions() -> dict:
    from .observation import OBS_LAYOUT_VERSION, OBS_SIZE

    return {
        "env": ENV_NAME,
        "observation_layout": OBS_LAYOUT_VERSION,
        "observation_size": OBS_SIZE,
        "action_layout": ACTION_LAYOUT_VERSION,
        "num_actions": NUM_ACTIONS,
        "package": __version__,
    }


MUST_MATCH = ("env", "observation_layout", "observation_size", "action_layout", "num_actions")


def check_versions(found: dict, what: str) -> None:
    """Raise ``VersionMismatchError`` naming every version that differs (``what``: the file)."""
    if not isinstance(found, dict):
        raise VersionMismatchError(f"{what}: no version metadata")
    ours = current_versions()
    diffs = [f"{key} {found.get(key)!r} (this package: {ours[key]!r})"
             for key in MUST_MATCH if found.get(key) != ours[key]]
    if diffs:
        raise VersionMismatchError(f"{what} was made for another version: " + ", ".join(diffs))
