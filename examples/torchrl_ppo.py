"""Self-play PPO on Arboretum with TorchRL (``pip install -e .[torchrl]``).

Every seat is played by one shared policy (self-play). The policy is a ``ProbabilisticActor``
with TorchRL's ``MaskedCategorical``, so it only ever samples legal actions; the loss is
TorchRL's ``ClipPPOLoss``. TorchRL's GAE assumes one agent acting every step, so the advantage is
``turn_based_returns`` (each decision's return from its own seat's final reward; a game cut at
the end of a batch is bootstrapped with the critic) minus the critic's value.

    python examples/torchrl_ppo.py --smoke     # a tiny budget: about half a minute
    python examples/torchrl_ppo.py --seed 1    # the default budget (~200k steps: 10-20 min on 1 core)

The last line printed is one JSON object (env steps, speed, illegal actions chosen: always 0,
the trained policy's win rate against uniformly random legal play).
"""

from __future__ import annotations

import time

START = time.perf_counter()  # before the heavy imports: "wall_s" counts them

import argparse  # noqa: E402 (below START on purpose)
import json  # noqa: E402

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn

import torchrl
from torchrl.collectors import Collector
from torchrl.envs.utils import ExplorationType, set_exploration_type, step_mdp
from torchrl.modules import MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.integrations.torchrl import (ACTING_KEY, ACTION_KEY, ACTION_MASK_KEY, GROUP,
                                                OBSERVATION_KEY, RETURN_KEY, REWARD_KEY,
                                                make_env, turn_based_returns)
from arboretum_env.observation import OBS_SIZE

BUDGETS = {  # frames (env steps) per batch, batches, PPO epochs per batch, evaluation games
    "smoke": {"frames_per_batch": 600, "batches": 2, "epochs": 2, "eval_games": 4},
    "default": {"frames_per_batch": 2048, "batches": 100, "epochs": 4, "eval_games": 40},
}
HIDDEN = 64
MINIBATCH = 256
GAMMA = 1.0
LEARNING_RATE = 3e-4
VALUE_KEY = (GROUP, "state_value")
LOGITS_KEY = (GROUP, "logits")


def build_networks() -> tuple[ProbabilisticActor, TensorDictModule]:
    """A small MLP actor (masked categorical over the 489 ids) and critic, shared by all seats:
    they read ``[..., n, OBS_SIZE]`` and answer per seat."""
    logits = TensorDictModule(
        nn.Sequential(nn.Linear(OBS_SIZE, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, NUM_ACTIONS)),
        in_keys=[OBSERVATION_KEY], out_keys=[LOGITS_KEY])
    actor = ProbabilisticActor(
        logits, in_keys={"logits": LOGITS_KEY, "mask": ACTION_MASK_KEY}, out_keys=[ACTION_KEY],
        distribution_class=MaskedCategorical, return_log_prob=True)
    critic = TensorDictModule(
        nn.Sequential(nn.Linear(OBS_SIZE, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1)),
        in_keys=[OBSERVATION_KEY], out_keys=[VALUE_KEY])
    return actor, critic


def illegal_choices(steps: TensorDict) -> int:
    """How many steps' acting seat chose an action its mask forbids."""
    mask = steps.get(ACTION_MASK_KEY)
    chosen = mask.gather(-1, steps.get(ACTION_KEY).unsqueeze(-1)).squeeze(-1)
    return int((steps.get(ACTING_KEY) & ~chosen).sum())


def decisions_of(batch: TensorDict, critic: TensorDictModule) -> TensorDict:
    """The acting seats' rows of a collected batch, flat (``[N]``, keys still under ``GROUP``),
    with the return as value target and the return minus the critic's value as advantage."""
    with torch.no_grad():
        cut = critic(batch[-1]["next"].select(OBSERVATION_KEY).clone())
    turn_based_returns(batch, gamma=GAMMA, bootstrap=cut.get(VALUE_KEY))
    rows = batch.get(GROUP)[batch.get(ACTING_KEY)]
    flat = TensorDict({GROUP: rows}, batch_size=rows.batch_size)
    with torch.no_grad():
        critic(flat)
    flat.set((GROUP, "value_target"), flat.get(RETURN_KEY))
    flat.set((GROUP, "advantage"), flat.get(RETURN_KEY) - flat.get(VALUE_KEY))
    return flat


def evaluate(actor, num_players: int, games: int, seed: int) -> tuple[float, int]:
    """Win rate (final reward > 0) of the greedy trained policy against uniformly random legal
    play, the learner in each seat in turn; also the illegal actions it chose."""
    env = make_env(num_players, seed=seed)
    rng = np.random.default_rng(seed)
    wins = illegal = 0
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        for game in range(games):
            learner, td = game % num_players, env.reset()
            while True:
                actor(td)
                seat = int(td.get(ACTING_KEY).nonzero())
                if seat == learner:
                    illegal += illegal_choices(td)
                else:
                    legal = td.get(ACTION_MASK_KEY)[seat].nonzero().squeeze(-1)
                    td.get(ACTION_KEY)[seat] = legal[rng.integers(len(legal))]
                td = env.step(td)
                if td.get(("next", "done")).item():
                    wins += float(td.get(("next",) + REWARD_KEY)[learner]) > 0
                    break
                td = step_mdp(td)
    env.close()
    return wins / max(games, 1), illegal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny budget (about 30 s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--batches", type=int, help="override the budget's number of batches")
    args = parser.parse_args()
    budget = dict(BUDGETS["smoke" if args.smoke else "default"])
    if args.batches is not None:
        budget["batches"] = args.batches
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)  # the policy's sampling and the initial weights

    env = make_env(args.players, seed=args.seed)
    actor, critic = build_networks()
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01,
                              critic_coeff=0.5, normalize_advantage=True)
    loss_module.set_keys(action=ACTION_KEY, sample_log_prob=(GROUP, "action_log_prob"),
                         value=VALUE_KEY, advantage=(GROUP, "advantage"),
                         value_target=(GROUP, "value_target"))
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=LEARNING_RATE)
    collector = Collector(env, actor, frames_per_batch=budget["frames_per_batch"],
                          total_frames=budget["frames_per_batch"] * budget["batches"],
                          auto_register_policy_transforms=False)  # a feed-forward policy
    shuffle = torch.Generator().manual_seed(args.seed)

    env_steps = illegal = games = 0
    start = time.perf_counter()
    for index, batch in enumerate(collector):
        env_steps += batch.numel()
        illegal += illegal_choices(batch)
        games += int(batch.get(("next", "done")).sum())
        flat = decisions_of(batch, critic)
        for _ in range(budget["epochs"]):
            order = torch.randperm(flat.numel(), generator=shuffle)
            for part in order.split(MINIBATCH):
                losses = loss_module(flat[part])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                optimizer.step()
        collector.update_policy_weights_()
        print(f"batch {index + 1}/{budget['batches']}: {env_steps} steps, {games} games, "
              f"entropy {losses['entropy'].item():.3f}, "
              f"critic loss {losses['loss_critic'].item():.3f}", flush=True)
    train_s = time.perf_counter() - start
    collector.shutdown()

    win_rate, eval_illegal = evaluate(actor, args.players, budget["eval_games"], args.seed + 1)
    print(json.dumps({
        "example": "torchrl_ppo", "framework": "torchrl", "framework_version": torchrl.__version__,
        "players": args.players, "seed": args.seed, "env_steps": env_steps, "games": games,
        "steps_per_s": round(env_steps / train_s, 1), "illegal_actions": illegal + eval_illegal,
        "eval_games": budget["eval_games"], "win_rate_vs_random": round(win_rate, 3),
        "wall_s": round(time.perf_counter() - START, 1),
    }))


if __name__ == "__main__":
    main()
