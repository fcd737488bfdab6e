"""Speed of the vector env (``arboretum_env.vector.VectorEnv``) against ``raw_env()``, in the same run.

Random legal play with observations, 2, 3 and 4 players. The vector env steps N games at once
(every step writes the observation of each game's player to move and its mask); the random
policy picks a uniform legal id per game in one compiled call. ``raw_env()`` runs PettingZoo's
usual loop, ``last()`` (one observation and one mask per step) then ``step()``, with a uniform
legal id from the mask. Both produce the same observation (tests/test_vector.py).

Measurements are interleaved in rounds (vector, then raw, per player count) and the ratio is the
median over rounds of the ratio within a round, so that drift of the host's speed hits both.
Each process uses one core (numba kernels are single-threaded); with ``--processes K`` the vector
env runs in K processes at once and ``steps_per_s`` is their sum (``per_core`` divides by K).
The last line is one JSON object; target: the vector env's steps/s per core at least 3x
``raw_env()``'s.

    python benchmarks/vector_speed.py [--num-envs 256] [--seconds 1.0] [--rounds 5] [--processes 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arboretum_env.engine.jit_playout import compile_kernel  # noqa: E402
from arboretum_env.env import raw_env  # noqa: E402
from arboretum_env.vector import VectorEnv  # noqa: E402

TARGET = 3.0


def _pick(masks, uniforms, out):  # pragma: no cover - compiled
    """A uniform legal id per row."""
    for i in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[i, a]
        k = int(uniforms[i] * count)
        for a in range(masks.shape[1]):
            if masks[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


pick = compile_kernel(_pick)


def run_vector(num_players: int, num_envs: int, seconds: float, seed: int) -> tuple[float, int]:
    """Steps/s of the vector env (game steps: one per game per batch step) and games finished."""
    venv = VectorEnv(num_envs, num_players=num_players)
    rng = np.random.default_rng(seed)
    _, masks, _ = venv.reset(seed=seed)
    actions = np.zeros(num_envs, np.int64)
    steps = games = 0
    start = time.perf_counter()
    while True:
        for _ in range(20):
            pick(masks, rng.random(num_envs), actions)
            _, masks, _, _, dones = venv.step(actions)
            games += int(dones.sum())
        steps += 20 * num_envs
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed, games


def run_raw(num_players: int, seconds: float, seed: int) -> float:
    e = raw_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    random = rng.random
    steps = 0
    start = time.perf_counter()
    while True:
        e.reset(seed=seed)
        seed += 1
        for _agent in e.agent_iter():
            obs, _r, term, trunc, _i = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            e.step(int(legal[int(random() * len(legal))]))
            steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def _vector_worker(args) -> float:
    return run_vector(*args)[0]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for n in (2, 3, 4):  # warm-up: compilation, first allocations
        run_vector(n, 8, 0.05, 0)
        run_raw(n, 0.05, 0)
    pool = multiprocessing.get_context("fork").Pool(args.processes) if args.processes > 1 else None
    samples: dict[int, dict[str, list[float]]] = {n: {"vector": [], "raw": [], "ratio": []} for n in (2, 3, 4)}
    for r in range(args.rounds):
        for n in (2, 3, 4):
            if pool is None:
                vector = run_vector(n, args.num_envs, args.seconds, 1000 * r)[0]
            else:
                jobs = [(n, args.num_envs, args.seconds, 1000 * r + 97 * k) for k in range(args.processes)]
                vector = sum(pool.map(_vector_worker, jobs))
            raw = run_raw(n, args.seconds, 1000 * r)
            samples[n]["vector"].append(vector)
            samples[n]["raw"].append(raw)
            samples[n]["ratio"].append(vector / args.processes / raw)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    if pool is not None:
        pool.close()
    result = {"benchmark": "vector_speed", "num_envs": args.num_envs, "processes": args.processes,
              "rounds": args.rounds, "seconds": args.seconds, "python": platform.python_version(),
              "cpu_count": os.cpu_count(), "load_average": list(os.getloadavg()), "players": {}}
    for n, s in samples.items():
        vector = statistics.median(s["vector"])
        result["players"][str(n)] = {
            "vector_steps_per_s": round(vector),
            "vector_steps_per_s_per_core": round(vector / args.processes),
            "raw_env_steps_per_s": round(statistics.median(s["raw"])),
            "ratio_per_core": round(statistics.median(s["ratio"]), 2),
            "ratio_range_over_rounds": [round(min(s["ratio"]), 2), round(max(s["ratio"]), 2)],
        }
    result["target_ratio_per_core"] = TARGET
    result["target_met"] = all(v["ratio_per_core"] >= TARGET for v in result["players"].values())
    return result


if __name__ == "__main__":
    print(json.dumps(main()))
