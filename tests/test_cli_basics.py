"""The ``arboretum`` command's frame: help, usage errors, user errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from training import cli
from arboretum_env.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "training.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_exits_0() -> None:
    result = run_cli("--help")
    assert result.returncode == 0, result.stderr
    assert "score" in result.stdout


def test_score_help_exits_0() -> None:
    result = run_cli("score", "--help")
    assert result.returncode == 0, result.stderr
    assert "--text" in result.stdout


def test_unknown_subcommand_exits_2() -> None:
    result = run_cli("no-such-command")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_help_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from training.cli import main\n"
        "try: main(['--help'])\n"
        "except SystemExit: pass\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _register(monkeypatch: pytest.MonkeyPatch, handler) -> None:
    """Replace the subcommands with one ``boom`` command whose handler is ``handler``."""

    def add_boom(sub) -> None:
        sub.add_parser("boom").set_defaults(handler=handler)

    monkeypatch.setattr(cli, "SUBCOMMANDS", [add_boom])


def test_user_error_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    class BadPosition(UserError):
        pass

    def fail(args):
        raise BadPosition("bad input:\n  line two")

    _register(monkeypatch, fail)
    assert cli.main(["boom"]) == 2
    assert capsys.readouterr().err == "arboretum: error: bad input: line two\n"


def test_keyboard_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def interrupted(args):
        raise KeyboardInterrupt

    _register(monkeypatch, interrupted)
    assert cli.main(["boom"]) == 130
    assert capsys.readouterr().err == ""
