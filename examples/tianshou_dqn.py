"""Masked DQN on Arboretum with Tianshou (``pip install -e .[tianshou]``).

``player_0`` learns with Tianshou's DQN (a small MLP; its Q-values of masked-out actions are
pushed below every legal one, and its epsilon-greedy exploration draws only legal actions);
``player_1`` plays uniformly random legal moves (Tianshou's masked random policy). Both sit in a
``MultiAgentOffPolicyAlgorithm``; the collector (``make_collector``) writes each seat's final
reward onto its own last decision (``arboretum_env.integrations.tianshou``). Afterwards the
greedy learner plays some games against the random seat for a win rate.

    python examples/tianshou_dqn.py --smoke     # about half a minute: a handful of games
    python examples/tianshou_dqn.py --seed 1    # the default budget: 300 training games (~10 min)

The last line printed is one JSON object with the run's figures.
"""

from __future__ import annotations

import time

START = time.perf_counter()  # wall_s counts the imports and the framework's start-up too

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402

import numpy as np
import torch
import tianshou
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.integrations.tianshou import make_collector, make_env
from arboretum_env.observation import OBS_SIZE

PLAYERS = 2
LEARNER = 0  # seat index of the learning DQN; the other seat plays random legal moves
DECISIONS_PER_GAME = 150  # an upper estimate, for sizing buffers


def build_algorithm(env, hidden: int, lr: float, eps: float) -> MultiAgentOffPolicyAlgorithm:
    net = Net(state_shape=OBS_SIZE, action_shape=NUM_ACTIONS, hidden_sizes=[hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     eps_training=eps, eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=0.99,
              n_step_return_horizon=1, target_update_freq=100)
    seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in range(PLAYERS)]
    seats[LEARNER] = dqn
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def vector_env(num_envs: int, seed: int) -> DummyVectorEnv:
    return DummyVectorEnv([lambda i=i: make_env(PLAYERS, seed=seed + i) for i in range(num_envs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny budget (about 30 s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", type=int, default=300, help="training games")
    parser.add_argument("--eval-games", type=int, default=40)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--buffer", type=int, default=12_000, help="replay buffer transitions")
    args = parser.parse_args()
    if args.smoke:
        args.games, args.eval_games, args.envs, args.buffer = 8, 4, 2, 2_000

    torch.set_num_threads(1)
    # The returns are vectors over the seats; Tianshou's statistics warn about each of them.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy and random policy use NumPy's global RNG

    algorithm = build_algorithm(make_env(PLAYERS), hidden=128, lr=1e-3, eps=0.2)
    train_envs = vector_env(args.envs, seed=args.seed * 1000)
    train_collector = make_collector(algorithm, train_envs,
                                     VectorReplayBuffer(args.buffer, args.envs),
                                     exploration_noise=True)
    train_collector.reset()
    # One training step per epoch: collect one game in every env, then update.
    params = OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=None,
        max_epochs=-(-args.games // args.envs), epoch_num_steps=1,
        collection_step_num_episodes=args.envs, collection_step_num_env_steps=None,
        update_step_num_gradient_steps_per_sample=0.1, batch_size=64,
        verbose=False, show_progress=False)
    start = time.perf_counter()
    algorithm.run_training(params)
    train_wall = time.perf_counter() - start
    env_steps = train_collector.collect_step
    print(f"trained on {train_collector.collect_episode} games, {env_steps} decisions "
          f"in {train_wall:.1f} s")

    eval_envs = vector_env(args.envs, seed=args.seed * 1000 + 500)
    eval_collector = make_collector(
        algorithm, eval_envs, VectorReplayBuffer(args.envs * DECISIONS_PER_GAME * 2, args.envs))
    eval_collector.reset()
    algorithm.eval()
    stats = eval_collector.collect(n_episode=args.eval_games)
    learner_rewards = np.asarray(stats.returns)[:, LEARNER]  # per game: its final reward
    win_rate = float(np.mean(learner_rewards > 0))
    print(f"greedy DQN vs random: won {win_rate:.0%} of {len(learner_rewards)} games")

    illegal = sum(train_envs.get_env_attr("illegal_actions"))
    illegal += sum(eval_envs.get_env_attr("illegal_actions"))
    print(json.dumps({
        "example": "tianshou_dqn", "framework": "tianshou",
        "framework_version": tianshou.__version__, "players": PLAYERS,
        "seats": "player_0 DQN learner vs player_1 masked random",
        "train_games": int(train_collector.collect_episode), "env_steps": int(env_steps),
        "steps_per_s": round(env_steps / train_wall, 1), "illegal_actions": int(illegal),
        "eval_games": int(len(learner_rewards)), "win_rate_vs_random": round(win_rate, 3),
        "wall_s": round(time.perf_counter() - START, 1), "seed": args.seed,
    }))


if __name__ == "__main__":
    main()
