"""AgileRL integration (arboretum_env.integrations.agilerl) and its example,
examples/agilerl_dqn.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("agilerl", reason="agilerl not installed: pip install -e .[agilerl] "
                                      "(make test-frameworks installs it)")
pytestmark = pytest.mark.frameworks

import torch  # noqa: E402
from agilerl.components.replay_buffer import ReplayBuffer  # noqa: E402

from arboretum_env.actions import NUM_ACTIONS  # noqa: E402
from arboretum_env.env import win_loss_rewards  # noqa: E402
from arboretum_env.integrations.agilerl import AgileRLGame, evaluate  # noqa: E402
from arboretum_env.observation import OBS_SIZE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def dqn():
    """A small DQN built from the game's spaces (DQN's import is kept here: AgileRL's algorithm
    package needs more than its core dependencies in some releases)."""
    from agilerl.algorithms.dqn import DQN

    torch.manual_seed(0)
    game = AgileRLGame(num_players=2)
    return DQN(game.observation_space, game.action_space, batch_size=16,
               net_config={"encoder_config": {"hidden_size": [16]},
                           "head_config": {"hidden_size": [16]}})


def check_record(record, num_players, seats):
    """The conventions of the module docstring, for every recorded seat."""
    td = record.transitions
    n = len(record.seats)
    assert td.batch_size == torch.Size([n]) and n > 0
    assert td["obs"].shape == td["next_obs"].shape == (n, OBS_SIZE)
    assert td["obs"].dtype == torch.float32
    assert record.action_masks.shape == record.next_action_masks.shape == (n, NUM_ACTIONS)
    assert sorted(set(record.seats.tolist())) == sorted(seats)
    # A seat asked to act always has a legal action, and it took one of them.
    assert (record.action_masks.sum(axis=1) > 0).all()
    actions = td["action"].long().numpy()
    assert record.action_masks[np.arange(n), actions].all()
    done = td["done"].numpy()
    reward = td["reward"].numpy()
    # next_obs of an unfinished transition is the seat's next decision: it has to act there.
    assert (record.next_action_masks[done == 0].sum(axis=1) > 0).all()
    assert (record.next_action_masks[done == 1] == 0).all()
    expected = win_loss_rewards(num_players, [p for p, w in enumerate(record.won) if w])
    assert record.rewards == pytest.approx(expected)
    for seat in seats:
        rows = np.flatnonzero(record.seats == seat)
        assert (np.diff(rows) == 1).all()  # grouped by seat
        assert done[rows[-1]] == 1 and (done[rows[:-1]] == 0).all()
        assert reward[rows[-1]] == pytest.approx(record.rewards[seat])  # loser included
        assert (reward[rows[:-1]] == 0).all()
    assert record.illegal_actions == 0


def test_spaces_are_what_agilerl_algorithms_take():
    game = AgileRLGame(num_players=3)
    assert game.observation_space.shape == (OBS_SIZE,)
    assert game.action_space.n == NUM_ACTIONS


@pytest.mark.parametrize("num_players", [2, 3])
def test_every_seat_gets_its_final_reward(num_players):
    game = AgileRLGame(num_players=num_players)
    record = game.play(["random"] * num_players, seed=5, record_seats=range(num_players))
    check_record(record, num_players, list(range(num_players)))
    assert len(record.seats) == record.env_steps  # every decision of every seat recorded
    assert sum(record.rewards) == pytest.approx(0.0)


def test_shared_win_is_zero_for_both_seats():
    """Search a few seeds for a 2-player shared win: both seats then end on 0 / 0."""
    game = AgileRLGame(num_players=2)
    for seed in range(200):
        record = game.play(["random", "random"], seed=seed, record_seats=[0, 1])
        if sum(record.won) == 2:
            check_record(record, 2, [0, 1])
            assert record.rewards == [0.0, 0.0]
            return
    pytest.skip("no shared win among the seeds tried")


def test_self_play_with_dqn_in_both_seats(dqn):
    game = AgileRLGame(num_players=2)
    record = game.play([dqn, dqn], seed=1, epsilon=0.3, rng=np.random.default_rng(0))
    check_record(record, 2, [0, 1])
    assert sorted(record.rewards) in ([-1.0, 1.0], [0.0, 0.0])
    memory = ReplayBuffer(max_size=1_000)
    memory.add(record.transitions)
    assert len(memory) == len(record.seats)
    loss = dqn.learn(memory.sample(dqn.batch_size))
    assert np.isfinite(loss)


def test_against_random_records_only_the_learner_and_is_deterministic(dqn):
    game = AgileRLGame(num_players=2)
    first = game.play(["random", dqn], seed=2, epsilon=0.5, rng=np.random.default_rng(3))
    check_record(first, 2, [1])
    again = game.play(["random", dqn], seed=2, epsilon=0.5, rng=np.random.default_rng(3))
    assert (first.seats == again.seats).all()
    for key in ("obs", "action", "reward", "next_obs", "done"):
        assert torch.equal(first.transitions[key], again.transitions[key])


def test_evaluate_counts_every_game(dqn):
    result = evaluate(dqn, "random", games=2, seed=0)
    assert result["wins"] + result["ties"] + result["losses"] == 2
    assert result["illegal_actions"] == 0 and 0.0 <= result["win_rate"] <= 1.0


def test_example_smoke_run():
    path = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    proc = subprocess.run([sys.executable, "examples/agilerl_dqn.py", "--smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["example"] == "agilerl_dqn" and result["framework"] == "agilerl"
    assert result["illegal_actions"] == 0
    assert result["env_steps"] > 0 and result["steps_per_s"] > 0
    assert result["eval_games"] > 0 and 0.0 <= result["win_rate_vs_random"] <= 1.0
