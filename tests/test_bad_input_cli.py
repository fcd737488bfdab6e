"""Bad input on the command line is one line ``arboretum: error: ...`` (exit 2) and loses nothing:
no output replaces an input (or another output), the default export stays out of a run's
``checkpoints/``, misnamed files are named for what they are, and the agent, table and game
counts are checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arboretum_env.batch import table as batch_table
from training import cli

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


@pytest.fixture(scope="module")
def selfplay_run(tmp_path_factory) -> Path:
    """A tiny self-play run (checkpoints step_N.pt + .json, policy.safetensors), a few seconds."""
    if not batch_table.available:
        pytest.skip("numba is not installed")
    from training.selfplay import train_selfplay
    from training.selfplay_config import selfplay_config

    root = tmp_path_factory.mktemp("runs")
    config = {"run_name": "tiny", "runs_dir": str(root), "num_envs": 4, "rollout_steps": 16,
              "total_steps": 120, "eval_every": 60, "eval_games": 2, "final_eval_games": 2,
              "minibatch_size": 32, "torch_threads": 1, "channels": 4, "hidden": 16,
              "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(config), progress=False)
    return root / "tiny"


@pytest.fixture
def run(selfplay_run, tmp_path) -> Path:
    """A copy of the self-play run that a test may change."""
    return Path(shutil.copytree(selfplay_run, tmp_path / "run"))


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory) -> Path:
    """An (untrained) SB3 run folder with one checkpoint ``step_000000096.zip`` + ``.json``."""
    import gymnasium as gym
    import numpy as np

    from arboretum_env.actions import NUM_ACTIONS
    from arboretum_env.observation import OBS_SIZE
    from training.config import TrainConfig, config_to_dict
    from training.export import save_checkpoint
    from training.train import new_model

    class Spaces(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        action_space = gym.spaces.Discrete(NUM_ACTIONS)

    config = TrainConfig(network="mlp", hidden=16, hints=False, n_steps=8, batch_size=8)
    run = tmp_path_factory.mktemp("sb3") / "run"
    save_checkpoint(new_model(config, Spaces(), run), run / "checkpoints", 96, config_to_dict(config))
    return run


def _newest(run: Path) -> Path:
    return max(run.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))


def _snapshot(*paths: Path) -> dict:
    """Every file under ``paths`` with its bytes."""
    out = {}
    for path in paths:
        for f in ([path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())):
            out[f] = f.read_bytes()
    return out


def _refused(capsys, args: list[str], phrase: str) -> str:
    """``arboretum ARGS`` exits 2 with one line ``arboretum: error: ...`` holding ``phrase``."""
    code = cli.main(args)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, (args, captured.out, captured.err)
    assert len(lines) == 1 and lines[0].startswith("arboretum: error: "), (args, captured.err)
    assert phrase in lines[0], (args, lines[0])
    assert "Traceback" not in captured.err
    return lines[0]


# ----------------------------------------------------------------------------- 1. outputs over inputs
def test_export_onto_its_own_policy_file_is_refused(run, capsys):
    policy = run / "policy.safetensors"
    before = _snapshot(run)
    line = _refused(capsys, ["export", str(policy), "--format", "torchscript", "-o", str(policy)],
                    "that is the input file; give another name")
    assert line.startswith(f"arboretum: error: -o {policy}:")
    _refused(capsys, ["export", str(policy), "--format", "onnx", "-o", str(run / "." / "policy.safetensors")],
             "that is the input file")
    assert _snapshot(run) == before


def test_export_onto_the_runs_newest_checkpoint_is_refused(sb3_run, capsys):
    newest = sb3_run / "checkpoints" / "step_000000096.zip"
    before = _snapshot(sb3_run)
    _refused(capsys, ["export", str(sb3_run), "-o", str(newest)], "inside the input run's checkpoints/")
    _refused(capsys, ["export", str(newest), "-o", str(newest.with_suffix(".json"))],
             "the input checkpoint's .json")
    _refused(capsys, ["export", str(sb3_run), "--format", "torchscript", "-o", str(sb3_run / "pool" / "x.pt")],
             "inside the input run's pool/")
    assert _snapshot(sb3_run) == before


def test_export_onto_a_selfplay_checkpoint_is_refused(run, capsys):
    newest = _newest(run)
    before = _snapshot(run)
    _refused(capsys, ["export", str(run), "-o", str(newest)], "inside the input run's checkpoints/")
    _refused(capsys, ["export", str(newest), "-o", str(newest.with_suffix(".json"))], "the input checkpoint's .json")
    assert _snapshot(run) == before


def test_evaluate_json_onto_an_entrant_is_refused(run, tmp_path, capsys):
    policy = run / "policy.safetensors"
    link = tmp_path / "link.json"
    link.hardlink_to(policy)
    before = _snapshot(run)
    _refused(capsys, ["evaluate", str(policy), "random", "--games", "2", "--no-progress", "--json", str(policy)],
             "--json " + str(policy) + ": that is the input file")
    _refused(capsys, ["evaluate", f"policy:{policy}", "random", "--games", "2", "--csv", str(link)],
             "that is the input file")  # the same file under another name
    _refused(capsys, ["evaluate", str(run), "random", "--games", "2", "--plot", str(run / "checkpoints" / "x.png")],
             "inside the input run's checkpoints/")
    assert _snapshot(run) == before


def test_two_outputs_the_same_file_are_refused(tmp_path, capsys):
    out = tmp_path / "o.json"
    out.write_text("the earlier results")
    _refused(capsys, ["evaluate", "random", "greedy", "--games", "2", "--no-progress",
                      "--json", str(out), "--csv", str(out)], f"--csv {out}: the same file as --json")
    _refused(capsys, ["evaluate", "random", "greedy", "--games", "2", "--json", str(out),
                      "--csv", str(tmp_path / "sub" / ".." / "o.json")], "the same file as --json")
    assert out.read_text() == "the earlier results"


# ----------------------------------------------------------------------------- 2. the default export
def test_default_export_of_a_run_stays_out_of_its_checkpoints(run, capsys):
    from training.selfplay_export import checkpoint_files

    checkpoints = _snapshot(run / "checkpoints")
    assert cli.main(["export", str(run), "--format", "torchscript"]) == 0
    written = run / f"{_newest(run).stem}_policy.pt"
    assert capsys.readouterr().out.strip() == f"wrote {written}" and written.is_file()
    assert _snapshot(run / "checkpoints") == checkpoints  # nothing new among the checkpoints
    # an export older versions left there is not taken for a checkpoint (a --resume warned of damage)
    shutil.copy(written, run / "checkpoints" / written.name)
    assert [p.name for p in checkpoint_files(run / "checkpoints")] == sorted(
        (p.name for p in checkpoints if p.suffix == ".pt"), key=lambda n: -int(n[5:-3]))


# ----------------------------------------------------------------------------- 3. misnamed files
def test_a_selfplay_checkpoint_without_its_json_is_named_as_such(run, tmp_path, capsys):
    lone = tmp_path / "lone.pt"
    shutil.copy(_newest(run), lone)
    before = _snapshot(tmp_path)
    phrase = "looks like a self-play checkpoint whose lone.json is missing"
    for args in (["evaluate", str(lone), "random", "--games", "2"],
                 ["export", str(lone)],
                 ["export", str(lone), "--trust-torchscript"],  # the old hint's command
                 ["play", "--opponents", str(lone), "--seed", "1"]):
        line = _refused(capsys, args, phrase)
        assert "--trust-torchscript" not in line
    assert _snapshot(tmp_path) == before  # no policy file written


def test_a_torchscript_program_named_safetensors_is_named_as_such(tmp_path, capsys):
    import torch

    fake = tmp_path / "fake.safetensors"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(fake))
    before = _snapshot(tmp_path)
    phrase = "not a policy file: a TorchScript program named .safetensors"
    for args in (["evaluate", str(fake), "random", "--games", "2"],
                 ["export", str(fake), "--trust-torchscript"],  # said 'already a policy file'
                 ["export", str(fake), "--format", "torchscript", "-o", str(tmp_path / "x.pt")]):
        line = _refused(capsys, args, phrase)
        assert "already a policy file" not in line and f"export {fake}" not in line
    assert _snapshot(tmp_path) == before


# ----------------------------------------------------------------------------- 4.-6. options
def test_too_many_opponents_without_players(capsys):
    line = _refused(capsys, ["play", "--opponents", "greedy", "greedy", "greedy", "greedy", "--seed", "1"],
                    "4 opponents: a table holds at most 3")
    assert "--players" not in line


@pytest.mark.parametrize("spec, phrase", [
    ("policy", "agent policy needs a file: policy:PATH"),
    ("policy:", "agent policy needs a file: policy:PATH"),
    ("", "empty agent name"),
])
def test_agent_specs_without_a_file_or_a_name(spec, phrase, capsys):
    line = _refused(capsys, ["evaluate", spec, "random", "--games", "2"], phrase)
    assert "no such policy file" not in line and "no checkpoint" not in line
    _refused(capsys, ["play", "--opponents", spec, "--seed", "1"], phrase)


@pytest.mark.parametrize("games", ["99999999999999999999", "1000001"])
def test_games_has_an_upper_bound(games, capsys, monkeypatch):
    from training import tournament

    def play(*args, **kwargs):
        raise AssertionError(f"--games {games} was accepted: the tournament would run for years")

    monkeypatch.setattr(tournament, "run_tournament", play)
    line = _refused(capsys, ["evaluate", "random", "greedy", "--games", games],
                    "--games must be at least 1 and at most 1,000,000")
    assert len(line) < 120
    monkeypatch.undo()
    assert cli.main(["evaluate", "random", "greedy", "--games", "1", "--no-progress"]) == 0
