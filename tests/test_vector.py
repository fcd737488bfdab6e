"""The vector env against the AEC env: the same games on the same seeds, step by step."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.batch import table as batch_table
from arboretum_env.engine import IllegalActionError
from arboretum_env.env import raw_env
from arboretum_env.vector import VectorEnv

pytestmark = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


@pytest.mark.parametrize("num_players,reward_mode", [(2, "win_loss"), (3, "score_margin"), (4, "win_loss")])
def test_vector_env_plays_the_aec_env_games(num_players, reward_mode):
    n = 5
    venv = VectorEnv(n, num_players=num_players, reward_mode=reward_mode)
    obs, masks, to_move = venv.reset(seed=100)
    rng = np.random.default_rng(num_players)
    envs = []

    def start(i):
        e = raw_env(num_players=num_players, reward_mode=reward_mode)
        e.reset(seed=int(venv.game_seeds[i]))
        return e

    envs = [start(i) for i in range(n)]
    assert venv.game_seeds.tolist() == list(range(100, 100 + n))
    finished = 0
    last_decision = {}  # (game, seat) -> step of that seat's last decision
    while finished < 2 * n:
        actions = np.zeros(n, np.int64)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            assert to_move[i] == e.possible_agents.index(agent)
            expected = e.observe(agent)
            assert np.array_equal(obs[i], expected["observation"])
            assert np.array_equal(masks[i], expected["action_mask"])
            legal = np.flatnonzero(masks[i])
            actions[i] = legal[int(rng.random() * len(legal))]
            e.step(int(actions[i]))
        obs, masks, to_move, rewards, dones = venv.step(actions)
        for i, e in enumerate(envs):
            if dones[i]:
                assert e.terminations[e.agent_selection]
                expected = [e.final_rewards[a] for a in e.possible_agents]
                assert rewards[i].tolist() == pytest.approx(expected)  # every seat, the loser's too
                assert venv.final_scores[i].tolist() == e.infos[e.possible_agents[0]]["scores"]
                finished += 1
                envs[i] = start(i)
            else:
                assert not rewards[i].any() and not e.terminations[e.agent_selection]
    assert len(set(venv.game_seeds.tolist())) == n and venv.game_seeds.max() >= 100 + n


def test_same_seed_same_games_and_illegal_actions_change_nothing():
    a, b = VectorEnv(3, 2), VectorEnv(3, 2)
    oa, ma, _ = a.reset(seed=7)
    ob, mb, _ = b.reset(seed=7)
    assert np.array_equal(oa, ob) and np.array_equal(ma, mb)
    before = a.tables.copy()
    bad = np.array([int(np.flatnonzero(ma[0])[0]), int(np.flatnonzero(ma[1] == 0)[0]), 0])
    ma[1, bad[1]] = 1  # writing into the returned mask does not make the move legal
    with pytest.raises(IllegalActionError, match="in game 1"):
        a.step(bad)
    assert np.array_equal(a.tables, before)
    with pytest.raises(IllegalActionError, match="int ids"):
        a.step(np.array([0.5, 0.5, 0.5]))
    with pytest.raises(RuntimeError, match="before reset"):
        VectorEnv(2).step(np.zeros(2, np.int64))
