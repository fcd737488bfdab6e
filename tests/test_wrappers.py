"""The single-agent gymnasium wrapper (arboretum_env/wrappers.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from gymnasium import spaces

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents import GreedyAgent, RandomAgent
from arboretum_env.engine import score
from arboretum_env.observation import OBS_SIZE
from arboretum_env.wrappers import SingleAgentEnv, make_single_agent_env


def play_episode(env: SingleAgentEnv, rng: np.random.Generator, seed=None, check_masks=True):
    """A random legal learner; returns (rewards, final info, number of learner steps)."""
    obs, info = env.reset(seed=seed)
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    rewards, steps = [], 0
    while True:
        mask = env.action_masks()
        if check_masks:
            assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
            assert mask.any(), "an all-zero mask during a learner decision"
            assert env.env.state.current_player == env.seat
            np.testing.assert_array_equal(mask, env.env.observe(env.agent)["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
        rewards.append(reward)
        assert not truncated
        if terminated:
            return rewards, info, steps
        assert reward == 0.0 and info == {}


def test_spaces():
    env = SingleAgentEnv()
    assert env.observation_space == spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
    assert isinstance(env.action_space, spaces.Discrete) and env.action_space.n == NUM_ACTIONS


@pytest.mark.parametrize("n", [2, 3])
def test_passes_sb3_check_env(n):
    from stable_baselines3.common.env_checker import check_env

    check_env(SingleAgentEnv(num_players=n, opponents=["random"], seed=1))


def test_action_space_samples_legal_actions():
    env = SingleAgentEnv(seed=0)
    env.reset(seed=0)
    for _ in range(60):
        action = env.action_space.sample()
        assert env.action_masks()[action] == 1
        _, _, terminated, _, _ = env.step(action)
        if terminated:
            env.reset()
    # an explicit mask is the plain gymnasium behaviour
    only = np.zeros(NUM_ACTIONS, np.int8)
    only[7] = 1
    assert env.action_space.sample(mask=only) == 7


@pytest.mark.slow
def test_the_learner_gets_minus_one_in_every_lost_game_even_when_an_opponent_ends_it():
    env = SingleAgentEnv(num_players=2, opponents=[GreedyAgent()], seed=123)
    rng = np.random.default_rng(0)
    lost = won = lost_on_opponent_move = 0
    for _ in range(30):
        rewards, info, _ = play_episode(env, rng)
        state = env.env.state
        result = score(state)
        assert info["score"] == result.totals[env.seat]
        assert info["winners"] == list(result.winners)
        assert info["final_scores"] == list(result.totals)
        assert info["learner_seat"] == env.seat
        assert info["win"] == info["is_success"] == (env.seat in result.winners)
        final = rewards[-1]
        if env.seat not in result.winners:
            assert final == -1.0
            lost += 1
            # the game ends with the discard of whoever drew the last card
            if state.current_player != env.seat:
                lost_on_opponent_move += 1
        elif len(result.winners) == 1:
            assert final == 1.0
            won += 1
        else:
            assert final == 0.0 and info["shared_win"]
    assert lost >= 20, "a random learner should lose most games against greedy"
    assert lost_on_opponent_move > 0, "no loss was decided on the opponent's move"


@pytest.mark.slow
def test_rewards_with_three_players_and_score_margin():
    rng = np.random.default_rng(1)
    env = SingleAgentEnv(num_players=3, opponents="greedy", seed=5)
    finals = set()
    for _ in range(4):
        rewards, info, _ = play_episode(env, rng)
        finals.add(rewards[-1])
        if not info["win"]:
            assert rewards[-1] == -0.5
    assert -0.5 in finals
    env = SingleAgentEnv(num_players=2, opponents="greedy", reward_mode="score_margin", seed=5)
    rewards, info, _ = play_episode(env, rng)
    mine = info["final_scores"][env.seat]
    other = info["final_scores"][1 - env.seat]
    assert rewards[-1] == pytest.approx(max(-1.0, min(1.0, (mine - other) / 20.0)))


def test_an_illegal_learner_action_raises_and_changes_nothing():
    env = SingleAgentEnv(seed=3)
    env.reset(seed=3)
    mask = env.action_masks()
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = env.env.state.to_dict()
    with pytest.raises(ValueError, match=rf"illegal action {illegal} .*legal ids: "):
        env.step(illegal)
    with pytest.raises(ValueError):
        env.step(NUM_ACTIONS)
    with pytest.raises(ValueError):
        env.step(-1)
    assert env.env.state.to_dict() == before
    np.testing.assert_array_equal(env.action_masks(), mask)


def test_episode_end_and_step_after_it():
    env = SingleAgentEnv(seed=4)
    play_episode(env, np.random.default_rng(4))
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_learner_seat_random_per_episode_or_fixed():
    env = SingleAgentEnv(num_players=3, seed=0)
    seats = {env.reset()[1]["learner_seat"] for _ in range(30)}
    assert seats == {0, 1, 2}
    env = SingleAgentEnv(num_players=3, learner_seat=2, seed=0)
    assert {env.reset()[1]["learner_seat"] for _ in range(10)} == {2}
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv(num_players=2, learner_seat=2)


def _trajectory(env: SingleAgentEnv, seed: int, episodes: int = 2):
    rng = np.random.default_rng(99)
    out = []
    obs, _ = env.reset(seed=seed)
    out.append(obs.copy())
    for _ in range(episodes):
        while True:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, terminated, _, _ = env.step(action)
            out.append((obs.copy(), reward, env.seat))
            if terminated:
                break
        obs, _ = env.reset()
        out.append(obs.copy())
    return out


def _same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, tuple):
            if not (np.array_equal(x[0], y[0]) and x[1:] == y[1:]):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def test_seeded_resets_are_reproducible():
    make = lambda: SingleAgentEnv(num_players=2, opponents=["random", "greedy"])  # noqa: E731
    a, b = _trajectory(make(), seed=7), _trajectory(make(), seed=7)
    assert _same(a, b)
    assert not _same(a, _trajectory(make(), seed=8))
    # the constructor's seed seeds the first reset
    c = SingleAgentEnv(num_players=2, opponents=["random", "greedy"], seed=7)
    assert _same(_trajectory(c, seed=None), a)


def test_set_opponents_samples_one_opponent_per_seat_from_the_pool():
    calls: dict[str, int] = {"first": 0, "second": 0}

    def counting(name):
        rng = np.random.default_rng(0)

        def policy(obs, mask, view):
            assert obs.shape == (OBS_SIZE,) and mask.any() and view.on_turn
            calls[name] += 1
            return int(rng.choice(np.flatnonzero(mask)))
        return policy

    env = SingleAgentEnv(num_players=4, opponents="random", seed=0)
    env.set_opponents([counting("first"), counting("second")])
    assert len(env.opponent_pool) == 2
    mixes = set()
    for _ in range(8):
        env.reset()
        assert len(env.opponents) == 3 and env.seat not in env.opponents
        mixes.add(tuple(sorted(id(o) for o in env.opponents.values())))
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert calls["first"] > 0 and calls["second"] > 0
    assert len(mixes) > 1
    with pytest.raises(ValueError, match="empty"):
        env.set_opponents([])
    with pytest.raises(TypeError):
        env.set_opponents([42])
    with pytest.raises(ValueError, match="unknown agent"):
        env.set_opponents(["nobody"])


def test_pickling_keeps_the_configuration():
    env = SingleAgentEnv(num_players=3, opponents=["greedy", RandomAgent(2)], seed=11,
                         reward_mode="score_margin")
    env.reset(seed=1)
    env.set_opponents(["greedy"])
    clone = pickle.loads(pickle.dumps(env))
    assert clone.num_players == 3 and clone.env.reward_mode == "score_margin"
    assert [type(o) for o in clone.opponent_pool] == [GreedyAgent]
    rewards, info, _ = play_episode(clone, np.random.default_rng(0), seed=2)
    assert rewards[-1] in (-1.0, 1.0) or -1.0 <= rewards[-1] <= 1.0
    # a clone and the original give the same episode from the same seed
    assert _same(_trajectory(clone, seed=5, episodes=1), _trajectory(env, seed=5, episodes=1))


@pytest.mark.slow
def test_subproc_vec_env_runs_two_envs():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([make_single_agent_env(opponents=["random"], seed=s) for s in (1, 2)],
                         start_method="spawn")
    try:
        obs = venv.reset()
        assert obs.shape == (2, OBS_SIZE) and obs.dtype == np.float32
        venv.env_method("set_opponents", ["greedy"])
        rng = np.random.default_rng(0)
        for _ in range(12):
            masks = np.stack(venv.env_method("action_masks"))
            assert masks.shape == (2, NUM_ACTIONS) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, dones, infos = venv.step(actions)
            assert obs.shape == (2, OBS_SIZE) and rewards.shape == (2,)
    finally:
        venv.close()


def test_maskable_ppo_learns_a_few_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    model = sb3_contrib.MaskablePPO("MlpPolicy", SingleAgentEnv(opponents="random", seed=0),
                                    n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [32]})
    model.learn(128)
    env = SingleAgentEnv(opponents="random", seed=1)
    obs, _ = env.reset()
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)] == 1


def test_a_repeated_spec_is_built_once():
    env = SingleAgentEnv(opponents=["greedy", "random", "greedy", "greedy"])
    pool = env.opponent_pool
    assert len(pool) == 4 and pool[0] is pool[2] is pool[3] and pool[1] is not pool[0]
