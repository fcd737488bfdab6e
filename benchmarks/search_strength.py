"""Does rollout search lift the self-play policy? The policy alone and searched, same deals.

A measurement of one policy-improvement operator, the candidate step of expert iteration: how
much stronger is ``training.rollout_search.RolloutSearch`` over a policy network (determinized
rollouts of the network itself on the compiled engine, no heuristic) than the network's own
most likely action, against a baseline?

Deal ``d`` is ``raw_env(num_players=2).reset(seed=--seed + d)``, played twice (the measured
agent in seat 0, then in seat 1) by each of: the policy alone (argmax of its masked logits),
and the searched policy (``--determinizations`` deals of the hidden cards times the
``--candidates`` most likely actions, each played out to the end by the policy: its most likely
actions, or sampled at ``--temperature``). The opponent is
``--opponent`` in the other seat. ``--workers`` processes share the deals; the result does not
depend on their number (each decision's generator is seeded by its game and decision number).

The last line is one JSON object: for each agent its wins, draws, losses and mean margin (own
score minus the other's), the paired difference of margins (searched minus plain, same deal and
seat) with its standard error, and the search's seconds and play-outs per decision.

    python benchmarks/search_strength.py [--policy models/selfplay_2p/policy.safetensors]
        [--opponent greedy] [--deals 50] [--determinizations 8] [--candidates 6] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.network_capacity import positive, process_map  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OPPONENTS = ("random", "greedy", "greedy_plus", "tempo")


def play(policy_path: str, opponent: str, game: int, seed: int, searched: bool,
         determinizations: int, candidates: int, temperature: float = 0.0) -> dict:
    """Game ``game`` (deal ``seed + game // 2``, the agent in seat ``game % 2``)."""
    from arboretum_env.agents import make_agent
    from arboretum_env.agents.policy_file import load_policy_file
    from arboretum_env.batch import table as batch_table
    from arboretum_env.env import raw_env
    from training.rollout_search import RolloutSearch

    net, _ = load_policy_file(policy_path)
    search = RolloutSearch(net, determinizations, candidates, temperature)
    env = raw_env(num_players=2)
    env.reset(seed=seed + game // 2)
    seat = game % 2
    other = make_agent(opponent, seed=seed * 7919 + game)
    row = batch_table.new_tables(1)[0]
    decisions = playouts = 0
    spent = 0.0
    while not env.state.game_over:
        agent = env.agent_selection
        if env.state.current_player != seat:
            obs = env.observe(agent)
            env.step(int(other(obs["observation"], obs["action_mask"], env.table_view(agent))))
            continue
        batch_table.load(row, env.state, env.pending)
        began = time.perf_counter()
        if searched:
            rng = np.random.default_rng([seed, game, decisions])
            result = search.choose(row, rng)
            action, playouts = result.action, playouts + result.rollouts
        else:
            action = int(search.logits(row[None])[0][0].argmax())  # logits() runs in inference mode
        spent += time.perf_counter() - began
        decisions += 1
        env.step(action)
    infos = env.infos[env.possible_agents[seat]]
    scores, winners = infos["scores"], infos["winners"]
    return {"game": game, "searched": searched, "margin": scores[seat] - scores[1 - seat],
            "won": bool(winners[seat]), "shared": bool(winners[seat] and winners[1 - seat]),
            "decisions": decisions, "playouts": playouts, "seconds": spent}


def _play(args: tuple) -> dict:
    import torch

    torch.set_num_threads(1)
    return play(*args)


def summary(games: list[dict]) -> dict:
    won = sum(g["won"] and not g["shared"] for g in games)
    shared = sum(g["shared"] for g in games)
    decisions = sum(g["decisions"] for g in games)
    return {"games": len(games), "wins": won, "draws": shared, "losses": len(games) - won - shared,
            "win_rate": round(won / len(games), 4),
            "mean_margin": round(float(np.mean([g["margin"] for g in games])), 3),
            "ms_per_decision": round(1000 * sum(g["seconds"] for g in games) / decisions, 2),
            "playouts_per_decision": round(sum(g["playouts"] for g in games) / decisions, 1)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=str(ROOT / "models/selfplay_2p/policy.safetensors"))
    parser.add_argument("--opponent", choices=OPPONENTS, default="greedy")
    parser.add_argument("--deals", type=positive, default=50, help="each played twice, seats swapped")
    parser.add_argument("--determinizations", type=positive, default=8)
    parser.add_argument("--candidates", type=positive, default=6)
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="play-outs: 0 the policy's most likely action, > 0 sampled at that temperature")
    parser.add_argument("--workers", type=positive, default=2, help="processes sharing the games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"argument --seed: must be at least 0, got {args.seed}")
    if not 0.0 <= args.temperature < float("inf"):
        parser.error(f"argument --temperature: must be a finite number >= 0, got {args.temperature}")
    from arboretum_env.agents.policy_file import read_policy_file
    from arboretum_env.errors import UserError

    try:
        read_policy_file(args.policy)
    except UserError as exc:
        parser.error(f"argument --policy: {exc}")

    jobs = [(args.policy, args.opponent, g, args.seed, searched, args.determinizations, args.candidates,
             args.temperature)
            for searched in (False, True) for g in range(2 * args.deals)]
    began = time.perf_counter()
    games = process_map(_play, jobs, args.workers)
    plain = [g for g in games if not g["searched"]]
    searched = [g for g in games if g["searched"]]
    diff = np.array([s["margin"] - p["margin"] for s, p in zip(searched, plain)], float)
    return {"benchmark": "search_strength", "policy": args.policy, "opponent": args.opponent,
            "deals": args.deals, "determinizations": args.determinizations, "candidates": args.candidates,
            "temperature": args.temperature, "plain": summary(plain), "searched": summary(searched),
            "margin_gain": {"mean": round(float(diff.mean()), 3),
                            "standard_error": round(float(diff.std(ddof=1) / np.sqrt(len(diff))), 3)
                            if len(diff) > 1 else None},
            "seconds": round(time.perf_counter() - began)}


if __name__ == "__main__":
    print(json.dumps(main()))
