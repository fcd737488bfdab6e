"""Self-play policies as a run's starting point (``init_policy``) and as fixed opponents
(``league``): how a league of main policies and exploiters is built from plain self-play runs.

Only policy files written by the self-play trainer are taken (``trainer: selfplay``, no hints,
the run's player count), so that no heuristic enters training this way either: an exploiter
trained against a frozen main policy, or a main policy trained against its exploiters, is
still a product of self-play from scratch. Every problem is one line naming the config field.
"""

from __future__ import annotations

from arboretum_env.agents.policy_file import load_policy_file
from arboretum_env.agents.selfplay_net import PlaneNet

from .selfplay_config import ConfigKeyError, network_kwargs


def load_selfplay_policy(path: str, config, field: str) -> tuple[PlaneNet, dict]:
    """``(network in eval mode, description)`` of the self-play policy file ``path``; refused
    (``ConfigKeyError`` naming ``field``) unless the self-play trainer wrote it for
    ``config.num_players`` players."""
    net, description = load_policy_file(path)
    if description.get("trainer") != "selfplay" or description.get("network") != "plane_net":
        raise ConfigKeyError(f"{field}: {path} was not written by the self-play trainer "
                             f"(trainer {description.get('trainer')!r}); only self-play policies may train a self-play run")
    if description.get("hints") is not None:
        raise ConfigKeyError(f"{field}: {path} reads hints; a self-play run takes only policies that read none")
    if description.get("num_players") != config.num_players:
        raise ConfigKeyError(f"{field}: {path} plays {description.get('num_players')} players, "
                             f"this run {config.num_players}")
    return net, description


def league_opponents(config) -> list[PlaneNet]:
    """The frozen networks of ``config.league`` (in its order)."""
    return [load_selfplay_policy(path, config, "league")[0] for path in config.league]


def initial_weights(config):
    """The state dict ``config.init_policy`` starts the learner from (None: a fresh network);
    its network must have this config's ``channels``, ``hidden``, ``card_hidden``, ``card_gains`` and ``depth``."""
    if not config.init_policy:
        return None
    net, description = load_selfplay_policy(config.init_policy, config, "init_policy")
    mine = network_kwargs(config)
    if description.get("network_kwargs") != mine:
        raise ConfigKeyError(f"init_policy: {config.init_policy} has network {description.get('network_kwargs')}, "
                             f"this config {mine} (set channels, hidden, card_hidden, card_gains and depth to match)")
    return net.state_dict()

