"""Each framework example's training speed beside a plain PettingZoo loop, in the same run.

The plain loop is random legal play through ``arboretum_env.env()`` with PettingZoo's usual
``last()`` / ``step()`` loop (``benchmarks/env_speed.play``: 2 players, one observation and one
mask per step): the ceiling any framework's env stepping starts from. Then each example of
``examples/`` runs with ``--smoke`` in the interpreter that has its framework (the Makefile's
framework venvs by default), and its last line (one JSON object) is read back; RLlib runs twice,
with 1 and with 2 env runners, side by side. The examples' steps/s are env steps per second of
training wall time (collection and updates together), so they sit well below the plain loop: the
gap is the framework's per-step cost and the network's.

The last line is one JSON object: the plain loop's steps/s and, per example, its JSON (or the
reason it did not run).

    python benchmarks/frameworks_speed.py [--seconds 5] [--frameworks-python PATH]
        [--agilerl-python PATH] [--only rllib,torchrl,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from env_speed import play  # noqa: E402

from arboretum_env.env import env as arboretum_env  # noqa: E402

# name -> (example file, extra arguments, which interpreter)
RUNS = {
    "rllib_1_runner": ("rllib_selfplay.py", ["--num-env-runners", "1"], "frameworks"),
    "rllib_2_runners": ("rllib_selfplay.py", ["--num-env-runners", "2"], "frameworks"),
    "torchrl": ("torchrl_ppo.py", [], "frameworks"),
    "tianshou": ("tianshou_dqn.py", [], "frameworks"),
    "agilerl": ("agilerl_dqn.py", [], "agilerl"),
}


def plain_loop(seconds: float, seed: int) -> float:
    e = arboretum_env(num_players=2)
    play(e, 0.2, np.random.default_rng(seed), first_seed=seed)  # warm-up (kernel compilation)
    steps, _, wall, _ = play(e, seconds, np.random.default_rng(seed), first_seed=seed)
    return steps / wall


def run_example(python: str, example: str, extra: list[str], timeout: float) -> dict:
    if not Path(python).exists():
        return {"skipped": f"no interpreter at {python} (make test-frameworks builds it)"}
    start = time.perf_counter()
    try:
        done = subprocess.run([python, str(ROOT / "examples" / example), "--smoke", *extra], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        return {"failed": f"timed out after {timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"failed": f"exit {done.returncode}: {tail}"}
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"failed": f"last line is not JSON: {lines[-1][:120]}"}
    result["process_wall_s"] = round(time.perf_counter() - start, 1)
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of the plain loop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frameworks-python", default=str(ROOT / ".venv-frameworks/bin/python"))
    parser.add_argument("--agilerl-python", default=str(ROOT / ".venv-agilerl/bin/python"))
    parser.add_argument("--only", default=",".join(RUNS), help="comma-separated names of " + ", ".join(RUNS))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per example")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - set(RUNS))
    if unknown:
        parser.error(f"unknown run(s) {', '.join(unknown)}; choose from {', '.join(RUNS)}")
    pythons = {"frameworks": args.frameworks_python, "agilerl": args.agilerl_python}
    out = {"benchmark": "frameworks_speed", "players": 2,
           "plain_pettingzoo_loop_steps_per_s": round(plain_loop(args.seconds, args.seed)),
           "cpu_count": os.cpu_count(), "examples": {}}
    for name in names:
        example, extra, which = RUNS[name]
        out["examples"][name] = result = run_example(pythons[which], example, extra, args.timeout)
        print(f"{name}: {json.dumps(result)}", file=sys.stderr)
    out["load_average"] = list(os.getloadavg())
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
