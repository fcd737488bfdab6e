"""Head-to-head of a heuristic agent against another (default: ``tempo`` against the default
``greedy``) on duplicate deals, with the time each takes per decision.

Each deal (game seed ``seed + i``, 2 players) is played twice with the seats swapped. Prints the
candidate's wins, shared wins (draws) and losses, its win rate with a 95% Wilson interval, the
mean score margin and the milliseconds per decision of each side; the last line is one JSON
object. ``--set key=value`` passes a keyword to the candidate's constructor (a Python literal),
e.g. ``--set q_scale=2.0``: docs/teacher_search.md and docs/training.md list the variants run.

    python benchmarks/teacher_bench.py [--candidate tempo] [--opponent greedy] [--deals 150]
        [--seed 10000] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arboretum_env.agents.arena import play_game  # noqa: E402
from arboretum_env.agents.hints import ADVISORS as HEURISTICS  # noqa: E402  (name -> heuristic agent class)
from training.tournament import wilson  # noqa: E402


class Timed:
    """An agent that keeps count of its calls and of the time they took."""

    def __init__(self, agent):
        self.agent, self.calls, self.seconds = agent, 0, 0.0

    def act(self, obs, mask, view=None):
        start = time.perf_counter()
        action = self.agent.act(obs, mask, view)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return action


def keywords(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"--set {pair!r}: expected key=value")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise SystemExit(f"--set {pair!r}: the value must be a Python literal") from None
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidate", choices=sorted(HEURISTICS), default="tempo")
    parser.add_argument("--opponent", choices=sorted(HEURISTICS), default="greedy")
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--seed", type=int, default=10000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a keyword of the candidate's constructor")
    args = parser.parse_args(argv)
    options = keywords(args.set)
    try:
        candidate = Timed(HEURISTICS[args.candidate](**options))
    except TypeError as exc:
        raise SystemExit(f"--set: {exc}") from None
    opponent = Timed(HEURISTICS[args.opponent]())
    wins = draws = losses = 0
    margin = 0
    for i in range(args.deals):
        for seat in (0, 1):
            agents = [candidate.act, opponent.act] if seat == 0 else [opponent.act, candidate.act]
            result = play_game(agents, 2, seed=args.seed + i)
            margin += result.totals[seat] - result.totals[1 - seat]
            if len(result.winners) > 1:
                draws += 1
            elif result.winners[0] == seat:
                wins += 1
            else:
                losses += 1
    games = wins + draws + losses
    lo, hi = wilson(wins, games)
    name = f"{candidate.agent!r}"
    print(f"{name} vs {args.opponent}: games {games} seed {args.seed} W {wins} D {draws} L {losses} "
          f"win {wins / games:.3f} [{lo:.3f}, {hi:.3f}] margin {margin / games:+.2f} | ms/decision "
          f"{1000 * candidate.seconds / max(candidate.calls, 1):.2f} vs "
          f"{1000 * opponent.seconds / max(opponent.calls, 1):.2f}", flush=True)
    out = {"candidate": name, "opponent": args.opponent, "games": games, "seed": args.seed,
           "wins": wins, "draws": draws, "losses": losses, "win_rate": round(wins / games, 4),
           "win_ci": [round(lo, 4), round(hi, 4)], "mean_margin": round(margin / games, 3),
           "ms_per_decision": [round(1000 * t.seconds / max(t.calls, 1), 3) for t in (candidate, opponent)]}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
