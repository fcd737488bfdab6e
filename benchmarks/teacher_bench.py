"""Head-to-head of a candidate teacher against the default GreedyAgent on duplicate deals.

Usage: python benchmarks/teacher_bench.py "GreedyPlusAgent(...)" --deals 150 --seed 10000
Each deal (game seed ``seed + i``) is played twice with the seats swapped. Prints wins, draws,
losses of the candidate, the win rate with a 95% Wilson interval and the seconds per decision
of each side.
"""

from __future__ import annotations

import argparse
import time

from arboretum_env.agents import GreedyAgent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.greedy_plus import GreedyPlusAgent  # noqa: F401 (used by eval)
from training.tournament import wilson


class Timed:
    def __init__(self, agent):
        self.agent, self.calls, self.seconds = agent, 0, 0.0

    def act(self, obs, mask, view=None):
        t = time.perf_counter()
        a = self.agent.act(obs, mask, view)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return a


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("candidate")
    ap.add_argument("--deals", type=int, default=150)
    ap.add_argument("--seed", type=int, default=10000)
    ap.add_argument("--opponent", default="GreedyAgent()")
    args = ap.parse_args()
    cand = Timed(eval(args.candidate))
    opp = Timed(eval(args.opponent))
    w = d = l = 0
    margin = 0
    for i in range(args.deals):
        for seat in (0, 1):
            agents = [cand.act, opp.act] if seat == 0 else [opp.act, cand.act]
            res = play_game(agents, 2, seed=args.seed + i)
            winners = res.winners
            margin += res.totals[seat] - res.totals[1 - seat]
            if len(winners) > 1:
                d += 1
            elif winners[0] == seat:
                w += 1
            else:
                l += 1
    n = w + d + l
    lo, hi = wilson(w, n)
    print(f"{args.candidate} vs {args.opponent}: games {n} seed {args.seed} W {w} D {d} L {l} "
          f"win {w / n:.3f} [{lo:.3f}, {hi:.3f}] (W+D/2 {(w + d / 2) / n:.3f}) "
          f"margin {margin / n:+.2f} | ms/decision cand {1000 * cand.seconds / max(cand.calls, 1):.2f} "
          f"opp {1000 * opp.seconds / max(opp.calls, 1):.2f}", flush=True)


if __name__ == "__main__":
    main()
