"""The typed training config: one dataclass, every field documented, loaded from YAML.

Unknown or mistyped keys are refused with a one-line message naming them (``ConfigKeyError``);
every field declares its range with ``checked(...)`` (``training.config_check``), and all of
them are checked before any work starts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import yaml

from arboretum_env.agents import BASELINES  # the agents a config may name as opponents
from arboretum_env.agents.hints import ADVISORS
from arboretum_env.errors import UserError, unreadable_reason
from training.config_check import FOLDER_NAME, checked, config_from_mapping
from training.selfplay_config import CARD_GAINS_NEED_THE_HEAD, MAX_DEPTH, MAX_ROLLOUT

MAX_STEPS = 10**12
"""Upper bound of every step count (far beyond any run; keeps absurd integers out)."""
MAX_SEED = 2**31 - 1


class ConfigKeyError(UserError):
    """A bad training config (unknown key, wrong type, bad value)."""


@dataclass
class TrainConfig:
    # --- the run
    run_name: str = checked("quickstart", **FOLDER_NAME)
    """Outputs go to ``<runs_dir>/<run_name>/`` (checkpoints, logs, evaluations, plots)."""
    runs_dir: str = checked("models", min_len=1)
    """Folder that holds the runs."""
    num_players: int = checked(2, choices=(2, 3, 4))
    """Table size the learner trains at (2, 3 or 4)."""
    total_timesteps: int = checked(200_000, ge=1, le=MAX_STEPS)
    """Learner decisions to train for (opponents' decisions are not counted)."""
    seed: int = checked(0, ge=0, le=MAX_SEED)
    """Seeds the environments, the opponent pool and torch."""
    reward_mode: str = checked("win_loss", choices=("win_loss", "score_margin"))
    """``win_loss`` (+1 / -1, shared wins split) or ``score_margin``."""
    hints: bool = checked(True, choices=(True, False))
    """Append the hint sections (``arboretum_env.agents.hints``: placement gains per hand card, what a
    discard gives the opponents, what each pile top is worth) to the learner's observation."""
    n_envs: int = checked(2, ge=1, le=256)
    """Parallel environments (``SubprocVecEnv`` when above 1)."""
    torch_threads: int = checked(2, ge=1, le=1024)
    """Threads torch may use in the learner process."""

    # --- PPO (sb3-contrib MaskablePPO)
    learning_rate: float = checked(3e-4, gt=0.0, le=1.0)
    """Adam step size (decays linearly to 10% of this over the run)."""
    n_steps: int = checked(1024, ge=1, le=MAX_STEPS)
    """Decisions per environment between updates."""
    batch_size: int = checked(256, ge=2, le=MAX_STEPS)
    """Minibatch size of the PPO update."""
    n_epochs: int = checked(4, ge=1, le=10_000)
    """Passes over each rollout."""
    gamma: float = checked(0.995, ge=0.0, le=1.0)
    """Discount per learner decision (a 2-player game is about 85 of them)."""
    gae_lambda: float = checked(0.95, ge=0.0, le=1.0)
    """GAE smoothing."""
    clip_range: float = checked(0.2, gt=0.0, le=10.0)
    """PPO clip range."""
    ent_coef: float = checked(0.01, ge=0.0, le=10.0)
    """Entropy bonus."""
    vf_coef: float = checked(0.5, ge=0.0, le=100.0)
    """Value-loss weight."""
    max_grad_norm: float = checked(0.5, gt=0.0, le=1e6)
    """Gradient clipping."""

    # --- network
    network: str = checked("cnn", choices=("cnn", "mlp", "plane_net"))
    """``cnn`` (convolutions over the arboretum planes, per-cell play logits, MLP over the rest),
    ``mlp`` (one MLP over the whole observation) or ``plane_net`` (the self-play trainer's
    network, ``agents.selfplay_net.PlaneNet`` with ``channels``, ``hidden``, ``card_hidden``,
    ``card_gains`` and ``depth``, as ``training.sb3_plane.PlanePolicy``; it reads the
    observation alone: ``hints: false``)."""
    channels: int = checked(32, ge=1, le=4096)
    """Convolution channels (``cnn``; the cell features of ``plane_net``)."""
    hidden: int = checked(256, ge=1, le=65_536)
    """Width of the hidden layers."""
    card_hidden: int = checked(0, ge=0, le=4096)
    """``plane_net`` only: units of its per-card head (``agents.card_head.CardHead``); 0: none.
    The self-play config's field of the same name (``configs/selfplay_2p.yaml`` uses 32)."""
    card_gains: bool = checked(False, choices=(True, False))
    """``plane_net`` only: the card head also reads each card's path gains
    (``arboretum_env.batch.card_gains``); needs ``card_hidden > 0``."""
    depth: int = checked(0, ge=0, le=MAX_DEPTH)
    """``plane_net`` only: residual blocks over its global summary (the self-play config's
    ``depth``); 0: none."""

    # --- opponents and self-play
    opponents: list = checked(["random", "greedy"], each=tuple(BASELINES), min_len=1)
    """Baseline opponents in the pool: ``random``, ``greedy``, ``greedy_plus``, ``tempo`` (the
    heuristic agents of ``arboretum_env.agents``)."""
    snapshot_every: int = checked(50_000, ge=0, le=MAX_STEPS)
    """Timesteps between frozen copies of the learner joining the opponent pool (0: never)."""
    pool_size: int = checked(4, ge=1, le=10_000)
    """Newest snapshots kept in the pool."""
    self_play_fraction: float = checked(0.5, ge=0.0, le=1.0)
    """Chance that a seat is played by a snapshot once the pool has one."""

    # --- the teacher: imitated by the warm start, and the hints' advisor
    teacher: str = checked("greedy", choices=tuple(ADVISORS))
    """The heuristic agent the warm start imitates and, with ``hints``, whose choice the advice
    hint carries: ``greedy`` (``GreedyAgent``), ``greedy_plus`` (``GreedyPlusAgent``: with a
    pessimistic opponent-hand model) or ``tempo`` (``TempoAgent``: ``GreedyPlusAgent`` with a plan
    for drawing the last deck card)."""
    bc_games: int = checked(0, ge=0, le=1_000_000)
    """Games of the teacher's self-play to imitate before PPO (0: start from scratch)."""
    bc_epochs: int = checked(4, ge=1, le=10_000)
    """Passes over the imitation data."""

    # --- evaluation and checkpoints
    eval_every: int = checked(25_000, ge=1, le=MAX_STEPS)
    """Timesteps between evaluations against random and greedy (and checkpoints)."""
    eval_games: int = checked(100, ge=1, le=1_000_000)
    """Games per opponent per evaluation (seats alternate)."""
    final_eval_games: int = checked(200, ge=1, le=1_000_000)
    """Games per opponent in the evaluation at the end of the run."""


RELATIONS = (
    (lambda c: c.n_steps * c.n_envs >= 2, "n_steps * n_envs must be at least 2 (one PPO rollout)"),
    (lambda c: c.n_steps * c.n_envs <= MAX_ROLLOUT,
     f"n_steps * n_envs must be at most {MAX_ROLLOUT:,} (one PPO rollout's buffer is held in memory)"),
    (lambda c: c.network != "plane_net" or not c.hints,
     "network plane_net reads the observation alone: set hints: false"),
    (lambda c: c.network == "plane_net" or not (c.card_hidden or c.card_gains or c.depth),
     "card_hidden, card_gains and depth are plane_net's: set network: plane_net or leave them out"),
    CARD_GAINS_NEED_THE_HEAD,
)
"""Rules over several fields, checked after each field's own range."""


def config_from_dict(data: dict, source: str = "config") -> TrainConfig:
    """A ``TrainConfig`` from a mapping: keys, types and every field's range checked."""
    return config_from_mapping(TrainConfig, data, source, RELATIONS, error=ConfigKeyError)


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Read a YAML config; ``overrides`` (already typed) replace its keys."""
    return config_from_dict(read_config_data(path, overrides), str(path))


def read_config_data(path: str | Path, overrides: dict | None = None):
    """The YAML mapping of a config file with ``overrides`` applied (unchecked: the trainer it
    names checks it); one-line ``ConfigKeyError`` for unreadable files."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigKeyError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigKeyError(f"{path}: not valid YAML: {yaml_problem(exc)}") from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit integer, nesting 5,000 deep
        raise ConfigKeyError(f"{path}: not a usable config: {unreadable_reason(exc)}") from None
    if data is None:
        raise ConfigKeyError(f"{path}: the file is empty: a config gives at least one key "
                             f"(configs/quickstart.yaml is an example)")
    data = dict(data) if isinstance(data, dict) else data
    if overrides and isinstance(data, dict):
        data.update(overrides)
    return data


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What a YAML error says is wrong, and where (PyYAML's first line is often only the context,
    e.g. 'while constructing a mapping')."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem:
        return problem + (f" (line {mark.line + 1}, column {mark.column + 1})" if mark else "")
    return str(exc).splitlines()[0] if str(exc) else "invalid YAML"


def config_to_dict(config: TrainConfig) -> dict:
    return dataclasses.asdict(config)

