"""End-to-end learner steps/s of the batched self-play trainer and of the SB3 path, same network.

Both train the same network (``PlaneNet``, by default the self-play default: ``channels`` 8,
``hidden`` 128; ``--channels`` and ``--hidden`` set others) with the same PPO settings
(``update_epochs`` passes, minibatches of ``minibatch_size``), collection and updates together,
on the same machine in the same run, torch on ``--threads`` threads:

* **selfplay**: ``training.selfplay.SelfPlayTrainer`` (``num_envs`` games on the vector env,
  every seat the learner: each decision is a learner step), rollouts of ``num_envs *
  rollout_steps`` decisions;
* **sb3**: the project's SB3 path: ``SingleAgentEnv`` (the learner in one seat, random in the
  other) in ``--sb3-envs`` subprocesses (``SubprocVecEnv``), sb3-contrib ``MaskablePPO`` with
  ``training.sb3_plane.PlanePolicy``, ``n_steps`` so that a rollout holds as many decisions.

Each is warmed up by one rollout and update (compilation, first allocations); then they take
turns, ``--rounds`` times each for ``--seconds / --rounds`` (SB3 in whole rollouts), so that a
drift in the machine's speed, which is as large as 20% within minutes on a shared 2-core
machine, reaches both. No evaluation is counted. The last line is one JSON object: both
steps/s over all their turns, their ratio and its value per round, the network's parameters and
multiply-adds per decision, the self-play trainer's time per step in collection and in updates,
and ``ratio_if_collection_free`` (the SB3 path's time per step over the update's alone: a bound
on the ratio at these PPO settings, as SB3 runs the same update on the same network); targets:
selfplay >= 3,000 steps/s and >= 15x sb3.

    python benchmarks/train_speed.py [--seconds 60] [--rounds 4] [--threads 2] [--sb3-envs 2]
                                     [--channels C] [--hidden H]
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


class SelfPlayRun:
    """The batched self-play trainer, warmed up (compilation, first allocations)."""

    def __init__(self, threads: int, channels: int, hidden: int):
        from training.selfplay import SelfPlayTrainer
        from training.selfplay_config import SelfPlayConfig
        from training.selfplay_io import RunFolder

        self.config = SelfPlayConfig(run_name="speed", runs_dir=tempfile.mkdtemp(), torch_threads=threads,
                                     snapshot_every=0, channels=channels, hidden=hidden)
        self.trainer = SelfPlayTrainer(self.config, RunFolder(Path(self.config.runs_dir) / "speed", self.config))
        self.trainer.venv.reset(seed=0)
        self.trainer._deal_controllers(np.arange(self.config.num_envs))
        self.trainer.update(self.trainer.collect())  # warm-up
        self.steps, self.seconds, self.collecting = 0, 0.0, 0.0

    def run(self, seconds: float) -> float:
        """Train for about ``seconds``; returns this stretch's steps/s."""
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            began = time.perf_counter()
            size = self.trainer.collect()
            self.collecting += time.perf_counter() - began
            self.trainer.update(size)
            steps += size
        elapsed = time.perf_counter() - start
        self.steps, self.seconds = self.steps + steps, self.seconds + elapsed
        return steps / elapsed


class SB3Run:
    """The SB3 path on the same network and PPO settings, warmed up by one rollout and update."""

    def __init__(self, threads: int, n_envs: int, config):
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.vec_env import SubprocVecEnv

        from arboretum_env.wrappers import make_single_agent_env
        from training.sb3_plane import PlanePolicy
        from training.selfplay_config import network_kwargs

        torch.set_num_threads(threads)
        self.env = SubprocVecEnv([make_single_agent_env(num_players=2, opponents="random", seed=i)
                                  for i in range(n_envs)])
        decisions = config.num_envs * config.rollout_steps
        self.model = MaskablePPO(PlanePolicy, self.env, n_steps=decisions // n_envs,
                                 batch_size=config.minibatch_size, n_epochs=config.update_epochs,
                                 learning_rate=3e-4, gamma=1.0, seed=0, verbose=0,
                                 policy_kwargs={"net_kwargs": network_kwargs(config)})
        self.per_rollout = self.model.n_steps * n_envs
        start = time.perf_counter()
        self.model.learn(self.per_rollout)  # warm-up
        self.rollout_seconds = time.perf_counter() - start
        self.steps, self.seconds = 0, 0.0

    def run(self, seconds: float) -> float:
        """Whole rollouts and updates for about ``seconds`` (at least one); returns their steps/s."""
        rollouts = max(1, round(seconds / self.rollout_seconds))
        before, start = self.model.num_timesteps, time.perf_counter()
        self.model.learn(rollouts * self.per_rollout, reset_num_timesteps=False)
        elapsed = time.perf_counter() - start
        steps = self.model.num_timesteps - before
        self.rollout_seconds = elapsed / rollouts
        self.steps, self.seconds = self.steps + steps, self.seconds + elapsed
        return steps / elapsed


def main(argv=None) -> dict:
    from training.selfplay_config import SelfPlayConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds per trainer")
    parser.add_argument("--rounds", type=int, default=4,
                        help="the trainers take turns, this many times each (the machine's drifts hit both)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (2 cores: 2)")
    parser.add_argument("--sb3-envs", type=int, default=2)
    parser.add_argument("--channels", type=int, default=SelfPlayConfig.channels, help="PlaneNet channels")
    parser.add_argument("--hidden", type=int, default=SelfPlayConfig.hidden, help="PlaneNet summary width")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1 or args.threads < 1 or args.sb3_envs < 1:
        parser.error("--seconds must be positive; --rounds, --threads and --sb3-envs at least 1")
    selfplay = SelfPlayRun(args.threads, args.channels, args.hidden)
    c = selfplay.config
    sb3 = SB3Run(args.threads, args.sb3_envs, c)
    rounds = []
    for _ in range(args.rounds):
        fast = selfplay.run(args.seconds / args.rounds)
        rounds.append(round(fast / sb3.run(args.seconds / args.rounds), 2))
    sb3.env.close()
    selfplay_rate, sb3_rate = selfplay.steps / selfplay.seconds, sb3.steps / sb3.seconds
    update_us = 1e6 * (selfplay.seconds - selfplay.collecting) / selfplay.steps
    split = {"collect_us_per_step": round(1e6 * selfplay.collecting / selfplay.steps, 1),
             "update_us_per_step": round(update_us, 1)}
    ppo = {k: getattr(c, k)
           for k in ("num_envs", "rollout_steps", "update_epochs", "minibatch_size", "channels", "hidden")}
    return {"benchmark": "train_speed", "selfplay_steps_per_s": round(selfplay_rate),
            "sb3_steps_per_s": round(sb3_rate),
            "ratio": round(selfplay_rate / sb3_rate, 2), "ratio_per_round": rounds,
            # the ratio even if collection cost nothing: the SB3 path's time per step over this
            # trainer's update time per step (the same network and PPO settings in both)
            "ratio_if_collection_free": round(1e6 / sb3_rate / update_us, 2),
            "selfplay_split": split, "threads": args.threads, "cpu_count": os.cpu_count(),
            "load_average": list(os.getloadavg()),
            "network": {"name": "plane_net", **selfplay.trainer.net.size_report()},
            "ppo": ppo, "targets": {"selfplay_steps_per_s": TARGET_STEPS, "ratio": TARGET_RATIO},
            "targets_met": {"selfplay_steps_per_s": selfplay_rate >= TARGET_STEPS,
                            "ratio": selfplay_rate / sb3_rate >= TARGET_RATIO}}


if __name__ == "__main__":
    print(json.dumps(main()))
