"""Cards, species and cells as small ints (the engine's hot path never builds objects).

A card is ``species * 8 + (rank - 1)``; a cell ``(row, col)`` is packed as ``row * 256 + col``.
"""

from __future__ import annotations

SPECIES: tuple[str, ...] = (
    "cassia",
    "dogwood",
    "jacaranda",
    "olive",
    "lilac",
    "magnolia",
    "maple",
    "royal_poinciana",
    "oak",
    "willow",
)
"""Canonical species names; a species is referred to by its index in this tuple."""

SPECIES_INDEX: dict[str, int] = {name: i for i, name in enumerate(SPECIES)}
SPECIES_LETTERS: str = "CDJOLGMRKW"
"""One distinct letter per species, for text rendering (maGnolia, oaK)."""

NUM_SPECIES = 10
NUM_RANKS = 8
NUM_CARDS = NUM_SPECIES * NUM_RANKS
HAND_SIZE = 7
SPECIES_BY_PLAYERS: dict[int, int] = {2: 6, 3: 8, 4: 10}
"""How many species are in play for each player count."""

CELL_STRIDE = 256
"""Packed cells: ``row * CELL_STRIDE + col``; neighbours are +-1 and +-CELL_STRIDE."""
FIRST_CARD_LIMIT = 100
"""The first card of an arboretum may go on any cell with row and col within +-FIRST_CARD_LIMIT
(the rules put no bound on it; every choice is the same game up to a translation)."""
MAX_ARBORETUM_CARDS = max(-(-(species * NUM_RANKS - HAND_SIZE * n) // n)
                          for n, species in SPECIES_BY_PLAYERS.items())
"""The most cards any arboretum can hold: 17, with 2 players (docs/RULES.md)."""
CELL_LIMIT = FIRST_CARD_LIMIT + MAX_ARBORETUM_CARDS
"""Every cell an arboretum can reach, its free neighbours included, lies within +-CELL_LIMIT of
(0, 0), below ``CELL_STRIDE // 2``, so that packing is unambiguous: the arboretum grows without
bound from its first card, as the rules say."""
assert CELL_LIMIT < CELL_STRIDE // 2


def make_card(species: int, rank: int) -> int:
    return species * NUM_RANKS + rank - 1


def species_of(card: int) -> int:
    return card >> 3


def rank_of(card: int) -> int:
    return (card & 7) + 1


def card_name(card: int) -> str:
    """Human-readable name, e.g. ``maple 8``."""
    return f"{SPECIES[card >> 3]} {(card & 7) + 1}"


def card_short(card: int) -> str:
    """Two-character name, e.g. ``M8``."""
    return f"{SPECIES_LETTERS[card >> 3]}{(card & 7) + 1}"


def pack_cell(row: int, col: int) -> int:
    return row * CELL_STRIDE + col


def unpack_cell(cell: int) -> tuple[int, int]:
    row = (cell + CELL_STRIDE // 2) // CELL_STRIDE
    return row, cell - row * CELL_STRIDE
