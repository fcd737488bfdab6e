"""The batched self-play trainer: returns per seat, a tiny run's outputs, resume, and its config."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from arboretum_env.batch import table as batch_table
from training.selfplay import _gae
from training.config_check import check_config
from training.selfplay_config import ConfigKeyError, SelfPlayConfig, selfplay_config

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


def _gae_reference(values, rewards, dones, nexts, bootstrap, gamma, lam):
    """GAE written the slow, obvious way: walk each seat's chain forward from its start."""
    n = len(values)
    starts = set(range(n)) - {k for k in nexts if k >= 0}
    adv = np.zeros(n)
    for s in starts:
        chain = [s]
        while not dones[chain[-1]] and nexts[chain[-1]] >= 0:
            chain.append(nexts[chain[-1]])
        deltas = []
        for i, j in enumerate(chain):
            if dones[j]:
                nv = 0.0
            else:
                nv = values[chain[i + 1]] if i + 1 < len(chain) else bootstrap[j]
            deltas.append(rewards[j] + gamma * nv - values[j])
        for i, j in enumerate(chain):
            adv[j] = sum((gamma * lam) ** (k - i) * deltas[k] for k in range(i, len(chain)))
    return adv


def test_gae_follows_each_seats_own_chain():
    rng = np.random.default_rng(0)
    # two interleaved seats of one game, then a second game for seat 0 (bootstrapped)
    order = [0, 1, 0, 1, 0, 1, 0, 1]  # seat per buffer index
    values = rng.normal(size=8).astype(np.float32)
    rewards = np.zeros(8, np.float32)
    dones = np.zeros(8, bool)
    nexts = np.array([2, 3, 4, 5, -1, -1, 7, -1])
    dones[4], rewards[4] = True, 1.0  # seat 0 wins on its third decision
    dones[5], rewards[5] = True, -1.0  # seat 1's last decision gets its loss
    bootstrap = rng.normal(size=8).astype(np.float32)
    adv = np.zeros(8, np.float32)
    _gae(values, rewards, dones, nexts, bootstrap, 0.99, 0.9, adv)
    expected = _gae_reference(values, rewards, dones, nexts, bootstrap, 0.99, 0.9)
    assert adv == pytest.approx(expected, abs=1e-5)
    assert order  # seats alternate: each chain skips the other seat's entries
    # rewards on every decision (shaping): each one counts, the bootstrapped ones included
    rewards = rng.normal(size=8).astype(np.float32)
    _gae(values, rewards, dones, nexts, bootstrap, 1.0, 0.95, adv)
    assert adv == pytest.approx(_gae_reference(values, rewards, dones, nexts, bootstrap, 1.0, 0.95), abs=1e-5)
    before = adv[0]
    rewards[2] += 1.0  # a reward on seat 0's second decision reaches its first through lambda
    _gae(values, rewards, dones, nexts, bootstrap, 1.0, 0.95, adv)
    assert adv[0] - before == pytest.approx(0.95, abs=1e-5)


@pytest.mark.parametrize("data,message", [
    ({"total_steps": 0}, "total_steps"), ({"learning_rate": float("nan")}, "finite"),
    ({"gamma": 5.0}, "gamma"), ({"clip_coef": -0.2}, "clip_coef"), ({"seed": -1}, "seed"),
    ({"eval_every": 0}, "eval_every"), ({"snapshot_every": -1}, "snapshot_every"),
    ({"eval_opponents": ["nobody"]}, "eval_opponents"), ({"num_envs": 1.5}, "num_envs"),
    ({"lerning_rate": 0.1}, "did you mean 'learning_rate'"), ({"run_name": "../x"}, "run_name"),
])
def test_config_values_are_checked_by_name(data, message):
    with pytest.raises(ConfigKeyError, match=message):
        selfplay_config(data, "test")


def test_the_default_config_passes_its_own_checks():
    check_config(SelfPlayConfig())  # every field declared with checked(...), defaults in range
    assert selfplay_config({}) == SelfPlayConfig()


@needs_numba
def test_a_tiny_run_writes_its_outputs_and_resumes(tmp_path):
    from training.selfplay import train_selfplay
    from training.selfplay_io import RunFolderError

    base = {"run_name": "tiny", "runs_dir": str(tmp_path), "num_envs": 8, "rollout_steps": 16,
            "total_steps": 300, "eval_every": 150, "eval_games": 2, "final_eval_games": 2,
            "snapshot_every": 100, "minibatch_size": 64, "torch_threads": 1,
            "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    result = train_selfplay(selfplay_config(base), progress=False)
    folder = tmp_path / "tiny"
    assert result["steps"] >= 300 and result["final"]["random"]["games"] == 2
    curve = [json.loads(line) for line in (folder / "curve.jsonl").read_text().splitlines()]
    assert curve[0]["step"] == 0 and curve[-1]["step"] == result["steps"]
    assert all(row["rating"] is not None for row in curve)
    for name in ("config.yaml", "policy.safetensors", "evaluation.json", "learning_curve.png"):
        assert (folder / name).is_file(), name
    from arboretum_env.agents import make_agent
    from arboretum_env.agents.arena import play_game

    agent = make_agent(str(folder / "policy.safetensors"))  # built from our code, data only
    assert agent.metadata["hints"] is None and "self-play from scratch" in agent.metadata["trained_from"]
    assert play_game([agent, make_agent("random", seed=1)], 2, seed=5).totals  # legal to the end
    with pytest.raises(RunFolderError, match="already holds a run"):
        train_selfplay(selfplay_config(base), progress=False)
    newest = max(folder.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))
    tensors = torch.load(newest, weights_only=True)  # tensors only: no code runs on load
    assert "net" in tensors
    longer = dict(base, total_steps=450)
    resumed = train_selfplay(selfplay_config(longer), resume=True, progress=False)
    assert resumed["steps"] >= 450 and resumed["wall_s"] >= result["wall_s"]
    newest.write_bytes(b"truncated")  # a damaged newest checkpoint is skipped, by name
    again = train_selfplay(selfplay_config(dict(longer, total_steps=600)), resume=True, progress=False)
    assert again["steps"] >= 600
    steps = [json.loads(line)["step"] for line in (folder / "curve.jsonl").read_text().splitlines()]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)


@needs_numba
def test_resume_redoes_an_interrupted_evaluation(tmp_path):
    from training.selfplay import train_selfplay

    base = {"run_name": "cut", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 8,
            "total_steps": 60, "eval_every": 30, "eval_games": 2, "final_eval_games": 2,
            "minibatch_size": 32, "torch_threads": 1, "eval_opponents": ["random"],
            "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(base), progress=False)
    folder = tmp_path / "cut"
    lines = (folder / "curve.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])["step"]
    (folder / "curve.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # its evaluation was lost
    train_selfplay(selfplay_config(dict(base, total_steps=last)), resume=True, progress=False)
    steps = [json.loads(line)["step"] for line in (folder / "curve.jsonl").read_text().splitlines()]
    assert steps[-1] == last and steps.count(last) == 1


def test_the_run_folder_is_claimed_under_run_folders_lock(tmp_path):
    from training.run_folder import RunLock
    from training.selfplay_io import RunFolder, RunFolderError

    config = SelfPlayConfig(run_name="held", runs_dir=str(tmp_path))
    path = tmp_path / "held"
    with pytest.raises(RunFolderError, match="no checkpoint to resume from"):
        with RunFolder(path, config, resume=True).lock():
            pass
    with RunFolder(path, config).lock() as folder:
        assert (path / "config.yaml").is_file() and (tmp_path / "held.lock").is_file()
        with pytest.raises(RunFolderError, match="in use"):
            with RunLock(path):
                pass
        assert folder.curve() == []
    assert not (tmp_path / "held.lock").exists()
    with pytest.raises(RunFolderError, match="already holds a run"):
        with RunFolder(path, config).lock():
            pass
    with RunFolder(path, config, overwrite=True).lock():
        pass
    assert [p.name.split("-")[0] for p in tmp_path.glob("held.replaced-*")] == ["held.replaced"]
    assert (path / "config.yaml").is_file()


@needs_numba
def test_a_checkpoint_missing_a_part_is_skipped_by_name_and_a_misfit_is_one_line(tmp_path, capsys):
    """A checkpoint that loads but lacks a part of the trainer is skipped, naming the part; one
    whose weights do not fit the trainer is one line, not a traceback from load_state_dict."""
    from training.selfplay import train_selfplay
    from training.selfplay_io import RunFolderError

    base = {"run_name": "parts", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 8,
            "total_steps": 64, "eval_every": 32, "eval_games": 1, "final_eval_games": 1,
            "minibatch_size": 32, "torch_threads": 1, "eval_opponents": ["random"],
            "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(base), progress=False)
    checkpoints = sorted((tmp_path / "parts" / "checkpoints").glob("step_*.pt"), key=lambda p: int(p.stem[5:]))
    newest = checkpoints[-1]
    torch.save({"a": torch.zeros(2)}, newest)  # loads, but holds no trainer
    meta = newest.with_suffix(".json")
    again = train_selfplay(selfplay_config(dict(base, total_steps=96)), resume=True, progress=False)
    assert again["steps"] >= 96
    assert f"skipping damaged checkpoint {newest.name}: ValueError (no 'net', 'optimizer'" in capsys.readouterr().err
    newest = max((tmp_path / "parts" / "checkpoints").glob("step_*.pt"), key=lambda p: int(p.stem[5:]))
    data = json.loads(newest.with_suffix(".json").read_text())
    del data["rng"]
    newest.with_suffix(".json").write_text(json.dumps(data))
    train_selfplay(selfplay_config(dict(base, total_steps=128)), resume=True, progress=False)
    assert "ValueError (no 'rng')" in capsys.readouterr().err
    newest = max((tmp_path / "parts" / "checkpoints").glob("step_*.pt"), key=lambda p: int(p.stem[5:]))
    tensors = torch.load(newest, weights_only=True)
    first = next(iter(tensors["net"]))
    tensors["net"][first] = torch.zeros(3, 3)  # the same network named, another shape
    torch.save(tensors, newest)
    with pytest.raises(RunFolderError, match="its newest checkpoint does not fit the config's trainer"):
        train_selfplay(selfplay_config(dict(base, total_steps=160)), resume=True, progress=False)
    assert meta.exists()


@pytest.mark.parametrize("data, message", [
    ({"num_envs": 65_536, "rollout_steps": 100_000}, "num_envs * rollout_steps must be at most 1,048,576"),
    ({"runs_dir": ""}, "runs_dir must be non-empty"),
])
def test_configs_no_machine_can_run_are_refused(data, message):
    with pytest.raises(ConfigKeyError, match=message.replace("*", r"\*")):
        selfplay_config(data)


def test_a_float_written_1e_3_is_a_float():
    assert selfplay_config({"learning_rate": "1e-3"}).learning_rate == 1e-3  # PyYAML reads 1e-3 as text
    with pytest.raises(ConfigKeyError, match="key 'learning_rate' must be float, got str '1e-3x'"):
        selfplay_config({"learning_rate": "1e-3x"})
    with pytest.raises(ConfigKeyError, match="key 'total_steps' must be int"):
        selfplay_config({"total_steps": "1e3"})  # an int field takes no float text
