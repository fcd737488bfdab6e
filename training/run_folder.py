"""The run folder ``<runs_dir>/<run_name>/``: one process at a time, never overwritten silently,
and the checkpoint a resume starts from.

* ``RunLock``: an exclusive ``flock`` on ``<runs_dir>/<run_name>.lock`` (beside the folder, so a
  run moved aside does not take the lock with it). The kernel drops the lock when its process
  ends, however it ends, so the file a killed process leaves behind never blocks a later run.
* ``claim``: the shipped agents' folders (``agents.SHIPPED_FOLDERS``) are never used; a fresh run into a folder that holds a run is refused (``--resume`` continues it,
  ``--replace`` moves it aside to ``<run_name>.replaced-<time>``); a resume needs a run to resume.
* ``resume_candidates``: the checkpoints, newest first, each intact one with its metadata and
  each damaged one with what is wrong, so that a resume falls back and names the damage.

Linux and macOS (``fcntl``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from arboretum_env.agents import SHIPPED_FOLDERS
from arboretum_env.errors import UserError

RUN_FILES = ("config.yaml", "evaluations.jsonl", "evaluation.json", "policy.safetensors", "policy.pt",
             "imitation.json")
"""Files whose presence means the folder holds a run (checkpoints count too)."""


class RunFolderError(UserError):
    """A run folder that cannot be used as asked (in use, holds a run, nothing to resume)."""


class RunLock:
    """``with RunLock(folder):`` holds ``<folder>.lock`` exclusively, or raises ``RunFolderError``
    naming the process that holds it. The lock file is removed on release."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path = self.folder.with_name(self.folder.name + ".lock")
        self.fd: Optional[int] = None

    def __enter__(self) -> "RunLock":
        while self.fd is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:  # runs_dir under a file, read-only, /proc ...
                blocking = next((p for p in self.folder.parents if p.is_file()), None)
                raise RunFolderError(f"{self.folder}: cannot write there "
                                     + (f"({blocking} is a file)" if blocking else
                                        f"({exc.strerror or type(exc).__name__})")) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise RunFolderError(f"{self.folder}: in use by another training process (pid "
                                     f"{holder}); wait for it to finish or use another run_name") from None
            try:  # the previous holder may have removed the file between our open and flock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(self.fd)
            self.fd = None


def holds_run(folder: Path) -> bool:
    return folder.is_dir() and (any((folder / name).exists() for name in RUN_FILES)
                                or any((folder / "checkpoints").glob("step_*")))


def aside_name(folder: Path) -> Path:
    """Where ``--replace`` moves an old run: ``<name>.replaced-<YYYYmmdd-HHMMSS>[-k]``."""
    base = f"{folder.name}.replaced-{time.strftime('%Y%m%d-%H%M%S')}"
    target, k = folder.with_name(base), 2
    while target.exists():
        target, k = folder.with_name(f"{base}-{k}"), k + 1
    return target


def claim(folder: Path, resume: bool, replace: bool, checkpoints: str = "step_*.zip") -> Optional[Path]:
    """Check (under the lock) that ``folder`` may be used as asked; with ``replace``, move an
    old run aside and return where it went. Creates nothing else. A resume needs a file of
    ``checkpoints/`` matching the glob ``checkpoints`` (the self-play trainer's are ``.pt``)."""
    if resume and replace:
        raise RunFolderError("--resume continues the run and --replace moves it aside: give one")
    if any(folder.resolve() == shipped.resolve() for shipped in SHIPPED_FOLDERS):
        raise RunFolderError(f"{folder} holds a shipped agent: training never writes there; choose "
                             f"another run_name (or runs_dir)")
    if resume:
        if not any((folder / "checkpoints").glob(checkpoints)):
            raise RunFolderError(f"{folder}: no checkpoint to resume from (start a fresh run "
                                 f"without --resume)")
        return None
    if not holds_run(folder):
        return None
    if not replace:
        raise RunFolderError(f"{folder} already holds a run: --resume continues it, --replace moves "
                             f"it aside (to {aside_name(folder).name}), or choose another run_name")
    target = aside_name(folder)
    folder.rename(target)
    return target


def refuse_other_model(folder: Path, theirs: dict, ours: dict) -> None:
    """One ``RunFolderError`` line for a resume whose config (``ours``) would build another model
    than its checkpoints' (``theirs``): the first differing field in name order (absent: 0)."""
    for key in sorted(set(theirs) | set(ours)):
        if theirs.get(key, 0) != ours.get(key, 0):
            raise RunFolderError(f"{folder}: its checkpoints have {key}: {theirs.get(key, 0)}, the config "
                                 f"{ours.get(key, 0)}; resume with the run's own config.yaml")


# ----------------------------------------------------------------------------- checkpoints
def checkpoint_problem(zip_path: Path) -> tuple[Optional[dict], Optional[str]]:
    """``(metadata, None)`` for an intact checkpoint, ``(None, what is wrong)`` otherwise: its
    ``.json`` missing, not JSON, without integer ``timesteps``, or its ``.zip`` not a readable
    archive (every member's CRC is checked)."""
    meta_path = zip_path.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except OSError:
        return None, f"its metadata {meta_path.name} is missing"
    except (ValueError, RecursionError):
        return None, f"its metadata {meta_path.name} is not JSON"
    steps = meta.get("timesteps") if isinstance(meta, dict) else None
    if type(steps) is not int or steps < 0:
        return None, f"its metadata {meta_path.name} has no timesteps"
    try:
        with zipfile.ZipFile(zip_path) as archive:
            bad = archive.testzip()
    except (OSError, zipfile.BadZipFile, EOFError):
        return None, "not a readable zip archive (truncated?)"
    if bad is not None:
        return None, f"member {bad} of the archive is damaged"
    return meta, None


@dataclass
class Candidate:
    zip_path: Path
    meta: Optional[dict]
    problem: Optional[str]


def resume_candidates(folder: Path) -> Iterator[Candidate]:
    """The run's checkpoints, newest first, each checked with ``checkpoint_problem``."""
    for zip_path in sorted((folder / "checkpoints").glob("step_*.zip"), reverse=True):
        meta, problem = checkpoint_problem(zip_path)
        yield Candidate(zip_path, meta, problem)


def set_aside_damaged(damaged: list[Path]) -> None:
    """Move damaged checkpoints (and their ``.json``) to ``checkpoints/damaged/``, so that no
    command picks them as the newest later."""
    for zip_path in damaged:
        target = zip_path.parent / "damaged"
        target.mkdir(exist_ok=True)
        for path in (zip_path, zip_path.with_suffix(".json")):
            if path.exists():
                path.rename(target / path.name)
