"""How strong a policy can the self-play network hold? Greedy cloned into ``PlaneNet``.

A measurement of the network and its observation, not a training recipe: no shipped policy
comes from it (``models/selfplay_2p`` learns by self-play alone). It tells apart two reasons a
self-play run may plateau: the network cannot represent a stronger policy, or the training
signal does not lead there. If a network cloned from greedy by supervised learning beats the
self-play policy against greedy, the same network can hold a stronger policy than self-play
found.

1. ``--games`` games of greedy against greedy (2 players, ``raw_env`` seeds ``1_000_000 + g``,
   ``--workers`` processes): every decision's observation, mask and greedy's action (about 94
   decisions a game).
2. ``PlaneNet(--channels, --hidden, --card-hidden, --card-gains, --depth)`` trained by cross-entropy on
   greedy's action, masked logits, Adam, ``--epochs`` passes (learning rate linear to 0); 10% of
   the decisions held out.
3. The clone (argmax) against random and greedy, ``--eval-games`` games each, seats alternated
   (``training.batch_eval.evaluate_policy``, the trainer's evaluation).

The last line is one JSON object: samples, held-out accuracy (overall and per decision: draw,
card to play, cell, discard), win rate, draw rate and mean margin against each baseline.
Memory: the observations are kept as float16, about 1.5 GB per 1,000 games.

    python benchmarks/network_capacity.py [--games 4000] [--epochs 8] [--threads 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KINDS = ("draw", "card", "cell", "discard")


def greedy_decisions(games: int, seed: int, first: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations (float16), masks and greedy's actions of games ``first .. first + games - 1``
    of greedy against greedy (``raw_env`` seed ``seed + g``), recorded by the imitation warm
    start's ``teacher_games``. Greedy has no randomness, so a split into parts gives the same
    decisions."""
    from training.imitation import teacher_games

    obs, masks, actions, _ = teacher_games(2, games, seed + first, teacher="greedy")
    return obs, masks, actions


def _part(args: tuple[int, int, int]):
    return greedy_decisions(*args)


def process_map(function, jobs: list, workers: int) -> list:
    """``[function(job) for job in jobs]``, in order, by up to ``workers`` spawned processes
    (in this process when one is enough); ``function`` must be importable by the workers."""
    if workers <= 1 or len(jobs) < 2:
        return [function(job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(function, jobs))


def parts_in_order(function, head: tuple, games: int, seed: int, workers: int) -> tuple:
    """Games ``0 .. games - 1`` split into up to ``workers`` ranges, each played by
    ``function((*head, count, seed, first))`` in a spawned process (``process_map``); the
    arrays it returns, concatenated in game order."""
    jobs = [(*head, len(c), seed, int(c[0])) for c in np.array_split(np.arange(games), workers) if len(c)]
    done = process_map(function, jobs, workers)
    return tuple(np.concatenate([d[i] for d in done]) for i in range(len(done[0])))


def greedy_decisions_parallel(games: int, seed: int, workers: int):
    """``greedy_decisions(games, seed)`` played by ``workers`` processes."""
    if workers <= 1 or games < 2:
        return greedy_decisions(games, seed)
    return parts_in_order(_part, (), games, seed, workers)


def play_against_greedy(decide, games: int, seed: int, first: int = 0) -> list[float]:
    """Games ``first .. first + games - 1`` (2 players, ``raw_env`` seed ``seed + g``): seat
    ``g % 2`` plays ``decide(observation, mask, table_view) -> action id``, greedy the other
    seat. Returns each game's margin (that seat's score minus greedy's)."""
    from arboretum_env.agents import make_agent
    from arboretum_env.env import raw_env

    greedy = make_agent("greedy")  # deterministic, no memory: one for every game
    margins = []
    for g in range(first, first + games):
        env = raw_env(num_players=2)
        env.reset(seed=seed + g)
        seat = g % 2
        while not env.state.game_over:
            agent = env.agent_selection
            obs = env.observe(agent)
            view = env.table_view(agent)
            player = decide if env.state.current_player == seat else greedy.act
            env.step(int(player(obs["observation"], obs["action_mask"], view)))
        scores = env.infos[env.possible_agents[seat]]["scores"]
        margins.append(scores[seat] - scores[1 - seat])
    return margins


def held_out_rows(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(held out, training)`` row indices of ``count`` decisions, 10% held out (sorted), from
    ``rng``'s next permutation: ``clone``'s split with ``default_rng(seed)``."""
    order = rng.permutation(count)
    return np.sort(order[:count // 10]), order[count // 10:]


def kind_of(actions: np.ndarray) -> np.ndarray:
    """0 draw, 1 card to play, 2 cell, 3 discard (``KINDS``), from the action id ranges."""
    from arboretum_env.actions import DISCARD, PLAY_CARD, PLAY_CELL

    return np.searchsorted(np.array([PLAY_CARD, PLAY_CELL, DISCARD]), actions, side="right")


def clone(obs, masks, actions, channels: int, hidden: int, epochs: int, seed: int, net=None,
          lr: float = 1e-3, card_hidden: int = 0, card_gains: bool = False, depth: int = 0):
    """A ``PlaneNet(channels, hidden, card_hidden, card_gains, depth)`` (or ``net``, trained further)
    fitted to ``actions`` by cross-entropy, Adam at ``lr`` falling linearly to 0; returns it (eval
    mode) and its held-out accuracy on 10% of the decisions."""
    import torch

    from arboretum_env.agents.selfplay_net import PlaneNet
    from training.selfplay import log_probs

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    held, train = held_out_rows(len(actions), rng)
    net = PlaneNet(channels, hidden, card_hidden, card_gains, depth) if net is None else net.train()
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)

    def batch(rows):
        rows = np.sort(rows)
        return (torch.from_numpy(obs[rows].astype(np.float32)), torch.from_numpy(masks[rows]),
                torch.from_numpy(actions[rows]))

    for epoch in range(epochs):
        for group in optimizer.param_groups:
            group["lr"] = lr * (1 - epoch / epochs)
        rng.shuffle(train)
        for start in range(0, len(train) - 511, 512):
            o, m, a = batch(train[start:start + 512])
            loss = -log_probs(net(o)[0], m).gather(1, a[:, None]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    net.eval()
    return net, held_out_accuracy(net, obs, masks, actions, held)


def clone_acts(net):
    """A batch policy (observations, masks) -> the net's argmax of its masked logits."""
    import torch

    from training.selfplay import log_probs

    def act(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(np.asarray(observations, np.float32)))[0]
            return log_probs(logits, torch.from_numpy(np.asarray(action_masks))).argmax(1).numpy()

    return act


def held_out_accuracy(net, obs, masks, actions, rows, chunk: int = 2048) -> dict:
    """How often the net's argmax is greedy's action on ``rows``, overall and per decision kind."""
    import torch

    from training.selfplay import log_probs

    rows = np.sort(rows)
    predicted = np.zeros(len(rows), np.int64)
    with torch.no_grad():
        for start in range(0, len(rows), chunk):
            part = rows[start:start + chunk]
            logits = net(torch.from_numpy(obs[part].astype(np.float32)))[0]
            predicted[start:start + len(part)] = log_probs(logits, torch.from_numpy(masks[part])).argmax(1).numpy()
    truth = actions[rows]
    kinds = kind_of(truth)
    accuracy = {"all": round(float((predicted == truth).mean()), 4)}
    accuracy.update({name: round(float((predicted[kinds == k] == truth[kinds == k]).mean()), 4)
                     for k, name in enumerate(KINDS) if (kinds == k).any()})
    return accuracy


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def depth_count(text: str) -> int:
    """An argparse type: ``PlaneNet``'s ``depth``, 0 to ``MAX_DEPTH``."""
    from training.selfplay_config import MAX_DEPTH

    value = _whole_number(text)
    if not 0 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_DEPTH}, got {value}")
    return value


def positive(text: str) -> int:
    """An argparse type: an int of at least 1 (else argparse's one-line usage error)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=positive, default=4000, help="greedy-vs-greedy games to clone")
    parser.add_argument("--epochs", type=positive, default=8)
    parser.add_argument("--channels", type=positive, default=8)
    parser.add_argument("--hidden", type=positive, default=128)
    parser.add_argument("--card-hidden", type=int, default=0, help="the card head's width (0: none)")
    parser.add_argument("--card-gains", action="store_true", help="the card head reads the card gains")
    parser.add_argument("--depth", type=depth_count, default=0, help="PlaneNet's depth (residual blocks; 0: none)")
    parser.add_argument("--eval-games", type=positive, default=200)
    parser.add_argument("--threads", type=positive, default=2, help="torch threads")
    parser.add_argument("--workers", type=positive, default=2, help="processes playing the greedy games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"argument --seed: must be at least 0, got {args.seed}")
    if args.card_hidden < 0 or (args.card_gains and not args.card_hidden):
        parser.error("--card-hidden must be at least 0, and above 0 with --card-gains")

    import torch

    from training.batch_eval import evaluate_policy

    torch.set_num_threads(args.threads)
    began = time.perf_counter()
    obs, masks, actions = greedy_decisions_parallel(args.games, 1_000_000, args.workers)
    generated = time.perf_counter()
    net, accuracy = clone(obs, masks, actions, args.channels, args.hidden, args.epochs, args.seed,
                          card_hidden=args.card_hidden, card_gains=args.card_gains, depth=args.depth)
    trained = time.perf_counter()

    against = {}
    for b, name in enumerate(("random", "greedy")):
        result = evaluate_policy(clone_acts(net), name, 2, args.eval_games, seed=10_000_019 * (b + 1))
        against[name] = {k: round(result[k], 4) for k in ("win_rate", "draw_rate", "mean_margin")}
    return {"benchmark": "network_capacity", "games": args.games, "samples": int(len(actions)),
            "network": {"name": "plane_net", "channels": args.channels, "hidden": args.hidden,
                        "card_hidden": args.card_hidden, "card_gains": args.card_gains, "depth": args.depth,
                        **net.size_report()},
            "epochs": args.epochs, "held_out_accuracy": accuracy, "clone_against": against,
            "eval_games": args.eval_games, "seconds": {"games": round(generated - began),
                                                       "training": round(trained - generated),
                                                       "evaluation": round(time.perf_counter() - trained)}}


if __name__ == "__main__":
    print(json.dumps(main()))
