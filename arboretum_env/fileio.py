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
    """Raise ``OutputPathError`` (one line) unless a file could be created at ``path``: it is
    not a folder nor a device, its folder exists (or can be made) and a file can really be made
    there (tried with a temporary file, removed at once: permission bits say nothing for root,
    nor on /proc or a read-only mount). Call it before long work whose result goes to ``path``."""
    target = Path(path)
    if target.is_dir():
        raise OutputPathError(f"{what} {target}: is a folder")
    if target.exists() and not target.is_file():
        raise OutputPathError(f"{what} {target}: is not a regular file")
    folder = target.parent if str(target.parent) else Path(".")
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise OutputPathError(f"{what} {target}: {probe} is not a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".write-test.", dir=probe)
    except OSError as exc:
        raise OutputPathError(f"{what} {target}: cannot write in {probe}: "
                              f"{exc.strerror or type(exc).__name__}") from None
    os.close(fd)
    os.unlink(tmp)
    return target


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb") -> Iterator[IO]:
    """``with atomic_write(p) as f: f.write(...)``: the data goes to a temporary file beside
    ``p``, which replaces ``p`` only when the block ends without an exception (after flush and
    fsync). On any error the temporary file is removed and ``p`` is left as it was."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write: mode must be 'wb' or 'w', got {mode!r}")
    target = Path(path)
    if target.exists() and not target.is_file():  # never rename over a folder or a device
        raise OutputPathError(f"{target}: is {'a folder' if target.is_dir() else 'not a regular file'}")
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a shared file should not be
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: PathLike, text: str) -> None:
    with atomic_write(path, "w") as handle:
        handle.write(text)
