"""The afterstate agent and its TD(lambda) trainer: features from the seat's view only, legal
play, the value in numpy and torch alike, value files, lambda-returns, and a tiny run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from arboretum_env.actions import PLAY_CARD, Decision
from arboretum_env.agents import make_agent, policy_file_agent
from arboretum_env.agents.afterstate import (FEATURES, SPECIES_FEATURES, AfterstateAgent, AfterstateFileError,
                                             Position, Value, load_value_file, save_value_file,
                                             value_file_description)
from arboretum_env.agents.arena import play_game
from arboretum_env.engine import GameConfig, new_game, state_from_dict
from arboretum_env.engine.view import observe
from arboretum_env.table_view import table_view
from training.afterstate_td import ValueNet, afterstate_config, lambda_returns, train_afterstate

REPO = Path(__file__).resolve().parents[1]


def random_value(seed: int = 0, hidden: int = 16) -> Value:
    torch.manual_seed(seed)
    return ValueNet(hidden).value()


def mid_game(seed: int, decisions: int = 40):
    """A 2-player state after ``decisions`` random legal actions."""
    rng = np.random.default_rng(seed)
    state = new_game(GameConfig(2), seed)
    for _ in range(decisions):
        actions = state.legal_actions()
        state.apply(actions[int(rng.integers(len(actions)))])
    return state


def test_the_features_are_documented_and_their_width_checked():
    assert FEATURES == len(SPECIES_FEATURES) == 18
    assert len({name for name, _ in SPECIES_FEATURES}) == FEATURES
    x = Position(observe(mid_game(1), 0)).now()
    assert x.shape == (6, FEATURES) and np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1.5


@pytest.mark.parametrize("seed", range(4))
def test_hidden_cards_never_reach_the_features_or_the_choice(seed):
    """Reshuffling what seat 0 cannot see (the other's unknown hand cards and the deck) leaves
    its features, and its choice with the same generator, unchanged."""
    state = mid_game(seed, 30 + seed)
    while state.current_player != 0 or state.phase.name != "PLAY":
        actions = state.legal_actions()
        state.apply(actions[0])
    data = state.to_dict()
    hidden = [c for c in data["hands"][1] if c not in data["known"][1]] + list(data["deck"])
    rng = np.random.default_rng(seed)
    rng.shuffle(hidden)
    keep = [c for c in data["hands"][1] if c in data["known"][1]]
    cut = len(data["hands"][1]) - len(keep)
    data["hands"][1], data["deck"] = keep + hidden[:cut], hidden[cut:]
    other = state_from_dict(data)
    assert other.hands[1] != state.hands[1] or other.deck != state.deck
    value = random_value(seed)
    choices = []
    for s in (state, other):
        tv = table_view(s, 0, None)
        assert tv.decision is Decision.PLAY_CARD
        choices.append((Position(tv.view).now(), AfterstateAgent(value, seed=3)._play(Position(tv.view))))
    np.testing.assert_array_equal(choices[0][0], choices[1][0])
    assert choices[0][1][:3] == choices[1][1][:3]
    np.testing.assert_array_equal(choices[0][1][3], choices[1][1][3])


def test_it_plays_legal_games_to_the_end_in_every_seat_with_exploration():
    value = random_value(1)
    for seed in range(3):
        seen = []
        agent = AfterstateAgent(value, seed=seed, epsilon=0.3, record=lambda seat, x: seen.append(seat))
        result = play_game([agent, make_agent("random", seed=seed)][::1 - 2 * (seed % 2)], 2, seed=seed)
        assert len(result.totals) == 2 and seen and set(seen) == {seed % 2}


def test_it_refuses_other_tables_and_missing_views():
    agent = AfterstateAgent(random_value())
    state = new_game(GameConfig(3), 0)
    with pytest.raises(ValueError, match="2-player games, not 3"):
        Position(observe(state, 0))
    mask = np.zeros(489, np.int8)
    mask[PLAY_CARD] = 1
    with pytest.raises(TypeError, match="needs the acting seat's TableView"):
        agent.act(np.zeros(7835, np.float32), mask, None)


def test_the_numpy_value_is_the_torch_network():
    torch.manual_seed(0)
    net = ValueNet(32)
    x = np.random.default_rng(0).random((50, 6, FEATURES)).astype(np.float32)
    np.testing.assert_allclose(net.value()(x), net(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_lambda_returns():
    values = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(lambda_returns(values, 1.0, 1.0), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(lambda_returns(values, 1.0, 0.0), [0.2, 0.3, 1.0])
    g2 = 1.0
    g1 = 0.5 * 0.3 + 0.5 * g2
    g0 = 0.5 * 0.2 + 0.5 * g1
    np.testing.assert_allclose(lambda_returns(values, 1.0, 0.5), [g0, g1, g2])


def test_value_files_round_trip_and_refuse_damage(tmp_path):
    torch.manual_seed(0)
    weights = ValueNet(8).value_weights()
    path = save_value_file(tmp_path / "v.safetensors", weights, {"trained_from": "test"})
    value, description = load_value_file(path)
    assert description["trained_from"] == "test" and description["features"][0] == "own_points"
    x = np.random.default_rng(1).random((4, 6, FEATURES))
    np.testing.assert_allclose(value(x), Value(weights)(x))
    agent = policy_file_agent(path, seed=0)  # what evaluate, play and the 'policy:' spec use
    assert isinstance(agent, AfterstateAgent) and play_game([agent, make_agent("random")], 2, seed=1).totals
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    (tmp_path / "bad.safetensors").write_bytes(bytes(data))
    with pytest.raises(AfterstateFileError, match="do not match their checksum"):
        load_value_file(tmp_path / "bad.safetensors")
    assert value_file_description(REPO / "models" / "shipped" / "policy.safetensors") is None
    with pytest.raises(AfterstateFileError, match="not an afterstate value file"):
        load_value_file(REPO / "models" / "shipped" / "policy.safetensors")


TINY = {"trainer": "afterstate", "run_name": "tiny", "total_games": 6, "games_per_update": 2,
        "eval_every": 4, "eval_games": 2, "final_eval_games": 2, "hidden": 8,
        "eval_opponents": ["random"], "final_eval_opponents": ["random"]}


def test_a_tiny_run_writes_its_outputs_resumes_and_repeats(tmp_path):
    config = afterstate_config({**TINY, "runs_dir": str(tmp_path / "a")})
    out = train_afterstate(config, progress=False)
    folder = tmp_path / "a" / "tiny"
    for name in ("config.yaml", "curve.jsonl", "evaluation.json", "learning_curve.png", "policy.safetensors"):
        assert (folder / name).is_file(), name
    curve = [json.loads(line) for line in (folder / "curve.jsonl").read_text().splitlines()]
    assert curve[0]["step"] == 0 and curve[-1]["step"] == out["steps"] and all(r["rating"] is not None for r in curve)
    agent = make_agent(str(folder / "policy.safetensors"))
    assert agent.metadata["hints"] is None and "self-play from scratch" in agent.metadata["trained_from"]
    again = train_afterstate(afterstate_config({**TINY, "runs_dir": str(tmp_path / "b")}), progress=False)
    assert again["steps"] == out["steps"] and again["final"] == out["final"]  # the same seed, the same run
    a, b = (load_value_file(tmp_path / r / "tiny" / "policy.safetensors")[0] for r in "ab")
    x = np.random.default_rng(2).random((3, 6, FEATURES))
    np.testing.assert_array_equal(a(x), b(x))
    longer = train_afterstate(afterstate_config({**TINY, "runs_dir": str(tmp_path / "a"), "total_games": 10}),
                              resume=True, progress=False)
    assert longer["steps"] > out["steps"]
    steps = [json.loads(line)["step"] for line in (folder / "curve.jsonl").read_text().splitlines()]
    assert steps == sorted(set(steps))
    from training.selfplay_io import RunFolderError

    with pytest.raises(RunFolderError, match="this run finished at 10 games; raise total_games"):
        train_afterstate(afterstate_config({**TINY, "runs_dir": str(tmp_path / "a"), "total_games": 10}),
                         resume=True, progress=False)
    assert [json.loads(line)["step"] for line in (folder / "curve.jsonl").read_text().splitlines()] == steps


def test_the_cli_runs_it_and_a_resume_with_another_width_is_one_line(tmp_path, capsys):
    from training import cli

    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({**TINY, "runs_dir": str(tmp_path), "total_games": 2, "eval_every": 2}))
    assert cli.main(["train", "--config", str(config), "--no-progress"]) == 0
    assert "value file:" in capsys.readouterr().out
    assert cli.main(["train", "--config", str(config), "--no-progress", "--resume", "--set", "hidden=16"]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "its checkpoints have hidden: 8, the config 16" in line


def test_the_recipe_loads():
    from training.config import read_config_data

    config = afterstate_config(read_config_data(REPO / "configs" / "afterstate_2p.yaml"), "recipe")
    assert config.trainer == "afterstate" and config.num_players == 2


def test_the_guide_holds_the_feature_table():
    from arboretum_env.agents.afterstate import feature_table

    assert feature_table() in (REPO / "docs" / "afterstate.md").read_text()


def test_the_shipped_afterstate_agent_says_what_it_learned_from_and_plays_by_name():
    value, description = load_value_file(REPO / "models" / "afterstate_2p" / "policy.safetensors")
    assert description["hints"] is None and "self-play from scratch" in description["trained_from"]
    config = afterstate_config(dict(description["config"], runs_dir="models"), "shipped")
    assert config.total_games == description["games"]  # the file's own account of its run
    agent = make_agent("afterstate", seed=0)
    assert isinstance(agent, AfterstateAgent)
    for seat in (0, 1):
        agents = [agent, make_agent("greedy", seed=1)]
        assert len(play_game(agents if seat == 0 else agents[::-1], 2, seed=seat).totals) == 2
