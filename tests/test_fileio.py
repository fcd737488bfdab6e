"""atomic_write: the target is replaced whole, or left as it was."""

import os

import pytest

from arboretum_env.fileio import OutputPathError, atomic_write, atomic_write_text, check_writable


def test_complete_write_replaces_target(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_failed_write_keeps_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write(b"half")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_check_writable_names_the_problem(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="is a folder"):
        check_writable(tmp_path)
    with pytest.raises(OutputPathError, match="is not a folder"):
        check_writable(tmp_path / "file" / "out.json")
    assert check_writable(tmp_path / "new" / "out.json") == tmp_path / "new" / "out.json"


def test_written_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "shared.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "shared.txt").stat().st_mode & 0o777 == 0o644
