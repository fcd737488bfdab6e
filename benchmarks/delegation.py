"""Which decisions cost a policy its games against greedy? Greedy decides one kind for it.

A measurement, not a speed. A policy file (``--policy``, argmax of its masked logits) plays
``--games`` 2-player games against greedy (``raw_env`` seeds ``--seed + g``, seats alternated),
once alone and once per decision kind (``--kinds``: draw, card, cell, discard) where greedy,
reading the policy's own seat, replaces the policy's choice whenever that choice is of that
kind. The same deals for every setting. If handing one kind to greedy lifts the policy much
more than the others, that kind is where it loses; if all lift it a little, no single head is
the gap.

The last line is one JSON object: per setting (``none`` = the policy alone) wins, draws
(equal scores), win rate and mean margin (own score minus the other's).

    python benchmarks/delegation.py [--policy models/selfplay_2p/policy.safetensors] [--games 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.network_capacity import KINDS, kind_of, play_against_greedy, positive  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def kind_name(action: int) -> str:
    """``KINDS``' name of an action id (``network_capacity.kind_of``)."""
    return KINDS[int(kind_of(np.asarray([action]))[0])]


def play(policy, kind: str, games: int, seed: int) -> dict:
    """``games`` games of ``policy`` (a ``PolicyAgent``) against greedy; greedy chooses the
    decisions of kind ``kind`` in the policy's seat (``none``: never)."""
    from arboretum_env.agents import make_agent

    advisor = make_agent("greedy")  # deterministic, no memory

    def decide(observation, mask, view) -> int:
        action = int(policy.act(observation, mask, view))
        return int(advisor.act(observation, mask, view)) if kind_name(action) == kind else action

    margins = play_against_greedy(decide, games, seed)
    wins, draws = sum(m > 0 for m in margins), sum(m == 0 for m in margins)
    return {"games": games, "wins": wins, "draws": draws, "win_rate": round(wins / games, 4),
            "mean_margin": round(float(np.mean(margins)), 3)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=str(ROOT / "models/selfplay_2p/policy.safetensors"))
    parser.add_argument("--games", type=positive, default=200)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--seed", type=int, default=5000)
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"argument --seed: must be at least 0, got {args.seed}")

    import torch

    from arboretum_env.agents.policy import PolicyAgent

    torch.set_num_threads(1)
    policy = PolicyAgent(args.policy)
    began = time.perf_counter()
    settings = {kind: play(policy, kind, args.games, args.seed) for kind in ["none", *args.kinds]}
    return {"benchmark": "delegation", "policy": args.policy, "opponent": "greedy", "seed": args.seed,
            "settings": settings, "seconds": round(time.perf_counter() - began)}


if __name__ == "__main__":
    from arboretum_env.errors import UserError

    try:
        print(json.dumps(main()))
    except UserError as exc:  # a bad policy file: one line
        sys.exit(f"error: {exc}")
