"""Evaluating a model during training: games against the baselines, seats rotated."""

from __future__ import annotations

import numpy as np

from arboretum_env.agents import make_agent
from arboretum_env.agents.base import Agent
from arboretum_env.agents.hints import HINT_SIZE, HintWriter, with_hints
from arboretum_env.observation import OBS_SIZE
from arboretum_env.agents.arena import play_game


class ModelAgent(Agent):
    """An in-memory MaskablePPO model as an agent (deterministic, masks applied). A model trained
    with ``hints`` (its run's config says so) reads them too (from the view), with the advice of
    ``advisor`` (the teacher of its run)."""

    def __init__(self, model, advisor: str = "greedy", *, hints: bool):
        self.model = model
        expected = OBS_SIZE + (HINT_SIZE if hints else 0)
        if model.observation_space.shape != (expected,):
            raise ValueError(f"ModelAgent: hints={hints} means {expected} inputs, the model reads "
                             f"{model.observation_space.shape}")
        self.hints = HintWriter(advisor) if hints else None

    def act(self, observation, action_mask, view=None) -> int:
        if self.hints is not None:
            observation = with_hints(observation, view, self.hints, action_mask)
        action, _ = self.model.predict(observation, action_masks=action_mask, deterministic=True)
        return int(action)


def evaluate_against_baselines(agent, num_players: int, games: int, seed: int,
                               baselines=("random", "greedy")) -> dict:
    """Per baseline: the agent in one seat (rotated every game), the baseline in all others.
    Win = sole or shared winner; reported: win/draw/loss rates and the mean score margin."""
    out = {}
    for b, name in enumerate(baselines):
        wins = draws = 0
        margins = []
        for game in range(games):
            seat = game % num_players
            agents = [make_agent(name, seed=seed + 7919 * game + s) for s in range(num_players)]
            agents[seat] = agent
            result = play_game(agents, num_players, seed=seed + 104_729 * b + game)
            totals = result.totals
            if seat in result.winners:
                if len(result.winners) == 1:
                    wins += 1
                else:
                    draws += 1
            margins.append(totals[seat] - max(t for i, t in enumerate(totals) if i != seat))
        out[name] = {"games": games, "win_rate": wins / games, "draw_rate": draws / games,
                     "loss_rate": (games - wins - draws) / games, "mean_margin": float(np.mean(margins))}
    return out
