"""The self-play trainer's typed config (``SelfPlayConfig``): every field documented, with its
allowed range, checked before any work (one line naming the field, ``ConfigKeyError``)."""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, field

from arboretum_env.errors import UserError

EVAL_BASELINES = ("random", "greedy", "greedy_plus", "tempo")


class ConfigKeyError(UserError):
    """A bad training config (unknown key, wrong type, value out of range)."""


def _f(default, lo=None, hi=None, choices=None, **kw):
    """A field with its allowed values in the metadata (``lo <= value <= hi``, or one of
    ``choices``)."""
    meta = {"lo": lo, "hi": hi, "choices": choices}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta, **kw)


@dataclass
class SelfPlayConfig:
    trainer: str = _f("selfplay", choices=("selfplay",))
    """Which trainer reads this config: ``selfplay`` (``training.selfplay``)."""
    # --- the run
    run_name: str = _f("selfplay")
    """Outputs go to ``<runs_dir>/<run_name>/``."""
    runs_dir: str = _f("models")
    """Folder that holds the runs."""
    num_players: int = _f(2, choices=(2, 3, 4))
    """Table size (every seat is played by the learner or a snapshot of it)."""
    seed: int = _f(0, lo=0, hi=2**62)
    """Seeds the games, torch and the snapshot choices: the same seed gives the same run."""
    reward_mode: str = _f("win_loss", choices=("win_loss", "score_margin"))
    """End-of-game reward (see the env docs)."""
    total_steps: int = _f(1_000_000, lo=1, hi=10**11)
    """Learner decisions to train for (every decision of a seat played by the current policy)."""
    torch_threads: int = _f(2, lo=1, hi=256)
    """Threads torch may use."""

    # --- collection
    num_envs: int = _f(128, lo=1, hi=65_536)
    """Games played at once (one batched forward per policy per step)."""
    rollout_steps: int = _f(32, lo=1, hi=100_000)
    """Vector steps per rollout; a rollout holds up to ``num_envs * rollout_steps`` decisions."""

    # --- PPO
    learning_rate: float = _f(3e-4, lo=1e-8, hi=1.0)
    """Adam step size, annealed linearly to 10% over the run."""
    update_epochs: int = _f(3, lo=1, hi=100)
    """Passes over each rollout."""
    minibatch_size: int = _f(1024, lo=8, hi=1_000_000)
    """Decisions per gradient step."""
    gamma: float = _f(1.0, lo=0.0, hi=1.0)
    """Discount per own decision (rewards come only at the end of a game)."""
    gae_lambda: float = _f(0.95, lo=0.0, hi=1.0)
    """GAE smoothing."""
    clip_coef: float = _f(0.2, lo=1e-6, hi=10.0)
    """PPO clip range (a positive number)."""
    ent_coef: float = _f(0.01, lo=0.0, hi=10.0)
    """Entropy bonus."""
    vf_coef: float = _f(0.5, lo=0.0, hi=100.0)
    """Value-loss weight."""
    max_grad_norm: float = _f(0.5, lo=1e-6, hi=1e6)
    """Gradient clipping."""

    # --- network (arboretum_env.agents.selfplay_net.PlaneNet)
    channels: int = _f(8, lo=1, hi=512)
    """Convolution channels over the 19 planes."""
    hidden: int = _f(128, lo=8, hi=4096)
    """Width of the global summary."""

    # --- snapshots of the learner as opponents
    snapshot_every: int = _f(100_000, lo=0, hi=10**11)
    """Learner steps between frozen copies joining the pool (0: never)."""
    pool_size: int = _f(5, lo=1, hi=1000)
    """Newest snapshots kept."""
    snapshot_fraction: float = _f(0.3, lo=0.0, hi=1.0)
    """Share of new games where the learner plays one seat and a snapshot all others (else the
    learner plays every seat)."""

    # --- evaluation and checkpoints
    eval_every: int = _f(100_000, lo=1, hi=10**11)
    """Learner steps between evaluations (and checkpoints)."""
    eval_games: int = _f(60, lo=1, hi=1_000_000)
    """Games per baseline per evaluation (seats alternate)."""
    eval_opponents: list = _f(["random", "greedy"])
    """Baselines evaluated against: random, greedy, greedy_plus, tempo (heuristics only ever
    appear here, never in training)."""
    final_eval_games: int = _f(200, lo=1, hi=1_000_000)
    """Games per baseline in the evaluation at the end."""
    final_eval_opponents: list = _f(["random", "greedy"])
    """Baselines of the final evaluation."""


FIELDS = {f.name: f for f in dataclasses.fields(SelfPlayConfig)}


def _check_field(name: str, value, source: str):
    f = FIELDS[name]
    kind = {"str": str, "int": int, "float": float, "list": list}[f.type]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigKeyError(f"{source}: key {name!r} must be {f.type}, got {type(value).__name__} {value!r}")
    if kind is float and not math.isfinite(value):
        raise ConfigKeyError(f"{source}: key {name!r} must be a finite number, got {value!r}")
    meta = f.metadata
    if meta["choices"] is not None and value not in meta["choices"]:
        raise ConfigKeyError(f"{source}: key {name!r} must be one of {list(meta['choices'])}, got {value!r}")
    if meta["lo"] is not None and not meta["lo"] <= value <= meta["hi"]:
        raise ConfigKeyError(f"{source}: key {name!r} must be within {meta['lo']}..{meta['hi']}, got {value!r}")
    if kind is list:
        bad = [o for o in value if o not in EVAL_BASELINES]
        if bad or not value:
            raise ConfigKeyError(f"{source}: key {name!r} must be a non-empty list of "
                                 f"{'/'.join(EVAL_BASELINES)}, got {value!r}")
    if kind is str and name in ("run_name",) and (not value or "/" in value or value.startswith(".")):
        raise ConfigKeyError(f"{source}: key {name!r} must be a plain folder name, got {value!r}")
    return value


def selfplay_config(data: dict, source: str = "config") -> SelfPlayConfig:
    """A checked ``SelfPlayConfig`` from a mapping (unknown keys, types and ranges checked)."""
    if not isinstance(data, dict):
        raise ConfigKeyError(f"{source}: the config must be a mapping of keys to values")
    values = {}
    for key, value in data.items():
        if key not in FIELDS:
            close = difflib.get_close_matches(str(key), FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigKeyError(f"{source}: unknown key {key!r}{hint}")
        values[key] = _check_field(key, value, source)
    return SelfPlayConfig(**values)
