"""The rule functions of ``engine.rules`` (and the frame origin of ``actions``), each checked on
the worked examples of RULES.md, interpreted and compiled into a numba kernel."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import FRAME, box_origin, frame_origin
from arboretum_env.engine import GameConfig, new_game, pack_cell, random_playout, unpack_cell
from arboretum_env.engine import jit_playout
from arboretum_env.engine.rules import (
    NEIGHBOURS,
    end_bonus,
    frontier,
    hand_sum,
    neighbour,
    next_cell,
    path_points,
    place,
    start_bonus,
)

# (length, all of the scored species, starts with a 1, ends with an 8) -> points
WORKED_PATHS = [
    ((5, True, True, True), 13),  # 1. all-maple 1, 3, 5, 6, 8: 5 x 2 + 1 + 2
    ((4, True, True, True), 11),  # 2. all-oak 1, 4, 6, 8: 4 + 4 + 1 + 2
    ((3, False, True, False), 4),  # 3. oak 1, willow 3, oak 5 for oak: 3 + 1
    ((3, True, False, False), 3),  # 4. all-cassia 2, 4, 6: doubling starts at 4 cards
    ((2, True, False, True), 4),  # 5. olive 3, olive 8: 2 + 2
    ((4, False, False, False), 4),  # 4 cards, not all of the species: not doubled
    ((4, True, False, False), 8),  # 4 cards, all of it: doubled
]


@pytest.mark.parametrize(("args", "points"), WORKED_PATHS)
def test_path_points_of_the_worked_examples(args, points) -> None:
    assert path_points(*args) == points


def test_path_points_of_emmas_three_species() -> None:
    """Example 8: maple 13 (5 cards, all maple, 1 to 8), olive 3 (3 mixed cards), cassia 4
    (2 cards ending on an 8): 20."""
    assert (path_points(5, True, True, True) + path_points(3, False, False, False)
            + path_points(2, True, False, True)) == 20


def test_end_bonuses_by_rank() -> None:
    assert [start_bonus(r) for r in range(8)] == [1, 0, 0, 0, 0, 0, 0, 0]
    assert [end_bonus(r) for r in range(8)] == [0, 0, 0, 0, 0, 0, 0, 2]


def test_one_cancels_eight() -> None:
    # example 6: A holds the maple 8, B the maple 1: A's sum is 0, B's is 1
    assert hand_sum(8, False, True, True) == 0
    assert hand_sum(1, True, False, False) == 1
    # no 1 elsewhere: the 8 counts 8; an own 1 keeps the own 8 at 8; a 1 cancels only an 8
    assert hand_sum(8 + 5, False, True, False) == 13
    assert hand_sum(1 + 8, True, True, False) == 9
    assert hand_sum(1 + 8, True, True, True) == 9
    assert hand_sum(5, False, False, True) == 5
    # example 7: nobody holds any: 0 for all
    assert hand_sum(0, False, False, False) == 0


def test_one_cancels_eight_element_wise() -> None:
    """numpy bool arrays (the final-turn search of GreedyPlusAgent) give the scalar results."""
    cases = [(s, o, e, x) for s in (8, 9, 13) for o in (False, True) for e in (False, True)
             for x in (False, True)]
    sums, ones, eights, elsewhere = (np.array(v) for v in zip(*cases))
    assert hand_sum(sums, ones, eights, elsewhere).tolist() == [hand_sum(*c) for c in cases]


def test_place_keeps_the_frontier() -> None:
    arboretum, cells = {}, {}
    place(arboretum, cells, pack_cell(0, 0), 5)
    assert [unpack_cell(c) for c in cells] == [(-1, 0), (0, 1), (1, 0), (0, -1)]
    place(arboretum, cells, pack_cell(0, 1), 6)
    assert [unpack_cell(c) for c in cells] == [(-1, 0), (1, 0), (0, -1), (-1, 1), (0, 2), (1, 1)]
    assert arboretum == {pack_cell(0, 0): 5, pack_cell(0, 1): 6}
    assert [neighbour(7, d) for d in range(4)] == [7 + off for off in NEIGHBOURS]
    # north, east, south, west on any row-major grid: here cell (2, 3) of a grid 10 wide
    assert [next_cell(23, d, 10) for d in range(4)] == [13, 24, 33, 22]
    assert frontier({}) == {}


@pytest.mark.parametrize("num_players", [2, 4])
def test_frontier_of_an_arboretum_is_the_games_frontier(num_players: int) -> None:
    """Built from scratch, the frontier has the cells and the order that the game's placements
    built (the compiled playout keeps that order too)."""
    rng = np.random.default_rng(num_players)
    for _ in range(20):
        state = random_playout(new_game(GameConfig(num_players), rng), rng)
        for arboretum, cells in zip(state.arboretums, state.frontier):
            assert list(frontier(arboretum)) == list(cells)
            assert all(n not in arboretum and any(n + off in arboretum for off in NEIGHBOURS)
                       for n in cells)


def test_box_origin_centres_the_arboretum() -> None:
    assert frame_origin({}) == box_origin(0, -1, 0, -1) == (-FRAME // 2, -FRAME // 2)
    # a single card at (0, 0): frame cell (8, 8); a 3 x 4 box: 7 rows above, 8 below
    assert frame_origin({pack_cell(0, 0): 1}) == (-8, -8)
    assert box_origin(2, 4, -1, 2) == (2 - 7, -1 - 7)
    arboretum = {pack_cell(r, c): 0 for r, c in [(2, -1), (3, -1), (4, -1), (4, 0), (4, 1), (4, 2)]}
    assert frame_origin(arboretum) == box_origin(2, 4, -1, 2)


@pytest.mark.skipif(not jit_playout.available, reason="numba is not installed")
def test_rule_functions_compile_into_kernels() -> None:
    """Called from inside a numba kernel, every rule function gives its Python results."""

    def kernel(out):
        out[0] = path_points(5, True, True, True)
        out[1] = path_points(3, False, True, False)
        out[2] = hand_sum(8, False, True, True)
        out[3] = hand_sum(9, True, True, True)
        out[4] = neighbour(0, 0) + next_cell(23, 2, 10)
        out[5] = start_bonus(0) + end_bonus(7)
        r0, c0 = box_origin(2, 4, -1, 2)
        out[6] = r0
        out[7] = c0

    out = np.zeros(8, np.int64)
    jit_playout.compile_kernel(kernel)(out)
    assert out.tolist() == [13, 4, 0, 9, NEIGHBOURS[0] + 33, 3, -5, -8]
