"""Determinization: a game row dealt again where one seat cannot see (for search).

A seat sees its own hand, every arboretum, every discard pile and the cards it knows in other
hands (``T_KNOWN``: cards taken from a discard pile). What it cannot see is the rest of the other
seats' hands and the deck's order. ``determinize(row, seat, rng)`` returns a copy of the row in
which exactly those hidden cards are shuffled together and dealt back into the same places (each
other seat keeps its hand size and its known cards, the deck keeps its size): a game that the
seat cannot tell from the real one, drawn uniformly among them (no inference from how the others
played). ``tests/test_determinize.py`` checks that the seat's observation and mask are unchanged
and that every card stays in play exactly once.

Plain numpy on one row (a few microseconds); randomness only from the ``numpy.random.Generator``
passed in. Layer: env (the table of ``batch.table``); imports no RL library.
"""

from __future__ import annotations

import numpy as np

from ..engine import NUM_CARDS
from .table import NO_CARD, T_CURRENT, T_DECK, T_DECK_LEN, T_HAND, T_HAND_SIZE, T_KNOWN, T_PENDING, T_PLAYERS


def hidden_cards(row: np.ndarray, seat: int) -> np.ndarray:
    """The cards ``seat`` cannot locate: the other seats' unknown hand cards, then the deck."""
    _check(row, seat)
    parts = []
    for other in range(int(row[T_PLAYERS])):
        if other != seat:
            parts.append(_unknown_hand(row, other))
    parts.append(row[T_DECK:T_DECK + row[T_DECK_LEN]])
    return np.concatenate(parts).astype(np.int64)


def determinize(row: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``row`` with the cards hidden from ``seat`` dealt again at random (module doc)."""
    pool = rng.permutation(hidden_cards(row, seat))
    out = row.copy()
    used = 0
    for other in range(int(row[T_PLAYERS])):
        if other == seat:
            continue
        hand = out[T_HAND + other * NUM_CARDS:T_HAND + (other + 1) * NUM_CARDS]
        unknown = _unknown_hand(row, other)
        hand[unknown] = 0
        hand[pool[used:used + len(unknown)]] = 1
        used += len(unknown)
    out[T_DECK:T_DECK + row[T_DECK_LEN]] = pool[used:]
    return out


def _unknown_hand(row: np.ndarray, player: int) -> np.ndarray:
    block = slice(player * NUM_CARDS, (player + 1) * NUM_CARDS)
    hand, known = row[T_HAND:][block], row[T_KNOWN:][block]
    return np.flatnonzero((hand == 1) & (known == 0))


def _check(row: np.ndarray, seat: int) -> None:
    players = int(row[T_PLAYERS])
    if row.ndim != 1 or players < 2:
        raise ValueError("determinize: expected one loaded game row (batch.table)")
    if not 0 <= seat < players:
        raise ValueError(f"determinize: seat {seat} is not a player of this {players}-player game")
    if row[T_PENDING] != NO_CARD and row[T_CURRENT] != seat:
        raise ValueError(f"determinize: player {int(row[T_CURRENT])} has a card chosen to play that "
                         f"seat {seat} has not seen; determinize for the player to move")
    for other in range(players):
        if (row[T_HAND + other * NUM_CARDS:T_HAND + (other + 1) * NUM_CARDS].sum()
                != row[T_HAND_SIZE + other]):
            raise ValueError(f"determinize: player {other}'s hand flags do not match its hand size")
