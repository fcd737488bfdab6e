"""The environment's flat action space: ids, the arboretum frame, masks, and applying an id.

The ids: ``ACTION_RANGES`` below (0 draws from the deck, 1 .. 4 from a discard pile, 5 .. 84
choose the card to play, 85 .. 408 its frame cell, 409 .. 488 discard); ``action_table()``
renders them as the Markdown table of the env docstring and docs/env.md.

A play is two decisions (card, then cell). Frame: the arboretum's bounding box (h x w) is
centred in an 18 x 18 window, ``origin = min_row - (18 - h) // 2`` (likewise for columns); an
empty arboretum has origin (-9, -9), so its first card at frame cell (9, 9) lands on (0, 0).
Before a play an arboretum holds at most 16 cards, so the box plus a one-cell margin fits and
every legal placement has an id.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Mapping, Optional

import numpy as np

from .engine import DECK, NUM_CARDS, NUM_RANKS, GameState, IllegalActionError, Phase, card_name, unpack_cell
from .engine.rules import jitable

MAX_PLAYERS = 4
FRAME = 18
FRAME_CELLS = FRAME * FRAME
DRAW_DECK = 0
DRAW_DISCARD = 1
PLAY_CARD = DRAW_DISCARD + MAX_PLAYERS
PLAY_CELL = PLAY_CARD + NUM_CARDS
DISCARD = PLAY_CELL + FRAME_CELLS
NUM_ACTIONS = DISCARD + NUM_CARDS
assert NUM_ACTIONS == 489

ACTION_RANGES = (
    (DRAW_DECK, 1, "draw the top card of the deck"),
    (DRAW_DISCARD, MAX_PLAYERS, f"draw the top card of the discard pile of seat offset "
                                f"`id - {DRAW_DISCARD}` (0 = own, 1 = next player in turn order, ...)"),
    (PLAY_CARD, NUM_CARDS, f"choose card `id - {PLAY_CARD}` (`species * {NUM_RANKS} + rank - 1`) "
                           f"from hand to play"),
    (PLAY_CELL, FRAME_CELLS, f"play the chosen card on frame cell `id - {PLAY_CELL} = i * {FRAME} + j`"),
    (DISCARD, NUM_CARDS, f"discard card `id - {DISCARD}`"),
)
"""The action ids: (first id, count, meaning), in id order."""


def action_table() -> str:
    """The action ids as a Markdown table (env docstring and docs/env.md contain it verbatim)."""
    lines = ["| ids | meaning |", "|---|---|"]
    for first, count, meaning in ACTION_RANGES:
        ids = str(first) if count == 1 else f"{first} .. {first + count - 1}"
        lines.append(f"| {ids} | {meaning} |")
    return "\n".join(lines)


class Decision(IntEnum):
    """The decision the player to move faces (the engine's phase, with play split in two)."""

    DRAW_FIRST = 0
    DRAW_SECOND = 1
    PLAY_CARD = 2
    PLAY_CELL = 3
    DISCARD = 4
    GAME_OVER = 5


def decision_of(state: GameState, pending: Optional[int]) -> Decision:
    phase = state.phase
    if phase is _PLAY:
        return _PLAY_CARD if pending is None else _PLAY_CELL
    return _OF_PHASE[phase]


_PLAY, _PLAY_CARD, _PLAY_CELL = Phase.PLAY, Decision.PLAY_CARD, Decision.PLAY_CELL
_OF_PHASE = (Decision.DRAW_FIRST, Decision.DRAW_SECOND, None, Decision.DISCARD, Decision.GAME_OVER)
"""``decision_of`` outside PLAY, indexed by the engine's phase (module constants: this runs at
every env step)."""


@jitable
def box_origin(r_min, r_max, c_min, c_max):
    """(row, col) of frame cell (0, 0) for an arboretum whose cards span rows ``r_min..r_max``
    and columns ``c_min..c_max``: the box centred in the frame (the extra row or column, if any,
    after it). An empty box (``r_min > r_max``, an empty arboretum) gives ``(-9, -9)``. Compiles
    into kernels (``engine.rules.jitable``)."""
    if r_min > r_max:
        return -(FRAME // 2), -(FRAME // 2)
    return r_min - (FRAME - (r_max - r_min + 1)) // 2, c_min - (FRAME - (c_max - c_min + 1)) // 2


def frame_origin(arboretum: Mapping[int, int]) -> tuple[int, int]:
    """(row, col) of frame cell (0, 0) for this arboretum (``box_origin`` of its bounding box)."""
    if not arboretum:
        return box_origin(0, -1, 0, -1)
    rows, cols = [], []
    for cell in arboretum:
        r, c = unpack_cell(cell)
        rows.append(r)
        cols.append(c)
    return box_origin(min(rows), max(rows), min(cols), max(cols))


def describe(action: int) -> str:
    """A short text for an action id, e.g. ``choose maple 3`` or ``cell (4, 9)``."""
    if action == DRAW_DECK:
        return "draw from the deck"
    if DRAW_DISCARD <= action < PLAY_CARD:
        k = action - DRAW_DISCARD
        return "draw from own discard pile" if k == 0 else f"draw from the discard pile of seat +{k}"
    if PLAY_CARD <= action < PLAY_CELL:
        return f"choose {card_name(action - PLAY_CARD)} to play"
    if PLAY_CELL <= action < DISCARD:
        i, j = divmod(action - PLAY_CELL, FRAME)
        return f"play on frame cell ({i}, {j})"
    if DISCARD <= action < NUM_ACTIONS:
        return f"discard {card_name(action - DISCARD)}"
    return f"action {action!r} (out of range 0..{NUM_ACTIONS - 1})"


def legal_ids(state: GameState, pending: Optional[int]) -> list[int]:
    """Legal action ids of the player to move, ascending."""
    phase = state.phase
    p = state.current_player
    if phase is Phase.DRAW_FIRST or phase is Phase.DRAW_SECOND:
        n = state.num_players
        ids = [DRAW_DECK] if state.deck else []
        for k in range(n):
            if state.discards[(p + k) % n]:
                ids.append(DRAW_DISCARD + k)
        return ids
    if phase is Phase.PLAY:
        if pending is None:
            return sorted(PLAY_CARD + c for c in state.hands[p])
        arboretum = state.arboretums[p]
        if not arboretum:
            return list(range(PLAY_CELL, DISCARD))
        r0, c0 = frame_origin(arboretum)
        base = PLAY_CELL - r0 * FRAME - c0
        ids = []
        for cell in state.frontier[p]:
            r, c = unpack_cell(cell)
            ids.append(base + r * FRAME + c)
        ids.sort()
        return ids
    if phase is Phase.DISCARD:
        return sorted(DISCARD + c for c in state.hands[p])
    return []


def write_mask(state: GameState, pending: Optional[int], mask: np.ndarray) -> np.ndarray:
    """Write the legal-action mask of the player to move into ``mask`` (int8, NUM_ACTIONS)."""
    mask[:] = 0
    mask[legal_ids(state, pending)] = 1
    return mask


def apply_id(state: GameState, pending: Optional[int], action: int) -> Optional[int]:
    """Apply action id ``action`` for the player to move; returns the new pending card.

    Raises ``IllegalActionError`` naming the action, the decision and the legal choices; the
    state is unchanged then.
    """
    decision = decision_of(state, pending)
    p = state.current_player
    try:
        if type(action) is not int:
            action = int(action)  # numpy integers
        if decision is Decision.DRAW_FIRST or decision is Decision.DRAW_SECOND:
            if action == DRAW_DECK:
                state.draw(DECK)
                return None
            if DRAW_DISCARD <= action < DRAW_DISCARD + state.num_players:
                state.draw((p + action - DRAW_DISCARD) % state.num_players)
                return None
        elif decision is Decision.PLAY_CARD:
            card = action - PLAY_CARD
            if 0 <= card < NUM_CARDS and card in state.hands[p]:
                return card
        elif decision is Decision.PLAY_CELL:
            if PLAY_CELL <= action < DISCARD:
                i, j = divmod(action - PLAY_CELL, FRAME)
                r0, c0 = frame_origin(state.arboretums[p])
                state.play(pending, r0 + i, c0 + j)
                return None
        elif decision is Decision.DISCARD:
            if DISCARD <= action < NUM_ACTIONS:
                state.discard(action - DISCARD)
                return None
        reason = "not an action of this decision"
    except (IllegalActionError, TypeError, ValueError) as exc:
        reason = str(exc).rsplit(": ", 1)[-1]
    legal = ", ".join(str(i) for i in legal_ids(state, pending)) or "none"
    raise IllegalActionError(
        f"illegal action {action!r} ({describe(action) if isinstance(action, int) else 'not an int'}) "
        f"by player {p} in decision {decision.name}: {reason}; legal ids: {legal}")


def cell_id(arboretum: Mapping[int, int], row: int, col: int) -> int:
    """The action id that plays on engine cell (row, col) of ``arboretum`` (for agents)."""
    r0, c0 = frame_origin(arboretum)
    i, j = row - r0, col - c0
    if not (0 <= i < FRAME and 0 <= j < FRAME):
        raise ValueError(f"cell ({row}, {col}) is outside the frame of this arboretum")
    return PLAY_CELL + i * FRAME + j


def cell_of(arboretum: Mapping[int, int], action: int) -> tuple[int, int]:
    """The engine cell (row, col) that action id ``action`` (``PLAY_CELL .. DISCARD - 1``) plays on
    in ``arboretum``: the inverse of :func:`cell_id` (``cell_id(a, *cell_of(a, x)) == x``)."""
    if not PLAY_CELL <= action < DISCARD:
        raise ValueError(f"action {action!r} is not a frame cell ({PLAY_CELL} .. {DISCARD - 1})")
    i, j = divmod(action - PLAY_CELL, FRAME)
    r0, c0 = frame_origin(arboretum)
    return r0 + i, c0 + j



ACTION_LAYOUT_VERSION = 1
"""Bumped whenever an action id changes meaning (policy files record it)."""
