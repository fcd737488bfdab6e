"""The typed training config: YAML in, unknown or mistyped keys refused in one line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from training.config import ConfigKeyError, TrainConfig, load_config

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs").glob("*.yaml")))
def test_shipped_configs_load(name, monkeypatch):
    from training.config import read_config_data
    from training.selfplay_config import SelfPlayConfig, selfplay_config

    data = read_config_data(REPO / "configs" / name)
    if data.get("trainer") == "selfplay":
        config = selfplay_config(data, name)
        assert isinstance(config, SelfPlayConfig)
        from training.selfplay_league import initial_weights, league_opponents

        monkeypatch.chdir(REPO)  # a recipe's paths are relative to the repository root
        assert len(league_opponents(config)) == len(config.league)  # the files it names are taken
        assert (initial_weights(config) is None) == (not config.init_policy)
    elif data.get("trainer") == "afterstate":
        from training.afterstate_td import AfterstateConfig, afterstate_config

        config = afterstate_config(data, name)
        assert isinstance(config, AfterstateConfig)
    else:
        config = load_config(REPO / "configs" / name)
        assert isinstance(config, TrainConfig)
    # each config writes the run named like it, or '<name>_run' where a shipped agent has the name
    shipped = (REPO / "models" / Path(name).stem / "policy.safetensors").is_file()
    assert config.run_name == Path(name).stem + ("_run" if shipped else "")


def test_values_are_read_and_typed(tmp_path):
    config = load_config(write(tmp_path, "total_timesteps: 1234\nlearning_rate: 1\nopponents: [greedy, tempo]\n"
                                         "teacher: greedy_plus\n"))
    assert config.total_timesteps == 1234
    assert config.learning_rate == 1.0 and isinstance(config.learning_rate, float)
    assert config.opponents == ["greedy", "tempo"] and config.teacher == "greedy_plus"


def test_unknown_key_is_named_with_a_suggestion(tmp_path):
    with pytest.raises(ConfigKeyError, match=r"unknown key 'learing_rate' \(did you mean 'learning_rate'\?\)"):
        load_config(write(tmp_path, "learing_rate: 0.1\n"))


@pytest.mark.parametrize("text, fragment", [
    ("total_timesteps: lots\n", "key 'total_timesteps' must be int"),
    ("n_envs: 1.5\n", "key 'n_envs' must be int"),
    ("opponents: greedy\n", "key 'opponents' must be list"),
    ("num_players: 5\n", "num_players must be one of 2, 3, 4, got 5"),
    ("opponents: [greedy, champion]\n", "opponents must be a list of random, greedy, greedy_plus, tempo"),
    ("reward_mode: points\n", "reward_mode must be"),
    ("teacher: oracle\n", "teacher must be one of greedy, greedy_plus, tempo, got 'oracle'"),
    ("- a\n- b\n", "must be a mapping"),
    ("key: [unclosed\n", "not valid YAML"),
])
def test_bad_values_are_refused(tmp_path, text, fragment):
    with pytest.raises(ConfigKeyError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        load_config(write(tmp_path, text))


def test_cli_bad_config_is_one_line(tmp_path):
    path = write(tmp_path, "learing_rate: 0.1\n")
    proc = subprocess.run([sys.executable, "-m", "training.cli", "train", "--config", str(path)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown key 'learing_rate'" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("text, fragment", [
    ("trainer: alphazero\n", "trainer must be selfplay, afterstate or sb3 (left out: sb3), got 'alphazero'"),
    ("trainer: sb3\nlearing_rate: 0.1\n", "unknown key 'learing_rate'"),  # sb3 named: the SB3 config's keys
    ("trainer: selfplay\nn_envs: 4\n", "unknown key 'n_envs'"),  # selfplay: the self-play config's keys
])
def test_the_trainer_key_picks_the_config_it_is_checked_as(tmp_path, text, fragment):
    from arboretum_env.errors import UserError  # each trainer's config has its ConfigKeyError
    from training.cli import train_command

    runs = tmp_path / "runs"
    with pytest.raises(UserError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        train_command(str(write(tmp_path, text + f"runs_dir: {runs}\n")), [], resume=False, progress=False)
    assert not runs.exists()  # refused before any run folder


def test_cli_missing_config_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "training.cli", "train", "--config",
                           str(tmp_path / "nope.yaml")], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "cannot read" in proc.stderr


def test_a_rollout_no_machine_holds_and_a_float_written_1e_3(tmp_path):
    with pytest.raises(ConfigKeyError, match=r"n_steps \* n_envs must be at most 1,048,576"):
        load_config(write(tmp_path, "n_steps: 100000\nn_envs: 256\n"))
    assert load_config(write(tmp_path, "learning_rate: 2e-4\n")).learning_rate == 2e-4


@pytest.mark.parametrize("text, problem", [("[a]: 1\n", "found unhashable key (line 1, column 1)"),
                                           ("x: [1\n", "expected ',' or ']', but got '<stream end>'")])
def test_a_yaml_error_says_what_is_wrong_and_where(tmp_path, text, problem):
    with pytest.raises(ConfigKeyError, match="not valid YAML: " + re.escape(problem)):
        load_config(write(tmp_path, text))


def test_a_runs_dir_that_is_a_file_is_named(tmp_path):
    from training.run_folder import RunFolderError, RunLock

    (tmp_path / "f").write_text("x")
    with pytest.raises(RunFolderError, match=f"cannot write there \\({tmp_path / 'f'} is a file\\)"):
        with RunLock(tmp_path / "f" / "run"):
            pass
