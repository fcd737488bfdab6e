"""The game state and its transitions: a turn is draw, draw, play, discard (RULES.md).

The hot path works on small ints (cards, packed cells), sets and lists; an ``Action`` named tuple
is only built where a caller asks for one. Every transition checks legality first and raises
``IllegalActionError`` without touching the state.
"""

from __future__ import annotations

import functools
import operator
from enum import IntEnum
from typing import NamedTuple, Optional, Union

import numpy as np

from .cards import (
    CELL_LIMIT,
    CELL_STRIDE,
    FIRST_CARD_LIMIT,
    HAND_SIZE,
    NUM_SPECIES,
    NUM_RANKS,
    card_name,
    unpack_cell,
)
from .config import GameConfig
from .rules import place

DECK = -1
"""Draw source meaning the deck; a player index means that player's discard pile."""


class Phase(IntEnum):
    DRAW_FIRST = 0
    DRAW_SECOND = 1
    PLAY = 2
    DISCARD = 3
    GAME_OVER = 4


class ActionKind(IntEnum):
    DRAW = 0
    PLAY = 1
    DISCARD = 2


class Action(NamedTuple):
    """One decision. ``source`` is for draws (``DECK`` or a player index), ``card`` for play and
    discard, ``row``/``col`` for play."""

    kind: ActionKind
    card: int = -1
    row: int = 0
    col: int = 0
    source: int = DECK

    def describe(self) -> str:
        if self.kind == ActionKind.DRAW:
            return "draw(deck)" if self.source == DECK else f"draw(discard pile of player {self.source})"
        if self.kind == ActionKind.PLAY:
            return f"play({_name(self.card)} at ({self.row}, {self.col}))"
        return f"discard({_name(self.card)})"


def _as_int(value):
    """numpy integers (and other ``__index__`` types) as plain ints; anything else unchanged
    (it then fails the legality checks with a clear reason)."""
    try:
        return operator.index(value)
    except TypeError:
        return value


def _first_cell(cell) -> bool:
    """Whether ``cell`` is a packed cell (an int) where a first card may go (+-FIRST_CARD_LIMIT)."""
    if type(cell) is not int:
        return False
    row, col = unpack_cell(cell)
    return -FIRST_CARD_LIMIT <= row <= FIRST_CARD_LIMIT and -FIRST_CARD_LIMIT <= col <= FIRST_CARD_LIMIT


def _name(card: int) -> str:
    return card_name(card) if isinstance(card, int) and 0 <= card < 80 else repr(card)


class IllegalActionError(ValueError):
    """An action the rules do not allow now; the state is unchanged."""


_DRAW_FIRST, _DRAW_SECOND, _PLAY, _DISCARD, _GAME_OVER = Phase
_DRAW, _PLAYK, _DISCARDK = int(ActionKind.DRAW), int(ActionKind.PLAY), int(ActionKind.DISCARD)

Seed = Union[int, np.random.Generator]


class GameState:
    """A full game state (all hidden information included).

    ``deck`` and the ``discards`` piles keep their top card last. ``arboretums[p]`` maps packed
    cells to cards; ``frontier[p]`` holds the empty cells next to that arboretum (where a
    card may be played once it is non-empty) as the keys of a dict: an insertion-ordered set,
    so that sampling from it is reproducible on every platform. ``known[p]`` holds the cards of ``p``'s hand that
    every player knows (taken from a discard pile, not played or discarded since). ``history``
    holds every decision as a plain ``Action``-ordered tuple.
    """

    __slots__ = ("num_players", "species", "starting_player", "seed", "setup", "deck", "hands",
                 "discards", "arboretums", "frontier", "known", "drawn", "phase",
                 "current_player", "turn", "last_turn", "history")

    def __init__(self) -> None:  # use new_game() or state_from_dict()
        self.seed: Optional[int] = None
        """The int seed of ``new_game`` (``None`` if it was given a Generator)."""
        self.setup: Optional[GameConfig] = None
        """The config as given to ``new_game`` (a record replays from it and the seed)."""

    # ----------------------------------------------------------------- queries
    @property
    def config(self) -> GameConfig:
        """The resolved config: species and starting player as drawn."""
        return GameConfig(self.num_players, self.species, self.starting_player)

    @property
    def game_over(self) -> bool:
        return self.phase is _GAME_OVER

    def draw_sources(self) -> list[int]:
        """Legal draw sources now: ``DECK`` if it has cards, then every non-empty pile."""
        sources = [DECK] if self.deck else []
        sources.extend(p for p, pile in enumerate(self.discards) if pile)
        return sources

    def playable_cells(self, player: Optional[int] = None) -> Optional[dict[int, None]]:
        """Packed cells where ``player`` may play; ``None`` means anywhere (empty arboretum)."""
        p = self.current_player if player is None else player
        return self.frontier[p] if self.arboretums[p] else None

    def legal_actions(self) -> list[Action]:
        """The legal actions of the player to move: the draw sources, every hand card on every
        free cell next to the arboretum, or every hand card to discard. For the first card
        only (0, 0) is listed: any cell is legal (``apply`` takes any within +-FIRST_CARD_LIMIT) and
        every choice gives the same game up to a translation."""
        phase = self.phase
        if phase is _DRAW_FIRST or phase is _DRAW_SECOND:
            return [Action(ActionKind.DRAW, source=s) for s in self.draw_sources()]
        p = self.current_player
        hand = sorted(self.hands[p])
        if phase is _PLAY:
            cells = self.playable_cells()
            cells = [0] if cells is None else sorted(cells)
            return [Action(ActionKind.PLAY, c, *unpack_cell(cell)) for c in hand for cell in cells]
        if phase is _DISCARD:
            return [Action(ActionKind.DISCARD, c) for c in hand]
        return []

    # ------------------------------------------------------------ transitions
    def apply(self, action: Action) -> None:
        kind = action[0]
        if kind == _DRAW:
            self.draw(action[4])
        elif kind == _PLAYK:
            self.play(action[1], action[2], action[3])
        elif kind == _DISCARDK:
            self.discard(action[1])
        else:
            self._illegal(f"action {tuple(action)!r}", f"unknown action kind {kind!r}")

    def draw(self, source: int) -> int:
        """Draw the top card of the deck (``DECK``) or of player ``source``'s discard pile."""
        phase = self.phase
        if type(source) is not int:
            source = _as_int(source)
        if phase is not _DRAW_FIRST and phase is not _DRAW_SECOND:
            self._illegal(Action(ActionKind.DRAW, source=source), "it is not time to draw")
        if source == DECK:
            if not self.deck:
                self._illegal(Action(ActionKind.DRAW, source=source), "the deck is empty")
        else:
            if type(source) is not int or not 0 <= source < self.num_players:
                self._illegal(Action(ActionKind.DRAW, source=source),
                              f"no player {source!r} (draw sources: deck or 0..{self.num_players - 1})")
            if not self.discards[source]:
                self._illegal(Action(ActionKind.DRAW, source=source),
                              f"the discard pile of player {source} is empty")
        return self._draw(source)

    # The transitions proper, for actions already known to be legal (the public methods check
    # first; ``random_playout`` only makes legal choices).
    def _draw(self, source: int) -> int:
        p = self.current_player
        if source == DECK:
            deck = self.deck
            card = deck.pop()
            if not deck:
                self.last_turn = True
        else:
            card = self.discards[source].pop()
            self.known[p].add(card)
        self.hands[p].add(card)
        self.drawn.append(card)
        self.history.append((_DRAW, -1, 0, 0, source))
        if self.phase is _DRAW_FIRST:
            self.phase = _DRAW_SECOND
            if not self.deck and not any(self.discards):
                self.phase = _PLAY  # no source for the second draw: it is skipped
        else:
            self.phase = _PLAY
        return card

    def play(self, card: int, row: int, col: int) -> None:
        """Play ``card`` from hand into the own arboretum at ``(row, col)``: the first card on
        any cell within +-FIRST_CARD_LIMIT, every later one next to the arboretum."""
        limit = CELL_LIMIT if self.arboretums[self.current_player] else FIRST_CARD_LIMIT
        if type(row) is not int or type(col) is not int or not (
                -limit <= row <= limit and -limit <= col <= limit):
            self._illegal(Action(ActionKind.PLAY, card, row, col),
                          f"row and col must be ints within +-{limit}"
                          + (" for the first card" if limit == FIRST_CARD_LIMIT else ""))
        self.play_cell(card, row * CELL_STRIDE + col)

    def play_cell(self, card: int, cell: int) -> None:
        """``play`` with a packed cell (``row * 256 + col``, see ``cards.pack_cell``)."""
        if type(card) is not int:
            card = _as_int(card)
        if type(cell) is not int:
            cell = _as_int(cell)
        p = self.current_player
        arboretum = self.arboretums[p]
        frontier = self.frontier[p]
        if self.phase is not _PLAY or card not in self.hands[p] or (
                cell not in frontier if arboretum else not _first_cell(cell)):
            row, col = unpack_cell(cell)
            action = Action(ActionKind.PLAY, card, row, col)
            if self.phase is not _PLAY:
                self._illegal(action, "it is not time to play")
            if card not in self.hands[p]:
                self._illegal(action, "that card is not in hand")
            if not arboretum:
                self._illegal(action, f"the first card goes within +-{FIRST_CARD_LIMIT} "
                                      "(a packed cell, see cards.pack_cell)")
            self._illegal(action, "that cell is taken" if cell in arboretum
                          else "that cell is not orthogonally adjacent to the arboretum")
        self._play(card, cell)

    def _play(self, card: int, cell: int) -> None:
        p = self.current_player
        self.hands[p].discard(card)
        known = self.known[p]
        if known:
            known.discard(card)
        place(self.arboretums[p], self.frontier[p], cell, card)
        row = (cell + 128) >> 8  # unpack_cell, inlined on the hot path
        self.history.append((_PLAYK, card, row, cell - (row << 8), DECK))
        self.phase = _DISCARD

    def discard(self, card: int) -> None:
        """Discard ``card`` from hand onto the own discard pile; ends the turn."""
        if type(card) is not int:
            card = _as_int(card)
        if self.phase is not _DISCARD:
            self._illegal(Action(ActionKind.DISCARD, card), "it is not time to discard")
        p = self.current_player
        hand = self.hands[p]
        if card not in hand:
            self._illegal(Action(ActionKind.DISCARD, card), "that card is not in hand")
        self._discard(card)

    def _discard(self, card: int) -> None:
        p = self.current_player
        self.hands[p].discard(card)
        known = self.known[p]
        if known:
            known.discard(card)
        self.discards[p].append(card)
        self.history.append((_DISCARDK, card, 0, 0, DECK))
        self.turn += 1
        self.drawn = []
        if self.last_turn:
            self.phase = _GAME_OVER
            return
        self.current_player = (p + 1) % self.num_players
        self.phase = _DRAW_FIRST
        if not self.deck and not any(self.discards):
            self.phase = _PLAY  # no source for either draw: both are skipped

    # Public names of the unchecked transitions, for callers that already know the action is
    # legal (the env applies only ids its exact mask allows): no checks, so a wrong call
    # corrupts the state.
    draw_unchecked = _draw
    play_cell_unchecked = _play
    discard_unchecked = _discard

    def _illegal(self, action: Action | str, reason: str):
        phase = self.phase.name
        described = action if isinstance(action, str) else action.describe()
        raise IllegalActionError(
            f"illegal action {described} by player {self.current_player} "
            f"in phase {phase}: {reason}")

    # ------------------------------------------------------------------ copies
    def clone(self) -> "GameState":
        s = GameState.__new__(GameState)
        s.num_players, s.species, s.starting_player = self.num_players, self.species, self.starting_player
        s.seed, s.setup = self.seed, self.setup
        s.deck = self.deck.copy()
        s.hands = [h.copy() for h in self.hands]
        s.discards = [d.copy() for d in self.discards]
        s.arboretums = [a.copy() for a in self.arboretums]
        s.frontier = [f.copy() for f in self.frontier]
        s.known = [k.copy() for k in self.known]
        s.drawn = self.drawn.copy()
        s.phase, s.current_player, s.turn, s.last_turn = (
            self.phase, self.current_player, self.turn, self.last_turn)
        s.history = self.history.copy()
        return s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable

    def to_dict(self) -> dict:
        """The whole state as JSON-able data (``serialize.state_from_dict`` restores it exactly)."""
        return {
            "config": {"num_players": self.num_players, "species": list(self.species),
                       "starting_player": self.starting_player},
            "seed": self.seed,
            "setup": None if self.setup is None else self.setup.to_dict(),
            "deck": list(self.deck),
            "hands": [sorted(h) for h in self.hands],
            "discards": [list(d) for d in self.discards],
            "arboretums": [sorted([*unpack_cell(c), card] for c, card in a.items())
                           for a in self.arboretums],
            "arboretum_order": [list(a.values()) for a in self.arboretums],
            "known": [sorted(k) for k in self.known],
            "drawn": list(self.drawn),
            "phase": int(self.phase),
            "current_player": self.current_player,
            "turn": self.turn,
            "last_turn": self.last_turn,
            "history": [list(a) for a in self.history],
        }


@functools.lru_cache(maxsize=512)
def _cards_of(species: tuple[int, ...]) -> np.ndarray:
    """The cards of the species in play, in card order (read-only, cached)."""
    cards = np.array([s * NUM_RANKS + r for s in species for r in range(NUM_RANKS)])
    cards.setflags(write=False)
    return cards


def new_game(config: GameConfig, seed: Seed) -> GameState:
    """Set up a game. Randomness comes only from ``seed`` (an int or a ``numpy`` Generator),
    consumed in this order: species left out (if not given), starting player (if not given),
    the shuffle. The same seed gives the same game on every platform."""
    if isinstance(seed, np.random.Generator):
        rng, seed_value = seed, None
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        rng, seed_value = np.random.default_rng(int(seed)), int(seed)
    else:
        raise TypeError(f"seed must be an int or a numpy.random.Generator, got {type(seed).__name__}")
    n = config.num_players
    species = config.species
    if species is None:
        species = tuple(sorted(rng.permutation(NUM_SPECIES)[:config.num_species].tolist()))
    starting = config.starting_player
    if starting is None:
        starting = int(rng.random() * n)
    deck = rng.permutation(_cards_of(species)).tolist()
    s = GameState()
    s.num_players, s.species, s.starting_player, s.seed = n, species, starting, seed_value
    s.setup = config
    s.hands = []
    for _ in range(n):
        s.hands.append(set(deck[-HAND_SIZE:]))
        del deck[-HAND_SIZE:]
    s.deck = deck
    s.discards = [[] for _ in range(n)]
    s.arboretums = [{} for _ in range(n)]
    s.frontier = [{} for _ in range(n)]
    s.known = [set() for _ in range(n)]
    s.drawn = []
    s.phase, s.current_player, s.turn, s.last_turn = _DRAW_FIRST, starting, 0, False
    s.history = []
    return s

