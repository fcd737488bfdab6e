"""Self-play training with sb3-contrib's MaskablePPO. Reads top to bottom:

1. the config (``configs/*.yaml`` -> ``TrainConfig``) and the run folder ``models/<run_name>/``;
2. the environments: ``SingleAgentEnv`` (the learner in a random seat, opponents moving inside
   ``step()``, the learner's own reward, losses included) in a ``SubprocVecEnv``;
3. the model: a new MaskablePPO with ``ArboretumPolicy`` (or the last checkpoint, to resume);
4. optionally a warm start by imitating the teacher (the greedy or the tempo agent);
5. ``learn`` with one callback that checkpoints, evaluates against random and greedy, adds frozen
   snapshots of the learner to the opponent pool, logs to TensorBoard and drives a progress bar;
6. at the end: a last checkpoint, the exported policy file, the evaluation report and the plot.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from tqdm import tqdm

from arboretum_env.wrappers import SingleAgentEnv
from training.config import TrainConfig, config_to_dict
from training.evaluation import ModelAgent, evaluate_against_baselines
from training.export import export_policy, load_checkpoint, save_checkpoint
from training.imitation import imitate_teacher
from training.network import learning_rate_schedule, policy_spec


# ----------------------------------------------------------------------------- 1. run folder
def run_folder(config: TrainConfig) -> Path:
    folder = Path(config.runs_dir) / config.run_name
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    (folder / "pool").mkdir(exist_ok=True)
    return folder


# ----------------------------------------------------------------------------- 2. environments
class OpponentPool:
    """Baseline opponents plus the newest frozen snapshots (policy files in ``<run>/pool``)."""

    def __init__(self, config: TrainConfig, folder: Path):
        self.config, self.folder = config, folder / "pool"
        self.snapshots = sorted(str(p) for p in self.folder.glob("snapshot_*.safetensors"))[-config.pool_size:]

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
    """Every ``eval_every`` steps: checkpoint, evaluate, maybe snapshot; always: progress bar."""

    def __init__(self, config: TrainConfig, folder: Path, pool: OpponentPool, start: int,
                 show_progress: bool = True):
        super().__init__()
        self.config, self.folder, self.pool = config, folder, pool
        self.start, self.show_progress = start, show_progress
        self.next_eval = start + config.eval_every
        self.next_snapshot = start + config.snapshot_every if config.snapshot_every else None
        self.history_path = folder / "evaluations.jsonl"
        self.bar = None
        self.latest: dict = {}
        self.t0 = time.perf_counter()

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
            self.next_snapshot += self.config.snapshot_every
        if steps >= self.next_eval:
            self.evaluate_and_checkpoint(steps)
            self.next_eval += self.config.eval_every
        return True

    def evaluate_and_checkpoint(self, steps: int, games: int | None = None) -> dict:
        save_checkpoint(self.model, self.folder / "checkpoints", steps, config_to_dict(self.config),
                        {"pool": self.pool.snapshots})
        result = evaluate_against_baselines(
            ModelAgent(self.model, self.config.teacher, hints=self.config.hints), self.config.num_players,
            games or self.config.eval_games,
            seed=10_000 + steps)
        record = {"timesteps": steps, "wall_s": round(time.perf_counter() - self.t0, 1), **result}
        with self.history_path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")
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


# ----------------------------------------------------------------------------- the whole run
def train(config: TrainConfig, resume: bool = False, show_progress: bool = True) -> dict:
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)  # SB3 itself draws from the global generators
    folder = run_folder(config)
    (folder / "config.yaml").write_text(yaml.safe_dump(config_to_dict(config), sort_keys=False))
    pool = OpponentPool(config, folder)
    env = make_vec_env(config, pool.specs())
    try:
        if resume:
            model, meta, _ = load_checkpoint(folder, env=env,
                                             custom_objects={"tensorboard_log": str(folder / "tb")})
            start = int(meta["timesteps"])
        else:
            model, start = new_model(config, env, folder), 0
            if config.bc_games:
                imitate_teacher(model, config, folder)
        callback = SelfPlayCallback(config, folder, pool, start, show_progress)
        if not resume:  # the starting point (after imitation) is checkpointed and evaluated too
            callback.init_callback(model)
            callback._on_training_start()
            callback.evaluate_and_checkpoint(0)
        remaining = config.total_timesteps - start
        if remaining > 0:
            model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=not resume,
                        tb_log_name="ppo")
        steps = max(model.num_timesteps, start)
        if callback.bar is None:  # nothing left to learn: the callback was never started
            callback.init_callback(model)
            callback._on_training_start()
        final = callback.evaluate_and_checkpoint(steps, config.final_eval_games)
        callback.bar.close()
        export_policy(model, folder / "policy.safetensors",
                      {"timesteps": steps, "num_players": config.num_players, "run": config.run_name,
                       "hints": config.hints, "advisor": config.teacher})
    finally:
        env.close()
    (folder / "evaluation.json").write_text(json.dumps(final, indent=2))
    return final
