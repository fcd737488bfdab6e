"""Self-play PPO on Arboretum with RLlib (new API stack) and RLlib's action-masking RLModule.

    pip install -e .[rllib]
    python examples/rllib_selfplay.py --smoke                      # about a minute on 1-2 cores
    python examples/rllib_selfplay.py --iterations 50 --num-env-runners 4

Every seat plays the shared policy "main" (``arboretum_env.integrations.rllib.ppo_config``).
The policy samples from masked logits, so it never picks an illegal action; the env counts any
it gets (``env_runners/illegal_actions``), and the evaluation against a random player counts
its own. The last stdout line is one JSON object with the run's figures.
"""

from __future__ import annotations

import time

T_START = time.perf_counter()  # wall_s covers imports and Ray's start-up too

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from arboretum_env.agents import RandomAgent  # noqa: E402
from arboretum_env.agents.arena import play_game  # noqa: E402
from arboretum_env.engine import IllegalActionError  # noqa: E402

EXAMPLE = "rllib_selfplay"
SMOKE = {"iterations": 2, "train_batch_size": 256, "minibatch_size": 128, "num_epochs": 1,
         "eval_games": 2}
FULL = {"iterations": 20, "train_batch_size": 2048, "minibatch_size": 256, "num_epochs": 4,
        "eval_games": 20}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="a tiny budget (about a minute)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--num-env-runners", type=int, default=1)
    p.add_argument("--iterations", type=int, help="training iterations (default 20; smoke 1)")
    p.add_argument("--eval-games", type=int, help="games vs random after training")
    return p.parse_args(argv)


def masked_greedy(module, observation: np.ndarray, mask: np.ndarray) -> int:
    """The module's most likely action; its forward pass adds log(mask) to the logits."""
    batch = {"obs": {"observations": torch.from_numpy(observation[None]),
                     "action_mask": torch.from_numpy(mask[None].astype(np.float32))}}
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"]
    return int(torch.argmax(logits[0]))


def evaluate(module, num_players: int, games: int, seed: int) -> tuple[float, int]:
    """Win rate of ``module`` (rotating through the seats; a shared win counts 1/k) against
    random players, and the number of illegal actions it chose (the game then stops, counted
    as a loss). The games are played by the project's own arena, ``play_game``."""
    rng = np.random.default_rng(seed)
    wins, illegal = 0.0, 0
    for g in range(games):
        learner = g % num_players
        players = [RandomAgent(int(rng.integers(2**63))) for _ in range(num_players)]
        players[learner] = lambda obs, mask, view: masked_greedy(module, obs, mask)
        try:
            result = play_game(players, num_players, seed=int(rng.integers(2**63)))
        except IllegalActionError:
            illegal += 1
            continue
        if learner in result.winners:
            wins += 1 / len(result.winners)
    return wins / max(games, 1), illegal


def main(argv=None) -> dict:
    args = parse_args(argv)
    budget = dict(SMOKE if args.smoke else FULL)
    budget["iterations"] = args.iterations or budget["iterations"]
    budget["eval_games"] = budget["eval_games"] if args.eval_games is None else args.eval_games
    torch.set_num_threads(1)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")

    import ray
    from arboretum_env.integrations.rllib import ILLEGAL_ACTIONS_METRIC, MAIN_POLICY, ppo_config

    ray.init(num_cpus=args.num_env_runners + 1, include_dashboard=False,
             configure_logging=False, log_to_driver=False)
    config = ppo_config(num_players=args.players, num_env_runners=args.num_env_runners,
                        train_batch_size=budget["train_batch_size"],
                        minibatch_size=budget["minibatch_size"],
                        num_epochs=budget["num_epochs"], seed=args.seed)
    algo = config.build_algo()

    train_s, env_steps, illegal, result = 0.0, 0, 0, {}
    for i in range(budget["iterations"]):
        t = time.perf_counter()
        result = algo.train()
        train_s += time.perf_counter() - t
        runners = result.get("env_runners", {})
        env_steps = int(runners.get("num_env_steps_sampled_lifetime", env_steps))
        if runners.get("num_episodes_lifetime", 0) > 0:  # the metric exists once a game ended
            illegal = int(runners[ILLEGAL_ACTIONS_METRIC])
        print(f"iteration {i + 1}: env steps {env_steps}, games "
              f"{runners.get('num_episodes_lifetime', 0)}, mean game length "
              f"{runners.get('episode_len_mean', float('nan')):.1f}, illegal {illegal}",
              flush=True)

    module = algo.get_module(MAIN_POLICY)
    win_rate, eval_illegal = evaluate(module, args.players, budget["eval_games"], args.seed + 1)
    algo.stop()
    ray.shutdown()

    import ray as ray_module
    summary = {
        "example": EXAMPLE,
        "framework": "rllib",
        "framework_version": ray_module.__version__,
        "players": args.players,
        "num_env_runners": args.num_env_runners,
        "iterations": budget["iterations"],
        "games": int(result.get("env_runners", {}).get("num_episodes_lifetime", 0)),
        "env_steps": env_steps,
        "steps_per_s": round(env_steps / train_s, 1) if train_s > 0 else 0.0,
        "illegal_actions": illegal + eval_illegal,
        "eval_games": budget["eval_games"],
        "win_rate_vs_random": round(win_rate, 3),
        "seed": args.seed,
        "wall_s": round(time.perf_counter() - T_START, 1),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
