"""Tianshou integration (arboretum_env.integrations.tianshou) and its example, examples/tianshou_dqn.py.

Tianshou has no env checker of its own; these tests check its conventions instead: infos stack
in vector envs and the replay buffer, every seat's last transition carries its final reward,
illegal actions are flagged, never replaced."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="tianshou not installed: pip install -e .[tianshou] (make test-frameworks installs it)")
pytestmark = pytest.mark.frameworks

import torch  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Batch, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, SubprocVectorEnv  # noqa: E402

from arboretum_env.actions import NUM_ACTIONS  # noqa: E402
from arboretum_env.env import win_loss_rewards  # noqa: E402
from arboretum_env.integrations.tianshou import INFO_KEYS, SeatFinalRewards, make_collector, make_env  # noqa: E402
from arboretum_env.observation import OBS_SIZE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
torch.set_num_threads(1)


def random_seats(env, players=2):
    seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in range(players)]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def games_in(buffer, num_envs):
    """Each finished game in the buffer, as a Batch in play order (sub-buffers never wrap here)."""
    size = buffer.maxsize // num_envs
    for e in range(num_envs):
        part = buffer[np.arange(e * size, e * size + len(buffer.buffers[e]))]
        start = 0
        for end in np.flatnonzero(part.done):
            yield part[np.arange(start, end + 1)]
            start = end + 1


def check_games(buffer, num_envs, players=2):
    count = 0
    for game in games_in(buffer, num_envs):
        count += 1
        assert game.info.game_over[-1] == 1 and not game.info.game_over[:-1].any()
        assert game.info.illegal_action.sum() == 0
        winners = [p for p in range(players) if game.info.winners[-1][p]]
        assert winners, "a scored game has a winner"
        expected = win_loss_rewards(players, winners)
        for k in range(players):
            own = np.flatnonzero(game.obs.agent_id == f"player_{k}")
            assert len(own) > 0
            last = own[-1]
            assert game.rew[last, k] == pytest.approx(expected[k])
            assert game.terminated[last]
            assert game.rew[:, k].sum() == pytest.approx(expected[k])
        # only seats' last decisions are terminated; only the game's last step is done
        assert game.terminated.sum() == players and not game.done[:-1].any()
    return count


def test_infos_stack_and_every_seat_gets_its_final_reward():
    num_envs = 3
    venv = DummyVectorEnv([lambda i=i: make_env(2, seed=i) for i in range(num_envs)])
    collector = make_collector(random_seats(make_env(2)), venv, VectorReplayBuffer(3 * 1500, num_envs))
    collector.reset()
    stats = collector.collect(n_episode=6)
    assert stats.n_collected_episodes >= 6
    buffer = collector.buffer
    assert set(INFO_KEYS) <= set(buffer.info.get_keys())
    assert buffer[:].info.scores.shape == (len(buffer), 2)
    assert check_games(buffer, num_envs) >= 6
    assert sum(venv.get_env_attr("illegal_actions")) == 0
    assert buffer.obs.obs.shape[1:] == (OBS_SIZE,) and buffer.obs.mask.dtype == bool
    assert buffer.obs.mask.shape[1:] == (NUM_ACTIONS,)


def test_infos_stack_in_subprocess_vector_env():
    venv = SubprocVectorEnv([lambda i=i: make_env(2, seed=10 + i) for i in range(2)])
    try:
        collector = make_collector(random_seats(make_env(2)), venv, VectorReplayBuffer(2 * 1500, 2))
        collector.reset()
        collector.collect(n_episode=2)
        assert check_games(collector.buffer, 2) >= 2
        assert sum(venv.get_env_attr("illegal_actions")) == 0
    finally:
        venv.close()


def test_every_step_has_the_same_flat_info_keys():
    env = make_env(2, seed=3)
    _, info = env.reset()
    assert tuple(sorted(info)) == tuple(sorted(INFO_KEYS))
    done = False
    while not done:
        _, rew, term, trunc, info = env.step(int(np.flatnonzero(obs_mask(env))[0]))
        assert tuple(sorted(info)) == tuple(sorted(INFO_KEYS))
        assert rew.shape == (2,)
        done = term or trunc
    assert info["game_over"] == 1 and info["winners"].sum() >= 1 and env.illegal_actions == 0


def obs_mask(env):
    return env.env.unwrapped.action_masks().astype(bool)


def test_same_seed_same_games():
    def first_obs(seed):
        env = make_env(2, seed=seed)
        return [env.reset()[0]["obs"] for _ in range(2)]
    a, b, c = first_obs(5), first_obs(5), first_obs(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_illegal_action_ends_game_flagged_and_not_replaced():
    env = make_env(2, seed=1)
    obs, _ = env.reset()
    illegal = int(np.flatnonzero(~obs["mask"])[0])
    mover = int(obs["agent_id"].split("_")[1])
    _, rew, term, _, info = env.step(illegal)  # PettingZoo logs a warning; the game ends
    assert term and info["illegal_action"] == 1 and env.illegal_actions == 1
    assert rew[mover] == -1 and rew[1 - mover] == 0


def test_hook_moves_final_rewards_to_each_seats_last_decision():
    episode = Batch(
        obs=Batch(agent_id=np.array(["player_0", "player_0", "player_1", "player_1", "player_0"])),
        rew=np.array([[0, 0], [0, 0], [0, 0], [0, 0], [1, -1]], dtype=np.float32),
        terminated=np.array([False, False, False, False, True]),
    )
    out = SeatFinalRewards()(episode)
    assert out["rew"].tolist() == [[0, 0], [0, 0], [0, 0], [0, -1], [1, 0]]
    assert out["terminated"].tolist() == [False, False, False, True, True]


def test_example_smoke_run():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "examples/tianshou_dqn.py", "--smoke"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["framework"] == "tianshou" and result["players"] == 2
    assert result["illegal_actions"] == 0
    assert result["env_steps"] > 0 and result["steps_per_s"] > 0
