"""The SB3 face of the vector env: the learner in one seat, opponents batched inside step()."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.batch import table as batch_table
from arboretum_env.observation import OFFSETS

pytestmark = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


def test_learner_always_decides_and_gets_its_own_final_reward():
    from training.sb3_vector import SelfPlayVecEnv

    env = SelfPlayVecEnv(6, num_players=2, opponents=["random"], seed=3)
    obs = env.reset()
    rng = np.random.default_rng(0)
    finished = 0
    opponent_ended = 0
    to_move = OFFSETS["to_move"]
    while finished < 20:
        assert (obs[:, to_move] == 1).all()  # every returned view is the learner's, on its turn
        masks = env.action_masks()
        assert masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        seats_before = env.learner_seat.copy()
        obs, rewards, dones, infos = env.step(actions)
        for g in np.flatnonzero(dones):
            info = infos[g]
            scores = info["final_scores"]
            seat = info["learner_seat"]
            assert seat == seats_before[g]
            mine, theirs = scores[seat], scores[1 - seat]
            assert rewards[g] in (-1.0, 0.0, 1.0)
            if mine != theirs:
                assert rewards[g] == (1.0 if mine > theirs else -1.0)
            assert info["is_success"] == (rewards[g] >= 0)
            assert info["terminal_observation"].shape == obs[g].shape
            opponent_ended += info["terminal_observation"][to_move] == 0  # the opponent's discard ended it
            finished += 1
        assert not rewards[~dones].any()
    assert opponent_ended > 0  # losses and wins decided on the opponent's move reach the learner


def test_maskable_ppo_trains_on_it_without_illegal_actions():
    from sb3_contrib import MaskablePPO

    from training.sb3_vector import SelfPlayVecEnv

    env = SelfPlayVecEnv(4, num_players=3, opponents=["random"], seed=1)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})
    model.learn(256)  # an illegal action would raise IllegalActionError inside step()
    assert model.num_timesteps >= 256
