"""Warm start: fit the policy to the teacher's decisions (behaviour cloning of ``GreedyAgent``
or ``TempoAgent``, ``config.teacher``) and the value head to the games' outcomes, before PPO
takes over. Costs a few minutes and saves PPO from spending its first hundred thousand steps
learning what a legal, sensible move looks like."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from arboretum_env.engine import score
from arboretum_env.env import raw_env, win_loss_rewards
from arboretum_env.agents.hints import ADVISORS, HintWriter, with_hints
from arboretum_env.fileio import atomic_write_text


def teacher_games(num_players: int, games: int, seed: int, hints: bool = False,
                  teacher: str = "greedy"):
    """Observations (float16), masks, the teacher's actions and each decision's final reward,
    from games of the teacher against itself."""
    env = raw_env(num_players=num_players)
    writer = HintWriter(teacher) if hints else None
    make_teacher = ADVISORS[teacher]
    agents = {}
    obs_list, mask_list, act_list, ret_list = [], [], [], []
    for game in range(games):
        env.reset(seed=seed + game)
        start = len(act_list)
        owners = []
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            agent = agents.setdefault(name, make_teacher(seed=seed + len(agents)))
            view = env.table_view(name)
            action = agent.act(obs["observation"], obs["action_mask"], view)
            vector = (obs["observation"] if writer is None
                      else with_hints(obs["observation"], view, writer, obs["action_mask"]))
            obs_list.append(vector.astype(np.float16))
            mask_list.append(obs["action_mask"].astype(bool))
            act_list.append(action)
            owners.append(name)
            env.step(action)
        rewards = win_loss_rewards(num_players, score(env.state).winners)
        ret_list.extend(float(rewards[env.possible_agents.index(name)]) for name in owners)
        assert len(ret_list) == len(act_list), (start, len(act_list))
    return (np.stack(obs_list), np.stack(mask_list), np.asarray(act_list, dtype=np.int64),
            np.asarray(ret_list, dtype=np.float32))


def imitate_teacher(model, config, folder: Path) -> dict:
    obs, masks, actions, returns = teacher_games(config.num_players, config.bc_games, config.seed + 777,
                                                 config.hints, config.teacher)
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(config.seed)
    n, batch = len(actions), 256
    log = []
    for epoch in range(config.bc_epochs):
        order = rng.permutation(n)
        total, correct = 0.0, 0
        for lo in range(0, n, batch):
            idx = order[lo:lo + batch]
            o = torch.as_tensor(obs[idx], dtype=torch.float32)
            a = torch.as_tensor(actions[idx])
            values, log_prob, _ = policy.evaluate_actions(o, a, action_masks=masks[idx])
            value_loss = torch.nn.functional.mse_loss(values.flatten(), torch.as_tensor(returns[idx]))
            loss = -log_prob.mean() + 0.5 * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            total += float(loss.detach()) * len(idx)
            with torch.no_grad():
                dist = policy.get_distribution(o, action_masks=masks[idx])
                correct += int((dist.distribution.probs.argmax(1) == a).sum())
        log.append({"epoch": epoch, "loss": total / n, "agreement": correct / n})
    policy.set_training_mode(False)
    report = {"teacher": config.teacher, "decisions": n, "games": config.bc_games, "epochs": log}
    atomic_write_text(folder / "imitation.json", json.dumps(report, indent=2))
    return report
