"""The observation tensor: observe-then-encode (as in the Hanabi Learning Environment).

``table_view.table_view`` says what one seat may know (``TableView``: the engine's seat-relative
``PlayerView`` plus the decision and the pending card); ``encode`` writes it, section by
section, into a float32 vector of ``OBS_SIZE`` values, all in [0, 1].

Layout rules:

* **Seat-relative.** Seat 0 is the observer, seat k the player k places later in turn order.
  Every per-seat part is padded to 4 seats (absent seats are zeros), so the shape is the same
  for 2, 3 and 4 players.
* **Species** always use the canonical order (10 slots, ``engine.SPECIES``); species not in play
  stay 0. A **card** slot is the card id ``species * 8 + rank - 1`` (80 slots).
* **Spatial planes** are 18 x 18 (row-major, 324 values) in the *action frame*
  (``actions.frame_origin``): plane cell ``i * 18 + j`` is the cell that action
  ``PLAY_CELL + i * 18 + j`` would play on in that arboretum. Each arboretum has its own frame.

``SECTIONS`` (in order: name, width, meaning and scale) is the single source of the layout table
of the env docstring and ``docs/env.md`` (``layout_table()`` renders it); ``encode`` asserts
each section's width as it writes it, and the module asserts the total (``OBS_SIZE``).

Two writers, and only two: ``encode`` here is the plain reference (short, no caches: the test
oracle, and the env's path where numba is missing); ``batch.observe`` is the compiled fast path
that writes N games at once (the AEC env with N = 1, the vector env with N). The tests compare
them at every step of many games. Adding a section: see docs/design.md.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .actions import FRAME, FRAME_CELLS, MAX_PLAYERS, Decision, frame_origin
from .engine import NUM_CARDS, NUM_SPECIES, unpack_cell
from .engine.path_dp import best_points, placement_gains
from .engine.rules import frontier
from .engine.scoring import hand_sums
from .table_view import TableView

# ----------------------------------------------------------------------------- scales
DECK_SCALE = 80.0
"""deck size / 80."""
TURN_SCALE = 64.0
"""turn / 64 (a game has at most 52 turns)."""
HAND_SCALE = 9.0
"""hand size / 9 (7 between turns, 9 after both draws)."""
SUM_SCALE = 36.0
"""hand sum of a species / 36 (1 + 2 + ... + 8)."""
POINTS_SCALE = 20.0
"""path points / 20 (the best possible path scores 19: eight cards 1..8 of one species)."""
COUNT_SCALE = 8.0
"""cards of a species / 8."""
PILE_SCALE = 80.0
"""discard depth value: (80 - depth) / 80, depth 0 = top card."""
RANK_SCALE = 8.0
SPECIES_SCALE = 10.0

DECISIONS = len(Decision)

# ----------------------------------------------------------------------------- layout
OBS_LAYOUT_VERSION = 1
"""Bumped whenever the meaning of any observation value changes (policy files record it)."""

SEATS = MAX_PLAYERS
PILE_BLOCK = 2 * NUM_CARDS
"""Per seat in ``discard_piles``: 80 depth values, then the 80-value top-card one-hot."""
SUMMARY_BLOCK = NUM_CARDS + 2 * NUM_SPECIES
"""Per seat in ``arboretum_summary``: 80 cards present, 10 path points, 10 species counts."""
PLANES_BLOCK = 2 * FRAME_CELLS
"""Per seat in ``arboretum_planes``: the rank plane, then the species plane."""

SECTIONS: list[tuple[str, int, str]] = [
    ("player_count", 3, "one-hot: 2, 3 or 4 players"),
    ("decision", DECISIONS,
     "one-hot `actions.Decision`: DRAW_FIRST, DRAW_SECOND, PLAY_CARD, PLAY_CELL, DISCARD, GAME_OVER"),
    ("to_move", SEATS, "one-hot: seat of the player to move (0 = the observer)"),
    ("deck_size", 1, "cards left in the deck / 80"),
    ("turn", 1, "turns completed / 64 (a game has at most 52)"),
    ("species_in_play", NUM_SPECIES, "multi-hot: the species of this game"),
    ("hand", NUM_CARDS, "multi-hot: the observer's hand"),
    ("drawn", NUM_CARDS,
     "multi-hot: cards drawn this turn that the observer saw (all of them on its own turn, "
     "otherwise those taken from discard piles)"),
    ("pending", NUM_CARDS,
     "one-hot: the card chosen to play; during PLAY_CELL, for the player to move only"),
    ("rights", NUM_SPECIES,
     "per species in play: 1 if the observer would hold the right to score it given what it "
     "sees (its hand against the others' known cards, '1 cancels 8', ties included), else 0"),
    ("hand_sizes", SEATS, "per seat: cards in hand / 9"),
    ("hand_sums", SEATS * NUM_SPECIES,
     "per seat, per species: rank sum / 36 of the cards of that hand the observer sees (seat 0: "
     "its whole hand; others: their known cards), '1 cancels 8' applied among those cards"),
    ("known_cards", SEATS * NUM_CARDS,
     "per seat, multi-hot: cards known to be in that hand (taken from a discard pile, not "
     "played or discarded since); seat 0: what the others know of the observer's hand"),
    ("discard_piles", SEATS * PILE_BLOCK,
     "per seat, 160 values: for each card in that discard pile (80 - depth) / 80, depth 0 = top "
     "(1.0 = top card, smaller = deeper, 0 = not in the pile); then the top card one-hot (80)"),
    ("arboretum_summary", SEATS * SUMMARY_BLOCK,
     "per seat, 100 values: multi-hot cards in that arboretum (80); per species the points / 20 "
     "of its best current path there (`engine.scoring.best_path`, regardless of rights) (10); "
     "per species its cards there / 8 (10)"),
    ("arboretum_planes", SEATS * PLANES_BLOCK,
     "per seat, two 18 x 18 planes in that arboretum's action frame: rank / 8, then "
     "(species index + 1) / 10; 0 = empty cell"),
    ("own_species_planes", NUM_SPECIES * FRAME_CELLS,
     "10 planes 18 x 18 (canonical species order), the observer's arboretum in its action "
     "frame: rank / 8 where a card of that species lies, else 0"),
    ("gain_plane", FRAME_CELLS,
     "18 x 18, the observer's action frame; during PLAY_CELL for the player to move: on every "
     "legal cell (1 + gain) / 20, gain = growth of the best-path points of the pending card's "
     "species if the card goes there; 0 on other cells and in other decisions"),
]


def _offsets(sections) -> dict[str, int]:
    out, at = {}, 0
    for name, width, _ in sections:
        out[name] = at
        at += width
    return out


OBS_SIZE = sum(w for _, w, _ in SECTIONS)
OFFSETS = _offsets(SECTIONS)
WIDTHS = {name: w for name, w, _ in SECTIONS}
assert OBS_SIZE == 7835, OBS_SIZE
assert OBS_SIZE <= 10_000

def layout_table() -> str:
    """The observation layout as a Markdown table (env docstring and docs/env.md)."""
    lines = ["| offset | width | section | meaning and scale |", "|---:|---:|---|---|"]
    for name, width, desc in SECTIONS:
        lines.append(f"| {OFFSETS[name]} | {width} | `{name}` | {desc} |")
    lines.append(f"| | {OBS_SIZE} | | total (`OBS_SIZE`) |")
    return "\n".join(lines)


def _section(out: np.ndarray, name: str, width: int) -> np.ndarray:
    """The slice of ``out`` holding section ``name``, checked to have the width the encoder
    writes."""
    assert WIDTHS[name] == width, (name, WIDTHS[name], width)
    return out[OFFSETS[name]:OFFSETS[name] + width]


def encode(tv: TableView, out: Optional[np.ndarray] = None) -> np.ndarray:
    """The observation of ``tv`` (see ``SECTIONS``), written into ``out`` (float32, ``OBS_SIZE``;
    a fresh array if ``None``) and returned."""
    if out is None:
        out = np.zeros(OBS_SIZE, np.float32)
    else:
        assert out.dtype == np.float32 and out.shape == (OBS_SIZE,), "out must be float32 (OBS_SIZE,)"
        out[:] = 0.0
    view = tv.view
    n = view.num_players
    assert 2 <= n <= SEATS

    _section(out, "player_count", 3)[n - 2] = 1.0
    _section(out, "decision", DECISIONS)[tv.decision] = 1.0
    _section(out, "to_move", SEATS)[view.to_move] = 1.0
    _section(out, "deck_size", 1)[0] = view.deck_size / DECK_SCALE
    _section(out, "turn", 1)[0] = view.turn / TURN_SCALE
    _section(out, "species_in_play", NUM_SPECIES)[list(view.species)] = 1.0
    _section(out, "hand", NUM_CARDS)[list(view.hand)] = 1.0
    _section(out, "drawn", NUM_CARDS)[list(view.drawn)] = 1.0
    if tv.pending is not None:
        _section(out, "pending", NUM_CARDS)[tv.pending] = 1.0

    # what the observer sees of each hand: its own, and the others' known cards ('1 cancels 8'
    # among those, as the scorer applies it among whole hands)
    visible = [view.hand] + [view.known[k] for k in range(1, n)]
    sums = hand_sums(visible)
    rights = _section(out, "rights", NUM_SPECIES)
    hand_sum_values = _section(out, "hand_sums", SEATS * NUM_SPECIES).reshape(SEATS, NUM_SPECIES)
    for s in view.species:
        rights[s] = float(all(sums[k][s] <= sums[0][s] for k in range(1, n)))
        for k in range(n):
            hand_sum_values[k, s] = sums[k][s] / SUM_SCALE

    _section(out, "hand_sizes", SEATS)[:n] = [size / HAND_SCALE for size in view.hand_sizes]
    known = _section(out, "known_cards", SEATS * NUM_CARDS).reshape(SEATS, NUM_CARDS)
    piles = _section(out, "discard_piles", SEATS * PILE_BLOCK).reshape(SEATS, PILE_BLOCK)
    summary = _section(out, "arboretum_summary", SEATS * SUMMARY_BLOCK).reshape(SEATS, SUMMARY_BLOCK)
    planes = _section(out, "arboretum_planes", SEATS * PLANES_BLOCK).reshape(SEATS, 2, FRAME, FRAME)
    own_planes = _section(out, "own_species_planes", NUM_SPECIES * FRAME_CELLS).reshape(NUM_SPECIES, FRAME, FRAME)
    for k in range(n):
        known[k, list(view.known[k])] = 1.0
        pile = view.discards[k]
        for depth, card in enumerate(reversed(pile)):
            piles[k, card] = (PILE_SCALE - depth) / PILE_SCALE
        if pile:
            piles[k, NUM_CARDS + pile[-1]] = 1.0
        arboretum = view.arboretums[k]
        if not arboretum:
            continue
        r0, c0 = frame_origin(arboretum)
        points = best_points(arboretum)
        for cell, card in arboretum.items():
            row, col = unpack_cell(cell)
            species, rank = card >> 3, (card & 7) + 1
            summary[k, card] = 1.0
            summary[k, NUM_CARDS + NUM_SPECIES + species] += 1 / COUNT_SCALE
            planes[k, 0, row - r0, col - c0] = rank / RANK_SCALE
            planes[k, 1, row - r0, col - c0] = (species + 1) / SPECIES_SCALE
            if k == 0:
                own_planes[species, row - r0, col - c0] = rank / RANK_SCALE
        summary[k, NUM_CARDS:NUM_CARDS + NUM_SPECIES] = [p / POINTS_SCALE for p in points]

    gain = _section(out, "gain_plane", FRAME_CELLS).reshape(FRAME, FRAME)
    if tv.pending is not None and tv.decision is Decision.PLAY_CELL:
        mine = view.arboretums[0]
        if not mine:
            gain[:, :] = 1.0 / POINTS_SCALE  # every cell is legal; one card makes no path
        else:
            r0, c0 = frame_origin(mine)
            for cell, g in placement_gains(mine, tv.pending, frontier(mine)).items():
                row, col = unpack_cell(cell)
                gain[row - r0, col - c0] = (1 + g) / POINTS_SCALE
    return out
