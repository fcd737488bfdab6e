"""Run folders (issue 13 points 1 to 3): never overwritten silently, one process at a time,
checkpoints whole or absent, a resume that falls back past a damaged checkpoint and writes
nothing when it fails, and bookkeeping that survives an interrupt."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from training import cli
from training import train as TR
from training.config import config_from_dict
from training.export import CheckpointError, load_checkpoint
from training.run_folder import RunFolderError, RunLock, checkpoint_problem, claim

REPO = Path(__file__).resolve().parents[1]
TINY = {"run_name": "r", "total_timesteps": 192, "n_envs": 1, "n_steps": 48, "batch_size": 24,
        "n_epochs": 1, "network": "mlp", "hidden": 16, "eval_every": 48, "eval_games": 1,
        "final_eval_games": 1, "snapshot_every": 64, "pool_size": 4, "bc_games": 0, "hints": False,
        "opponents": ["random"], "torch_threads": 1}


def tiny(runs: Path, **changes):
    return config_from_dict({**TINY, "runs_dir": str(runs), **changes})


def tree(folder: Path) -> dict:
    """Every file under ``folder`` (lock files beside it included) with its size and mtime."""
    return {str(p.relative_to(folder.parent)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.parent.rglob("*")) if p.is_file()}


def steps_of(folder: Path, pattern: str) -> list[int]:
    return sorted(int(p.stem.split("_")[1]) for p in folder.glob(pattern))


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """A run interrupted (Ctrl-C) during its evaluation at step 144, then resumed to 192."""
    runs = tmp_path_factory.mktemp("runs")
    real = TR.evaluate_against_baselines

    def interrupted_at_144(*args, seed, **kwargs):
        if seed == 10_000 + 144:
            raise KeyboardInterrupt
        return real(*args, seed=seed, **kwargs)

    TR.evaluate_against_baselines = interrupted_at_144
    try:
        with pytest.raises(KeyboardInterrupt):
            TR.train(tiny(runs), show_progress=False)
    finally:
        TR.evaluate_against_baselines = real
    folder = runs / "r"
    before = {"checkpoints": steps_of(folder / "checkpoints", "step_*.zip"),
              "records": [r["timesteps"] for r in TR.read_records(folder / "evaluations.jsonl")],
              "lock_left": (runs / "r.lock").exists()}
    final = TR.train(tiny(runs), resume=True, show_progress=False)
    return folder, before, final


# ----------------------------------------------------------------------------- point 3
def test_an_interrupted_evaluation_is_redone_on_resume(resumed):
    folder, before, final = resumed
    assert before["checkpoints"][-1] == 144 and before["records"] == [0, 48, 96]
    assert not before["lock_left"]  # the interrupt released the lock
    records = TR.read_records(folder / "evaluations.jsonl")
    assert [r["timesteps"] for r in records] == [0, 48, 96, 144, 192]
    assert final["timesteps"] == 192 and json.loads((folder / "evaluation.json").read_text()) == final


def test_the_final_evaluation_is_written_once(resumed):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    folder, _, _ = resumed
    steps = []
    for events in (folder / "tb").rglob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        if "eval/win_rate_vs_random" in acc.Tags()["scalars"]:
            steps += [e.step for e in acc.Scalars("eval/win_rate_vs_random")]
    assert steps.count(192) == 1, steps


def test_resume_keeps_the_snapshot_schedule_and_the_wall_clock(resumed):
    folder, _, _ = resumed
    assert steps_of(folder / "pool", "snapshot_*.safetensors") == [64, 128, 192]
    walls = [r["wall_s"] for r in TR.read_records(folder / "evaluations.jsonl")]
    assert walls == sorted(walls) and walls[-1] > 0, walls
    meta = json.loads((folder / "checkpoints" / "step_000000144.json").read_text())
    assert walls[-1] >= meta["wall_s"] > 0


# ----------------------------------------------------------------------------- point 1
def test_a_fresh_run_into_a_used_folder_is_refused_and_nothing_changes(resumed, tmp_path, capsys):
    folder, _, _ = resumed
    copy = tmp_path / "runs" / "r"
    shutil.copytree(folder, copy)
    before = tree(copy)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({**TINY, "runs_dir": str(copy.parent)}))
    assert cli.main(["train", "--config", str(config), "--no-progress"]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "already holds a run: --resume continues it, --replace moves it" in line
    assert tree(copy) == before


def test_replace_moves_the_old_run_aside(resumed, tmp_path):
    folder, _, _ = resumed
    copy = tmp_path / "r"
    shutil.copytree(folder, copy)
    before = tree(copy)
    moved = claim(copy, resume=False, replace=True)
    assert not copy.exists() and moved.parent == tmp_path and moved.name.startswith("r.replaced-")
    assert {k.replace(moved.name, "r", 1): v for k, v in tree(moved).items()} == before
    copy.mkdir()
    (copy / "config.yaml").write_text("x")
    assert claim(copy, resume=False, replace=True) != moved  # a second replace: another name
    with pytest.raises(RunFolderError, match="give one"):
        claim(copy, resume=True, replace=True)


def test_the_shipped_agents_folders_are_the_repositorys():
    from training import run_folder
    assert [f.resolve() for f in run_folder.SHIPPED_FOLDERS] == [
        (REPO / "models" / name).resolve() for name in ("shipped", "selfplay_2p", "afterstate_2p")]
    assert all((folder / "policy.safetensors").is_file() for folder in run_folder.SHIPPED_FOLDERS)


@pytest.mark.parametrize("config, run_name", [("configs/quickstart.yaml", "selfplay_2p"),
                                              ("configs/sb3_quickstart.yaml", "shipped")])
@pytest.mark.parametrize("flag", [[], ["--replace"], ["--resume"]])
def test_training_never_writes_into_a_shipped_agents_folder(config, run_name, flag, tmp_path,
                                                            monkeypatch, capsys):
    """On a copy of the shipped folder standing in for it (a failure must not move the real one)."""
    from training import run_folder
    shipped = tmp_path / "models" / run_name
    shutil.copytree(REPO / "models" / run_name, shipped)
    monkeypatch.setattr(run_folder, "SHIPPED_FOLDERS", (shipped,))
    before = tree(shipped)
    assert cli.main(["train", "--config", str(REPO / config), "--set", f"runs_dir={shipped.parent}",
                     "--set", f"run_name={run_name}", "--no-progress", *flag]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and f"{shipped} holds a shipped agent: training never writes there" in line
    assert tree(shipped) == before


def test_a_second_process_is_kept_out_of_a_run_folder_in_use(tmp_path):
    folder = tmp_path / "r"
    with RunLock(folder):
        proc = subprocess.run([sys.executable, "-m", "training.cli", "train", "--config",
                               "configs/sb3_quickstart.yaml", "--set", f"runs_dir={tmp_path}",
                               "--set", "run_name=r", "--no-progress"],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        assert proc.returncode == 2, proc.stderr[-2000:]
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"in use by another training process (pid {os.getpid()})" in lines[0]
        assert not folder.exists()
    assert not (tmp_path / "r.lock").exists()


@pytest.mark.parametrize("runs_dir", ["/proc/runs", "/etc/hostname/runs", "/sys/runs"])
def test_a_runs_dir_that_cannot_be_written_is_one_line(runs_dir):
    with pytest.raises(RunFolderError, match=f"^{runs_dir}/r: cannot write there"):
        TR.train(tiny(Path(runs_dir)), show_progress=False)


def test_the_lock_of_a_killed_process_does_not_block(tmp_path):
    folder = tmp_path / "r"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from training.run_folder import RunLock; "
         f"RunLock({str(folder)!r}).__enter__(); print('locked', flush=True); time.sleep(60)"],
        cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(RunFolderError, match=f"pid {holder.pid}"):
        RunLock(folder).__enter__()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert (tmp_path / "r.lock").exists()  # left behind by the killed process
    with RunLock(folder):
        assert (tmp_path / "r.lock").read_text().strip() == str(os.getpid())
    assert not (tmp_path / "r.lock").exists()


# ----------------------------------------------------------------------------- point 2
def test_a_checkpoint_cut_short_by_a_full_disk_leaves_no_file(resumed, tmp_path, monkeypatch):
    folder, _, _ = resumed
    model, _, _ = load_checkpoint(folder)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        TR.save_checkpoint(model, tmp_path, 512, config={})
    assert os.listdir(tmp_path) == []


def _damage(zip_path: Path) -> None:
    zip_path.write_bytes(zip_path.read_bytes()[:1000])  # truncated, as by a full disk


def test_resume_falls_back_past_a_damaged_checkpoint(resumed, tmp_path, capsys):
    folder, _, _ = resumed
    copy = tmp_path / "r"
    shutil.copytree(folder, copy)
    _damage(copy / "checkpoints" / "step_000000192.zip")
    (copy / "checkpoints" / "step_000000144.json").write_text('{"config": {}}')  # no timesteps
    final = TR.train(tiny(tmp_path, total_timesteps=240), resume=True, show_progress=False)
    err = capsys.readouterr().err
    assert "step_000000192.zip is damaged (not a readable zip archive" in err
    assert "step_000000144.zip is damaged (its metadata step_000000144.json has no timesteps)" in err
    assert "resuming from step_000000096.zip" in err
    assert final["timesteps"] == 240
    assert steps_of(copy / "checkpoints", "step_*.zip") == [0, 48, 96, 144, 192, 240]
    assert sorted(p.name for p in (copy / "checkpoints" / "damaged").iterdir()) == [
        "step_000000144.json", "step_000000144.zip", "step_000000192.json", "step_000000192.zip"]
    assert [r["timesteps"] for r in TR.read_records(copy / "evaluations.jsonl")] == [0, 48, 96, 144, 192, 240]


def test_a_failed_resume_names_the_damage_and_leaves_no_new_files(resumed, tmp_path, capsys):
    folder, _, _ = resumed
    copy = tmp_path / "runs" / "r"
    shutil.copytree(folder, copy)
    for zip_path in (copy / "checkpoints").glob("step_*.zip"):
        _damage(zip_path)
    before = tree(copy)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({**TINY, "runs_dir": str(copy.parent), "total_timesteps": 240}))
    assert cli.main(["train", "--config", str(config), "--resume", "--no-progress"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("arboretum: error: ") and "\n" not in line
    assert "no intact checkpoint to resume from (step_000000192.zip: not a readable zip archive" in line
    assert tree(copy) == before


@pytest.mark.parametrize("change", [{"num_players": 3}, {"hidden": 64}, {"network": "cnn"}])
def test_a_resume_with_another_network_or_table_is_one_line_and_writes_nothing(resumed, tmp_path,
                                                                               capsys, change):
    folder, _, _ = resumed
    copy = tmp_path / "runs" / "r"
    shutil.copytree(folder, copy)
    before = tree(copy)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({**TINY, "runs_dir": str(copy.parent), "total_timesteps": 240, **change}))
    assert cli.main(["train", "--config", str(config), "--resume", "--no-progress"]) == 2
    line = capsys.readouterr().err.strip()
    key, value = next(iter(change.items()))
    saved = getattr(tiny(tmp_path), key)
    assert "\n" not in line and (f"its checkpoints have {key}: {saved}, the config {value}; "
                                 "resume with the run's own config.yaml") in line
    assert tree(copy) == before


def test_an_empty_config_file_is_one_line(tmp_path, capsys):
    (tmp_path / "empty.yaml").write_text("")
    assert cli.main(["train", "--config", str(tmp_path / "empty.yaml"), "--no-progress"]) == 2
    assert capsys.readouterr().err.strip().endswith("empty.yaml: the file is empty: a config gives at "
                                                    "least one key (configs/quickstart.yaml is an example)")
    assert list(tmp_path.iterdir()) == [tmp_path / "empty.yaml"]


def test_checkpoint_metadata_without_timesteps_is_one_line(resumed, tmp_path):
    folder, _, _ = resumed
    shutil.copy(folder / "checkpoints" / "step_000000048.zip", tmp_path / "step_000000048.zip")
    (tmp_path / "step_000000048.json").write_text('{"config": {}}')
    assert checkpoint_problem(tmp_path / "step_000000048.zip") == (
        None, "its metadata step_000000048.json has no timesteps")
    with pytest.raises(CheckpointError, match="no timesteps"):
        load_checkpoint(tmp_path / "step_000000048.zip")
