"""The PettingZoo contract: api_test and seed_test for 2, 3 and 4 players, the registry, the
spaces, reproducible resets, pickling, and the extra methods (table_view, state, position,
action_masks, render)."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, seed_test

import arboretum_env
from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.engine import PlayerView, parse_position, score
from arboretum_env.env import ENV_NAME, env, raw_env
from arboretum_env.observation import OBS_SIZE
from arboretum_env.table_view import TableView

# PettingZoo's api_test warns about every Dict observation not on its own list of classic envs.
pytestmark = [pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
              pytest.mark.filterwarnings("ignore:Observation space for each agent probably")]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pettingzoo_api_test(num_players):
    api_test(env(num_players=num_players), num_cycles=400)
    api_test(raw_env(num_players=num_players), num_cycles=400)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pettingzoo_seed_test(num_players):
    seed_test(lambda: env(num_players=num_players), num_cycles=400)


def test_exports_and_registry():
    import pettingzoo

    assert arboretum_env.raw_env is raw_env
    e = arboretum_env.env(num_players=3)  # the submodule doubles as env()
    assert e.unwrapped.num_players == 3 and str(e) == ENV_NAME
    from arboretum_env import env as env_export

    assert env_export(num_players=2).unwrapped.metadata["name"] == "arboretum_v0"
    if not hasattr(pettingzoo, "register"):  # pettingzoo < 1.27 (1.24 in .venv-agilerl) has no registry
        return
    made = pettingzoo.make("aec", "arboretum_v0", num_players=4)
    assert isinstance(made.unwrapped, raw_env) and made.unwrapped.num_players == 4


def test_engine_import_stays_light():
    """Importing the package and its engine must not import PettingZoo (lazy exports)."""
    import subprocess

    code = ("import sys, arboretum_env, arboretum_env.engine\n"
            "assert 'pettingzoo' not in sys.modules and 'arboretum_env.env' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_metadata_and_spaces():
    e = raw_env(num_players=4)
    assert e.metadata["name"] == "arboretum_v0"
    assert e.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    assert e.metadata["is_parallelizable"] is False
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for agent in e.possible_agents:
        space = e.observation_space(agent)
        assert space is e.observation_space(agent)
        assert isinstance(space, spaces.Dict)
        box, mask = space["observation"], space["action_mask"]
        assert box.shape == (OBS_SIZE,) and box.dtype == np.float32
        assert box.low.min() == 0 and box.high.max() == 1
        assert mask.shape == (NUM_ACTIONS,) and mask.dtype == np.int8
        assert e.action_space(agent) == spaces.Discrete(NUM_ACTIONS)
    assert raw_env(num_players=2).observation_space("player_0") == e.observation_space("player_0")


def test_reset_seed_decides_the_whole_game():
    a, b = raw_env(num_players=3), raw_env(num_players=3)
    a.reset(seed=11)
    b.reset(seed=11)
    assert a.state.to_dict() == b.state.to_dict()
    assert a.agent_selection == b.agent_selection == f"player_{a.state.current_player}"
    species, starters = set(), set()
    for seed in range(30):
        a.reset(seed=seed)
        species.add(a.state.species)
        starters.add(a.state.current_player)
    assert len(species) > 5 and starters == {0, 1, 2}
    a.reset()
    b.reset()
    assert a.state.seed != b.state.seed  # fresh entropy
    fixed = raw_env(num_players=2, species=["oak", "maple", "lilac", "olive", "willow", "cassia"],
                    starting_player=1)
    fixed.reset(seed=3)
    assert fixed.state.species == (0, 3, 4, 6, 8, 9) and fixed.agent_selection == "player_1"


def test_a_turn_is_consecutive_decisions_of_one_agent():
    e = raw_env(num_players=2)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    runs, last, length = [], None, 0
    while not all(e.terminations.values()):
        agent = e.agent_selection
        if agent != last and last is not None:
            runs.append(length)
            length = 0
        last = agent
        length += 1
        legal = np.flatnonzero(e.observe(agent)["action_mask"])
        e.step(int(legal[int(rng.random() * len(legal))]))
    assert set(runs) == {5}  # draw, draw, choose card, choose cell, discard


def test_table_view_state_position():
    e = raw_env(num_players=3)
    e.reset(seed=9)
    tv = e.table_view("player_1")
    assert isinstance(tv, TableView) and isinstance(tv.view, PlayerView)
    assert tv.view.observer == 1 and tv.view.hand == e.state.hands[1]
    doc = e.position()
    assert [len(p["hand"]) for p in doc["players"]] == [7, 7, 7]
    assert parse_position(doc).score().totals == score(e.state).totals


def test_pickling():
    e = raw_env(num_players=3, reward_mode="score_margin")
    copy = pickle.loads(pickle.dumps(e))
    assert copy.num_players == 3 and copy.reward_mode == "score_margin"
    copy.reset(seed=1)
    e.reset(seed=1)
    assert copy.state.to_dict() == e.state.to_dict()


def test_observe_returns_fresh_arrays_the_env_never_reads_back():
    """Issue 13.9: writing into a returned mask must not make an illegal move legal."""
    e = raw_env(num_players=2)
    e.reset(seed=1)
    agent = e.agent_selection
    a = e.observe(agent)
    b = e.observe(agent)
    assert a["observation"] is not b["observation"] and a["action_mask"] is not b["action_mask"]
    assert np.array_equal(a["observation"], b["observation"])
    illegal = int(np.flatnonzero(a["action_mask"] == 0)[0])
    a["action_mask"][:] = 1
    e.action_masks()[:] = 1
    before = e.state.to_dict()
    with pytest.raises(ValueError, match="illegal action"):
        e.step(illegal)
    assert e.state.to_dict() == before
    assert e.observe(agent)["action_mask"][illegal] == 0


def test_render_modes(monkeypatch, capsys):
    import types

    calls = []
    fake = types.SimpleNamespace(
        render_ansi=lambda state, viewer: calls.append(("ansi", viewer)) or "TABLE",
        render_rgb_array=lambda state, viewer: calls.append(("rgb", viewer)) or np.zeros((2, 2, 3), np.uint8))
    monkeypatch.setitem(sys.modules, "arboretum_env.render", fake)
    monkeypatch.setattr(arboretum_env, "render", fake, raising=False)
    e = raw_env(num_players=2, render_mode="ansi")
    e.reset(seed=1)
    assert e.render() == "TABLE" and calls[-1] == ("ansi", e.state.current_player)
    e.render_viewer = 1
    e.render()
    assert calls[-1] == ("ansi", 1)
    e = raw_env(num_players=2, render_mode="rgb_array")
    e.reset(seed=1)
    assert e.render().shape == (2, 2, 3)
    e = raw_env(num_players=2, render_mode="human")
    e.reset(seed=1)
    e.step(int(np.flatnonzero(e.action_masks())[0]))
    assert "TABLE" in capsys.readouterr().out
    e = raw_env(num_players=2)
    e.reset(seed=1)
    with pytest.warns(UserWarning, match="render mode"):
        assert e.render() is None


def test_render_smoke_with_the_real_renderer():
    pytest.importorskip("arboretum_env.render")
    e = raw_env(num_players=2, render_mode="ansi")
    e.reset(seed=1)
    assert isinstance(e.render(), str)
    e = raw_env(num_players=3, render_mode="rgb_array")
    e.reset(seed=1)
    picture = e.render()
    assert picture.ndim == 3 and picture.shape[2] == 3 and picture.dtype == np.uint8
