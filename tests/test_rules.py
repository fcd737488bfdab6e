"""The rule functions of ``engine.rules``, each checked on the worked examples of RULES.md,
interpreted and compiled into a numba kernel."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.engine import jit_playout
from arboretum_env.engine.rules import end_bonus, path_points, start_bonus

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


@pytest.mark.skipif(not jit_playout.available, reason="numba is not installed")
def test_rule_functions_compile_into_kernels() -> None:
    """Called from inside a numba kernel, every rule function gives its Python results."""

    def kernel(out):
        out[0] = path_points(5, True, True, True)
        out[1] = path_points(3, False, True, False)
        out[2] = start_bonus(0) + end_bonus(7)

    out = np.zeros(3, np.int64)
    jit_playout.compile_kernel(kernel)(out)
    assert out.tolist() == [13, 4, 3]
