"""Speed of the Arboretum AEC env against PettingZoo's connect_four_v3, in the same run.

Random masked play (uniform over the ids with mask == 1, from a seeded numpy Generator) through
``env()`` (the wrapped env) and through ``raw_env()``, with PettingZoo's usual loop: ``last()``
(so one observation and one mask per step), then ``step()``. Steps are the actions of live
agents (the final ``step(None)`` of each terminated agent is timed but not counted); games are
finished games.

The measurements are interleaved in rounds: in each round every Arboretum configuration is
measured right beside the connect_four env of the same kind (``env`` or ``raw_env``; the pair in
random order, the pairs in a shuffled order), and each ratio is the median over the rounds of
the ratio within a pair, so that a machine whose speed drifts during the run biases both sides
of a ratio alike (``ratio_range_over_rounds``: the lowest and highest of those ratios). The
steps/s figures are medians over all their measurements (of wall-clock time; per second of
this process's CPU time beside them, less sensitive to other processes on a shared machine). The last line is one JSON object with every figure, the ratios
ours / connect_four (targets: >= 1.2 through ``env()``, >= 1.5 through ``raw_env()``, on wall
time) and the machine's load average.

The env runs its game on the compiled fast path (``arboretum_env.batch``, one game; numba) where
numba is installed; ``--interpreted`` measures the fallback used without numba (the engine with
the reference encoder). The JSON says which ran (``compiled``).

    python benchmarks/env_speed.py [--seconds 1.0] [--rounds 7] [--seed 0] [--interpreted]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pettingzoo.classic import connect_four_v3  # noqa: E402

from arboretum_env.batch import table as batch_table  # noqa: E402
from arboretum_env.engine import jit_gains  # noqa: E402
from arboretum_env.env import env as arboretum_env  # noqa: E402
from arboretum_env.env import raw_env as arboretum_raw_env  # noqa: E402

TARGET_ENV, TARGET_RAW = 1.2, 1.5


def play(e, seconds: float, rng: np.random.Generator, first_seed: int) -> tuple[int, int, float, float]:
    """Play whole games until ``seconds`` have passed; returns (steps, games, wall seconds,
    CPU seconds of this process)."""
    steps = games = 0
    seed = first_seed
    random = rng.random
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        e.reset(seed=seed)
        seed += 1
        for _agent in e.agent_iter():
            obs, _reward, termination, truncation, _info = e.last()
            if termination or truncation:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[int(random() * len(legal))])
                steps += 1
            e.step(action)
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps, games, elapsed, time.process_time() - cpu


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per env and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interpreted", action="store_true",
                        help="measure the env without its numba kernels (the fallback without numba)")
    args = parser.parse_args(argv)
    if args.interpreted:
        batch_table.available = jit_gains.available = False

    makers = {"connect_four_v3/env": connect_four_v3.env, "connect_four_v3/raw_env": connect_four_v3.raw_env}
    for n in (2, 3, 4):
        makers[f"arboretum_v0/{n}p/env"] = lambda n=n: arboretum_env(num_players=n)
        makers[f"arboretum_v0/{n}p/raw_env"] = lambda n=n: arboretum_raw_env(num_players=n)
    envs = {name: make() for name, make in makers.items()}
    rng = np.random.default_rng(args.seed)
    for name, e in envs.items():  # warm-up: imports, first allocations
        play(e, 0.05, rng, 10_000)

    # Each round measures every Arboretum configuration right beside the connect_four env of
    # the same kind (the pair in random order), and a ratio is taken within each pair: the
    # host's speed drifts over seconds, and a pair shares it.
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in envs}
    pair_ratios: dict[str, list[tuple[float, float]]] = {
        name: [] for name in envs if name.startswith("arboretum")}
    order = list(pair_ratios)
    for r in range(args.rounds):
        rng.shuffle(order)
        for name in order:
            base = "connect_four_v3/raw_env" if name.endswith("raw_env") else "connect_four_v3/env"
            pair = [base, name] if rng.random() < 0.5 else [name, base]
            measured = {}
            for member in pair:
                steps, games, wall, cpu = play(envs[member], args.seconds, rng, 1000 * r)
                measured[member] = (steps / wall, games / wall, steps / max(cpu, 1e-9))
                samples[member].append(measured[member])
            pair_ratios[name].append((measured[name][0] / measured[base][0],
                                      measured[name][2] / measured[base][2]))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    figures = {}
    for name, runs in samples.items():
        figures[name] = {"steps_per_s": round(statistics.median(s for s, _, _ in runs)),
                         "games_per_s": round(statistics.median(g for _, g, _ in runs), 2),
                         "steps_per_cpu_s": round(statistics.median(c for _, _, c in runs))}
    ratios = {name: round(statistics.median(w for w, _ in pairs), 3)
              for name, pairs in pair_ratios.items()}
    cpu_ratios = {name: round(statistics.median(c for _, c in pairs), 3)
                  for name, pairs in pair_ratios.items()}
    spread = {name: [round(min(w for w, _ in pairs), 3), round(max(w for w, _ in pairs), 3)]
              for name, pairs in pair_ratios.items()}
    print(f"{'env':32s} {'steps/s':>9s} {'games/s':>8s} {'vs c4':>6s} {'steps/cpu-s':>12s} {'vs c4':>6s}")
    for name, f in figures.items():
        ratio, cpu_ratio = ratios.get(name, 1.0), cpu_ratios.get(name, 1.0)
        print(f"{name:32s} {f['steps_per_s']:9d} {f['games_per_s']:8.2f} {ratio:6.2f}"
              f" {f['steps_per_cpu_s']:12d} {cpu_ratio:6.2f}")

    def minimum(table, suffix):
        return min(v for k, v in table.items() if k.endswith(suffix))

    result = {
        "figures": figures,
        "ratios_vs_connect_four": ratios,
        "cpu_time_ratios_vs_connect_four": cpu_ratios,
        "ratio_range_over_rounds": spread,
        "min_ratio_env": minimum(ratios, "/env"),
        "min_ratio_raw_env": minimum(ratios, "raw_env"),
        "compiled": batch_table.available,
        "targets": {"env": TARGET_ENV, "raw_env": TARGET_RAW},
        "targets_met": {"env": minimum(ratios, "/env") >= TARGET_ENV,
                        "raw_env": minimum(ratios, "raw_env") >= TARGET_RAW},
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
