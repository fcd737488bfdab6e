"""The worst-case placement game: arboretums of 16 cards in a straight line (each of the four
directions) or an L, the most a player holds before a play. Every legal placement must have an
action id, and each masked id must place the card on the right engine cell."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import DISCARD, PLAY_CARD, PLAY_CELL, apply_id, cell_id, frame_origin
from arboretum_env.engine import GameState, Phase, state_from_dict
from arboretum_env.env import raw_env
from arboretum_env.observation import OFFSETS

LINE = 16


def shape(kind: str, start=(0, 0)) -> list[tuple[int, int]]:
    r, c = start
    if kind == "right":
        return [(r, c + i) for i in range(LINE)]
    if kind == "left":
        return [(r, c - i) for i in range(LINE)]
    if kind == "down":
        return [(r + i, c) for i in range(LINE)]
    if kind == "up":
        return [(r - i, c) for i in range(LINE)]
    if kind == "L":
        return [(r, c + i) for i in range(8)] + [(r + i, c + 7) for i in range(1, 9)]
    if kind == "L-up-left":
        return [(r, c - i) for i in range(8)] + [(r - i, c - 7) for i in range(1, 9)]
    raise ValueError(kind)


def worst_case_state(cells: list[tuple[int, int]], num_players: int = 2) -> GameState:
    """A valid state in the PLAY phase: player 0 has ``cells`` planted (in that order) and 9
    cards in hand; the other cards are in the other hands and the deck."""
    species = list(range({2: 6, 3: 8, 4: 10}[num_players]))
    cards = [s * 8 + r for s in species for r in range(8)]
    planted, cards = cards[:len(cells)], cards[len(cells):]
    hands = [cards[:9]] + [cards[9 + 7 * q:16 + 7 * q] for q in range(num_players - 1)]
    deck = cards[9 + 7 * (num_players - 1):]
    arboretum = [[r, c, card] for (r, c), card in zip(cells, planted)]
    data = {
        "config": {"num_players": num_players, "species": species, "starting_player": 0},
        "seed": None, "deck": deck, "hands": hands,
        "discards": [[] for _ in range(num_players)],
        "arboretums": [arboretum] + [[] for _ in range(num_players - 1)],
        "arboretum_order": [planted] + [[] for _ in range(num_players - 1)],
        "known": [[] for _ in range(num_players)], "drawn": hands[0][:2],
        "phase": int(Phase.PLAY), "current_player": 0, "turn": len(cells) * num_players,
        "last_turn": False, "history": [],
    }
    return state_from_dict(data)


@pytest.mark.parametrize("kind", ["right", "left", "down", "up", "L", "L-up-left"])
@pytest.mark.parametrize("start", [(0, 0), (37, -52)])
def test_every_placement_has_an_id_and_lands_right(kind, start):
    state = worst_case_state(shape(kind, start))
    arboretum = state.arboretums[0]
    assert len(arboretum) == LINE
    frontier = state.playable_cells(0)
    e = raw_env(num_players=2)
    e.reset_to(state.clone())
    card = min(state.hands[0])
    e.step(PLAY_CARD + card)
    assert e.pending == card
    mask = e.observe("player_0")["action_mask"]
    ids = set(np.flatnonzero(mask))
    expected = {cell_id(arboretum, *divmod_cell(cell)) for cell in frontier}
    assert all(PLAY_CELL <= i < DISCARD for i in expected)
    assert ids == expected and len(ids) == len(frontier)
    gain = e.observe("player_0")["observation"][OFFSETS["gain_plane"]:][:324]
    assert set(np.flatnonzero(gain) + PLAY_CELL) == expected
    r0, c0 = frame_origin(arboretum)
    for i in sorted(ids):
        probe = state.clone()
        assert apply_id(probe, card, int(i)) is None
        row, col = r0 + (i - PLAY_CELL) // 18, c0 + (i - PLAY_CELL) % 18
        assert probe.arboretums[0][row * 256 + col] == card
        assert probe.phase is Phase.DISCARD
    first = min(ids)
    e.step(int(first))
    assert e.state.arboretums[0][(r0 + (first - PLAY_CELL) // 18) * 256 + c0 + (first - PLAY_CELL) % 18] == card


def divmod_cell(cell: int) -> tuple[int, int]:
    row = (cell + 128) // 256
    return row, cell - row * 256


def test_seventeenth_card_fits_the_frame():
    """After the last play of a 2-player game an arboretum may hold 17 cards in a line: the
    observation still draws every card."""
    state = worst_case_state(shape("right"))
    e = raw_env(num_players=2)
    e.reset_to(state)
    card = min(state.hands[0])
    e.step(PLAY_CARD + card)
    e.step(int(np.flatnonzero(e.observe("player_0")["action_mask"])[-1]))
    assert len(e.state.arboretums[0]) == LINE + 1
    planes = e.observe("player_0")["observation"][OFFSETS["arboretum_planes"]:][:324]
    assert np.count_nonzero(planes) == LINE + 1


@pytest.mark.parametrize("num_players", [3, 4])
def test_long_lines_with_more_players(num_players):
    state = worst_case_state(shape("down", (-5, 9)), num_players)
    e = raw_env(num_players=num_players)
    e.reset_to(state, pending=min(state.hands[0]))
    ids = set(np.flatnonzero(e.observe("player_0")["action_mask"]))
    assert len(ids) == len(state.playable_cells(0)) == 2 * LINE + 2
