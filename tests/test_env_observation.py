"""The observation: layout and documentation, meaning of the sections, the caches and fast paths
(equal to a full encode of the TableView), and the path features against the engine."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from arboretum_env.batch import table as batch_table
from arboretum_env import observation as O
from arboretum_env.actions import FRAME, PLAY_CELL, Decision, apply_id, frame_origin, legal_ids
from arboretum_env.engine import GameConfig, Phase, best_path, jit_gains, new_game, random_playout
from arboretum_env.env import raw_env
from arboretum_env.observation import (
    OBS_SIZE,
    OFFSETS,
    SECTIONS,
    encode,
    layout_table,
)
from arboretum_env.engine.path_dp import best_points, placement_gains
from arboretum_env.table_view import table_view

ROOT = Path(__file__).resolve().parents[1]


def random_games(count: int, seed: int, players=(2, 3, 4)):
    """Yield (state, pending) after every decision of ``count`` random games."""
    rng = np.random.default_rng(seed)
    for g in range(count):
        state = new_game(GameConfig(players[g % len(players)]), seed * 1000 + g)
        pending = None
        yield state, pending
        while state.phase is not Phase.GAME_OVER:
            ids = legal_ids(state, pending)
            pending = apply_id(state, pending, ids[int(rng.random() * len(ids))])
            yield state, pending


def section(obs: np.ndarray, name: str) -> np.ndarray:
    return obs[OFFSETS[name]:OFFSETS[name] + O.WIDTHS[name]]


# ---------------------------------------------------------------------------- layout
def test_size_and_section_widths():
    assert OBS_SIZE == sum(w for _, w, _ in SECTIONS) == 7835
    assert OBS_SIZE <= 10_000
    widths = {name: w for name, w, _ in SECTIONS}
    assert widths == {
        "player_count": 3, "decision": 6, "to_move": 4, "deck_size": 1, "turn": 1,
        "species_in_play": 10, "hand": 80, "drawn": 80, "pending": 80, "rights": 10,
        "hand_sizes": 4, "hand_sums": 40, "known_cards": 320, "discard_piles": 640,
        "arboretum_summary": 400, "arboretum_planes": 2592, "own_species_planes": 3240,
        "gain_plane": 324}
    at = 0
    for name, width, description in SECTIONS:
        assert OFFSETS[name] == at and description
        at += width
    e = raw_env(num_players=3)
    assert e.observation_space("player_0")["observation"].shape == (OBS_SIZE,)


def test_docs_table_equals_sections():
    table = layout_table()
    doc = (ROOT / "docs" / "env.md").read_text()
    assert table in doc, "docs/env.md must contain observation.layout_table() verbatim"
    assert table in raw_env.__doc__
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line
            and "OBS_SIZE" not in line]
    assert [re.search(r"`(\w+)`", r).group(1) for r in rows] == [name for name, _, _ in SECTIONS]


# ---------------------------------------------------------------------------- meaning
def test_sections_mean_what_the_docs_say():
    checked = 0
    for state, pending in random_games(6, seed=1):
        n = state.num_players
        for p in range(n):
            obs = encode(table_view(state, p, pending)).copy()
            assert obs.dtype == np.float32 and obs.shape == (OBS_SIZE,)
            assert 0.0 <= obs.min() and obs.max() <= 1.0
            seat = [(p + k) % n for k in range(n)]
            assert section(obs, "player_count")[n - 2] == 1 and section(obs, "player_count").sum() == 1
            assert section(obs, "to_move")[(state.current_player - p) % n] == 1
            assert section(obs, "deck_size")[0] == pytest.approx(len(state.deck) / 80)
            assert set(np.flatnonzero(section(obs, "hand"))) == state.hands[p]
            assert set(np.flatnonzero(section(obs, "species_in_play"))) == set(state.species)
            pend = section(obs, "pending")
            if pending is not None and p == state.current_player:
                assert list(np.flatnonzero(pend)) == [pending]
            else:
                assert not pend.any()
            sizes = section(obs, "hand_sizes")
            known = section(obs, "known_cards").reshape(4, 80)
            piles = section(obs, "discard_piles").reshape(4, 160)
            summary = section(obs, "arboretum_summary").reshape(4, 100)
            planes = section(obs, "arboretum_planes").reshape(4, 2, FRAME, FRAME)
            for k in range(4):
                if k >= n:
                    assert sizes[k] == 0 and not known[k].any() and not piles[k].any()
                    assert not summary[k].any() and not planes[k].any()
                    continue
                q = seat[k]
                assert sizes[k] == pytest.approx(len(state.hands[q]) / 9)
                assert set(np.flatnonzero(known[k])) == state.known[q]
                pile = state.discards[q]
                for depth, card in enumerate(reversed(pile)):
                    assert piles[k][card] == pytest.approx((80 - depth) / 80)
                assert np.count_nonzero(piles[k][:80]) == len(pile)
                assert list(np.flatnonzero(piles[k][80:])) == ([pile[-1]] if pile else [])
                arboretum = state.arboretums[q]
                assert set(np.flatnonzero(summary[k][:80])) == set(arboretum.values())
                for s in range(10):
                    assert summary[k][80 + s] == pytest.approx(best_path(arboretum, s)[0] / 20)
                    count = sum(1 for c in arboretum.values() if c >> 3 == s)
                    assert summary[k][90 + s] == pytest.approx(count / 8)
                r0, c0 = frame_origin(arboretum)
                for cell, card in arboretum.items():
                    r, c = (cell + 128) // 256, cell - ((cell + 128) // 256) * 256
                    assert planes[k][0][r - r0][c - c0] == pytest.approx(((card & 7) + 1) / 8)
                    assert planes[k][1][r - r0][c - c0] == pytest.approx(((card >> 3) + 1) / 10)
                assert np.count_nonzero(planes[k][0]) == len(arboretum)
            own = section(obs, "own_species_planes").reshape(10, FRAME, FRAME)
            assert np.count_nonzero(own) == len(state.arboretums[p])
            checked += 1
    assert checked > 500


def test_gain_plane_only_for_the_mover_in_play_cell():
    seen = 0
    for state, pending in random_games(6, seed=2):
        for p in range(state.num_players):
            tv = table_view(state, p, pending)
            gain = section(encode(tv), "gain_plane")
            if tv.decision is Decision.PLAY_CELL and p == state.current_player:
                legal = [i - PLAY_CELL for i in legal_ids(state, pending)]
                assert set(np.flatnonzero(gain)) == set(legal)
                seen += 1
            else:
                assert not gain.any()
    assert seen > 100


def _deal(state, hands: list[set[int]]) -> None:
    """Give the players exactly ``hands``; every other card goes to the deck."""
    everything = set(state.deck).union(*state.hands)
    for p, hand in enumerate(hands):
        state.hands[p] = set(hand)
    state.deck = sorted(everything - set().union(*hands))


def test_hand_sums_and_rights():
    """Visible sums with '1 cancels 8', and the rights they give, on a handmade table."""
    state = new_game(GameConfig(3, species=range(8), starting_player=0), 5)
    m1, m3, m8, o2 = 6 * 8, 6 * 8 + 2, 6 * 8 + 7, 3 * 8 + 1  # maple 1, 3, 8; olive 2
    filler = [c for c in range(64) if c >> 3 not in (3, 6)]
    _deal(state, [{m8, o2, *filler[:5]}, {m1, m3, *filler[5:10]}, set(filler[10:17])])
    state.known[1] = {m1}  # player 1 took maple 1 from a discard pile: everyone knows it
    obs = encode(table_view(state, 0, None))
    sums = section(obs, "hand_sums").reshape(4, 10)
    assert sums[0][6] == 0  # the 8 is cancelled by the visible 1
    assert sums[1][6] == pytest.approx(1 / 36)  # only the known maple 1 is visible
    assert sums[0][3] == pytest.approx(2 / 36)
    rights = section(obs, "rights")
    assert rights[6] == 0 and rights[3] == 1
    assert set(np.flatnonzero(rights)) == set(state.species) - {6}
    obs1 = encode(table_view(state, 1, None))
    assert section(obs1, "hand_sums").reshape(4, 10)[0][6] == pytest.approx(4 / 36)  # 1 + 3
    assert section(obs1, "rights")[6] == 1
    state.known[1] = set()  # nobody knows of the 1: the observer keeps its 8 and the right
    obs = encode(table_view(state, 0, None))
    assert section(obs, "hand_sums").reshape(4, 10)[0][6] == pytest.approx(8 / 36)
    assert section(obs, "rights")[6] == 1


# ---------------------------------------------------------------------------- fast paths
@pytest.mark.parametrize("num_players,compiled", [(2, True), (3, True), (4, True), (3, False)])
def test_env_observations_equal_full_encode(num_players, compiled, monkeypatch):
    """The env's observations (compiled: the fast path's one-game table encoded by numba;
    without numba: the reference encoder) must equal the reference encode of the agent's TableView at every step, also after steps taken
    without a look at the mask (the checked path) and after ``reset_to`` a game in progress;
    the masks must be the legal ids."""
    if compiled and not batch_table.available:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(jit_gains, "available", compiled)
    monkeypatch.setattr(batch_table, "available", compiled)
    rng = np.random.default_rng(30 + num_players)
    e = raw_env(num_players=num_players)
    assert e._fast == compiled
    compared = 0
    for game in range(5):
        if game < 4:
            e.reset(seed=game)
        else:  # a game in progress, handed over mid-turn
            state = new_game(GameConfig(num_players), 99)
            pending = None
            while state.turn < 9 or state.phase is not Phase.PLAY:
                ids = legal_ids(state, pending)
                pending = apply_id(state, pending, ids[int(rng.random() * len(ids))])
            e.reset_to(state, pending=min(state.hands[state.current_player]))
        while not all(e.terminations.values()):
            for agent in e.possible_agents:
                if agent == e.agent_selection or rng.random() < 0.3:
                    got = e.observe(agent)["observation"]
                    assert np.array_equal(got, encode(e.table_view(agent)))
                    compared += 1
            if rng.random() < 0.2:  # no look at the mask: the env checks the id itself
                legal = legal_ids(e.state, e.pending)
            else:
                mask = e.observe(e.agent_selection)["action_mask"]
                legal = np.flatnonzero(mask)
                assert list(legal) == legal_ids(e.state, e.pending)
            e.step(int(legal[int(rng.random() * len(legal))]))
        for agent in e.possible_agents:  # the final observations too
            assert np.array_equal(e.observe(agent)["observation"], encode(e.table_view(agent)))
    assert compared > 800


# ---------------------------------------------------------------------------- path features
def test_best_points_equal_engine_best_path():
    rng = np.random.default_rng(5)
    for g in range(60):
        n = 2 + g % 3
        state = random_playout(new_game(GameConfig(n), g), rng)
        for arboretum in state.arboretums:
            assert best_points(arboretum) == [best_path(arboretum, s)[0] for s in range(10)]


def _few_species_arboretum(rng, size: int) -> dict:
    """A random connected arboretum of two species (long pure paths are common)."""
    cards = [s * 8 + r for s in (2, 5) for r in range(8)]
    rng.shuffle(cards)
    arboretum = {0: cards[0]}
    while len(arboretum) < size:
        cell = list(arboretum)[int(rng.integers(len(arboretum)))] + int(rng.choice([1, -1, 256, -256]))
        if cell not in arboretum:
            arboretum[cell] = cards[len(arboretum)]
    return arboretum


def test_placement_gains_equal_brute_force():
    rng = np.random.default_rng(6)
    checked = 0
    for trial in range(250):
        arboretum = _few_species_arboretum(rng, int(rng.integers(1, 13)))
        free = [c for c in range(80) if c >> 3 in (2, 5) and c not in arboretum.values()]
        card = free[int(rng.integers(len(free)))]
        cells = {n for cell in arboretum for n in (cell + 1, cell - 1, cell + 256, cell - 256)
                 if n not in arboretum}
        gains = placement_gains(arboretum, card, cells)
        before = best_path(arboretum, card >> 3)[0]
        for cell in cells:
            after = best_path({**arboretum, cell: card}, card >> 3)[0]
            assert gains[cell] == after - before, (arboretum, card, cell)
            checked += 1
    assert checked > 1000


@pytest.mark.skipif(not jit_gains.available, reason="numba is not installed")
@pytest.mark.slow
def test_compiled_frame_gains_equal_brute_force():
    """``engine.jit_gains.frame_gains`` (the env's gain plane) on every free cell of an
    arboretum's action frame, for every card not in it, against re-scoring with the card there."""
    rng = np.random.default_rng(11)
    checked = 0
    line = {col: 16 + col for col in range(8) if col != 2}  # a pure 1..8 of jacaranda but its 3
    for trial in range(121):
        arboretum = line if trial == 0 else _few_species_arboretum(rng, int(rng.integers(1, 15)))
        r0, c0 = frame_origin(arboretum)
        cells = np.array([((c + 128) >> 8) * FRAME - r0 * FRAME + c - (((c + 128) >> 8) << 8) - c0
                          for c in arboretum], np.int64)
        cards = np.array(list(arboretum.values()), np.int64)
        free = {n for cell in arboretum for n in (cell + 1, cell - 1, cell + 256, cell - 256)
                if n not in arboretum}
        others = [c for c in range(80) if c not in arboretum.values()]
        for card in ([18] if trial == 0 else []) + [int(c) for c in rng.choice(others, 6, replace=False)]:
            before = best_path(arboretum, card >> 3)[0]
            out = np.full(5 + FRAME * FRAME, -1.0, np.float32)
            jit_gains.frame_gains(cells, cards, card, before, FRAME, out, 5,
                                  np.arange(1, 21, dtype=np.float32))
            expected = np.full(FRAME * FRAME, -1.0, np.float32)
            for cell in free:
                row, col = (cell + 128) >> 8, cell - (((cell + 128) >> 8) << 8)
                after = best_path({**arboretum, cell: card}, card >> 3)[0]
                expected[(row - r0) * FRAME + col - c0] = 1 + after - before
                checked += 1
            assert np.array_equal(out[5:], expected), (arboretum, card)
            assert (out[:5] == -1).all()
    assert checked > 5000


def test_observation_does_not_alias_between_steps():
    e = raw_env(num_players=2)
    e.reset(seed=7)
    first = e.observe(e.agent_selection)
    kept = first["observation"].copy()
    legal = np.flatnonzero(first["action_mask"])
    e.step(int(legal[0]))
    e.observe(e.agent_selection)
    assert np.array_equal(first["observation"], kept)
