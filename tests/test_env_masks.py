"""Masks are exact: mask[i] == 1 exactly when the engine accepts action id i (tried on a clone,
every id), for the agent to move; every other agent gets an all-zero mask."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.batch import table as batch_table
from arboretum_env.actions import NUM_ACTIONS, IllegalActionError, apply_id, legal_ids
from arboretum_env.env import raw_env


def accepted_ids(state, pending) -> list[int]:
    """The ids apply_id accepts, trying every id. An illegal id leaves the state unchanged
    (checked at the end), so one clone serves until an id is accepted."""
    accepted = []
    probe = state.clone()
    for i in range(NUM_ACTIONS):
        try:
            apply_id(probe, pending, i)
        except IllegalActionError:
            continue
        accepted.append(i)
        probe = state.clone()
    assert probe.to_dict() == state.to_dict()
    return accepted


def states_through_env(num_players: int, games: int, seed: int):
    """Random masked play through raw_env; yields the env before every decision."""
    rng = np.random.default_rng(seed)
    e = raw_env(num_players=num_players)
    for g in range(games):
        e.reset(seed=seed * 100 + g)
        for agent in e.agent_iter():
            _, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            yield e
            legal = np.flatnonzero(e.observe(agent)["action_mask"])
            e.step(int(legal[int(rng.random() * len(legal))]))


@pytest.mark.parametrize("num_players,compiled", [(2, True), (3, True), (4, True), (3, False)])
def test_mask_of_the_mover_only(num_players, compiled, monkeypatch):
    """With the compiled masks (numba) and with the interpreted ones used without numba."""
    if compiled and not batch_table.available:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(batch_table, "available", compiled)
    steps = 0
    for e in states_through_env(num_players, 8, seed=num_players):
        mask = e.observe(e.agent_selection)["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
        assert list(np.flatnonzero(mask)) == legal_ids(e.state, e.pending)
        assert np.array_equal(e.action_masks(), mask)
        for agent in e.agents:
            if agent != e.agent_selection:
                assert not e.observe(agent)["action_mask"].any()
        steps += 1
    assert steps > 1000


@pytest.mark.parametrize("num_players,games", [(2, 5), (3, 4), (4, 4)])
def test_every_id_over_many_states(num_players, games):
    """Exactness over thousands of states in all (over 700 per player count), every id
    tried on a clone."""
    checked = 0
    for e in states_through_env(num_players, games, seed=10 + num_players):
        mask = e.observe(e.agent_selection)["action_mask"]
        assert list(np.flatnonzero(mask)) == accepted_ids(e.state, e.pending)
        checked += 1
    assert checked >= 700


def test_masks_at_game_end_and_for_dead_agents():
    e = raw_env(num_players=3)
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    while not all(e.terminations.values()):
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(legal[int(rng.random() * len(legal))]))
    for agent in e.agents:
        assert not e.observe(agent)["action_mask"].any()
    assert not e.action_masks().any()


def test_action_masks_is_a_copy():
    e = raw_env(num_players=2)
    e.reset(seed=1)
    mask = e.action_masks()
    mask[:] = 1
    assert not np.array_equal(e.action_masks(), mask)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_env_steps_equal_apply_id(num_players):
    """The env applies ids its mask allows without re-checking them (a fast path): the states
    must be those apply_id makes, also for numpy integer actions."""
    rng = np.random.default_rng(20 + num_players)
    e = raw_env(num_players=num_players)
    for g in range(3):
        e.reset(seed=g)
        while not all(e.terminations.values()):
            legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
            action = legal[int(rng.random() * len(legal))]
            reference = e.state.clone()
            pending = apply_id(reference, e.pending, int(action))
            e.step(action if g == 1 else int(action))
            assert e.state.to_dict() == reference.to_dict() and e.pending == pending
