"""Issue 13, points 8-11: copies mid-game, actions that are not ints, calls out of order."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from arboretum_env.engine import IllegalActionError
from arboretum_env.env import raw_env
from arboretum_env.wrappers import SingleAgentEnv


def _play(e, rng, steps=None):
    """Random legal play; returns the actions taken (all of them when ``steps`` is None)."""
    taken = []
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[int(rng.random() * len(legal))])
        taken.append(action)
        e.step(action)
        if steps is not None and len(taken) >= steps:
            break
    return taken


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_mid_game_continues_identically(how):
    e = raw_env(num_players=3)
    e.reset(seed=4)
    _play(e, np.random.default_rng(0), steps=40)
    twin = copy.deepcopy(e) if how == "deepcopy" else pickle.loads(pickle.dumps(e))
    assert twin.state.to_dict() == e.state.to_dict()
    a = _play(e, np.random.default_rng(1))
    b = _play(twin, np.random.default_rng(1))
    assert a == b and len(a) > 20
    assert e.final_rewards == twin.final_rewards
    assert e.state.to_dict() == twin.state.to_dict()


@pytest.mark.parametrize("bad", [0.7, 0.9, "0", float("inf"), True, None, [0]])
def test_non_integer_actions_are_refused_by_name(bad):
    e = raw_env(num_players=2)
    e.reset(seed=1)
    before = e.state.to_dict()
    with pytest.raises(IllegalActionError, match="an action is an int id"):
        e.step(bad)
    assert e.state.to_dict() == before


@pytest.mark.parametrize("bad", [0.7, "0", float("inf")])
def test_single_agent_env_refuses_non_integer_actions(bad):
    e = SingleAgentEnv(num_players=2, opponents="random", seed=3)
    e.reset()
    with pytest.raises(ValueError, match="integer id"):
        e.step(bad)


def test_seed_must_be_an_int():
    e = raw_env(num_players=2)
    with pytest.raises(TypeError, match="seed must be an int"):
        e.reset(seed=1.5)


@pytest.mark.parametrize("call", ["step", "observe", "last", "action_masks"])
def test_calls_before_reset_name_the_problem(call):
    e = raw_env(num_players=2)
    with pytest.raises(RuntimeError, match="before reset"):
        {"step": lambda: e.step(0), "observe": lambda: e.observe("player_0"),
         "last": lambda: e.last(), "action_masks": e.action_masks}[call]()


def test_step_after_the_game_names_the_problem():
    e = raw_env(num_players=2)
    e.reset(seed=2)
    _play(e, np.random.default_rng(2))
    assert not e.agents
    with pytest.raises(RuntimeError, match="game ended"):
        e.step(0)
