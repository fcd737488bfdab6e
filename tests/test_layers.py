"""The engine is pure rules: importing it must not pull in any RL library (docs/design.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENGINE_DIR = Path(__file__).resolve().parents[1] / "arboretum_env" / "engine"
FORBIDDEN = ("pettingzoo", "gymnasium", "torch", "stable_baselines3", "sb3_contrib")


def engine_modules() -> list[str]:
    return sorted(
        "arboretum_env.engine" if p.stem == "__init__" else f"arboretum_env.engine.{p.stem}"
        for p in ENGINE_DIR.glob("*.py")
    )


def test_engine_imports_no_rl_library() -> None:
    modules = engine_modules()
    assert modules, f"no engine modules found in {ENGINE_DIR}"
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ENGINE_DIR.parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip()
    assert not loaded, f"importing the engine loaded: {loaded}"
