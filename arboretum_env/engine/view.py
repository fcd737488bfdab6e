"""What one seat can see: a seat-relative view of a state with hidden cards removed.

``PlayerView`` holds references to the state's containers, not copies (it is built at every
step): treat it as read-only, and build a new one after the state changes. Index 0 of every
per-seat sequence is the observer; index k is the player k seats later in turn order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .cards import NUM_RANKS
from .state import GameState, Phase


@dataclass(frozen=True)
class PlayerView:
    observer: int
    """Absolute index of the observing player."""
    num_players: int
    species: tuple[int, ...]
    """Species in play (indexes)."""
    phase: Phase
    to_move: int
    """Seat offset of the player to move (0: the observer)."""
    turn: int
    hand: frozenset[int] | set[int]
    """The observer's own hand."""
    drawn: tuple[int, ...]
    """Cards drawn this turn that the observer saw: all of them on its own turn, otherwise the
    ones taken from discard piles."""
    arboretums: tuple[Mapping[int, int], ...]
    """Per seat: packed cell -> card."""
    discards: tuple[Sequence[int], ...]
    """Per seat: discard pile, top card last."""
    known: tuple[set[int], ...]
    """Per seat: cards known to be in that hand (taken from a discard pile); seat 0: what the
    others know of the observer's hand."""
    hand_sizes: tuple[int, ...]
    deck_size: int

    def seat(self, offset: int) -> int:
        """Absolute player index of seat ``offset``."""
        return (self.observer + offset) % self.num_players


def unseen_cards(view: PlayerView) -> list[int]:
    """The cards of the game the observer has not seen (by species in ``view.species`` order, then
    rank): not in its hand, an arboretum,
    a discard pile, or known to be in another hand (the other hands' rest and the deck)."""
    seen = set(view.hand)
    for k in range(view.num_players):
        seen.update(view.arboretums[k].values())
        seen.update(view.discards[k])
        if k:
            seen.update(view.known[k])
    return [c for s in view.species for c in range(s * NUM_RANKS, (s + 1) * NUM_RANKS) if c not in seen]


def observe(state: GameState, observer: int) -> PlayerView:
    n = state.num_players
    order = [(observer + k) % n for k in range(n)]
    to_move = (state.current_player - observer) % n
    if to_move == 0:
        drawn = tuple(state.drawn)
    else:
        seen = state.known[state.current_player]
        drawn = tuple(c for c in state.drawn if c in seen)
    return PlayerView(
        observer=observer,
        num_players=n,
        species=state.species,
        phase=state.phase,
        to_move=to_move,
        turn=state.turn,
        hand=state.hands[observer],
        drawn=drawn,
        arboretums=tuple(state.arboretums[p] for p in order),
        discards=tuple(state.discards[p] for p in order),
        known=tuple(state.known[p] for p in order),
        hand_sizes=tuple(len(state.hands[p]) for p in order),
        deck_size=len(state.deck),
    )
