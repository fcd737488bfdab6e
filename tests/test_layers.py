"""The layers of docs/design.md, checked on every module's import statements (read with ``ast``,
imports inside functions included):

    base (errors, fileio) -> engine (pure rules) -> env (action codec, observation, AEC env,
    rendering) -> agents (heuristics, policy agent, the single-agent wrapper) -> training (SB3,
    networks, CLI)

A module imports only modules of its own layer or of a layer to its left; the engine imports no
third-party library but numpy and numba; env imports no torch or SB3, agents no SB3; and no
modules import each other, directly or through others (no cycle, lazy imports counted). Importing
``a.b.c`` from outside the package ``a.b`` also runs ``a/b/__init__.py``: that counts as an
import of ``a.b``, so a cycle through a package's ``__init__`` is found too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arboretum_env", "training")
LAYERS = ("base", "engine", "env", "agents", "training")
BASE = ("arboretum_env", "arboretum_env.errors", "arboretum_env.fileio")
RL_LIBRARIES = ("pettingzoo", "gymnasium", "torch", "stable_baselines3", "sb3_contrib")
ENGINE_THIRD_PARTY = ("numpy", "numba")
FORBIDDEN_THIRD_PARTY = {
    "env": ("torch", "stable_baselines3", "sb3_contrib"),
    "agents": ("stable_baselines3", "sb3_contrib"),
}

# Modules outside arboretum_env/agents/ that belong to the agents layer: the single-agent
# wrapper seats agents (and their hints) as the opponents, so it sits above them.
AGENTS_EXTRA = ("arboretum_env.wrappers",)
# The framework integrations wrap the env (and may seat agents), like the wrapper above.
AGENTS_PACKAGES = ("arboretum_env.agents", "arboretum_env.integrations")

# Cases fixed on other branches of issue 12: flip (delete) each entry once its fix is merged.
LAYER_XFAIL: dict[str, str] = {}
CYCLE_XFAIL: dict[str, str] = {}


def layer(module: str) -> str:
    if module in BASE:
        return "base"
    if module == "training" or module.startswith("training."):
        return "training"
    if module in AGENTS_EXTRA or any(module == p or module.startswith(p + ".")
                                     for p in AGENTS_PACKAGES):
        return "agents"
    if module == "arboretum_env.engine" or module.startswith("arboretum_env.engine."):
        return "engine"
    return "env"


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


class ImportGraph:
    """The modules of ``PACKAGES`` under ``root`` and what each imports."""

    def __init__(self, root: Path):
        self.root = root
        self.paths = {self._name(p): p for package in PACKAGES
                      for p in sorted((root / package).rglob("*.py"))}
        self.imports = {m: self._imports(m) for m in self.paths}
        self.edges = {m: self._edges(m) for m in self.paths}
        self.cycles = self._cycles()

    def _name(self, path: Path) -> str:
        parts = path.relative_to(self.root).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def rel(self, module: str) -> str:
        return self.paths[module].relative_to(self.root).as_posix()

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        """The module a ``from ... import`` names, relative levels resolved."""
        if node.level == 0:
            return node.module
        parts = module.split(".")
        keep = len(parts) - node.level + (self.paths[module].name == "__init__.py")
        return ".".join(parts[:keep] + ([node.module] if node.module else []))

    def _imports(self, module: str) -> frozenset[str]:
        """Every module that ``module`` imports anywhere in its file, ours and third-party; for
        ``from package import name`` the submodule ``package.name`` where there is one."""
        path = self.paths[module]
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = self._absolute(module, node)
                if target == "__future__":
                    continue
                subs = [f"{target}.{alias.name}" for alias in node.names]
                ours = [s for s in subs if s in self.paths]
                names.update(ours)
                if len(ours) < len(subs):
                    names.add(target)
        return frozenset(names)

    def _edges(self, module: str) -> frozenset[str]:
        """The modules of ours that importing ``module`` runs: those it names, and each package
        above them that ``module`` is not inside of (its ``__init__`` runs first)."""
        targets = set()
        for name in self.imports[module]:
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                parent = ".".join(parts[:k])
                inside = module == parent or module.startswith(parent + ".")
                if parent in self.paths and (k == len(parts) or not inside):
                    targets.add(parent)
        targets.discard(module)
        return frozenset(targets)

    def _cycles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (Tarjan)."""
        index, low, stack, on_stack, found = {}, {}, [], set(), []

        def visit(v: str) -> None:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            for w in sorted(self.edges[v]):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                component = [stack.pop()]
                while component[-1] != v:
                    component.append(stack.pop())
                on_stack.difference_update(component)
                if len(component) > 1:
                    found.append(sorted(component))

        for v in sorted(self.edges):
            if v not in index:
                visit(v)
        return found

    def layer_problems(self, module: str) -> list[str]:
        """What ``module`` imports against the layer table (empty: nothing)."""
        own = layer(module)
        rank = LAYERS.index(own)
        problems = [f"{name} ({layer(name)} layer)" for name in sorted(self.imports[module])
                    if _ours(name) and LAYERS.index(layer(name)) > rank]
        third_party = sorted({name.split(".")[0] for name in self.imports[module] if not _ours(name)}
                             - set(sys.stdlib_module_names))
        if own in ("base", "engine"):
            problems += [name for name in third_party if name not in ENGINE_THIRD_PARTY]
        else:
            problems += [name for name in third_party if name in FORBIDDEN_THIRD_PARTY.get(own, ())]
        return problems


CODE = ImportGraph(ROOT)


def _cases(xfail: dict[str, str]) -> list:
    out = []
    for module in CODE.paths:
        rel = CODE.rel(module)
        marks = [pytest.mark.xfail(strict=True, reason=xfail[rel])] if rel in xfail else []
        out.append(pytest.param(module, id=rel, marks=marks))
    return out


def test_all_modules_found() -> None:
    layers = {layer(m) for m in CODE.paths}
    assert len(CODE.paths) > 40 and layers == set(LAYERS), (len(CODE.paths), layers)


@pytest.mark.parametrize("module", _cases(LAYER_XFAIL))
def test_module_imports_only_its_layer_and_below(module: str) -> None:
    problems = CODE.layer_problems(module)
    assert not problems, f"{CODE.rel(module)} ({layer(module)} layer) imports {', '.join(problems)}"


@pytest.mark.parametrize("module", _cases(CYCLE_XFAIL))
def test_module_is_in_no_import_cycle(module: str) -> None:
    cycle = next((c for c in CODE.cycles if module in c), None)
    assert cycle is None, f"{CODE.rel(module)} is in an import cycle of {', '.join(cycle)}"


def test_xfail_entries_name_existing_files() -> None:
    """An entry whose file is gone (moved by its fix) is stale: delete it."""
    stale = sorted((set(LAYER_XFAIL) | set(CYCLE_XFAIL)) - {CODE.rel(m) for m in CODE.paths})
    assert not stale, f"xfail entries for files that no longer exist: {', '.join(stale)}"


def test_checker_finds_layer_breaks_and_cycles(tmp_path) -> None:
    """The checker itself, on a made-up tree: a lazy import of training in the engine, an env
    module importing agents, a third-party import in the engine, and a cycle through a
    package's ``__init__`` and a lazy import."""
    files = {
        "arboretum_env/__init__.py": "",
        "arboretum_env/engine/__init__.py": "from .state import X\n",
        "arboretum_env/engine/state.py": "import yaml\nX = 1\ndef f():\n    from training.cli import main\n",
        "arboretum_env/hints.py": "from .agents.greedy import G\n",
        "arboretum_env/agents/__init__.py": "def g():\n    from .policy import P\n",
        "arboretum_env/agents/greedy.py": "from ..engine import state\nG = 1\n",
        "arboretum_env/agents/policy.py": "import torch\nfrom .. import hints\nP = 1\n",
        "training/__init__.py": "",
        "training/cli.py": "import stable_baselines3\nfrom arboretum_env.engine import X\nmain = 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    made_up = ImportGraph(tmp_path)
    assert made_up.imports["arboretum_env.engine.state"] == {"yaml", "training.cli"}
    assert made_up.imports["arboretum_env.agents.greedy"] == {"arboretum_env.engine.state"}
    assert made_up.layer_problems("arboretum_env.engine.state") == ["training.cli (training layer)",
                                                                    "yaml"]
    assert made_up.layer_problems("arboretum_env.hints") == ["arboretum_env.agents.greedy (agents layer)"]
    assert made_up.layer_problems("arboretum_env.agents.policy") == []
    assert made_up.layer_problems("training.cli") == []
    assert sorted(made_up.cycles) == [
        ["arboretum_env.agents", "arboretum_env.agents.policy", "arboretum_env.hints"],
        ["arboretum_env.engine", "arboretum_env.engine.state", "training.cli"]]


def test_engine_imports_no_rl_library() -> None:
    """Run-time check of the same rule: importing every engine module loads no RL library."""
    engine = sorted(m for m in CODE.paths if layer(m) == "engine")
    code = (
        "import importlib, sys\n"
        f"for m in {engine!r}: importlib.import_module(m)\n"
        f"print(','.join(m for m in {RL_LIBRARIES!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip()
    assert not loaded, f"importing the engine loaded: {loaded}"
