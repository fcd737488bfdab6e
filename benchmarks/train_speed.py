"""End-to-end learner steps/s of the batched self-play trainer and of the SB3 path, same network.

Both train the same network (``PlaneNet``, by default the self-play default: ``channels`` 8,
``hidden`` 128; ``--channels``, ``--hidden`` set others) with the same PPO settings (``update_epochs`` passes, minibatches of ``minibatch_size``),
collection and updates together, on the same machine in the same run, torch on ``--threads``
threads:

* **selfplay**: ``training.selfplay.SelfPlayTrainer`` (``num_envs`` games on the vector env,
  every seat the learner: each decision is a learner step), rollouts of ``num_envs *
  rollout_steps`` decisions;
* **sb3**: the project's SB3 path: ``SingleAgentEnv`` (the learner in one seat, random in the
  other) in ``--sb3-envs`` subprocesses (``SubprocVecEnv``), sb3-contrib ``MaskablePPO`` with
  ``training.sb3_plane.PlanePolicy``, ``n_steps`` so that a rollout holds as many decisions.

Each is timed after one warm-up rollout and update (compilation, first allocations). No
evaluation is counted. The last line is one JSON object: both steps/s, their ratio, the
network's parameters and multiply-adds per decision, the self-play trainer's time per step in
collection and in updates, and ``ratio_if_collection_free`` (the SB3 path's time per step over
the update's alone: a bound on the ratio at these PPO settings, as SB3 runs the same update on
the same network); targets: selfplay >= 3,000 steps/s and
>= 15x sb3.

    python benchmarks/train_speed.py [--seconds 60] [--threads 2] [--sb3-envs 2] [--channels C] [--hidden H]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_STEPS, TARGET_RATIO = 3000, 15.0


def selfplay_speed(seconds: float, threads: int, channels: int, hidden: int) -> tuple[float, dict]:
    from training.selfplay import SelfPlayTrainer
    from training.selfplay_config import SelfPlayConfig
    from training.selfplay_io import RunFolder

    config = SelfPlayConfig(run_name="speed", runs_dir=tempfile.mkdtemp(), torch_threads=threads,
                            snapshot_every=0, channels=channels, hidden=hidden)
    trainer = SelfPlayTrainer(config, RunFolder(Path(config.runs_dir) / "speed", config))
    trainer.venv.reset(seed=0)
    trainer._deal_controllers(np.arange(config.num_envs))
    trainer.update(trainer.collect())  # warm-up
    steps, collecting, start = 0, 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        size = trainer.collect()
        collecting += time.perf_counter() - began
        trainer.update(size)
        steps += size
    elapsed = time.perf_counter() - start
    split = {"collect_us_per_step": round(1e6 * collecting / steps, 1),
             "update_us_per_step": round(1e6 * (elapsed - collecting) / steps, 1)}
    return steps / elapsed, {"split": split, "config": {
        k: getattr(config, k) for k in ("num_envs", "rollout_steps", "update_epochs", "minibatch_size",
                                        "channels", "hidden")}, "size": trainer.net.size_report()}


def sb3_speed(seconds: float, threads: int, n_envs: int, decisions: int, epochs: int, minibatch: int,
              channels: int, hidden: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from arboretum_env.wrappers import make_single_agent_env
    from training.sb3_plane import PlanePolicy

    torch.set_num_threads(threads)
    env = SubprocVecEnv([make_single_agent_env(num_players=2, opponents="random", seed=i) for i in range(n_envs)])
    model = MaskablePPO(PlanePolicy, env, n_steps=decisions // n_envs, batch_size=minibatch, n_epochs=epochs,
                        learning_rate=3e-4, gamma=1.0, seed=0, verbose=0,
                        policy_kwargs={"channels": channels, "hidden": hidden})

    class Clock(BaseCallback):
        def __init__(self):
            super().__init__()
            self.marks: list[tuple[float, int]] = []

        def _on_rollout_start(self) -> None:
            self.marks.append((time.perf_counter(), self.model.num_timesteps))

        def _on_step(self) -> bool:
            return True

    clock = Clock()
    per_rollout = model.n_steps * n_envs
    start = time.perf_counter()
    model.learn(per_rollout, callback=clock)  # warm-up
    first = time.perf_counter() - start
    rollouts = max(2, int(seconds / max(first, 1e-3)))
    model.learn(rollouts * per_rollout, callback=clock, reset_num_timesteps=False)
    end = time.perf_counter()
    t0, s0 = clock.marks[1]  # from the first rollout after the warm-up
    env.close()
    return (model.num_timesteps - s0) / (end - t0)


def main(argv=None) -> dict:
    from training.selfplay_config import SelfPlayConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds per trainer")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (2 cores: 2)")
    parser.add_argument("--sb3-envs", type=int, default=2)
    parser.add_argument("--channels", type=int, default=SelfPlayConfig.channels, help="PlaneNet channels")
    parser.add_argument("--hidden", type=int, default=SelfPlayConfig.hidden, help="PlaneNet summary width")
    args = parser.parse_args(argv)
    selfplay, info = selfplay_speed(args.seconds, args.threads, args.channels, args.hidden)
    c = info["config"]
    sb3 = sb3_speed(args.seconds, args.threads, args.sb3_envs, c["num_envs"] * c["rollout_steps"],
                    c["update_epochs"], c["minibatch_size"], c["channels"], c["hidden"])
    return {"benchmark": "train_speed", "selfplay_steps_per_s": round(selfplay), "sb3_steps_per_s": round(sb3),
            "ratio": round(selfplay / sb3, 2),
            # the ratio even if collection cost nothing: the SB3 path's time per step over this
            # trainer's update time per step (the same network and PPO settings in both)
            "ratio_if_collection_free": round(1e6 / sb3 / info["split"]["update_us_per_step"], 2),
            "selfplay_split": info["split"], "threads": args.threads, "cpu_count": os.cpu_count(),
            "load_average": list(os.getloadavg()), "network": {"name": "plane_net", **info["size"]},
            "ppo": c, "targets": {"selfplay_steps_per_s": TARGET_STEPS, "ratio": TARGET_RATIO},
            "targets_met": {"selfplay_steps_per_s": selfplay >= TARGET_STEPS, "ratio": selfplay / sb3 >= TARGET_RATIO}}


if __name__ == "__main__":
    print(json.dumps(main()))
