"""Agents: the interface, baselines, a registry of named agents and a game loop.

``make_agent("random", seed)`` / ``make_agent("greedy")`` / ``make_agent("tempo")`` build an agent from a spec string. Other
agent kinds (checkpoints, exported policy files) plug in with :func:`register_agent`: a factory
``f(argument: str, seed) -> Agent`` under a prefix, used as ``"prefix:argument"`` (for example
``register_agent("policy", load_policy)`` makes ``make_agent("policy:models/x.safetensors")`` work), or
with :func:`register_resolver` for specs without a prefix (e.g. a path to a checkpoint folder).
``make_agent("shipped")`` is the shipped agent (``models/shipped/policy.safetensors`` of the
repository checkout).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from ..errors import UserError
from .base import Agent, RandomAgent, as_policy, legal_actions
from .greedy import GreedyAgent
from .tempo import TempoAgent
from .greedy_plus import GreedyPlusAgent

AgentFactory = Callable[[str, Optional[int]], Agent]

HEURISTIC_AGENTS: dict[str, type[Agent]] = {
    "greedy": GreedyAgent,
    "greedy_plus": GreedyPlusAgent,
    "tempo": TempoAgent,
}
"""The heuristic agents by name: the one list that the hint advisors, the training config and
the benchmarks read."""

BASELINES: dict[str, type[Agent]] = {"random": RandomAgent, **HEURISTIC_AGENTS}
"""The agents made from their name and a seed alone (the opponents a training config may name)."""


def _baseline(cls: type[Agent]) -> "AgentFactory":
    return lambda argument, seed: cls(seed)


AGENT_REGISTRY: dict[str, AgentFactory] = {name: _baseline(cls) for name, cls in BASELINES.items()}
"""Spec prefix -> factory ``(argument after 'prefix:', seed) -> Agent``."""

RESOLVERS: list[Callable[[str, Optional[int]], Optional[Agent]]] = []
"""Tried in order for a spec with no registered prefix; each returns an Agent or None."""


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Register ``factory`` for specs ``name`` and ``name:argument``."""
    if not name or ":" in name:
        raise ValueError(f"agent name must be non-empty without ':', got {name!r}")
    if name in AGENT_REGISTRY and not replace:
        raise ValueError(f"agent kind {name!r} is already registered")
    AGENT_REGISTRY[name] = factory


def register_resolver(resolver: Callable[[str, Optional[int]], Optional[Agent]]) -> None:
    """Add a resolver for prefix-less specs (e.g. a checkpoint path)."""
    RESOLVERS.append(resolver)


def make_agent(spec: str, seed: Optional[int] = None) -> Agent:
    """An agent from a spec: ``'random'``, ``'greedy'``, ``'<kind>:<argument>'`` of a registered
    kind, or anything a registered resolver understands."""
    if not isinstance(spec, str):
        raise TypeError(f"agent spec must be a string, got {type(spec).__name__}")
    name, _, argument = spec.partition(":")
    factory = AGENT_REGISTRY.get(name.strip().lower())
    if factory is not None:
        return factory(argument, seed)
    for resolver in RESOLVERS:
        agent = resolver(spec, seed)
        if agent is not None:
            return agent
    known = ", ".join(sorted(AGENT_REGISTRY))
    raise ValueError(f"unknown agent {spec!r}: expected one of {known} "
                     f"(or 'kind:argument' of a registered kind)")


class AgentSpecError(UserError, ValueError):
    """A bad agent spec (one line); a ``ValueError`` too, as ``make_agent``'s other refusals."""


def policy_file_agent(path, seed: Optional[int] = None) -> Agent:
    """The agent a data-only file describes: an afterstate value file
    (``agents.afterstate``) plays with ``AfterstateAgent``, any other policy file with
    ``PolicyAgent``."""
    from .afterstate import afterstate_agent, value_file_description

    if value_file_description(path) is not None:
        return afterstate_agent(path, seed)
    from .policy import PolicyAgent  # torch is imported only when a policy file is used

    return PolicyAgent(path, seed)


def _policy_file(argument: str, seed: Optional[int]) -> Agent:
    if not argument.strip():
        raise AgentSpecError("agent policy needs a file: policy:PATH")
    return policy_file_agent(argument, seed)


def _policy_path(spec: str, seed: Optional[int]) -> Optional[Agent]:
    return _policy_file(spec, seed) if spec.endswith((".safetensors", ".pt")) else None  # .pt: refused, with how to convert


MODELS = Path(__file__).resolve().parents[2] / "models"
SHIPPED_POLICY = MODELS / "shipped" / "policy.safetensors"
"""The shipped agent's policy file, relative to the repository (not part of a wheel)."""
SELFPLAY_POLICY = MODELS / "selfplay_2p" / "policy.safetensors"
"""The agent learned by self-play from scratch (``configs/selfplay_2p.yaml``)."""
AFTERSTATE_POLICY = MODELS / "afterstate_2p" / "policy.safetensors"
"""The afterstate value learned by self-play TD(lambda) from scratch (``configs/afterstate_2p.yaml``)."""
SHIPPED_FOLDERS = (SHIPPED_POLICY.parent, SELFPLAY_POLICY.parent, AFTERSTATE_POLICY.parent)
"""The folders of the shipped agents: training never writes into them."""


def _model_agent(name: str, path: Path) -> AgentFactory:
    def make(argument: str, seed: Optional[int]) -> Agent:
        if argument:
            raise ValueError(f"agent {name!r} takes no argument, got '{name}:{argument}'")
        if not path.is_file():
            raise ValueError(f"agent {name!r}: {path} is missing (it ships with the repository "
                             f"checkout, not with an installed wheel)")
        return _policy_file(str(path), seed)

    return make


register_agent("policy", _policy_file)
register_agent("shipped", _model_agent("shipped", SHIPPED_POLICY))
register_agent("selfplay", _model_agent("selfplay", SELFPLAY_POLICY))
register_agent("afterstate", _model_agent("afterstate", AFTERSTATE_POLICY))
register_resolver(_policy_path)

__all__ = ["Agent", "RandomAgent", "GreedyAgent", "GreedyPlusAgent", "TempoAgent", "make_agent", "register_agent",
           "register_resolver", "AGENT_REGISTRY", "SHIPPED_POLICY", "SELFPLAY_POLICY", "SHIPPED_FOLDERS", "BASELINES", "HEURISTIC_AGENTS", "legal_actions",
           "as_policy", "AgentSpecError", "policy_file_agent"]
