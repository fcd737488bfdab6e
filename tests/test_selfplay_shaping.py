"""Potential-based shaping (``reward_shaping``, ``training.shaping``): each phi is the game's own
score (``path_potential``: the best paths read from the observation; ``score_potential``: the
margin if the game ended now, checked against the dict engine's scorer), and shaping leaves
every completed chain's return unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env import raw_env
from arboretum_env.batch import table as batch_table
from arboretum_env.engine.path_dp import best_points
from arboretum_env.engine.scoring import score_position
from training.shaping import path_potential, score_potential
from training.selfplay_config import selfplay_config

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


def test_path_potential_is_own_best_paths_minus_the_best_other_seats():
    rng = np.random.default_rng(0)
    for num_players in (2, 3):
        env = raw_env(num_players=num_players)
        env.reset(seed=num_players)
        checked = 0
        while not all(env.terminations.values()):
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            obs = env.observe(agent)["observation"]
            points = [sum(best_points(env.state.arboretums[p])) for p in range(num_players)]
            others = [points[(seat + k) % num_players] for k in range(1, num_players)]
            expected = (points[seat] - max(others)) / 20
            assert path_potential(obs[None])[0] == pytest.approx(expected, abs=1e-5)
            checked += expected != 0
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert checked > 10  # paths did grow during the game


def test_score_potential_is_the_margin_if_the_game_ended_now():
    rng = np.random.default_rng(1)
    for num_players in (2, 3, 4):
        env = raw_env(num_players=num_players)
        env.reset(seed=10 + num_players)
        row = batch_table.new_tables(1)
        seen = set()
        while not all(env.terminations.values()):
            state = env.state
            batch_table.load(row[0], state, env.pending)
            before = row.copy()
            totals = score_position(state.hands, state.arboretums, state.species).totals
            for seat in range(num_players):
                others = max(t for p, t in enumerate(totals) if p != seat)
                phi = score_potential(row, np.array([0]), np.array([seat]))[0]
                assert phi == pytest.approx((totals[seat] - others) / 20)
                seen.add(round(float(phi), 2))
            np.testing.assert_array_equal(row, before)  # the row is left as it was
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert len(seen) > 5  # rights and paths moved the margin during the game


@needs_numba
@pytest.mark.parametrize("shaping", ["path_potential", "score_potential"])
def test_shaping_moves_credit_but_keeps_each_finished_chains_return(tmp_path, shaping):
    from training.selfplay import SelfPlayTrainer
    from training.selfplay_io import RunFolder

    base = {"run_name": "shape", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 400,
            "minibatch_size": 32, "torch_threads": 1, "reward_mode": "score_margin"}
    rewards = {}
    for kind in ("none", shaping):
        config = selfplay_config(dict(base, reward_shaping=kind))
        trainer = SelfPlayTrainer(config, RunFolder(tmp_path / kind, config))
        trainer.venv.reset(seed=3)
        size = trainer.collect()  # the same games and decisions: shaping changes rewards only
        rewards[kind] = trainer.buf_reward[:size].copy()
        done, nxt = trainer.buf_done[:size].copy(), trainer.buf_next[:size].copy()
        first, first_phi = trainer.rollout.other[:size].copy(), trainer.buf_phi[:size].copy()
    plain, shaped = rewards["none"], rewards[shaping]
    assert not np.allclose(plain, shaped)  # credit moved to the decisions that grow paths
    heads = set(range(len(nxt))) - set(nxt[nxt >= 0].tolist())  # the first decision of each chain
    finished = 0
    for head in heads:
        chain, j = [head], head
        while nxt[j] >= 0:
            j = nxt[j]
            chain.append(j)
        if done[chain[-1]]:  # a whole seat's game: shaping telescopes to -phi(first view)
            finished += 1
            phi0 = path_potential(first[head:head + 1])[0] if shaping == "path_potential" else first_phi[head]
            assert shaped[chain].sum() == pytest.approx(plain[chain].sum() - phi0, abs=1e-4)
    assert finished >= 4
