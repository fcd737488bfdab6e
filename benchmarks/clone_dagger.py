"""Is the greedy clone held back by its data or by its network? DAgger on the clone.

A measurement, not a training recipe (no shipped policy comes from it). ``network_capacity.py``
clones greedy from greedy-against-greedy games; its clone fits 77% of greedy's held-out decisions
and still wins only about a quarter of its games against greedy. A clone trained on greedy's
own games never sees the positions its own mistakes lead to (the classic failure of behaviour
cloning, Ross, Gordon and Bagnell 2011). DAgger adds exactly those: the clone plays, greedy
labels the clone's positions, the labels join the data and the clone trains on. If the clone
then gets much closer to greedy, the network can hold greedy's policy and its data was the
limit; if not, the network's form is.

1. The initial clone: ``network_capacity.clone`` on ``--games`` greedy-against-greedy games
   (the same games and split as ``network_capacity.py``).
2. ``--rounds`` rounds: the clone (argmax) plays ``--round-games`` games against greedy (seats
   alternated, ``raw_env`` seeds ``2_000_000 + 100_000 * round + g``, ``--workers`` processes).
   At each of its decisions greedy, reading the clone's seat, gives the action it would take:
   the clone's own action is played, greedy's becomes the label. The labelled positions join the
   data and the clone trains ``--round-epochs`` more passes over all of it (learning rate
   ``--round-lr`` falling linearly to 0).
3. Per round (round 0 is the initial clone): **on-policy agreement**, how often the clone's own
   choice equals greedy's label in the positions it reached (measured before training on
   them), and the clone against greedy over ``--eval-games`` games (``evaluate_policy``, the
   seed of ``network_capacity.py``'s greedy evaluation). Each round's ``held_out_accuracy`` is
   ``clone``'s own: 10% of all the data so far, drawn afresh each round, so from round 1 on most
   of those rows were trained on in earlier rounds (an upper bound on the fit, not a clean
   held-out figure); the on-policy agreement is the clean one.

The last line is one JSON object with the rounds. Memory: about 1.5 GB per 1,000 initial games
and 0.75 GB per 1,000 round games (float16 observations).

    python benchmarks/clone_dagger.py [--games 4000] [--rounds 3] [--round-games 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.network_capacity import (  # noqa: E402
    KINDS, clone, clone_acts, depth_count, greedy_decisions_parallel, kind_of, parts_in_order, play_against_greedy,
    positive)

ROUND_SEED = 2_000_000


def labelled_games(net, games: int, seed: int, first: int = 0):
    """Games ``first .. first + games - 1`` of ``net`` (argmax) against greedy, ``raw_env`` seed
    ``seed + g``, the net in seat ``g % 2``. Returns the net's positions (float16 observations,
    masks), greedy's action in each (the labels) and the net's own actions."""
    from arboretum_env.agents import make_agent

    act = clone_acts(net)
    labeller = make_agent("greedy")  # deterministic, no memory
    obs_list, mask_list, labels, played = [], [], [], []

    def decide(observation, mask, view) -> int:
        action = int(act(observation[None], mask[None])[0])
        obs_list.append(observation.astype(np.float16))
        mask_list.append(mask.astype(bool))
        labels.append(int(labeller.act(observation, mask, view)))
        played.append(action)
        return action

    play_against_greedy(decide, games, seed, first)
    return (np.stack(obs_list), np.stack(mask_list), np.asarray(labels, np.int64),
            np.asarray(played, np.int64))


def _part(job):
    """One worker's share of ``labelled_games``: the net rebuilt from its settings and weights."""
    import torch

    from arboretum_env.agents.selfplay_net import PlaneNet

    settings, state, games, seed, first = job
    torch.set_num_threads(1)
    net = PlaneNet(**settings)
    net.load_state_dict(state)
    return labelled_games(net.eval(), games, seed, first)


def labelled_games_parallel(net, settings: dict, games: int, seed: int, workers: int):
    """``labelled_games`` split over ``workers`` spawned processes, concatenated in game order."""
    if workers <= 1 or games < 2:
        return labelled_games(net, games, seed)
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    return parts_in_order(_part, (settings, state), games, seed, workers)


def agreement(labels: np.ndarray, played: np.ndarray) -> dict:
    """How often the clone's own action equals greedy's label, overall and per decision kind
    (by the label's kind)."""
    kinds = kind_of(labels)
    out = {"all": round(float((labels == played).mean()), 4)}
    out.update({name: round(float((labels[kinds == k] == played[kinds == k]).mean()), 4)
                for k, name in enumerate(KINDS) if (kinds == k).any()})
    return out


def against_greedy(net, games: int) -> dict:
    from training.batch_eval import evaluate_policy

    result = evaluate_policy(clone_acts(net), "greedy", 2, games, seed=10_000_019 * 2)
    return {k: round(result[k], 4) for k in ("win_rate", "draw_rate", "mean_margin")}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=positive, default=4000, help="greedy-vs-greedy games of the initial clone")
    parser.add_argument("--epochs", type=positive, default=8, help="passes of the initial clone")
    parser.add_argument("--rounds", type=int, default=3, help="DAgger rounds (0: the initial clone only)")
    parser.add_argument("--round-games", type=positive, default=1000, help="clone-vs-greedy games per round")
    parser.add_argument("--round-epochs", type=positive, default=2, help="passes over all the data per round")
    parser.add_argument("--round-lr", type=float, default=3e-4, help="Adam's starting learning rate per round")
    parser.add_argument("--channels", type=positive, default=8)
    parser.add_argument("--hidden", type=positive, default=128)
    parser.add_argument("--card-hidden", type=int, default=32, help="the card head's width (0: none)")
    parser.add_argument("--no-card-gains", action="store_true", help="the card head without the card gains")
    parser.add_argument("--depth", type=depth_count, default=0, help="PlaneNet's depth (residual blocks; 0: none)")
    parser.add_argument("--eval-games", type=positive, default=200)
    parser.add_argument("--threads", type=positive, default=2, help="torch threads")
    parser.add_argument("--workers", type=positive, default=2, help="processes playing the games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.seed, args.rounds, args.card_hidden) < 0:
        parser.error("--seed, --rounds and --card-hidden must be at least 0")
    if not args.no_card_gains and not args.card_hidden:
        parser.error("the card gains need the card head: give --card-hidden above 0 or --no-card-gains")
    if not 0 < args.round_lr < 1:
        parser.error(f"argument --round-lr: must be in (0, 1), got {args.round_lr}")

    import torch

    torch.set_num_threads(args.threads)
    settings = {"channels": args.channels, "hidden": args.hidden, "card_hidden": args.card_hidden,
                "card_gains": bool(args.card_hidden) and not args.no_card_gains, "depth": args.depth}
    began = time.perf_counter()
    obs, masks, actions = greedy_decisions_parallel(args.games, 1_000_000, args.workers)
    net, accuracy = clone(obs, masks, actions, args.channels, args.hidden, args.epochs, args.seed,
                          card_hidden=settings["card_hidden"], card_gains=settings["card_gains"],
                          depth=settings["depth"])
    rounds = [{"round": 0, "samples": int(len(actions)), "held_out_accuracy": accuracy,
               "seconds": round(time.perf_counter() - began)}]
    for r in range(1, args.rounds + 1):
        rounds[-1]["against_greedy"] = against_greedy(net, args.eval_games)
        print(json.dumps(rounds[-1]), flush=True)
        began = time.perf_counter()
        o, m, labels, played = labelled_games_parallel(net, settings, args.round_games,
                                                       ROUND_SEED + 100_000 * r, args.workers)
        rounds.append({"round": r, "new_samples": int(len(labels)), "on_policy_agreement": agreement(labels, played)})
        obs, masks, actions = (np.concatenate([obs, o]), np.concatenate([masks, m]),
                               np.concatenate([actions, labels]))
        del o, m
        net, accuracy = clone(obs, masks, actions, args.channels, args.hidden, args.round_epochs,
                              args.seed + r, net=net, lr=args.round_lr)
        rounds[-1].update(samples=int(len(actions)), held_out_accuracy=accuracy,
                          seconds=round(time.perf_counter() - began))
    rounds[-1]["against_greedy"] = against_greedy(net, args.eval_games)
    return {"benchmark": "clone_dagger", "games": args.games, "epochs": args.epochs,
            "round_games": args.round_games, "round_epochs": args.round_epochs, "round_lr": args.round_lr,
            "network": {"name": "plane_net", **settings, **net.size_report()},
            "eval_games": args.eval_games, "rounds": rounds}


if __name__ == "__main__":
    print(json.dumps(main()))
