"""Speed of the Arboretum AEC env against PettingZoo's connect_four_v3, in the same run.

Random masked play (uniform over the ids with mask == 1, from a seeded numpy Generator) through
``env()`` (the wrapped env) and through ``raw_env()``, with PettingZoo's usual loop: ``last()``
(so one observation and one mask per step), then ``step()``. Steps are the actions of live
agents (the final ``step(None)`` of each terminated agent is timed but not counted); games are
finished games.

The measurements are interleaved in rounds (every env once per round, in a shuffled order) and
each figure is the median over the rounds, so that a machine whose load changes during the run
biases every env alike. The last line is one JSON object with every figure and the ratios
ours / connect_four (targets: >= 1.2 through ``env()``, >= 1.5 through ``raw_env()``).

    python benchmarks/env_speed.py [--seconds 1.0] [--rounds 7] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pettingzoo.classic import connect_four_v3  # noqa: E402

from arboretum_env.env import env as arboretum_env  # noqa: E402
from arboretum_env.env import raw_env as arboretum_raw_env  # noqa: E402

TARGET_ENV, TARGET_RAW = 1.2, 1.5


def play(e, seconds: float, rng: np.random.Generator, first_seed: int) -> tuple[int, int, float]:
    """Play whole games until ``seconds`` have passed; returns (steps, games, elapsed)."""
    steps = games = 0
    seed = first_seed
    random = rng.random
    flatnonzero = np.flatnonzero
    start = time.perf_counter()
    while True:
        e.reset(seed=seed)
        seed += 1
        for _agent in e.agent_iter():
            obs, _reward, termination, truncation, _info = e.last()
            if termination or truncation:
                action = None
            else:
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[int(random() * len(legal))])
                steps += 1
            e.step(action)
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps, games, elapsed


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per env and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    makers = {"connect_four_v3/env": connect_four_v3.env, "connect_four_v3/raw_env": connect_four_v3.raw_env}
    for n in (2, 3, 4):
        makers[f"arboretum_v0/{n}p/env"] = lambda n=n: arboretum_env(num_players=n)
        makers[f"arboretum_v0/{n}p/raw_env"] = lambda n=n: arboretum_raw_env(num_players=n)
    envs = {name: make() for name, make in makers.items()}
    rng = np.random.default_rng(args.seed)
    for name, e in envs.items():  # warm-up: imports, first allocations
        play(e, 0.05, rng, 10_000)

    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
    order = list(envs)
    for r in range(args.rounds):
        rng.shuffle(order)
        for name in order:
            steps, games, elapsed = play(envs[name], args.seconds, rng, 1000 * r)
            samples[name].append((steps / elapsed, games / elapsed))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    figures = {}
    for name, runs in samples.items():
        figures[name] = {"steps_per_s": round(statistics.median(s for s, _ in runs)),
                         "games_per_s": round(statistics.median(g for _, g in runs), 2)}
    c4_env = figures["connect_four_v3/env"]["steps_per_s"]
    c4_raw = figures["connect_four_v3/raw_env"]["steps_per_s"]
    ratios = {}
    print(f"{'env':32s} {'steps/s':>10s} {'games/s':>9s} {'vs c4':>7s}")
    for name, f in figures.items():
        base = c4_raw if name.endswith("raw_env") else c4_env
        ratio = f["steps_per_s"] / base
        if name.startswith("arboretum"):
            ratios[name] = round(ratio, 3)
        print(f"{name:32s} {f['steps_per_s']:10d} {f['games_per_s']:9.2f} {ratio:7.2f}")
    ok_env = all(v >= TARGET_ENV for k, v in ratios.items() if k.endswith("/env"))
    ok_raw = all(v >= TARGET_RAW for k, v in ratios.items() if k.endswith("raw_env"))
    result = {
        "figures": figures,
        "ratios_vs_connect_four": ratios,
        "min_ratio_env": min(v for k, v in ratios.items() if k.endswith("/env")),
        "min_ratio_raw_env": min(v for k, v in ratios.items() if k.endswith("raw_env")),
        "targets": {"env": TARGET_ENV, "raw_env": TARGET_RAW},
        "targets_met": {"env": ok_env, "raw_env": ok_raw},
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
