"""Where does a policy lose its points against another agent? Per side, the parts of the score.

A measurement, not a speed. ``--policy`` (an agent spec of ``agents.make_agent``: ``selfplay``
for ``models/selfplay_2p``, ``shipped``, a policy file, ``greedy`` ...) plays ``--games`` 2-player games against ``--opponent``
straight on the engine (``agents.arena.play_game``, seeds ``--seed + g``, seats alternated). Per
side and game, from the engine's final score:

* ``points``: its total;
* ``rights``: species whose right it held (ties count for both);
* ``species_scored``: species in which it scored a path;
* ``longest_path``: the most cards in one of its scored paths (0: none scored);
* ``wins``: games it won (a tie for the most points counts for both).

The last line is one JSON object: the two specs, the mean of each part per side (``policy``,
``opponent``), the games and the first seed.

    python benchmarks/points_breakdown.py [--policy selfplay] [--opponent greedy] [--games 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.network_capacity import positive  # noqa: E402

PARTS = ("points", "rights", "species_scored", "longest_path", "wins")


def parts_of(result, seat: int) -> tuple[float, ...]:
    """``PARTS`` of seat ``seat`` in an engine ``ScoreResult``."""
    player = result.players[seat]
    species = list(player.species.values())
    scored = [s for s in species if s.points > 0]
    return (player.total, sum(1 for s in species if s.right), len(scored),
            max((len(s.path) for s in scored), default=0), seat in result.winners)


def breakdown(policy, opponent, games: int, seed: int) -> dict:
    """``{"policy": {part: mean}, "opponent": {part: mean}}`` over ``games`` games, the policy
    in seat 0 of the even games and seat 1 of the odd ones."""
    from arboretum_env.agents.arena import play_game

    agents = {"policy": policy, "opponent": opponent}
    sides: dict[str, list] = {"policy": [], "opponent": []}
    for g in range(games):
        order = ["policy", "opponent"] if g % 2 == 0 else ["opponent", "policy"]
        result = play_game([agents[name] for name in order], 2, seed=seed + g)
        for seat, name in enumerate(order):
            sides[name].append(parts_of(result, seat))
    return {name: dict(zip(PARTS, (round(float(v), 3) for v in np.mean(rows, axis=0))))
            for name, rows in sides.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policy", default="selfplay", help="agent spec (make_agent)")
    parser.add_argument("--opponent", default="greedy", help="agent spec (make_agent)")
    parser.add_argument("--games", type=positive, default=200)
    parser.add_argument("--seed", type=int, default=30_000)
    parser.add_argument("--threads", type=positive, default=1, help="torch threads")
    args = parser.parse_args(argv)

    import torch

    from arboretum_env.agents import make_agent
    from arboretum_env.errors import UserError

    torch.set_num_threads(args.threads)
    try:
        policy, opponent = make_agent(args.policy), make_agent(args.opponent, seed=1)
    except (ValueError, OSError, UserError) as exc:  # an unknown spec, a missing or damaged file: one line
        parser.error(str(exc))
    start = time.perf_counter()
    sides = breakdown(policy, opponent, args.games, args.seed)
    out = {"benchmark": "points_breakdown", "policy_spec": args.policy, "opponent_spec": args.opponent,
           "games": args.games, "seed": args.seed, **sides, "seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
