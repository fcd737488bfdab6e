"""TorchRL integration (arboretum_env.integrations.torchrl) and its example, examples/torchrl_ppo.py."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchrl", reason="torchrl not installed: pip install -e .[torchrl] "
                                      "(make test-frameworks installs it)")
pytestmark = pytest.mark.frameworks

import torch  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from arboretum_env.actions import NUM_ACTIONS  # noqa: E402
from arboretum_env.integrations.torchrl import (  # noqa: E402
    ACTING_KEY, ACTION_KEY, ACTION_MASK_KEY, GROUP, OBSERVATION_KEY, RETURN_KEY,
    RETURN_KNOWN_KEY, REWARD_KEY, make_env, turn_based_returns)
from arboretum_env.observation import OBS_SIZE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NAN = math.nan

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def random_rollout():
    """400 random legal steps of a 2-player game sequence: at least one whole game and a cut."""
    torch.manual_seed(0)
    return make_env(2, seed=11).rollout(400, break_when_any_done=False)


@pytest.mark.parametrize("players", [2, 4])
def test_check_env_specs(players):
    check_env_specs(make_env(players, seed=1))


def test_keys_shapes_and_masks(random_rollout):
    r = random_rollout
    assert r.get(OBSERVATION_KEY).shape == (400, 2, OBS_SIZE)
    assert r.get(ACTION_MASK_KEY).shape == (400, 2, NUM_ACTIONS)
    acting = r.get(ACTING_KEY)
    assert (acting.sum(-1) == 1).all()  # exactly one seat on turn at every step
    mask = r.get(ACTION_MASK_KEY)
    assert mask[~acting].all()  # seats not on turn: all True (ignored)
    legal = mask[acting]
    assert (legal.sum(-1) >= 1).all() and (legal.sum(-1) < NUM_ACTIONS).all()
    chosen = legal.gather(-1, r.get(ACTION_KEY)[acting].unsqueeze(-1))
    assert chosen.all()  # the spec's random action respects the mask


def test_rewards_only_at_game_end(random_rollout):
    r = random_rollout
    done = r.get(("next", "done")).squeeze(-1)
    reward = r.get(("next",) + REWARD_KEY).squeeze(-1)
    assert done.any()
    assert (reward[~done] == 0).all()
    for t in done.nonzero().squeeze(-1).tolist():
        assert sorted(reward[t].tolist()) in ([-1.0, 1.0], [0.0, 0.0])
        assert r.get(("next", GROUP, "terminated"))[t].all()
        assert not r.get(("next", "truncated"))[t].any()


def test_seed_makes_the_games_reproducible():
    def first_observations(seed):
        env = make_env(2, seed=seed)
        return torch.stack([env.reset().get(OBSERVATION_KEY) for _ in range(3)])

    a, b, c = first_observations(3), first_observations(3), first_observations(4)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert not torch.equal(a[1], a[2])  # each reset is a new game


def test_illegal_action_ends_the_game_with_minus_one():
    env = make_env(2, seed=5)
    td = env.reset()
    seat = int(td.get(ACTING_KEY).nonzero())
    illegal = int((~td.get(ACTION_MASK_KEY)[seat]).nonzero()[0])
    td.set(ACTION_KEY, torch.full((2,), illegal))
    td = env.step(td)
    assert td.get(("next", "done")).item()
    reward = td.get(("next",) + REWARD_KEY).squeeze(-1)
    assert reward[seat] == -1 and reward[1 - seat] == 0


def _hand_built():
    """Two seats, 8 steps: game 1 is steps 0-4 (seat 0 wins, on its own move at step 4),
    game 2 (steps 5-7) is cut by the end of the rollout."""
    acting = torch.tensor([0, 0, 1, 1, 0, 1, 0, 1])
    reward = torch.zeros(8, 2, 1)
    reward[4, :, 0] = torch.tensor([1.0, -1.0])
    done = torch.zeros(8, 1, dtype=torch.bool)
    done[4] = True
    return TensorDict({
        GROUP: {"mask": torch.nn.functional.one_hot(acting, 2).bool()},
        "next": {GROUP: {"reward": reward}, "done": done},
    }, batch_size=[8])


def _expected(values):
    return torch.tensor(values, dtype=torch.float32).unsqueeze(-1)


def test_turn_based_returns_known_answers():
    td = turn_based_returns(_hand_built(), gamma=0.5)
    # seat 0: 0.25, 0.5, 1 (its decisions 0, 1, 4); seat 1: -0.5, -1 (decisions 2, 3: the -1
    # of step 4, on seat 0's move, belongs to seat 1's latest decision); game 2 is unknown.
    expected = _expected([[0.25, 0], [0.5, 0], [0, -0.5], [0, -1], [1, 0],
                          [0, NAN], [NAN, 0], [0, NAN]])
    torch.testing.assert_close(td.get(RETURN_KEY), expected, equal_nan=True)
    known = td.get(RETURN_KNOWN_KEY).squeeze(-1)
    assert known.tolist() == [[True, False], [True, False], [False, True], [False, True],
                              [True, False], [False, False], [False, False], [False, False]]


def test_turn_based_returns_bootstrap_and_batch_dims():
    td = turn_based_returns(_hand_built(), gamma=0.5, bootstrap=torch.tensor([0.2, -0.4]))
    expected = _expected([[0.25, 0], [0.5, 0], [0, -0.5], [0, -1], [1, 0],
                          [0, -0.1], [0.1, 0], [0, -0.2]])
    torch.testing.assert_close(td.get(RETURN_KEY), expected)
    assert td.get(RETURN_KNOWN_KEY).squeeze(-1).sum(-1).tolist() == [1] * 8

    batched = torch.stack([_hand_built(), _hand_built()])  # [B=2, T=8]
    turn_based_returns(batched, gamma=0.5, bootstrap=torch.tensor([[0.2, -0.4], [0.0, 0.0]]))
    assert batched.get(RETURN_KEY).shape == (2, 8, 2, 1)
    torch.testing.assert_close(batched.get(RETURN_KEY)[0], expected)
    assert batched.get(RETURN_KEY)[1, 7, 1, 0] == 0.0


def test_turn_based_returns_on_a_real_rollout(random_rollout):
    r = turn_based_returns(random_rollout.clone(), gamma=1.0)
    acting = r.get(ACTING_KEY)
    returns, known = r.get(RETURN_KEY).squeeze(-1), r.get(RETURN_KNOWN_KEY).squeeze(-1)
    ends = r.get(("next", "done")).squeeze(-1).nonzero().squeeze(-1).tolist()
    final = r.get(("next",) + REWARD_KEY).squeeze(-1)
    start = 0
    for end in ends:
        for seat in range(2):
            mine = acting[start:end + 1, seat]
            assert mine.sum() > 10
            assert (returns[start:end + 1, seat][mine] == final[end, seat]).all()
            assert known[start:end + 1, seat][mine].all()
        start = end + 1
    assert start < 400, "the rollout should end inside a game"
    assert not known[start:].any() and returns[start:][acting[start:]].isnan().all()
    assert not known[~acting].any()


def test_example_smoke():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "examples/torchrl_ppo.py", "--smoke"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["example"] == "torchrl_ppo" and result["framework"] == "torchrl"
    assert result["illegal_actions"] == 0
    assert result["env_steps"] > 0 and result["steps_per_s"] > 0
    assert 0.0 <= result["win_rate_vs_random"] <= 1.0
