"""GreedyAgent against RandomAgent: N seat-alternated 2-player games (a benchmark, not a test).

    python benchmarks/greedy_vs_random.py [--games 400] [--seed 0]

Game i uses seed ``seed + i // 2``, so every deal is played twice with the seats swapped. A shared
win counts as half a win. Prints the greedy win rate with a 95% Wilson interval; the last line
is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arboretum_env.agents import GreedyAgent, RandomAgent  # noqa: E402
from arboretum_env.agents.arena import play_game  # noqa: E402
from training.tournament import wilson  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    greedy = GreedyAgent()
    wins = shared = losses = 0
    greedy_points = random_points = 0
    start = time.perf_counter()
    for i in range(args.games):
        seat = i % 2
        random_agent = RandomAgent(args.seed * 1_000_003 + i)
        agents = [greedy, random_agent] if seat == 0 else [random_agent, greedy]
        result = play_game(agents, 2, args.seed + i // 2)
        if seat in result.winners:
            if len(result.winners) == 1:
                wins += 1
            else:
                shared += 1
        else:
            losses += 1
        greedy_points += result.totals[seat]
        random_points += result.totals[1 - seat]
    elapsed = time.perf_counter() - start
    n = args.games
    score = wins + 0.5 * shared
    rate = score / n if n else 0.0
    low, high = wilson(score, n)
    print(f"greedy vs random, {n} two-player games (seats alternated):")
    print(f"  wins {wins}, shared {shared}, losses {losses}")
    print(f"  greedy win rate {rate:.3f}  (95% Wilson interval {low:.3f} .. {high:.3f})")
    print(f"  mean score greedy {greedy_points / max(n, 1):.2f}, random {random_points / max(n, 1):.2f}")
    print(f"  {elapsed:.1f} s, {elapsed / max(n, 1) * 1000:.0f} ms per game")
    print(json.dumps({"games": n, "wins": wins, "shared": shared, "losses": losses,
                      "win_rate": round(rate, 4), "wilson_low": round(low, 4),
                      "wilson_high": round(high, 4),
                      "mean_score_greedy": round(greedy_points / max(n, 1), 3),
                      "mean_score_random": round(random_points / max(n, 1), 3),
                      "seconds_per_game": round(elapsed / max(n, 1), 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
