"""AgileRL DQN on Arboretum: self-play with action masks, then games against the random agent.

    pip install -e .[agilerl]
    python examples/agilerl_dqn.py --smoke      # a tiny budget, well under a minute
    python examples/agilerl_dqn.py --seed 1     # the longer default budget

One DQN sits in every seat (self-play: ``--opponent self``, the default) or in one seat against
``make_agent("random")`` (``--opponent random``). Every decision is masked: exploration draws a
uniform *legal* action, the greedy action is ``dqn.get_action(obs, action_mask=mask)``; the
count of illegal actions the policy chose is reported and must be 0. The last line of stdout is
one JSON object with the run's figures.
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.metadata import version

import numpy as np
import torch
from agilerl.algorithms.dqn import DQN
from agilerl.components.replay_buffer import ReplayBuffer

from arboretum_env.integrations.agilerl import AgileRLGame, evaluate

SMOKE = {"games": 10, "eval_games": 4, "buffer": 2_000, "hidden": 32}
DEFAULT = {"games": 200, "eval_games": 20, "buffer": 8_000, "hidden": 128}
EPSILON_START, EPSILON_END = 1.0, 0.05
BATCH_SIZE, LEARN_STEP = 32, 4


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny budget (about a minute at most)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--opponent", default="self", choices=("self", "random"))
    parser.add_argument("--games", type=int, help="training games (default: by budget)")
    args = parser.parse_args()
    budget = SMOKE if args.smoke else DEFAULT
    args.games = args.games or budget["games"]
    args.eval_games, args.buffer = budget["eval_games"], budget["buffer"]
    args.hidden = budget["hidden"]
    return args


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)  # the network's initial weights and the buffer's sampling
    rng = np.random.default_rng(args.seed)  # exploration and the games' seeds

    game = AgileRLGame(num_players=args.players)
    net_config = {"encoder_config": {"hidden_size": [args.hidden]},
                  "head_config": {"hidden_size": [args.hidden]}}
    dqn = DQN(game.observation_space, game.action_space, net_config=net_config,
              batch_size=BATCH_SIZE, lr=1e-3, learn_step=LEARN_STEP, gamma=0.99, tau=0.01)
    memory = ReplayBuffer(max_size=args.buffer)

    env_steps = illegal = learn_calls = 0
    losses: list[float] = []
    train_start = time.perf_counter()
    for g in range(args.games):
        decay = (EPSILON_START - EPSILON_END) * g / (0.5 * args.games)  # over the first half
        epsilon = max(EPSILON_END, EPSILON_START - decay)
        if args.opponent == "self":
            players = [dqn] * args.players
        else:
            players = ["random"] * args.players
            players[g % args.players] = dqn
        record = game.play(players, seed=int(rng.integers(2**31)), epsilon=epsilon, rng=rng)
        memory.add(record.transitions)
        env_steps += record.env_steps
        illegal += record.illegal_actions
        if len(memory) >= BATCH_SIZE:
            for _ in range(len(record.seats) // LEARN_STEP):
                losses.append(dqn.learn(memory.sample(BATCH_SIZE)))
                learn_calls += 1
        if (g + 1) % max(1, args.games // 10) == 0:
            print(f"game {g + 1}/{args.games}  epsilon {epsilon:.2f}  env steps {env_steps}  "
                  f"loss {np.mean(losses[-100:]) if losses else float('nan'):.4f}", flush=True)
    train_s = time.perf_counter() - train_start

    result = evaluate(dqn, "random", num_players=args.players, games=args.eval_games,
                      seed=args.seed * 1_000 + 10_000)
    print(f"vs random: {result}")
    print(json.dumps({
        "example": "agilerl_dqn",
        "framework": "agilerl",
        "framework_version": version("agilerl"),
        "players": args.players,
        "opponent": "self-play" if args.opponent == "self" else "random",
        "games": args.games,
        "env_steps": env_steps,
        "learn_calls": learn_calls,
        "steps_per_s": round(env_steps / train_s, 1),
        "illegal_actions": illegal + result["illegal_actions"],
        "final_loss": round(float(np.mean(losses[-100:])), 5) if losses else None,
        "eval_games": result["games"],
        "win_rate_vs_random": result["win_rate"],
        "mean_reward_vs_random": round(result["mean_reward"], 3),
        "seed": args.seed,
        "wall_s": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
