"""A self-play run's checkpoints play, evaluate and export as policy files, also in the middle of
a run (before ``policy.safetensors`` exists); a damaged one is a one-line error."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from arboretum_env.batch import table as batch_table
from training.selfplay_config import selfplay_config

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from training.selfplay import train_selfplay

    root = tmp_path_factory.mktemp("runs")
    config = {"run_name": "mid", "runs_dir": str(root), "num_envs": 4, "rollout_steps": 16,
              "total_steps": 120, "eval_every": 60, "eval_games": 2, "final_eval_games": 2,
              "minibatch_size": 32, "torch_threads": 1, "channels": 4, "hidden": 16,
              "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(config), progress=False)
    folder = root / "mid"
    (folder / "policy.safetensors").unlink()  # as in the middle of a run
    return folder


def _newest(folder):
    return max(folder.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))


@needs_numba
def test_a_run_folder_mid_run_plays_its_newest_checkpoint(run):
    from arboretum_env.agents.arena import play_game
    from arboretum_env.agents.selfplay_net import PlaneNet
    from training.tournament import load_agent

    agent, kind, folder = load_agent(str(run))
    newest = _newest(run)
    steps = json.loads(newest.with_suffix(".json").read_text())["steps"]
    assert kind == "policy" and folder == run and agent.metadata["timesteps"] == steps
    assert agent.metadata["hints"] is None and agent.metadata["reward_shaping"] == "none"
    net = PlaneNet(4, 16)
    net.load_state_dict(torch.load(newest, weights_only=True)["net"])
    obs = np.random.default_rng(0).random((1, net.planes_at + 19 * 324), dtype=np.float32)
    assert np.allclose(agent.logits(obs[0]), net(torch.from_numpy(obs))[0][0].detach().numpy(), atol=1e-6)
    from arboretum_env.agents import make_agent
    assert play_game([agent, make_agent("random", seed=1)], 2, seed=3).totals  # legal to the end
    older = min(run.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))
    assert load_agent(str(older))[0].metadata["timesteps"] == 0  # one checkpoint by its file


@needs_numba
def test_export_writes_a_policy_file_from_a_checkpoint(run, tmp_path):
    from arboretum_env.agents.policy import PolicyAgent
    from training.cli import main

    out = tmp_path / "p.safetensors"
    assert main(["export", str(_newest(run)), "-o", str(out)]) == 0
    assert PolicyAgent(out).metadata["trainer"] == "selfplay"
    assert main(["export", str(run), "-o", str(tmp_path / "q.safetensors")]) == 0
    assert main(["evaluate", str(run), "random", "--games", "2", "--no-progress"]) == 0
    scripted = tmp_path / "p.pt"  # straight to TorchScript, no policy file left behind
    assert main(["export", str(_newest(run)), "--format", "torchscript", "-o", str(scripted)]) == 0
    assert scripted.is_file() and not list(tmp_path.glob("*.tmp*"))


@needs_numba
def test_a_damaged_checkpoint_is_one_line(run, tmp_path, capsys):
    from training.cli import main

    bad = tmp_path / "checkpoints"
    bad.mkdir()
    newest = _newest(run)
    (bad / newest.name).write_bytes(b"cut short")
    (bad / newest.with_suffix(".json").name).write_text(newest.with_suffix(".json").read_text())
    assert main(["evaluate", str(bad / newest.name), "random", "--games", "2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a readable self-play checkpoint" in err[0], err
