"""Bad input to the Python API is refused by name (a ValueError / TypeError subclass naming the
argument and the allowed values), changes nothing, and is never rounded, wrapped or replaced:
raw_env, VectorEnv, SingleAgentEnv, SelfPlayVecEnv and PolicyAgent."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.engine import IllegalActionError
from arboretum_env.env import env as make_env
from arboretum_env.env import raw_env
from arboretum_env.vector import VectorEnv
from arboretum_env.wrappers import SingleAgentEnv


def _snapshot(e: raw_env):
    obs = {a: e.observe(a) for a in e.agents}
    return (e.position(), e.agent_selection, e.pending,
            {a: (o["observation"].copy(), o["action_mask"].copy()) for a, o in obs.items()})


def _same(a, b) -> bool:
    (pa, sa, pe, oa), (pb, sb, pf, ob) = a, b
    return (pa == pb and sa == sb and pe == pf and oa.keys() == ob.keys()
            and all(np.array_equal(x, y) for k in oa for x, y in zip(oa[k], ob[k])))


def _vector_snapshot(v: VectorEnv):
    return [np.copy(x) for x in (v.tables, v.observations, v.masks, v.to_move, v.game_seeds,
                                 v._legal)] + [v._next_seed]


def _vector_same(a, b) -> bool:
    return a[-1] == b[-1] and all(np.array_equal(x, y) for x, y in zip(a[:-1], b[:-1]))


# 1 ------------------------------------------------------------------ raw_env.step, huge ids
@pytest.mark.parametrize("action", [10**30, 2**63, np.uint64(2**64 - 1), 489, -1])
def test_raw_env_step_refuses_huge_action_ids_like_489(action):
    e = raw_env()
    e.reset(seed=3)
    before = _snapshot(e)
    with pytest.raises(IllegalActionError, match=r"out of range 0\.\.488"):
        e.step(action)
    assert _same(before, _snapshot(e))
    e.step(int(np.flatnonzero(e.action_masks())[0]))  # still playable


# 2 ------------------------------------------------------------------ numpy integer counts
def test_numpy_integer_player_counts_are_accepted():
    e = raw_env(num_players=np.int64(3))
    assert e.num_players == 3 and type(e.num_players) is int and len(e.possible_agents) == 3
    e.reset(seed=0)
    w = make_env(num_players=np.int32(4))
    w.reset(seed=0)
    assert len(w.agents) == 4
    v = VectorEnv(np.int64(2), np.int64(3), starting_player=np.int8(1))
    assert (v.num_envs, v.num_players) == (2, 3)
    v.reset(seed=0)
    assert v.rewards.shape == (2, 3)
    s = SingleAgentEnv(num_players=np.int64(3), learner_seat=np.int64(2))
    s.reset(seed=0)
    assert s.seat == 2 and s.num_players == 3


@pytest.mark.parametrize("bad", [True, 3.0, np.float64(3.0), "3", None])
def test_bool_and_float_player_counts_are_refused_by_name(bad):
    for make in (lambda: raw_env(num_players=bad), lambda: make_env(num_players=bad),
                 lambda: VectorEnv(2, bad), lambda: SingleAgentEnv(num_players=bad)):
        with pytest.raises(ValueError, match="num_players must be 2, 3 or 4"):
            make()
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        VectorEnv(bad if bad is not None else 2.0)


# 3 ------------------------------------------------------------------ seeds
def test_negative_seed_is_named():
    e = raw_env()
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer .*got -1"):
        e.reset(seed=-1)
    with pytest.raises(RuntimeError, match="before reset"):  # nothing was started
        e.step(0)
    v = VectorEnv(4)
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer below 2\*\*63 .*got -1"):
        v.reset(seed=-1)
    with pytest.raises(TypeError, match=r"seed must be an int \(a non-negative integer below 2\*\*63\)"):
        v.reset(seed=1.0)


@pytest.mark.parametrize("seed", [-1, 2**63 - 2, 2**63, 2**64])
def test_vector_reset_with_a_bad_seed_changes_nothing(seed):
    v = VectorEnv(4)
    v.reset(seed=11)
    v.step(v.masks.argmax(axis=1))
    before = _vector_snapshot(v)
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer below 2\*\*63"):
        v.reset(seed=seed)
    assert _vector_same(before, _vector_snapshot(v))


def test_vector_seeds_near_the_limit():
    v = VectorEnv(4)
    v.reset(seed=2**63 - 4)  # the four games fit
    assert v.game_seeds.tolist() == [2**63 - 4 + i for i in range(4)]
    before = _vector_snapshot(v)
    with pytest.raises(RuntimeError, match=r"seeds reached 2\*\*63"):  # the next games would not
        v.step(v.masks.argmax(axis=1))
    assert _vector_same(before, _vector_snapshot(v))


# 4 ------------------------------------------------------------------ VectorEnv.step dtypes
@pytest.mark.parametrize("value", [2**64 - 1, 2**63, 489])
def test_vector_step_refuses_unsigned_ids_that_would_wrap(value):
    v = VectorEnv(4)
    v.reset(seed=5)
    before = _vector_snapshot(v)
    message = rf"illegal action {value} in game 0: ids are 0\.\.488, or -1"
    with pytest.raises(IllegalActionError, match=message):
        v.step(np.full(4, value, dtype=np.uint64))
    assert _vector_same(before, _vector_snapshot(v))


def test_vector_step_names_out_of_range_signed_ids_and_keeps_no_action():
    v = VectorEnv(4)
    v.reset(seed=5)
    before = _vector_snapshot(v)
    for bad in (-2, 489, np.iinfo(np.int64).min):
        actions = v.masks.argmax(axis=1)
        actions[2] = bad
        with pytest.raises(IllegalActionError, match=rf"illegal action {bad} in game 2"):
            v.step(actions)
        assert _vector_same(before, _vector_snapshot(v))
    v.step(np.full(4, -1))  # -1: no game moves
    assert np.array_equal(before[0], v.tables)
    legal = v.masks.argmax(axis=1)
    v.step(legal.astype(np.uint64))  # legal ids in any integer dtype
    assert not np.array_equal(before[0], v.tables)


# 5 ------------------------------------------------------------------ VectorEnv.observe
def test_vector_observe_checks_rows_and_observers():
    v = VectorEnv(4, 3)
    v.reset(seed=1)
    with pytest.raises(ValueError, match=r"rows\[0\] = 10: game rows must be in 0\.\.3"):
        v.observe(np.zeros(1, int), rows=np.array([10]))
    with pytest.raises(ValueError, match=r"rows\[0\] = -1: game rows must be in 0\.\.3"):
        v.observe(np.zeros(1, int), rows=[-1])
    with pytest.raises(TypeError, match="rows must be integers"):
        v.observe([0, 1], rows=[0.5, 1.9])
    with pytest.raises(TypeError, match="observers must be integers"):
        v.observe([0.5, 1.9], rows=[0, 1])
    with pytest.raises(ValueError, match=r"observers\[1\] = 3: seats must be in 0\.\.2"):
        v.observe([0, 3], rows=[0, 1])
    with pytest.raises(ValueError, match="one seat per row: 2 observers for 4 rows"):
        v.observe([0, 1])
    with pytest.raises(ValueError, match="one seat per row: 1 observers for 2 rows"):
        v.observe([0], rows=[0, 1])
    out = v.observe(np.array([2, 1], np.uint8), rows=np.array([3, 0], np.uint64))
    assert out.shape == (2, v.observations.shape[1])
    assert np.array_equal(v.observe(v.to_move), v.observations)


# 6 ------------------------------------------------------------------ SingleAgentEnv opponents
def _play_until_error(env: SingleAgentEnv):
    env.reset(seed=0)
    for _ in range(100):
        env.step(int(np.flatnonzero(env.action_masks())[0]))


def _first(mask):
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("returned, message", [
    (lambda mask: _first(mask) + 0.9, r"returned \d+\.9 \(float\), not an integer action id"),
    (lambda mask: None, r"returned None \(NoneType\), not an integer action id"),
    (lambda mask: True, r"returned True \(bool\)"),
    (lambda mask: np.float32(_first(mask)), r"\(float32\), not an integer"),
    (lambda mask: 10**30, r"out of range 0\.\.488"),
    (lambda mask: np.uint64(2**64 - 1), r"out of range 0\.\.488"),
])
def test_single_agent_env_refuses_bad_opponent_actions_by_name(returned, message):
    def sloppy(obs, mask, view):
        return returned(mask)

    env = SingleAgentEnv(num_players=2, opponents=sloppy, learner_seat=0)
    with pytest.raises(IllegalActionError, match=r"opponent 'sloppy' \(player 1\): .*" + message):
        _play_until_error(env)
    with pytest.raises(RuntimeError, match="call reset"):  # the episode cannot go on
        env.step(0)


def test_single_agent_env_opponents_and_order_are_named():
    with pytest.raises(TypeError, match=r"opponents must be an agent spec \(str\), .* got None"):
        SingleAgentEnv(opponents=None)
    with pytest.raises(TypeError, match="an opponent must be"):
        SingleAgentEnv(opponents=[None])
    env = SingleAgentEnv()
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        env.step(0)
    with pytest.raises(ValueError, match="learner_seat must be None or 0..1"):
        SingleAgentEnv(learner_seat=True)


# 7 ------------------------------------------------------------------ SelfPlayVecEnv actions
def _selfplay():
    pytest.importorskip("stable_baselines3")
    from training.sb3_vector import SelfPlayVecEnv

    venv = SelfPlayVecEnv(4, seed=0)
    venv.reset()
    return venv


@pytest.mark.parametrize("make, message", [
    (lambda m: m.argmax(axis=1).astype(float), r"env 0: action \d+\.0 \(float\) is not an integer action id"),
    (lambda m: m.argmax(axis=1) + 0.5, r"env 0: action \d+\.5 \(float\)"),
    (lambda m: np.full(4, -1), r"env 0: action -1 is not an action id in 0\.\.488 .*no action"),
    (lambda m: np.r_[m.argmax(axis=1)[:3], 489], r"env 3: action 489 is not an action id"),
    (lambda m: np.full(4, 2**64 - 1, np.uint64), r"env 0: action 18446744073709551615 is not"),
    (lambda m: [None] * 4, r"env 0: action None \(NoneType\)"),
    (lambda m: [int(m.argmax(axis=1)[0]), 10**30, 0, 0], r"env 1: action 10{30} is not"),
    (lambda m: m.argmax(axis=1)[:3], r"one action id per env, shape \(4,\), got shape \(3,\)"),
    (lambda m: m.argmax(axis=1).astype(bool), r"env 0: action (True|False) \(bool\)"),
])
def test_selfplay_vec_env_refuses_bad_learner_actions(make, message):
    venv = _selfplay()
    before = _vector_snapshot(venv.venv)
    with pytest.raises(IllegalActionError, match=message):
        venv.step(make(venv.action_masks()))
    assert _vector_same(before, _vector_snapshot(venv.venv))
    obs, rewards, dones, infos = venv.step(venv.action_masks().argmax(axis=1))  # still usable
    assert obs.shape[0] == 4


def test_selfplay_vec_env_illegal_learner_action_names_the_game():
    venv = _selfplay()
    masks = venv.action_masks()
    actions = masks.argmax(axis=1)
    actions[1] = int(np.flatnonzero(~masks[1])[0])
    with pytest.raises(IllegalActionError, match="in game 1"):
        venv.step(actions)
    venv.step(masks.argmax(axis=1).reshape(4, 1))  # SB3's (n, 1) form is accepted


# 8 ------------------------------------------------------------------ PolicyAgent, table_view
def _policy(tmp_path, hints: bool):
    torch = pytest.importorskip("torch")
    from arboretum_env.agents.networks import build_network
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents.policy_file import save_policy_file

    torch.manual_seed(0)
    kwargs = {"hidden": 16, "hints": hints}
    net = build_network("mlp", kwargs)
    path = save_policy_file(tmp_path / "p.safetensors", "mlp", kwargs, net.state_dict(),
                            {"hints": hints, "advisor": "greedy", "timesteps": 1, "trained_from": "a test"})
    return PolicyAgent(path)


def test_policy_agent_refuses_masks_of_another_shape(tmp_path):
    agent = _policy(tmp_path, hints=False)
    e = raw_env()
    e.reset(seed=2)
    o = e.observe(e.agent_selection)
    obs, mask = o["observation"], o["action_mask"]
    for bad in (np.ones(10, np.int8), np.ones(NUM_ACTIONS + 1, np.int8), mask.reshape(1, -1),
                np.ones((2, NUM_ACTIONS), np.int8)):
        with pytest.raises(ValueError, match=r"action mask must have shape \(489,\)"):
            agent.act(obs, bad)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(obs, np.zeros(NUM_ACTIONS, np.int8))
    assert mask[agent.act(obs, mask)] == 1


def test_hint_policy_and_table_view_name_bad_views_and_agents(tmp_path):
    agent = _policy(tmp_path, hints=True)
    e = raw_env()
    e.reset(seed=2)
    o = e.observe(e.agent_selection)
    with pytest.raises(TypeError, match="view must be the acting seat's TableView, got str"):
        agent.act(o["observation"], o["action_mask"], "x")
    with pytest.raises(ValueError, match="pass the TableView"):
        agent.act(o["observation"], o["action_mask"], None)
    with pytest.raises(KeyError, match=r"no agent 'x' \(agents: player_0, player_1\)"):
        e.table_view("x")
    view = e.table_view(e.agent_selection)
    assert o["action_mask"][agent.act(o["observation"], o["action_mask"], view)] == 1


def test_selfplay_vec_env_refuses_float_opponent_actions():
    pytest.importorskip("stable_baselines3")
    from training.sb3_vector import SelfPlayVecEnv

    def floaty(obs, masks):
        return masks.argmax(axis=1) + 0.0

    venv = SelfPlayVecEnv(8, opponents=[floaty], seed=0)
    message = r"opponent 0 \(.*floaty.*\) must return \d+ action ids in 0\.\.488, got float64"
    with pytest.raises(IllegalActionError, match=message):
        venv.reset()


def test_selfplay_vec_env_names_python_ints_as_given():
    venv = _selfplay()
    good = [int(x) for x in venv.action_masks().argmax(axis=1)]
    with pytest.raises(IllegalActionError, match=r"env 2: action -1 is not an action id"):
        venv.step(good[:2] + [-1, 2**64 - 1])  # numpy would make floats of these
    with pytest.raises(IllegalActionError, match=r"env 3: action 18446744073709551615 is not"):
        venv.step(np.array([[g] for g in good[:3]] + [[2**64 - 1]], np.uint64))  # the (n, 1) form


def test_choose_refuses_a_mask_that_does_not_match_the_logits():
    from arboretum_env.agents.policy import choose

    with pytest.raises(ValueError, match="one mask entry per logit, got 10 for 489 logits"):
        choose(np.zeros(NUM_ACTIONS), np.ones(10, np.int8))
    with pytest.raises(ValueError, match="got 490 for 489 logits"):
        choose(np.zeros(NUM_ACTIONS), np.ones(NUM_ACTIONS + 1, np.int8))
