"""Training end to end (a few hundred steps in a subprocess), resume, export round trip,
PolicyAgent on exported files, and one-line errors for bad checkpoints (policy files:
tests/test_policy_files.py)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arboretum_env.agents import make_agent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.policy import PolicyAgent
from arboretum_env.versions import VersionMismatchError
from training.export import CheckpointError, export_policy, find_checkpoint, load_checkpoint

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # the module's fixture trains for about two minutes

TINY = ["--set", "total_timesteps=256", "--set", "n_steps=128", "--set", "batch_size=64",
        "--set", "n_epochs=1", "--set", "bc_games=1", "--set", "bc_epochs=1", "--set", "eval_every=128",
        "--set", "eval_games=2", "--set", "final_eval_games=2", "--set", "snapshot_every=128",
        "--set", "channels=4", "--set", "hidden=32", "--set", "n_envs=2", "--set", "hints=false",
        "--set", "teacher=tempo", "--no-progress"]


def cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "training.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One tiny run, then a resume that trains 128 steps more."""
    runs = tmp_path_factory.mktemp("runs")
    first = cli("train", "--config", "configs/sb3_quickstart.yaml", "--set", f"runs_dir={runs}", *TINY)
    assert first.returncode == 0, first.stderr[-2000:]
    folder = runs / "sb3_quickstart"
    resumed = cli("train", "--config", "configs/sb3_quickstart.yaml", "--set", f"runs_dir={runs}", *TINY,
                  "--set", "total_timesteps=384", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    return folder, first.stdout, resumed.stdout


def test_run_writes_checkpoints_metadata_logs_and_report(run):
    folder, out, _ = run
    assert "random" in out and "greedy" in out and "win" in out
    meta = json.loads(sorted((folder / "checkpoints").glob("step_*.json"))[0].read_text())
    assert meta["versions"]["env"] == "arboretum_v0"
    assert meta["config"]["run_name"] == "sb3_quickstart"
    assert {"observation_layout", "action_layout", "package"} <= set(meta["versions"])
    assert list((folder / "tb").rglob("events.out.tfevents.*"))
    assert (folder / "policy.safetensors").is_file() and (folder / "learning_curve.png").is_file()
    report = json.loads((folder / "evaluation.json").read_text())
    for name in ("random", "greedy"):
        stats = report[name]
        assert stats["win_rate"] + stats["draw_rate"] + stats["loss_rate"] == pytest.approx(1.0)
    assert list((folder / "pool").glob("snapshot_*.safetensors"))
    imitation = json.loads((folder / "imitation.json").read_text())
    assert imitation["teacher"] == "tempo" and imitation["decisions"] > 50
    assert meta["config"]["teacher"] == "tempo"
    final = PolicyAgent(folder / "policy.safetensors")
    assert final.metadata["hints"] is None and final.hints is None  # hints=false in this run
    assert final.metadata["network"] == "cnn" and final.metadata["network_kwargs"]["channels"] == 4


def test_resume_continues_from_the_last_checkpoint(run):
    folder, _, resumed_out = run
    steps = sorted(int(p.stem.split("_")[1]) for p in (folder / "checkpoints").glob("step_*.zip"))
    assert steps[-1] >= 384 and 256 in steps
    assert "after 384 steps" in resumed_out or f"after {steps[-1]} steps" in resumed_out


def test_export_round_trip_same_actions(run, tmp_path):
    folder, _, _ = run
    model, meta, _ = load_checkpoint(folder)
    path = export_policy(model, tmp_path / "p.safetensors", {"timesteps": meta["timesteps"]})
    agent = PolicyAgent(path)
    observations, masks = [], []

    def recorder(obs, mask, view):
        observations.append(obs.copy())
        masks.append(mask.copy())
        legal = np.flatnonzero(mask)
        return int(legal[len(observations) % len(legal)])

    play_game([recorder, make_agent("random", 0)], 2, seed=3)
    assert len(observations) > 50
    for obs, mask in zip(observations, masks):
        expected, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert agent.act(obs, mask) == int(expected)


def test_policy_agent_plays_whole_games_legally(run):
    folder, _, _ = run
    agent = make_agent(f"policy:{folder / 'policy.safetensors'}", seed=0)
    result = play_game([agent, make_agent("random", 1)], 2, seed=11)
    assert len(result.players) == 2


def test_export_command_writes_a_policy_file(run, tmp_path):
    folder, _, _ = run
    out = tmp_path / "exported.safetensors"
    proc = cli("export", str(folder), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    meta = PolicyAgent(out).metadata
    assert meta["versions"]["env"] == "arboretum_v0" and meta["timesteps"] >= 384
    assert meta["trained_from"].endswith(".zip")
    proc = cli("export", str(folder), "--format", "torchscript", "-o", str(tmp_path / "deploy.pt"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "deploy.pt").is_file() and not list(tmp_path.glob("*.tmp*"))


def test_missing_checkpoint_is_one_line(tmp_path):
    proc = cli("export", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "no such checkpoint" in proc.stderr and "Traceback" not in proc.stderr


def test_corrupt_checkpoint_is_one_line(run, tmp_path):
    folder, _, _ = run
    source = find_checkpoint(folder)
    bad = tmp_path / "step_000000001.zip"
    bad.write_bytes(b"not a zip at all")
    bad.with_suffix(".json").write_text(source.with_suffix(".json").read_text())
    with pytest.raises(CheckpointError, match="corrupt checkpoint"):
        load_checkpoint(bad)
    proc = cli("export", str(bad))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_checkpoint_of_another_layout_is_refused(run, tmp_path):
    folder, _, _ = run
    source = find_checkpoint(folder)
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    meta = json.loads(source.with_suffix(".json").read_text())
    meta["versions"]["observation_layout"] = 999
    copy.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(VersionMismatchError, match="observation_layout 999"):
        load_checkpoint(copy)
