"""Poisoned files (issue 16): checkpoints and policy files whose pickled parts carry a payload that
would create a marker file when unpickled. Every loader (``load_checkpoint``, used by ``evaluate``,
``export``, ``play`` and ``train --resume``; ``PolicyAgent``, used by all of them for policy files)
refuses each with one line or loads it as data only; the marker never appears."""

from __future__ import annotations

import base64
import io
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents.policy import PolicyAgent
from arboretum_env.errors import UserError
from arboretum_env.observation import OBS_SIZE
from training.config import TrainConfig, config_to_dict
from training.export import load_checkpoint, save_checkpoint

REPO = Path(__file__).resolve().parents[1]


class Payload:
    """Unpickling it calls ``open(marker, "w")``: the marker file appears."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def payload_bytes(marker: Path) -> bytes:
    return pickle.dumps(Payload(marker), protocol=2)


def test_the_payload_works(tmp_path):
    """So that the tests below can fail: plain unpickling does create the marker."""
    marker = tmp_path / "marker"
    pickle.loads(payload_bytes(marker)).close()
    assert marker.exists()


class _Spaces(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
    action_space = gym.spaces.Discrete(NUM_ACTIONS)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    from training.train import new_model

    config = TrainConfig(channels=4, hidden=16, hints=False, n_steps=8, batch_size=8, clip_range=0.15)
    run = tmp_path_factory.mktemp("run")
    model = new_model(config, _Spaces(), run)
    return save_checkpoint(model, run / "checkpoints", 0, config_to_dict(config))


def rewrite_zip(source: Path, folder: Path, members: dict) -> Path:
    """A copy of checkpoint ``source`` (and its .json) in ``folder`` with ``members`` replaced
    (value bytes) or added; ``data`` may be given as a function of the parsed JSON."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / source.name
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            content = src.read(name)
            if name == "data" and callable(members.get("data")):
                data = json.loads(content)
                members["data"](data)
                content = json.dumps(data).encode()
            elif name in members:
                content = members[name]
            dst.writestr(name, content)
        for name, content in members.items():
            if name not in src.namelist():
                dst.writestr(name, content)
    out.with_suffix(".json").write_text(source.with_suffix(".json").read_text())
    return out


def serialized(marker: Path) -> dict:
    return {":type:": "<class 'function'>", ":serialized:": base64.b64encode(payload_bytes(marker)).decode()}


def torch_saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


SB3_CASES = {
    # the case: a schedule replaced; our config supplies it, so it is never unpickled
    "clip_range": (lambda m: {"data": lambda d: d.update(clip_range=serialized(m))}, None),
    "policy_class": (lambda m: {"data": lambda d: d.update(policy_class=serialized(m))}, None),
    "policy_kwargs": (lambda m: {"data": lambda d: d.update(policy_kwargs=serialized(m))}, None),
    "observation_space": (lambda m: {"data": lambda d: d.update(observation_space=serialized(m))}, None),
    "an unknown entry": (lambda m: {"data": lambda d: d.update(surprise=serialized(m))}, "pickled entry 'surprise'"),
    "policy.pth as a pickle": (lambda m: {"policy.pth": payload_bytes(m)}, "policy.pth is not plain tensor data"),
    "policy.pth via torch.save": (lambda m: {"policy.pth": torch_saved({"w": Payload(m)})},
                                  "policy.pth is not plain tensor data"),
    "optimizer state": (lambda m: {"policy.optimizer.pth": torch_saved({"state": Payload(m)})},
                        "policy.optimizer.pth is not plain tensor data"),
    "pytorch_variables.pth": (lambda m: {"pytorch_variables.pth": torch_saved(Payload(m))},
                              "pytorch_variables.pth is not plain tensor data"),
    "an extra .pkl member": (lambda m: {"extra.pkl": payload_bytes(m)}, "unexpected member"),
}


@pytest.mark.parametrize("case", sorted(SB3_CASES))
def test_poisoned_sb3_checkpoints(case, checkpoint, tmp_path):
    make, refusal = SB3_CASES[case]
    marker = tmp_path / "marker"
    poisoned = rewrite_zip(checkpoint, tmp_path / "run" / "checkpoints", make(marker))
    for kwargs in ({}, {"env": _Spaces(), "custom_objects": {"tensorboard_log": str(tmp_path / "tb")}}):  # evaluate/export, resume
        if refusal is None:
            model, meta, _ = load_checkpoint(poisoned, **kwargs)  # loaded as data only
            assert model.clip_range(1.0) == pytest.approx(0.15)  # from the run's config
            assert model.observation_space.shape == (OBS_SIZE,)
        else:
            with pytest.raises(UserError, match=refusal) as info:
                load_checkpoint(poisoned.parent.parent, **kwargs)
            assert "\n" not in str(info.value)
        assert not marker.exists()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "training.cli", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_poisoned_checkpoint_through_the_commands(checkpoint, tmp_path):
    """``evaluate`` plays the issue's checkpoint as data; ``export`` refuses a poisoned .pth."""
    marker = tmp_path / "marker"
    played = rewrite_zip(checkpoint, tmp_path / "a" / "checkpoints", SB3_CASES["clip_range"][0](marker))
    proc = cli("evaluate", str(played), "random", "--games", "2")
    assert proc.returncode == 0, proc.stderr
    refused = rewrite_zip(checkpoint, tmp_path / "b" / "checkpoints", SB3_CASES["policy.pth as a pickle"][0](marker))
    proc = cli("export", str(refused), "-o", str(tmp_path / "p.safetensors"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "not plain tensor data" in proc.stderr
    assert not marker.exists() and not (tmp_path / "p.safetensors").exists()


def poisoned_torchscript(path: Path, marker: Path) -> Path:
    """A real TorchScript archive whose pickles (data.pkl, constants.pkl) carry the payload."""
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(path, "w") as dst:
        names = src.namelist()
        assert any("/code/" in n for n in names)  # a program, not only weights
        for name in names:
            poisoned = name.endswith(("data.pkl", "constants.pkl"))
            dst.writestr(name, payload_bytes(marker) if poisoned else src.read(name))
    return path


@pytest.mark.parametrize("kind", ["torchscript", "torch.save", "pickle"])
@pytest.mark.parametrize("suffix", [".pt", ".safetensors"])
def test_poisoned_policy_files_are_refused(kind, suffix, tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / f"policy{suffix}"
    if kind == "torchscript":
        poisoned_torchscript(path, marker)
    elif kind == "torch.save":
        path.write_bytes(torch_saved({"weights": Payload(marker)}))
    else:
        path.write_bytes(payload_bytes(marker))
    with pytest.raises(UserError, match="TorchScript or pickle file") as info:
        PolicyAgent(path)
    assert "\n" not in str(info.value) and not marker.exists()


def test_poisoned_policy_file_through_the_commands(tmp_path):
    marker = tmp_path / "marker"
    path = poisoned_torchscript(tmp_path / "policy.pt", marker)
    for args in (("evaluate", str(path), "random", "--games", "2"),
                 ("play", "--opponents", str(path), "--seed", "1"),
                 ("export", str(path), "-o", str(tmp_path / "x.safetensors"))):  # no --trust-torchscript
        proc = cli(*args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert not marker.exists()
