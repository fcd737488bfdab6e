"""Strength of a policy file (default: the shipped agent) against RandomAgent and GreedyAgent.

2-player games, seats alternated on shared deals (``training.tournament``), default 1,000 games
per opponent. Targets (issue "Agents, self-play training ..."): win rate >= 95% against random,
>= 55% against greedy. A shared win counts as a draw, not a win. Last line: one JSON object.

    .venv/bin/python benchmarks/agents.py [--policy models/shipped/policy.safetensors] [--games 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from training.tournament import load_entrants, run_tournament  # noqa: E402

TARGETS = {"random": 0.95, "greedy": 0.55}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default=str(REPO / "models" / "shipped" / "policy.safetensors"))
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--opponents", nargs="+", choices=sorted(TARGETS), default=list(TARGETS),
                        help="which baselines to play (default: both)")
    args = parser.parse_args(argv)
    out = {"policy": str(Path(args.policy).relative_to(REPO)) if Path(args.policy).is_relative_to(REPO)
           else args.policy, "games": args.games}
    for opponent in args.opponents:
        target = TARGETS[opponent]
        start = time.perf_counter()
        result = run_tournament(load_entrants([args.policy, opponent]), 2, args.games, args.seed)
        s = result.stats[0]
        lo, hi = s["win_ci"]
        print(f"vs {opponent:<7} win {s['win_rate']:.1%} [{lo:.1%}, {hi:.1%}]  draw {s['draw_rate']:.1%}  "
              f"loss {s['loss_rate']:.1%}  avg margin {s['avg_margin']:+.2f}  "
              f"target {target:.0%}: {'met' if s['win_rate'] >= target else 'NOT met'}  "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
        out[f"win_rate_vs_{opponent}"] = round(s["win_rate"], 4)
        out[f"win_ci_vs_{opponent}"] = [round(lo, 4), round(hi, 4)]
        out[f"draw_rate_vs_{opponent}"] = round(s["draw_rate"], 4)
        out[f"avg_margin_vs_{opponent}"] = round(s["avg_margin"], 3)
        out[f"target_met_vs_{opponent}"] = s["win_rate"] >= target
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
