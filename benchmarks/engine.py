"""Engine speed on one core: random legal play and best-path scoring.

* full games/s and decisions/s for 2, 3 and 4 players: ``new_game`` + ``random_playout`` +
  final scoring (``engine.score``), each game from a shared ``numpy`` Generator;
* best-path scoring calls/s: ``scoring.best_path`` on 17-card arboretums taken from finished
  2-player games, one call per species in play (6 per arboretum).

The playout and the scorer run as numba kernels when numba is installed (``"compiled": true``);
``--interpreted`` measures the pure-Python engine instead (the fallback without numba).
Human-readable lines first; the LAST line is one JSON object with every figure.
Target: at least 3,000 two-player games/s.

    python benchmarks/engine.py [--seconds 3] [--seed 0] [--interpreted]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arboretum_env.engine import GameConfig, best_path, new_game, random_playout, score  # noqa: E402
from arboretum_env.engine import jit_paths, jit_playout  # noqa: E402

TARGET_GAMES_PER_S_2P = 3000


def bench_games(num_players: int, seconds: float, seed: int) -> tuple[float, float, int]:
    """Full random games (set-up, play, final score) for ``seconds``: games/s, decisions/s."""
    rng = np.random.default_rng(seed)
    config = GameConfig(num_players)
    for _ in range(20):  # warm-up
        score(random_playout(new_game(config, rng), rng))
    games = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            state = random_playout(new_game(config, rng), rng)
            score(state)
            decisions += len(state.history)
        games += 50
        now = time.perf_counter()
        if now >= deadline:
            break
    elapsed = now - start
    return games / elapsed, decisions / elapsed, games


def full_size_arboretums(count: int, seed: int) -> list[tuple[dict[int, int], tuple[int, ...]]]:
    """``count`` 17-card arboretums (with their game's species) from finished 2-player games."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        state = random_playout(new_game(GameConfig(2), rng), rng)
        for arboretum in state.arboretums:
            if len(arboretum) == 17:
                out.append((dict(arboretum), tuple(state.species)))
    return out


def bench_best_path(seconds: float, seed: int) -> tuple[float, int]:
    pool = full_size_arboretums(200, seed)
    for arboretum, species in pool[:20]:  # warm-up
        for s in species:
            best_path(arboretum, s)
    calls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for arboretum, species in pool:
            for s in species:
                best_path(arboretum, s)
            calls += len(species)
        now = time.perf_counter()
        if now >= deadline:
            break
    return calls / (now - start), calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interpreted", action="store_true",
                        help="measure the pure-Python engine (as without numba)")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.interpreted:
        jit_playout.available = jit_paths.available = False
    compiled = jit_playout.available

    print(f"engine benchmark: python {platform.python_version()}, one core, "
          f"{args.seconds:g} s per measurement, "
          f"{'compiled (numba) playout and scorer' if compiled else 'interpreted engine'}")
    figures: dict[str, float | bool] = {"compiled": compiled}
    for n in (2, 3, 4):
        games_per_s, decisions_per_s, games = bench_games(n, args.seconds, args.seed + n)
        figures[f"games_per_s_{n}p"] = round(games_per_s, 1)
        figures[f"decisions_per_s_{n}p"] = round(decisions_per_s, 1)
        print(f"{n} players: {games_per_s:10,.1f} games/s  {decisions_per_s:12,.1f} decisions/s"
              f"  ({games} random games with final scoring)")
    calls_per_s, calls = bench_best_path(args.seconds, args.seed)
    figures["best_path_calls_per_s"] = round(calls_per_s, 1)
    print(f"best_path: {calls_per_s:10,.1f} calls/s on 17-card arboretums from 2-player games "
          f"({calls} calls, one per species in play)")
    met = figures["games_per_s_2p"] >= TARGET_GAMES_PER_S_2P
    print(f"target {TARGET_GAMES_PER_S_2P:,} two-player games/s: {'met' if met else 'NOT met'}")
    figures["target_games_per_s_2p"] = TARGET_GAMES_PER_S_2P
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
