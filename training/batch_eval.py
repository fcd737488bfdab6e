"""Evaluating a batched policy against the baselines: many games at once, one forward per step.

``evaluate_policy(act, baseline, ...)`` plays ``games`` games of the policy (one seat, rotated
every game) against ``baseline`` (``random``, ``greedy``, ``greedy_plus``, ``tempo``: the
heuristics of ``arboretum_env.agents``) in all other seats. Up to ``concurrency`` games run at
once, each in its own AEC env; whenever the policy is to move in several of them, their
observations go through ``act(observations [B, OBS_SIZE], masks [B, 489]) -> actions [B]`` in
one call. Game ``g`` is the env's ``reset(seed=seed + g)``, so an evaluation is reproducible.

The result counts sole wins, shared wins (draws) and losses, the mean score margin (own score
minus the best other), and keeps one record per game in the tournament's format (for OpenSkill
ratings across checkpoints, ``training.tournament.rate``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from arboretum_env.agents import make_agent
from arboretum_env.env import raw_env

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def evaluate_policy(act: BatchPolicy, baseline: str, num_players: int = 2, games: int = 100,
                    seed: int = 0, concurrency: int = 64) -> dict:
    n = num_players
    wins = draws = 0
    margins: list[float] = []
    records: list[dict] = []
    started = 0
    tables: list[dict] = []

    def start() -> dict:
        nonlocal started
        g = started
        started += 1
        env = raw_env(num_players=n)
        env.reset(seed=seed + g)
        seat = g % n
        agents = {p: make_agent(baseline, seed=seed * 7919 + 31 * g + p) for p in range(n) if p != seat}
        return {"env": env, "seat": seat, "agents": agents}

    while started < games and len(tables) < concurrency:
        tables.append(start())
    while tables:
        waiting = []
        for table in list(tables):
            env, seat = table["env"], table["seat"]
            while not env.state.game_over and env.state.current_player != seat:
                agent = env.agent_selection
                obs = env.observe(agent)
                p = env.state.current_player
                env.step(int(table["agents"][p](obs["observation"], obs["action_mask"], env.table_view(agent))))
            if env.state.game_over:
                infos = env.infos[env.possible_agents[seat]]
                scores, won = infos["scores"], infos["winners"]
                if won[seat]:
                    if sum(won) == 1:
                        wins += 1
                    else:
                        draws += 1
                margins.append(scores[seat] - max(s for p, s in enumerate(scores) if p != seat))
                records.append({"seat": seat, "scores": list(scores),
                                "winners": [p for p in range(n) if won[p]]})
                tables.remove(table)
                if started < games:
                    tables.append(start())
                continue
            waiting.append(table)
        if not waiting:
            continue
        observed = [t["env"].observe(t["env"].agent_selection) for t in waiting]
        obs = np.stack([o["observation"] for o in observed])
        masks = np.stack([o["action_mask"] for o in observed])
        actions = act(obs, masks)
        for table, action in zip(waiting, actions):
            table["env"].step(int(action))
    played = len(margins)
    return {"games": played, "win_rate": wins / played, "draw_rate": draws / played,
            "loss_rate": (played - wins - draws) / played, "mean_margin": float(np.mean(margins)),
            "records": records}
