"""The compiled (numba) playout and scorer make exactly the choices of the interpreted ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arboretum_env.engine import GameConfig, Phase, new_game, score, score_position
from arboretum_env.engine import jit_paths, jit_playout, playout

pytestmark = pytest.mark.skipif(not jit_playout.available, reason="numba is not installed")


def same_state(a, b) -> None:
    assert a.to_dict() == b.to_dict()
    assert [list(f) for f in a.frontier] == [list(f) for f in b.frontier]  # the order too
    assert [list(x) for x in a.arboretums] == [list(x) for x in b.arboretums]


def partly_played(num_players: int, seed: int):
    """A game stopped after a random number of random decisions (any phase, mid-turn too)."""
    rng = np.random.default_rng(seed)
    state = new_game(GameConfig(num_players), rng)
    for _ in range(int(rng.integers(0, 120))):
        if state.game_over:
            break
        actions = state.legal_actions()
        state.apply(actions[int(rng.integers(len(actions)))])
    return state


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_compiled_playout_makes_the_interpreted_choices(num_players: int) -> None:
    phases = set()
    for seed in range(150):
        start = partly_played(num_players, seed) if seed % 3 else new_game(GameConfig(num_players), seed)
        phases.add(start.phase)
        a, b = start.clone(), start.clone()
        rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
        playout._random_playout_compiled(a, rng_a)
        playout.random_playout_python(b, rng_b)
        same_state(a, b)
        assert a.phase is Phase.GAME_OVER
        assert rng_a.random() == rng_b.random()  # the same uniforms were drawn
        assert not jit_playout.grids(num_players).any()  # left clean for the next playout
    assert {Phase.DRAW_FIRST, Phase.DRAW_SECOND, Phase.PLAY, Phase.DISCARD} <= phases


def test_playout_keeps_the_state_containers() -> None:
    """Caches elsewhere (the env's encoders) key on the identity of these containers."""
    state = partly_played(2, 3)
    before = [id(x) for x in (state.deck, state.history, *state.hands, *state.discards,
                              *state.arboretums, *state.frontier, *state.known)]
    playout.random_playout(state, np.random.default_rng(0))
    after = [id(x) for x in (state.deck, state.history, *state.hands, *state.discards,
                             *state.arboretums, *state.frontier, *state.known)]
    assert before == after


def test_playout_of_a_finished_game_changes_nothing() -> None:
    state = playout.random_playout(new_game(GameConfig(3), 1), np.random.default_rng(1))
    again = state.clone()
    playout.random_playout(again, np.random.default_rng(2))
    same_state(state, again)


def test_far_arboretums_fall_back_to_the_interpreted_playout(monkeypatch) -> None:
    """Cells the grid cannot hold: the interpreted playout plays the game."""
    state = new_game(GameConfig(2), 4)
    # a fresh game: put a card of player 0 far from (0, 0) by hand
    card = min(state.hands[0])
    state.hands[0].discard(card)
    state.arboretums[0][90 * 256 + 90] = card
    state.frontier[0].update(dict.fromkeys([89 * 256 + 90, 90 * 256 + 91, 91 * 256 + 90, 90 * 256 + 89]))
    assert not playout._fits(state)
    assert playout._fits(new_game(GameConfig(2), 4))
    calls = []
    monkeypatch.setattr(playout, "_random_playout_compiled", lambda s, r: calls.append(s))
    playout.random_playout(state, np.random.default_rng(0))
    assert not calls and state.game_over


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_compiled_scorer_gives_the_interpreted_breakdown(num_players: int, monkeypatch) -> None:
    for seed in range(150):
        state = playout.random_playout(partly_played(num_players, seed), np.random.default_rng(seed))
        compiled = score(state)
        monkeypatch.setattr(jit_paths, "available", False)
        interpreted = score(state)
        monkeypatch.setattr(jit_paths, "available", True)
        assert compiled == interpreted  # totals, rights, points and path cells


def test_compiled_scorer_on_empty_and_one_card_arboretums(monkeypatch) -> None:
    hands = [{0, 7}, {8}]
    for arboretums in ([{}, {}], [{0: 1}, {}], [{0: 1, 1: 3}, {0: 9}]):
        compiled = score_position(hands, arboretums, range(6))
        monkeypatch.setattr(jit_paths, "available", False)
        assert compiled == score_position(hands, arboretums, range(6))
        monkeypatch.setattr(jit_paths, "available", True)


@pytest.mark.parametrize("num_players", [2, 4])
def test_engine_without_numba_plays_the_same_games(num_players: int) -> None:
    """numba blocked at import: the interpreted engine runs and ends in the same game and score."""
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np, json\n"
        "from arboretum_env.engine import GameConfig, new_game, random_playout, score, jit_playout\n"
        "assert not jit_playout.available\n"
        "out = []\n"
        f"for seed in range(20):\n"
        f"    s = random_playout(new_game(GameConfig({num_players}), seed), np.random.default_rng(seed))\n"
        "    out.append([s.to_dict(), score(s).to_dict()])\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    expected = []
    for seed in range(20):
        s = playout.random_playout(new_game(GameConfig(num_players), seed), np.random.default_rng(seed))
        expected.append([s.to_dict(), score(s).to_dict()])
    assert json.loads(result.stdout) == json.loads(json.dumps(expected))


def test_kernels_compile_where_numba_cannot_cache() -> None:
    """A function numba finds no cache location for (here: one without a source file) is
    compiled without the on-disk cache instead of failing at import."""
    namespace: dict = {}
    exec("def twice(x):\n    return 2 * x\n", namespace)  # source file '<string>': no locator
    kernel = jit_playout.compile_kernel(namespace["twice"])
    assert kernel(21) == 42


def test_cached_kernels_see_changes_to_the_functions_they_compile_in(tmp_path) -> None:
    """numba checks a cached kernel against its own file only: ``compile_kernel`` adds the files
    of the jitable functions it compiles in (``depends``; the engine's ``KERNEL_SOURCES``
    always), so a changed rule is never served from a stale cache."""
    (tmp_path / "helper.py").write_text(
        "from arboretum_env.engine.rules import jitable\n\n@jitable\ndef bonus(x):\n    return x + 1\n")
    (tmp_path / "kernel.py").write_text(
        "from arboretum_env.engine.jit_playout import compile_kernel\nfrom helper import bonus\n\n"
        "def twice(x):\n    return 2 * bonus(x)\n\n"
        f"twice = compile_kernel(twice, depends=({str(tmp_path / 'helper.py')!r},))\n"
        "print(twice(1))\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{Path(__file__).resolve().parents[1]}"}

    def run() -> str:
        return subprocess.run([sys.executable, str(tmp_path / "kernel.py")], capture_output=True,
                              text=True, env=env, check=True).stdout.strip()

    assert run() == "4"
    assert run() == "4"  # from the cache
    (tmp_path / "helper.py").write_text(
        "from arboretum_env.engine.rules import jitable\n\n@jitable\ndef bonus(x):\n    return x + 10\n")
    assert run() == "22"
