"""Every field of the training config has a declared range, checked before any work starts
(issue 13 point 6): out-of-range values are one line naming the field, exit 2, nothing written."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from training.config import ConfigKeyError, TrainConfig, config_from_dict, load_config
from training.config_check import (FOLDER_NAME, ConfigValueError, check_config, checked,
                                    config_from_mapping, field_rules)

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("key, value, fragment", [
    ("eval_every", 0, "eval_every must be at least 1"),
    ("snapshot_every", -1, "snapshot_every must be at least 0"),
    ("seed", -1, "seed must be at least 0"),
    ("seed", 2**40, "seed must be at least 0 and at most 2147483647"),
    ("learning_rate", float("nan"), "learning_rate must be a finite number"),
    ("learning_rate", float("inf"), "learning_rate must be a finite number"),
    ("learning_rate", -1.0, "learning_rate must be above 0"),
    ("learning_rate", 0.0, "learning_rate must be above 0"),
    ("gamma", 5.0, "gamma must be at least 0 and at most 1"),
    ("gae_lambda", -0.1, "gae_lambda must be at least 0"),
    ("bc_games", -3, "bc_games must be at least 0"),
    ("bc_epochs", 0, "bc_epochs must be at least 1"),
    ("clip_range", -0.2, "clip_range must be above 0"),
    ("ent_coef", -0.01, "ent_coef must be at least 0"),
    ("vf_coef", float("nan"), "vf_coef must be a finite number"),
    ("max_grad_norm", 0.0, "max_grad_norm must be above 0"),
    ("final_eval_games", 0, "final_eval_games must be at least 1"),
    ("eval_games", 0, "eval_games must be at least 1"),
    ("batch_size", 1, "batch_size must be at least 2"),
    ("total_timesteps", 10**15, "total_timesteps must be at least 1 and at most"),
    ("n_envs", 0, "n_envs must be at least 1"),
    ("self_play_fraction", 1.5, "self_play_fraction must be at least 0 and at most 1"),
    ("pool_size", 0, "pool_size must be at least 1"),
    ("hidden", 0, "hidden must be at least 1"),
    ("runs_dir", "", "runs_dir must be non-empty"),
    ("run_name", "../elsewhere", "run_name must be a plain folder name"),
    ("run_name", ".hidden", "run_name must be a plain folder name"),
    ("run_name", "a\\b", "run_name must be a plain folder name"),
    ("run_name", "x" * 101, "run_name must be a plain folder name"),
    ("opponents", [], "opponents must be non-empty"),
    ("network", "transformer", "network must be one of cnn, mlp"),
])
def test_out_of_range_value_is_refused(key, value, fragment):
    with pytest.raises(ConfigKeyError, match=fragment.replace("(", r"\(")) as info:
        config_from_dict({key: value}, "c.yaml")
    assert "\n" not in str(info.value) and str(info.value).startswith("c.yaml: ")


def test_rules_over_several_fields():
    with pytest.raises(ConfigKeyError, match=r"n_steps \* n_envs must be at least 2"):
        config_from_dict({"n_steps": 1, "n_envs": 1})


def test_every_problem_is_named_in_one_line():
    with pytest.raises(ConfigKeyError) as info:
        config_from_dict({"gamma": 5.0, "seed": -1, "eval_every": 0})
    message = str(info.value)
    assert "gamma" in message and "seed" in message and "eval_every" in message
    assert "\n" not in message


def test_every_field_declares_its_range_and_the_defaults_pass():
    rules = field_rules(TrainConfig)
    assert set(rules) == {f.name for f in dataclasses.fields(TrainConfig)}
    check_config(TrainConfig())  # the defaults are in range


def test_a_field_without_a_range_is_a_programming_error():
    @dataclasses.dataclass
    class Half:
        steps: int = checked(10, ge=1)
        forgotten: int = 3

    with pytest.raises(TypeError, match="Half.forgotten has no range check"):
        check_config(Half())


def test_the_checks_serve_any_config_dataclass():
    @dataclasses.dataclass
    class Other:
        games: int = checked(10, ge=1, le=100)
        rate: float = checked(0.5, gt=0.0, lt=1.0)
        mode: str = checked("a", choices=("a", "b"))

    check_config(Other())
    with pytest.raises(ConfigValueError, match=r"^other.yaml: games must be at least 1 and at most 100, "
                                               r"got 0; rate must be above 0 and below 1, got 1.0; "
                                               r"mode must be one of a, b, got 'c'$"):
        check_config(Other(games=0, rate=1.0, mode="c"), "other.yaml")


def test_config_from_mapping_reads_any_config_dataclass():
    @dataclasses.dataclass
    class Other:
        run_name: str = checked("x", **FOLDER_NAME)
        games: int = checked(10, ge=1, le=100)

    assert config_from_mapping(Other, {"games": 5}) == Other(games=5)
    for data, fragment in (({"game": 5}, r"unknown key 'game' \(did you mean 'games'\?\)"),
                           ({"games": "5"}, "key 'games' must be int, got str '5'"),
                           ({"games": 10**5000}, "games must be at least 1 and at most 100, got an integer with too many digits"),
                           ({"run_name": "a/b"}, "run_name must be a plain folder name"),
                           ([1], "must be a mapping")):
        with pytest.raises(ConfigValueError, match=fragment):
            config_from_mapping(Other, data)


@pytest.mark.parametrize("text, fragment", [
    ("seed: " + "9" * 5000 + "\n", "an integer with too many digits"),
    ("opponents: " + "[" * 5000 + "\n", "nested too deeply"),
])
def test_unreadable_yaml_is_one_line(tmp_path, text, fragment):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigKeyError, match=fragment):
        load_config(path)


def _train(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "training.cli", "train", "--config",
                           "configs/sb3_quickstart.yaml", "--set", f"runs_dir={tmp_path / 'runs'}",
                           "--no-progress", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


@pytest.mark.parametrize("override, fragment", [
    ("gamma=5", "gamma must be at least 0 and at most 1, got 5.0"),
    ("learning_rate=.nan", "learning_rate must be a finite number"),
    ("seed=" + "7" * 5000, "--set seed: the value is an integer with too many digits"),
])
def test_cli_refuses_before_any_work(tmp_path, override, fragment):
    proc = _train(tmp_path, "--set", override)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and lines[0].startswith("arboretum: error: ")
    assert not (tmp_path / "runs").exists()  # nothing written
