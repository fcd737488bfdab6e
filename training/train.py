"""Self-play training with sb3-contrib's MaskablePPO. Reads top to bottom:

1. the config (``configs/*.yaml`` -> ``TrainConfig``) and the run folder ``models/<run_name>/``
   (locked while the run lasts, never overwritten silently: ``training/run_folder.py``);
2. the environments: ``SingleAgentEnv`` (the learner in a random seat, opponents moving inside
   ``step()``, the learner's own reward, losses included) in a ``SubprocVecEnv``;
3. the model: a new MaskablePPO with ``ArboretumPolicy`` (or, to resume, the newest checkpoint
   that is intact: ``load_newest_intact``);
4. optionally a warm start by imitating the teacher (the greedy or the tempo agent);
5. ``learn`` with one callback that checkpoints, evaluates against random and greedy, adds frozen
   snapshots of the learner to the opponent pool, logs to TensorBoard and drives a progress bar;
6. at the end: a last checkpoint, the exported policy file, the evaluation report and the plot.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from tqdm import tqdm

from arboretum_env.errors import UserError
from arboretum_env.fileio import atomic_write_text
from arboretum_env.wrappers import SingleAgentEnv
from training.config import TrainConfig, config_to_dict
from training.evaluation import ModelAgent, evaluate_against_baselines
from training.export import CheckpointError, export_policy, load_checkpoint, save_checkpoint
from training.imitation import imitate_teacher
from training.network import learning_rate_schedule, policy_spec
from training.run_folder import (RunFolderError, RunLock, claim, refuse_other_model, resume_candidates,
                                 set_aside_damaged)


# ----------------------------------------------------------------------------- 1. run folder
def run_folder(config: TrainConfig) -> Path:
    return Path(config.runs_dir) / config.run_name


def read_records(path: Path) -> list[dict]:
    """The evaluation records of ``evaluations.jsonl`` (one JSON object a line)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_records(path: Path, records: list[dict]) -> None:
    """Rewrite ``evaluations.jsonl`` whole (``atomic_write``): an interrupt never leaves half a line."""
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in records))


def _next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` after ``steps``: schedules stay on the same steps
    whether or not the run was resumed in between."""
    return (steps // every + 1) * every


# ----------------------------------------------------------------------------- 2. environments
class OpponentPool:
    """Baseline opponents plus the newest frozen snapshots (policy files in ``<run>/pool``)."""

    def __init__(self, config: TrainConfig, folder: Path, snapshots: list | None = None):
        """``snapshots``: a checkpoint's pool, to resume with (those still there); default:
        the newest files in ``<run>/pool``."""
        self.config, self.folder = config, folder / "pool"
        if snapshots is None:
            snapshots = sorted(str(p) for p in self.folder.glob("snapshot_*.safetensors"))
        here = [str(self.folder / Path(s).name) for s in snapshots]  # the run folder may have moved
        self.snapshots = [s for s in here if Path(s).is_file()][-config.pool_size:]

    def specs(self) -> list[str]:
        """Opponent specs, one drawn per seat per episode: snapshots weighted to make up
        ``self_play_fraction`` of the draws once there are any."""
        baselines = list(self.config.opponents)
        if not self.snapshots or self.config.self_play_fraction <= 0:
            return baselines
        share = self.config.self_play_fraction
        if share >= 1:
            return [f"policy:{s}" for s in self.snapshots]
        copies = max(1, round(share / (1 - share) * len(baselines) / len(self.snapshots)))
        return baselines + [f"policy:{s}" for s in self.snapshots] * copies

    def add(self, model, timesteps: int) -> str:
        path = self.folder / f"snapshot_{timesteps:09d}.safetensors"
        export_policy(model, path, {"timesteps": timesteps, "role": "snapshot",
                                    "hints": self.config.hints, "advisor": self.config.teacher})
        self.snapshots = (self.snapshots + [str(path)])[-self.config.pool_size:]
        return str(path)


class _EnvFactory:
    """Builds one ``SingleAgentEnv`` inside a worker process (picklable, unlike a lambda)."""

    def __init__(self, config: TrainConfig, opponents: list[str], rank: int):
        self.kwargs = {"num_players": config.num_players, "opponents": opponents,
                       "reward_mode": config.reward_mode, "seed": config.seed * 1000 + rank,
                       "hints": config.hints, "advisor": config.teacher}

    def __call__(self) -> SingleAgentEnv:
        torch.set_num_threads(1)  # snapshot opponents run torch in the worker: one thread each
        return SingleAgentEnv(**self.kwargs)


def make_vec_env(config: TrainConfig, opponents: list[str]):
    def factory(rank: int):
        return _EnvFactory(config, opponents, rank)

    factories = [factory(rank) for rank in range(config.n_envs)]
    if config.n_envs == 1:
        return DummyVecEnv(factories)
    return SubprocVecEnv(factories, start_method="spawn")


# ----------------------------------------------------------------------------- 3. model
def new_model(config: TrainConfig, env, folder: Path) -> MaskablePPO:
    policy, policy_kwargs = policy_spec(config)  # also what a checkpoint is loaded with
    return MaskablePPO(
        policy, env,
        learning_rate=learning_rate_schedule(config),
        n_steps=config.n_steps, batch_size=config.batch_size, n_epochs=config.n_epochs,
        gamma=config.gamma, gae_lambda=config.gae_lambda, clip_range=config.clip_range,
        ent_coef=config.ent_coef, vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        policy_kwargs=policy_kwargs, tensorboard_log=str(folder / "tb"), seed=config.seed,
        device="cpu", verbose=0,
    )


# ----------------------------------------------------------------------------- 5. the callback
class SelfPlayCallback(BaseCallback):
    """At every multiple of ``eval_every`` steps (short of the end, which the final evaluation
    covers): checkpoint, then evaluate; at every multiple of ``snapshot_every``: a snapshot joins
    the pool; always: the progress bar. ``wall_s`` counts on from ``wall_s`` of a resumed run."""

    def __init__(self, config: TrainConfig, folder: Path, pool: OpponentPool, start: int,
                 show_progress: bool = True, wall_s: float = 0.0):
        super().__init__()
        self.config, self.folder, self.pool = config, folder, pool
        self.start, self.show_progress = start, show_progress
        self.next_eval = _next_multiple(start, config.eval_every)
        self.next_snapshot = _next_multiple(start, config.snapshot_every) if config.snapshot_every else None
        self.history_path = folder / "evaluations.jsonl"
        self.bar = None
        self.latest: dict = {}
        self.t0 = time.perf_counter() - wall_s

    def wall_s(self) -> float:
        return round(time.perf_counter() - self.t0, 1)

    def _on_training_start(self) -> None:
        if self.bar is not None:
            return
        self.bar = tqdm(total=self.config.total_timesteps, initial=self.start, unit="step",
                        disable=not self.show_progress, dynamic_ncols=True, mininterval=2.0)

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        self.bar.update(steps - self.bar.n)
        if self.next_snapshot is not None and steps >= self.next_snapshot:
            self.pool.add(self.model, steps)
            self.training_env.env_method("set_opponents", self.pool.specs())
            self.next_snapshot = _next_multiple(steps, self.config.snapshot_every)
        if steps >= self.next_eval:
            if steps < self.config.total_timesteps:
                self.checkpoint(steps)
                self.evaluate(steps)
            self.next_eval = _next_multiple(steps, self.config.eval_every)
        return True

    def checkpoint(self, steps: int) -> None:
        save_checkpoint(self.model, self.folder / "checkpoints", steps, config_to_dict(self.config),
                        {"pool": self.pool.snapshots, "wall_s": self.wall_s()})

    def evaluate(self, steps: int, games: int | None = None) -> dict:
        """Evaluate, then record: the record of ``steps`` replaces any earlier one of that step."""
        result = evaluate_against_baselines(
            ModelAgent(self.model, self.config.teacher, hints=self.config.hints), self.config.num_players,
            games or self.config.eval_games,
            seed=10_000 + steps)
        record = {"timesteps": steps, "wall_s": self.wall_s(), **result}
        write_records(self.history_path,
                      [r for r in read_records(self.history_path) if r.get("timesteps") != steps] + [record])
        if getattr(self.model, "_logger", None) is not None:  # set up by learn(); not yet at step 0
            for name, stats in result.items():
                self.logger.record(f"eval/win_rate_vs_{name}", stats["win_rate"])
                self.logger.record(f"eval/mean_score_margin_vs_{name}", stats["mean_margin"])
            self.logger.dump(steps)
        self.latest = {f"vs_{k}": f"{v['win_rate']:.2f}" for k, v in result.items()}
        self.bar.set_postfix(self.latest)
        return record

    def _on_training_end(self) -> None:
        pass  # the bar is closed after the final evaluation


# ----------------------------------------------------------------------------- resuming
MODEL_FIELDS = ("num_players", "hints", "teacher", "network", "channels", "hidden", "card_hidden",
                "card_gains", "depth")
"""The config fields that make the network and what it reads (``teacher``: the advisor of its
hints): a resume must keep them."""


def check_same_model(config: TrainConfig, meta: dict, folder: Path) -> None:
    """One ``RunFolderError`` line when ``config`` would train another network (or table) than
    the checkpoint's config, before anything is built or written."""
    saved = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    ours, defaults = config_to_dict(config), config_to_dict(TrainConfig())
    keys = [k for k in MODEL_FIELDS if k != "teacher" or ours["hints"]]  # the advisor counts only with hints
    refuse_other_model(folder, {k: saved.get(k, defaults[k]) for k in keys}, {k: ours[k] for k in keys})


def load_newest_intact(config: TrainConfig, folder: Path):
    """The newest checkpoint that loads, its metadata, the env (with that checkpoint's opponent
    pool) and the pool. A damaged newer checkpoint is named on stderr and, once a model has
    loaded, moved to ``checkpoints/damaged/``; none intact is one ``CheckpointError``. Writes
    nothing before a model has loaded."""
    damaged, env = [], None
    try:
        for cand in resume_candidates(folder):
            if cand.problem is None:
                check_same_model(config, cand.meta, folder)
                pool = OpponentPool(config, folder, cand.meta.get("pool"))
                if env is None:
                    env = make_vec_env(config, pool.specs())
                else:
                    env.env_method("set_opponents", pool.specs())
                try:
                    model, meta, _ = load_checkpoint(cand.zip_path, env=env,
                                                     custom_objects={"tensorboard_log": str(folder / "tb")})
                except UserError as exc:  # CheckpointError, VersionMismatchError
                    cand.problem = str(exc).removeprefix(f"{cand.zip_path}: ")
                else:
                    for bad in damaged:
                        print(f"note: {bad.zip_path.name} is damaged ({bad.problem}); resuming from "
                              f"{cand.zip_path.name}, the damaged one goes to checkpoints/damaged/",
                              file=sys.stderr)
                    set_aside_damaged([bad.zip_path for bad in damaged])
                    return model, meta, env, pool
            damaged.append(cand)
    except BaseException:
        if env is not None:
            env.close()
        raise
    if env is not None:
        env.close()
    named = "; ".join(f"{c.zip_path.name}: {c.problem}" for c in damaged)
    raise CheckpointError(f"{folder}: no intact checkpoint to resume from ({named})")


def _finished(folder: Path, steps: int) -> bool:
    try:
        return json.loads((folder / "evaluation.json").read_text()).get("timesteps") == steps
    except (OSError, ValueError, AttributeError):
        return False


# ----------------------------------------------------------------------------- the whole run
def train(config: TrainConfig, resume: bool = False, show_progress: bool = True,
          replace: bool = False) -> dict:
    """One run in ``run_folder(config)``, locked for its duration: fresh (refused where a run is,
    unless ``replace`` moves that one aside) or ``resume``d from the newest intact checkpoint."""
    folder = run_folder(config)
    with RunLock(folder):
        moved = claim(folder, resume, replace)
        if moved is not None:
            print(f"note: the previous run in {folder} moved to {moved}", file=sys.stderr)
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        np.random.seed(config.seed)  # SB3 itself draws from the global generators
        return _run(config, folder, resume, show_progress)


def _run(config: TrainConfig, folder: Path, resume: bool, show_progress: bool) -> dict:
    env = None
    try:
        if resume:
            model, meta, env, pool = load_newest_intact(config, folder)
            start, wall_s = meta["timesteps"], float(meta.get("wall_s") or 0.0)
            if start >= config.total_timesteps and _finished(folder, start):
                raise RunFolderError(f"{folder}: this run finished at {start} steps; raise "
                                     f"total_timesteps to train it further")
            for stale in folder.rglob(".*.tmp"):  # temporary files of an interrupted write
                stale.unlink()
        else:
            (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
            (folder / "pool").mkdir(exist_ok=True)
            pool = OpponentPool(config, folder)
            env = make_vec_env(config, pool.specs())
            model, start, wall_s = new_model(config, env, folder), 0, 0.0
        atomic_write_text(folder / "config.yaml", yaml.safe_dump(config_to_dict(config), sort_keys=False))
        callback = SelfPlayCallback(config, folder, pool, start, show_progress, wall_s)
        callback.init_callback(model)
        callback._on_training_start()
        history = callback.history_path
        if resume:  # records past the checkpoint belong to a future that is trained again
            kept = [r for r in read_records(history) if r.get("timesteps", 0) <= start]
            write_records(history, kept)
            if start < config.total_timesteps and not any(r.get("timesteps") == start for r in kept):
                callback.evaluate(start)  # the run was interrupted during this evaluation
        else:  # the starting point (after imitation) is checkpointed and evaluated too
            if config.bc_games:
                imitate_teacher(model, config, folder)
            callback.checkpoint(0)
            callback.evaluate(0)
        remaining = config.total_timesteps - start
        if remaining > 0:
            model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=not resume,
                        tb_log_name="ppo")
        steps = max(model.num_timesteps, start)
        callback.checkpoint(steps)
        final = callback.evaluate(steps, config.final_eval_games)
        callback.bar.close()
        export_policy(model, folder / "policy.safetensors",
                      {"timesteps": steps, "num_players": config.num_players, "run": config.run_name,
                       "hints": config.hints, "advisor": config.teacher})
    finally:
        if env is not None:
            env.close()
    atomic_write_text(folder / "evaluation.json", json.dumps(final, indent=2))
    return final
