"""The rules of RULES.md that several parts of the project compute, each written once.

Small pure functions on ints and bools, used by the interpreted code (the scorer, the dynamic
programmes, the heuristic agents) and, compiled, inside the numba kernels (``jit_paths``,
``jit_gains``, ``jit_playout``, the env's observation kernels). ``jitable`` marks them: with
numba it is ``numba.extending.register_jitable``, so a call from Python runs the plain function
and a kernel that calls one compiles it in; without numba it changes nothing.

* **Path points** (RULES.md, Scoring, phase 2): ``path_points``, with the bonuses of a path's
  ends ``start_bonus`` / ``end_bonus``. The dynamic programmes rely on one property of the
  formula: a mixed path's points are its length plus its end bonuses, so the best "length +
  start bonus" of a path's lower part and the best "length + end bonus" of its upper part add up.
* **Rights** ("1 cancels 8"): ``hand_sum``.
* **Where a card may be played** (the frontier): ``next_cell`` (orthogonal adjacency on any
  grid), ``neighbour`` / ``NEIGHBOURS`` (on packed cells), ``place`` (a card placed, the
  frontier updated) and ``frontier`` (the frontier of any arboretum, by placing its cards again
  in order).

Ranks here are 0-based (``card & 7``), cells packed (``row * 256 + col``, see :mod:`.cards`).
"""

from __future__ import annotations

from typing import Mapping

from .cards import CELL_STRIDE, NUM_RANKS

try:  # numba is a dependency, but the engine also runs (slower) without it
    from numba.extending import register_jitable as jitable
except ImportError:  # pragma: no cover - exercised only where numba is missing
    def jitable(fn):
        return fn

ONE, EIGHT = 0, NUM_RANKS - 1
"""The 0-based ranks of the 1 and the 8."""
START_BONUS = 1
"""A path that starts with a 1 scores 1 more."""
END_BONUS = 2
"""A path that ends with an 8 scores 2 more."""
PURE_LENGTH = 4
"""A path of at least this many cards, all of the scored species, scores ``PURE_FACTOR`` per
card."""
PURE_FACTOR = 2


@jitable
def start_bonus(rank):
    """The bonus of a path whose first card has the 0-based ``rank``."""
    return START_BONUS if rank == ONE else 0


@jitable
def end_bonus(rank):
    """The bonus of a path whose last card has the 0-based ``rank``."""
    return END_BONUS if rank == EIGHT else 0


@jitable
def path_points(length, pure, starts_with_one, ends_with_eight):
    """Points of a path of ``length`` cards: 1 per card, ``PURE_FACTOR`` per card when ``pure``
    (every card of the scored species) and ``length >= PURE_LENGTH``, plus ``START_BONUS`` if it
    starts with a 1 and ``END_BONUS`` if it ends with an 8."""
    points = PURE_FACTOR * length if pure and length >= PURE_LENGTH else length
    if starts_with_one:
        points += START_BONUS
    if ends_with_eight:
        points += END_BONUS
    return points


@jitable
def hand_sum(rank_sum, holds_one, holds_eight, one_elsewhere):
    """A player's sum of one species for the rights ("1 cancels 8"): ``rank_sum`` (the plain sum
    of the ranks of that species in their hand), less 8 when they hold the 8, do not hold the 1,
    and another player holds the 1. The flags are bools or 0/1 ints (in kernels too); numpy bool
    arrays work element-wise."""
    return rank_sum - NUM_RANKS * (holds_eight & (holds_one == 0) & one_elsewhere)


@jitable
def next_cell(cell, direction, width):
    """The cell orthogonally next to ``cell`` in ``direction`` (0..3: north, east, south, west,
    the one fixed order) on a row-major grid ``width`` cells wide (packed cells: ``CELL_STRIDE``;
    the kernels' padded frames: their own width)."""
    if direction == 0:
        return cell - width
    if direction == 1:
        return cell + 1
    if direction == 2:
        return cell + width
    return cell - 1


@jitable
def neighbour(cell, direction):
    """The packed cell next to ``cell`` in ``direction`` (0..3: north, east, south, west)."""
    return next_cell(cell, direction, CELL_STRIDE)


NEIGHBOURS = tuple(next_cell(0, d, CELL_STRIDE) for d in range(4))
"""Offsets of a packed cell's orthogonal neighbours, in ``next_cell``'s order."""


def place(arboretum: dict[int, int], frontier: dict[int, None], cell: int, card: int) -> None:
    """Put ``card`` on ``cell`` and update the frontier, the empty cells orthogonally next to the
    arboretum (keys of an insertion-ordered dict: the placed cell leaves it, its empty neighbours
    join at the end in ``NEIGHBOURS`` order). No legality check."""
    frontier.pop(cell, None)
    arboretum[cell] = card
    for offset in NEIGHBOURS:
        n = cell + offset
        if n not in arboretum:
            frontier[n] = None


def frontier(arboretum: Mapping[int, int]) -> dict[int, None]:
    """The frontier of ``arboretum`` (a new dict, in the order ``place`` builds it when the cards
    are placed in the arboretum's order); empty for an empty arboretum, where a card may go
    anywhere."""
    placed: dict[int, int] = {}
    cells: dict[int, None] = {}
    for cell, card in arboretum.items():
        place(placed, cells, cell, card)
    return cells
