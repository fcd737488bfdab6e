"""Files written whole or not at all: ``atomic_write`` (a temporary name in the same folder,
flushed and renamed over the target when complete).

Every checkpoint, policy file, run record and export goes through here, so that a full disk,
an interrupt or a crash never leaves a truncated file under the real name: either the old file
(or nothing) is there, or the complete new one.

Layer: utilities shared by all layers (stdlib only).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator, Union

from .errors import UserError

PathLike = Union[str, "os.PathLike[str]"]


class OutputPathError(UserError):
    """An output path that cannot be written (a folder, under a file, read-only, ...)."""


def check_writable(path: PathLike, what: str = "output") -> Path:
    """Raise ``OutputPathError`` (one line) unless a file could be created at ``path``: its
    folder exists (or can be made) and is writable, and ``path`` is not a folder. Call it before
    long work whose result goes to ``path``."""
    target = Path(path)
    if target.is_dir():
        raise OutputPathError(f"{what} {target}: is a folder")
    folder = target.parent if str(target.parent) else Path(".")
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputPathError(f"{what} {target}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what} {target}: {probe} is not writable")
    return target


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb") -> Iterator[IO]:
    """``with atomic_write(p) as f: f.write(...)``: the data goes to a temporary file beside
    ``p``, which replaces ``p`` only when the block ends without an exception (after flush and
    fsync). On any error the temporary file is removed and ``p`` is left as it was."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write: mode must be 'wb' or 'w', got {mode!r}")
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: PathLike, text: str) -> None:
    with atomic_write(path, "w") as handle:
        handle.write(text)
