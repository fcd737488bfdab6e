"""Output files of ``evaluate`` and ``export`` (issue 13 points 4 and 5): paths checked before the
work, one line and exit 2 when they cannot be written, results printed before files are written,
and a full disk (simulated with RLIMIT_FSIZE) leaves the old file, or none, never a broken one."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from training import cli
from training import tournament as T

ROOT = Path(__file__).resolve().parents[1]


def _limited(max_bytes: int):
    """``preexec_fn`` for a child whose files cannot grow past ``max_bytes`` (as on a full disk:
    writes fail with EFBIG; Python ignores SIGXFSZ)."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


def _bad_targets(tmp: Path) -> dict[str, tuple[str, str]]:
    (tmp / "a_file").write_text("x")
    (tmp / "a_folder").mkdir(exist_ok=True)
    return {  # name: (path, what the message says)
        "/proc": ("/proc/out.{ext}", "cannot write in /proc"),
        "read-only /sys": ("/sys/out.{ext}", "cannot write in /sys"),
        "existing folder": (str(tmp / "a_folder"), "is a folder"),
        "under a file": (str(tmp / "a_file" / "out.{ext}"), "is not a folder"),
        "a device": ("/dev/full", "is not a regular file"),
    }


def _one_line(capsys, code: int) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("arboretum: error: "), captured.err
    return lines[0]


# ----------------------------------------------------------------------------- evaluate
@pytest.mark.parametrize("option", ["--json", "--csv"])
@pytest.mark.parametrize("case", ["/proc", "read-only /sys", "existing folder", "under a file", "a device"])
def test_evaluate_refuses_bad_output_paths_before_playing(tmp_path, monkeypatch, capsys, option, case):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the tournament ran before the output path was checked")

    monkeypatch.setattr(T, "run_tournament", must_not_run)
    path, fragment = _bad_targets(tmp_path)[case]
    code = cli.main(["evaluate", "random", "random", "--games", "2", option, path.format(ext="json")])
    line = _one_line(capsys, code)
    assert option in line and fragment in line


def test_evaluate_prints_the_table_before_a_write_fails(tmp_path):
    """The JSON fits, the PNG does not: the table and 'wrote ...json' are printed, the error
    is one line, and no PNG (whole or partial) is left."""
    proc = subprocess.run(
        [sys.executable, "-m", "training.cli", "evaluate", "random", "greedy", "--games", "2",
         "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png"), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=_limited(12_000))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "random" in proc.stdout and "greedy" in proc.stdout and "ordinal" in proc.stdout
    assert f"wrote {tmp_path / 'r.json'}" in proc.stdout
    assert len(json.loads((tmp_path / "r.json").read_text())["records"]) == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "Traceback" not in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


# ----------------------------------------------------------------------------- export
@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    """A run folder with one checkpoint of an untrained tiny MaskablePPO (its config stored with
    it: a checkpoint is loaded from the config, nothing is unpickled)."""
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
    run = tmp_path_factory.mktemp("export") / "run"
    save_checkpoint(new_model(config, Spaces(), run), run / "checkpoints", 0, config_to_dict(config))
    return run


@pytest.mark.parametrize("case", ["/proc", "read-only /sys", "existing folder", "under a file", "a device"])
def test_export_to_a_path_that_cannot_be_written_is_one_line(run_folder, tmp_path, capsys, case):
    path, fragment = _bad_targets(tmp_path)[case]
    line = _one_line(capsys, cli.main(["export", str(run_folder), "-o", path.format(ext="safetensors")]))
    assert "-o" in line and fragment in line


def test_export_on_a_full_disk_keeps_the_old_file_and_leaves_no_other(run_folder, tmp_path):
    out = tmp_path / "policy.safetensors"
    out.write_bytes(b"the previous policy")
    proc = subprocess.run([sys.executable, "-m", "training.cli", "export", str(run_folder), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=_limited(20_000))
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == ["policy.safetensors"] and out.read_bytes() == b"the previous policy"
