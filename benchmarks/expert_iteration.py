"""One round of expert iteration: the policy trained on its own searched decisions.

A measurement of whether the network can take in what rollout search adds
(``benchmarks/search_strength.py`` measures the search itself), with no heuristic anywhere but
the evaluation opponent:

1. ``--games`` self-play games (2 players, game ``g`` dealt by ``new_game(GameConfig(2),
   --seed + 3_000_000 + g)``) in which every decision of both seats is chosen by
   ``training.rollout_search.RolloutSearch`` over the policy (``--determinizations`` x
   ``--candidates``, argmax play-outs), on the compiled engine, ``--workers`` processes; each
   decision's observation, mask, searched action and the policy's own argmax are kept.
2. A copy of the policy trained further on the searched actions (cross-entropy on masked
   logits, ``--epochs`` passes, Adam from ``--lr`` falling linearly to 0; 10% of the decisions
   held out).
3. The policy and its trained copy (argmax both) against greedy on the same ``--eval-games``
   games (``training.batch_eval.evaluate_policy``, seats alternated).

The last line is one JSON object: decisions recorded, how often search changed the policy's
choice (overall and per decision kind), the held-out agreement of the policy and of the trained
copy with the searched actions, and both evaluations. ``--data FILE.npz`` keeps the recorded
games (and reads them instead of playing when the file exists, if its settings match).

    python benchmarks/expert_iteration.py [--games 240] [--epochs 4] [--lr 2e-4] [--workers 2]
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
    KINDS, clone, held_out_accuracy, held_out_rows, kind_of, positive, process_map)

ROOT = Path(__file__).resolve().parents[1]
DEAL_OFFSET = 3_000_000


def searched_games(policy_path: str, games: int, seed: int, first: int, determinizations: int,
                   candidates: int) -> tuple[np.ndarray, ...]:
    """``(observations float16, masks, searched actions, the policy's argmax)`` of games
    ``first .. first + games - 1`` (module doc, step 1)."""
    import torch

    from arboretum_env.actions import NUM_ACTIONS
    from arboretum_env.agents.policy_file import load_policy_file
    from arboretum_env.batch import observe as batch_observe
    from arboretum_env.batch import table as T
    from arboretum_env.engine import GameConfig, Phase, new_game
    from arboretum_env.observation import OBS_SIZE
    from training.rollout_search import RolloutSearch

    torch.set_num_threads(1)
    search = RolloutSearch(load_policy_file(policy_path)[0], determinizations, candidates)
    tables = T.new_tables(1)
    obs, mask = np.zeros((1, OBS_SIZE), np.float32), np.zeros((1, NUM_ACTIONS), np.int8)
    status, rewards = np.zeros(1, np.int64), np.zeros((1, T.SEATS))
    out_obs, out_mask, out_searched, out_plain = [], [], [], []
    for g in range(first, first + games):
        T.load(tables[0], new_game(GameConfig(2), seed + DEAL_OFFSET + g))
        d = 0
        while tables[0, T.T_PHASE] != int(Phase.GAME_OVER):
            batch_observe.observe(tables, tables[:, T.T_CURRENT].copy(), obs)
            batch_observe.masks(tables, mask)
            result = search.choose(tables[0], np.random.default_rng([seed, g, d]))
            out_obs.append(obs[0].astype(np.float16))
            out_mask.append(mask[0].copy())
            out_searched.append(result.action)
            out_plain.append(int(result.candidates[0]))  # candidates come in logit order
            T.step(tables, np.array([result.action]), T.SCORE_MARGIN, status, rewards)
            d += 1
    return (np.stack(out_obs), np.stack(out_mask), np.array(out_searched, np.int64),
            np.array(out_plain, np.int64))


def _part(args: tuple) -> tuple[np.ndarray, ...]:
    return searched_games(*args)


def record(policy_path: str, games: int, seed: int, determinizations: int, candidates: int,
           workers: int) -> tuple[np.ndarray, ...]:
    """``searched_games`` of all games, shared by ``workers`` processes (same result)."""
    chunks = [c for c in np.array_split(np.arange(games), max(1, min(workers, games))) if len(c)]
    jobs = [(policy_path, len(c), seed, int(c[0]), determinizations, candidates) for c in chunks]
    parts = process_map(_part, jobs, workers)
    return tuple(np.concatenate(p) for p in zip(*parts))


def changed_by_search(searched: np.ndarray, plain: np.ndarray) -> dict:
    """How often the searched action differs from the policy's argmax, overall and per kind."""
    kinds = kind_of(searched)
    out = {"all": round(float((searched != plain).mean()), 4)}
    out.update({name: round(float((searched[kinds == k] != plain[kinds == k]).mean()), 4)
                for k, name in enumerate(KINDS) if (kinds == k).any()})
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=str(ROOT / "models/selfplay_2p/policy.safetensors"))
    parser.add_argument("--games", type=positive, default=240, help="searched self-play games to record")
    parser.add_argument("--determinizations", type=positive, default=8)
    parser.add_argument("--candidates", type=positive, default=6)
    parser.add_argument("--epochs", type=positive, default=4)
    parser.add_argument("--lr", type=float, default=2e-4, help="Adam step size at the start")
    parser.add_argument("--eval-games", type=positive, default=400)
    parser.add_argument("--threads", type=positive, default=2, help="torch threads for training")
    parser.add_argument("--workers", type=positive, default=2, help="processes recording the games")
    parser.add_argument("--data", default="", help="an .npz that keeps the recorded games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"argument --seed: must be at least 0, got {args.seed}")
    if not 0.0 < args.lr < 1.0:
        parser.error(f"argument --lr: must be between 0 and 1, got {args.lr}")
    import torch

    from arboretum_env.agents.policy_file import load_policy_file
    from arboretum_env.errors import UserError
    from training.batch_eval import evaluate_policy
    from training.selfplay import log_probs

    try:
        start, _ = load_policy_file(args.policy)
    except UserError as exc:
        parser.error(f"argument --policy: {exc}")
    settings = np.array([args.games, args.seed, args.determinizations, args.candidates])
    data = Path(args.data) if args.data else None
    began = time.perf_counter()
    if data is not None and data.is_file():
        with np.load(data) as saved:
            if not np.array_equal(saved["settings"], settings):
                parser.error(f"argument --data: {data} holds games of other settings "
                             f"(games, seed, determinizations, candidates = {saved['settings'].tolist()})")
            obs, masks, searched, plain = (saved[k] for k in ("obs", "masks", "searched", "plain"))
    else:
        obs, masks, searched, plain = record(args.policy, args.games, args.seed, args.determinizations,
                                             args.candidates, args.workers)
        if data is not None:
            np.savez(data, obs=obs, masks=masks, searched=searched, plain=plain, settings=settings)
    recorded = time.perf_counter()
    torch.set_num_threads(args.threads)
    held, _ = held_out_rows(len(searched), np.random.default_rng(args.seed))  # clone()'s held-out rows
    start_agreement = held_out_accuracy(start, obs, masks, searched, held)
    trained, trained_agreement = clone(obs, masks, searched, 0, 0, args.epochs, args.seed,
                                       net=load_policy_file(args.policy)[0], lr=args.lr)
    fitted = time.perf_counter()

    def acting(net):
        def act(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                logits = net(torch.from_numpy(observations))[0]
                return log_probs(logits, torch.from_numpy(action_masks)).argmax(1).numpy()
        return act

    against = {}
    for name, net in (("policy", start), ("trained", trained)):
        result = evaluate_policy(acting(net), "greedy", 2, args.eval_games, seed=20_000_003)
        against[name] = {k: round(result[k], 4) for k in ("win_rate", "draw_rate", "mean_margin")}
    return {"benchmark": "expert_iteration", "policy": args.policy, "games": args.games,
            "decisions": int(len(searched)), "determinizations": args.determinizations,
            "candidates": args.candidates, "changed_by_search": changed_by_search(searched, plain),
            "held_out_agreement_with_search": {"policy": start_agreement, "trained": trained_agreement},
            "epochs": args.epochs, "lr": args.lr, "against_greedy": against, "eval_games": args.eval_games,
            "seconds": {"recording": round(recorded - began), "training": round(fitted - recorded),
                        "evaluation": round(time.perf_counter() - fitted)}}


if __name__ == "__main__":
    print(json.dumps(main()))
