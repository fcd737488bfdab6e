"""The typed training config: one dataclass, every field documented, loaded from YAML.

Unknown or mistyped keys are refused with a one-line message naming them (``ConfigKeyError``).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from arboretum_env.agents import BASELINES  # the agents a config may name as opponents
from arboretum_env.errors import UserError
from arboretum_env.agents.hints import ADVISORS


class ConfigKeyError(UserError):
    """A bad training config (unknown key, wrong type, bad value)."""


@dataclass
class TrainConfig:
    # --- the run
    run_name: str = "quickstart"
    """Outputs go to ``<runs_dir>/<run_name>/`` (checkpoints, logs, evaluations, plots)."""
    runs_dir: str = "models"
    """Folder that holds the runs."""
    num_players: int = 2
    """Table size the learner trains at (2, 3 or 4)."""
    total_timesteps: int = 200_000
    """Learner decisions to train for (opponents' decisions are not counted)."""
    seed: int = 0
    """Seeds the environments, the opponent pool and torch."""
    reward_mode: str = "win_loss"
    """``win_loss`` (+1 / -1, shared wins split) or ``score_margin``."""
    hints: bool = True
    """Append the hint sections (``arboretum_env.agents.hints``: placement gains per hand card, what a
    discard gives the opponents, what each pile top is worth) to the learner's observation."""
    n_envs: int = 2
    """Parallel environments (``SubprocVecEnv`` when above 1)."""
    torch_threads: int = 2
    """Threads torch may use in the learner process."""

    # --- PPO (sb3-contrib MaskablePPO)
    learning_rate: float = 3e-4
    """Adam step size (decays linearly to 10% of this over the run)."""
    n_steps: int = 1024
    """Decisions per environment between updates."""
    batch_size: int = 256
    """Minibatch size of the PPO update."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount per learner decision (a 2-player game is about 85 of them)."""
    gae_lambda: float = 0.95
    """GAE smoothing."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value-loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""

    # --- network
    network: str = "cnn"
    """``cnn`` (convolutions over the arboretum planes, per-cell play logits, MLP over the rest)
    or ``mlp`` (one MLP over the whole observation)."""
    channels: int = 32
    """Convolution channels (``cnn``)."""
    hidden: int = 256
    """Width of the hidden layers."""

    # --- opponents and self-play
    opponents: list = field(default_factory=lambda: ["random", "greedy"])
    """Baseline opponents in the pool: ``random``, ``greedy``, ``greedy_plus``, ``tempo`` (the
    heuristic agents of ``arboretum_env.agents``)."""
    snapshot_every: int = 50_000
    """Timesteps between frozen copies of the learner joining the opponent pool (0: never)."""
    pool_size: int = 4
    """Newest snapshots kept in the pool."""
    self_play_fraction: float = 0.5
    """Chance that a seat is played by a snapshot once the pool has one."""

    # --- the teacher: imitated by the warm start, and the hints' advisor
    teacher: str = "greedy"
    """The heuristic agent the warm start imitates and, with ``hints``, whose choice the advice
    hint carries: ``greedy`` (``GreedyAgent``), ``greedy_plus`` (``GreedyPlusAgent``: with a
    pessimistic opponent-hand model) or ``tempo`` (``TempoAgent``: ``GreedyPlusAgent`` with a plan
    for drawing the last deck card)."""
    bc_games: int = 0
    """Games of the teacher's self-play to imitate before PPO (0: start from scratch)."""
    bc_epochs: int = 4
    """Passes over the imitation data."""

    # --- evaluation and checkpoints
    eval_every: int = 25_000
    """Timesteps between evaluations against random and greedy (and checkpoints)."""
    eval_games: int = 100
    """Games per opponent per evaluation (seats alternate)."""
    final_eval_games: int = 200
    """Games per opponent in the evaluation at the end of the run."""


def _type_ok(value, annotation) -> bool:
    kind = {"str": str, "int": int, "float": float, "list": list, "bool": bool}[annotation]
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def config_from_dict(data: dict, source: str = "config") -> TrainConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigKeyError(f"{source}: the config must be a mapping of keys to values")
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for key, value in data.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigKeyError(f"{source}: unknown key {key!r}{hint}")
        annotation = fields[key].type
        if not _type_ok(value, annotation):
            raise ConfigKeyError(
                f"{source}: key {key!r} must be {annotation}, got {type(value).__name__} {value!r}")
    config = TrainConfig(**{k: (float(v) if fields[k].type == "float" else v) for k, v in data.items()})
    _check_values(config, source)
    return config


def _check_values(c: TrainConfig, source: str) -> None:
    problems = []
    if c.num_players not in (2, 3, 4):
        problems.append("num_players must be 2, 3 or 4")
    if c.reward_mode not in ("win_loss", "score_margin"):
        problems.append("reward_mode must be win_loss or score_margin")
    if c.network not in ("cnn", "mlp"):
        problems.append("network must be cnn or mlp")
    for name in ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games",
                 "channels", "hidden", "pool_size", "torch_threads"):
        if getattr(c, name) < 1:
            problems.append(f"{name} must be at least 1")
    if not 0.0 <= c.self_play_fraction <= 1.0:
        problems.append("self_play_fraction must be within 0..1")
    bad = [o for o in c.opponents if o not in BASELINES]
    if bad or not c.opponents:
        problems.append(f"opponents must be a non-empty list of {'/'.join(BASELINES)}, got {c.opponents!r}")
    if c.teacher not in ADVISORS:
        problems.append(f"teacher must be one of {', '.join(ADVISORS)}, got {c.teacher!r}")
    if not c.run_name or "/" in c.run_name or c.run_name.startswith("."):
        problems.append("run_name must be a plain folder name")
    if problems:
        raise ConfigKeyError(f"{source}: " + "; ".join(problems))


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Read a YAML config; ``overrides`` (already typed) replace its keys."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigKeyError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise ConfigKeyError(f"{path}: not valid YAML: {first}") from None
    data = dict(data or {}) if isinstance(data, dict) or data is None else data
    if overrides and isinstance(data, dict):
        data.update(overrides)
    return config_from_dict(data, str(path))


def config_to_dict(config: TrainConfig) -> dict:
    return dataclasses.asdict(config)

