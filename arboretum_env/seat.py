"""Agents anywhere: act from one seat's view, without the full game state.

An agent playing on an external game server knows what its seat sees, not the hidden cards. The
env's helpers (``actions.legal_ids``, ``write_mask``) need a full ``GameState``; this module works
from a :class:`~arboretum_env.table_view.TableView` alone:

* :func:`legal_ids` / :func:`action_mask` / :func:`observation`: the legal action ids, the int8
  mask and the float32 observation of a view (equal to the env's own for the same position).
* :func:`move_of`: an action id in the engine's terms (what to send to a server): a draw source,
  the card chosen, a play's (row, col) (``actions.cell_of``, the inverse of ``actions.cell_id``),
  a discard.
* :func:`determinize`: a full ``GameState`` consistent with the view (hidden cards filled at
  random), for agents that search or roll out.
* :class:`SeatTracker`: two view fields depend on the history, not on the table as it lies: what
  the others know of each hand (``PlayerView.known``: cards taken from discard piles and still
  held) and what the mover drew this turn (``PlayerView.drawn``). The tracker keeps the whole view
  of one seat from the public moves (plus the card its own seat draws from the deck).

Example (an agent on a server that reports every move)::

    tracker = SeatTracker(seat=1, num_players=2, species=species, starting_player=0, hand=my_hand)
    for move in server_moves():              # ("draw", player, source[, card]), ("play", player, card, row, col), ...
        tracker.apply(*move)
        tv = tracker.view(pending)
        if tv.on_turn:
            action = agent.act(observation(tv), action_mask(tv), tv)
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

from .actions import (DISCARD, DRAW_DECK, DRAW_DISCARD, FRAME, FRAME_CELLS, NUM_ACTIONS, PLAY_CARD, PLAY_CELL,
                      Decision, cell_id, cell_of, decision_of, frame_origin)
from .engine import DECK, HAND_SIZE, NUM_RANKS, GameState, Phase, PlayerView, pack_cell, state_from_dict, unpack_cell
from .engine.rules import frontier
from .engine.view import unseen_cards
from .observation import encode
from .table_view import TableView

__all__ = ["legal_ids", "action_mask", "observation", "move_of", "determinize", "SeatTracker", "cell_of",
           "cell_id"]


def legal_ids(tv: TableView) -> list[int]:
    """The legal action ids of the seat whose view this is, ascending; empty when it is not to
    move (the same ids as ``actions.legal_ids`` of the full state)."""
    if not tv.on_turn:
        return []
    view, decision = tv.view, tv.decision
    if decision is Decision.DRAW_FIRST or decision is Decision.DRAW_SECOND:
        ids = [DRAW_DECK] if view.deck_size else []
        return ids + [DRAW_DISCARD + k for k in range(view.num_players) if view.discards[k]]
    if decision is Decision.PLAY_CARD:
        return sorted(PLAY_CARD + c for c in view.hand)
    if decision is Decision.PLAY_CELL:
        arboretum = view.arboretums[0]
        if not arboretum:
            return list(range(PLAY_CELL, PLAY_CELL + FRAME_CELLS))
        r0, c0 = frame_origin(arboretum)
        base = PLAY_CELL - r0 * FRAME - c0
        return sorted(base + r * FRAME + c for r, c in map(unpack_cell, frontier(arboretum)))
    if decision is Decision.DISCARD:
        return sorted(DISCARD + c for c in view.hand)
    return []


def action_mask(tv: TableView) -> np.ndarray:
    """The env's ``action_mask`` (int8, ``NUM_ACTIONS``) from the view alone."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[legal_ids(tv)] = 1
    return mask


def observation(tv: TableView) -> np.ndarray:
    """The env's ``observation`` (float32, ``OBS_SIZE``) from the view alone."""
    return encode(tv)


def move_of(tv: TableView, action: int) -> tuple:
    """Action id ``action`` of the seat to move, in the engine's terms: ``("draw", source)``
    (``engine.DECK`` or the absolute player whose pile), ``("choose", card)`` (the first half of a
    play; the env's two-step play), ``("play", card, row, col)`` (``pending``: the chosen card) or
    ``("discard", card)``. ``ValueError`` for an id the view does not allow."""
    action = int(action)
    if action not in legal_ids(tv):
        raise ValueError(f"action {action} is not legal in this view (decision {tv.decision.name})")
    view = tv.view
    if action == DRAW_DECK:
        return ("draw", DECK)
    if action < PLAY_CARD:
        return ("draw", view.seat(action - DRAW_DISCARD))
    if action < PLAY_CELL:
        return ("choose", action - PLAY_CARD)
    if action < DISCARD:
        return ("play", tv.pending, *cell_of(view.arboretums[0], action))
    return ("discard", action - DISCARD)


def determinize(view: Union[TableView, PlayerView], rng: Union[np.random.Generator, int, None] = None) -> GameState:
    """A full ``GameState`` consistent with what the seat sees: its hand, the cards known to be
    in other hands, the piles, the arboretums, the deck size, the hand sizes, the phase, turn and
    mover; the hidden cards (other hands, the deck, the mover's deck draws this turn) dealt at
    random from the cards not seen. ``engine.observe(state, view.observer)`` equals the view. The
    state has no history; its starting player is the one implied by the turn and the mover; a
    ``TableView``'s pending card is not part of a state (pass it on with the state).
    ``ValueError`` when the view is inconsistent (the cards do not add up)."""
    pv = view.view if isinstance(view, TableView) else view
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    n, observer = pv.num_players, pv.observer
    absolute = [pv.seat(k) for k in range(n)]
    unseen = unseen_cards(pv)
    unseen = [unseen[i] for i in rng.permutation(len(unseen))]
    hands: list = [None] * n
    hands[observer] = sorted(pv.hand)
    for k in range(1, n):
        missing = pv.hand_sizes[k] - len(pv.known[k])
        if missing < 0 or missing > len(unseen):
            raise ValueError(f"inconsistent view: seat +{k} holds {pv.hand_sizes[k]} cards, "
                             f"{len(pv.known[k])} known, {len(unseen)} unseen left")
        hands[absolute[k]] = sorted(set(pv.known[k]) | set(unseen[:missing]))
        del unseen[:missing]
    if len(unseen) != pv.deck_size:
        raise ValueError(f"inconsistent view: {len(unseen)} unseen cards for a deck of {pv.deck_size}")
    mover = absolute[pv.to_move]
    drawn = list(pv.drawn)
    if pv.to_move != 0 and pv.phase in (Phase.DRAW_SECOND, Phase.PLAY, Phase.DISCARD):
        count = pv.hand_sizes[pv.to_move] - HAND_SIZE + (pv.phase is Phase.DISCARD)
        hidden = [c for c in hands[mover] if c not in pv.known[pv.to_move] and c not in drawn]
        drawn += hidden[:max(0, min(count - len(drawn), len(hidden)))]
    data = {
        "config": {"num_players": n, "species": list(pv.species),
                   "starting_player": (mover - pv.turn) % n},
        "deck": unseen,
        "hands": hands,
        "discards": [list(pv.discards[(p - observer) % n]) for p in range(n)],
        "arboretums": [[[*unpack_cell(c), card] for c, card in pv.arboretums[(p - observer) % n].items()]
                       for p in range(n)],
        "arboretum_order": [list(pv.arboretums[(p - observer) % n].values()) for p in range(n)],
        "known": [sorted(pv.known[(p - observer) % n]) for p in range(n)],
        "drawn": drawn,
        "phase": int(pv.phase),
        "current_player": mover,
        "turn": pv.turn,
        "last_turn": pv.deck_size == 0,
        "history": [],
    }
    try:
        return state_from_dict(data)
    except ValueError as exc:
        raise ValueError(f"inconsistent view: {exc}") from None


class SeatTracker:
    """The view of one seat, kept from the public moves of a game (see the module docstring).

    Made at the deal (``hand``: the seat's 7 cards; ``starting_player``: the absolute index of
    the first player), then told every move in turn order with :meth:`draw`, :meth:`play` and
    :meth:`discard` (or :meth:`apply`); players are absolute indexes. Only a draw by this seat from
    the deck needs a card (the one drawn); a card taken from a pile is the pile's top card.
    :meth:`view` gives the seat's ``TableView``, equal to the env's ``table_view`` of that seat.
    Moves out of turn order raise ``ValueError`` (the tracker is out of sync with the game).
    """

    def __init__(self, seat: int, num_players: int, species, starting_player: int, hand) -> None:
        species = tuple(sorted(int(s) for s in species))
        hand = {int(c) for c in hand}
        if len(hand) != HAND_SIZE or not 0 <= seat < num_players or not 0 <= starting_player < num_players:
            raise ValueError("SeatTracker: a seat and starting player of the game, and a hand of 7 cards")
        self.seat, self.num_players, self.species = seat, num_players, species
        self.hand = hand
        n = num_players
        self.arboretums: list[dict[int, int]] = [{} for _ in range(n)]
        self.discards: list[list[int]] = [[] for _ in range(n)]
        self.known: list[set[int]] = [set() for _ in range(n)]
        self.hand_sizes = [HAND_SIZE] * n
        self.deck_size = NUM_RANKS * len(species) - HAND_SIZE * n
        self.drawn: list[Optional[int]] = []
        """This turn's draws; ``None`` for another seat's card from the deck."""
        self.phase, self.current, self.turn, self.last_turn = Phase.DRAW_FIRST, starting_player, 0, False

    def _check(self, player: int, phases: tuple, what: str) -> None:
        if player != self.current or self.phase not in phases:
            raise ValueError(f"SeatTracker: {what} by player {player} out of order "
                             f"(player {self.current} is to move, phase {self.phase.name})")

    def _no_source(self) -> bool:
        return not self.deck_size and not any(self.discards)

    def draw(self, player: int, source: int, card: Optional[int] = None) -> None:
        """``player`` draws from the deck (``source`` = ``engine.DECK``) or from player
        ``source``'s pile; ``card``: the card, needed when this seat draws from the deck."""
        self._check(player, (Phase.DRAW_FIRST, Phase.DRAW_SECOND), "a draw")
        if source == DECK:
            if not self.deck_size:
                raise ValueError("SeatTracker: a draw from an empty deck")
            if player == self.seat and card is None:
                raise ValueError("SeatTracker: this seat drew from the deck: pass the card drawn")
            card = int(card) if player == self.seat else None
            self.deck_size -= 1
            self.last_turn = self.deck_size == 0
        else:
            card = self.discards[source].pop()
            self.known[player].add(card)
        if player == self.seat:
            self.hand.add(card)
        self.hand_sizes[player] += 1
        self.drawn.append(card)
        if self.phase is Phase.DRAW_FIRST and not self._no_source():
            self.phase = Phase.DRAW_SECOND
        else:
            self.phase = Phase.PLAY

    def play(self, player: int, card: int, row: int, col: int) -> None:
        """``player`` plays ``card`` on engine cell (row, col) of its arboretum."""
        self._check(player, (Phase.PLAY,), "a play")
        self._lose(player, card)
        self.arboretums[player][pack_cell(row, col)] = card  # in placement order, as the engine's
        self.phase = Phase.DISCARD

    def discard(self, player: int, card: int) -> None:
        """``player`` discards ``card``, ending its turn."""
        self._check(player, (Phase.DISCARD,), "a discard")
        self._lose(player, card)
        self.discards[player].append(card)
        self.turn += 1
        self.drawn = []
        if self.last_turn:
            self.phase = Phase.GAME_OVER
            return
        self.current = (player + 1) % self.num_players
        self.phase = Phase.PLAY if self._no_source() else Phase.DRAW_FIRST

    def _lose(self, player: int, card: int) -> None:
        self.hand_sizes[player] -= 1
        self.known[player].discard(card)
        if player == self.seat:
            self.hand.discard(card)

    def apply(self, player: int, move, card: Optional[int] = None) -> None:
        """A move as the engine records it (an entry of ``GameState.history``:
        ``(kind, card, row, col, source)``, kinds 0 draw, 1 play, 2 discard; a draw's card is not
        in it: pass ``card`` for this seat's draw from the deck)."""
        kind, move_card, row, col, source = move
        if kind == 0:
            self.draw(player, source, card)
        elif kind == 1:
            self.play(player, move_card, row, col)
        elif kind == 2:
            self.discard(player, move_card)
        else:
            raise ValueError(f"SeatTracker: unknown move kind {kind!r}")

    def view(self, pending: Optional[int] = None) -> TableView:
        """The seat's ``TableView``; ``pending``: the card this seat chose to play (its own
        two-step play), only while it is to move in PLAY. Equal to the env's ``table_view`` of
        the seat, except one field off turn: while another seat plays, its decision here stays
        PLAY_CARD (the env shows PLAY_CELL once that seat has chosen its card, a step no game
        server reports); on turn, where agents act, the whole view is equal."""
        n, me = self.num_players, self.seat
        order = [(me + k) % n for k in range(n)]
        if self.current == me:
            drawn = tuple(self.drawn)
        else:
            seen = self.known[self.current]
            drawn = tuple(c for c in self.drawn if c is not None and c in seen)
        pv = PlayerView(observer=me, num_players=n, species=self.species, phase=self.phase,
                        to_move=(self.current - me) % n, turn=self.turn, hand=self.hand, drawn=drawn,
                        arboretums=tuple(self.arboretums[p] for p in order),
                        discards=tuple(self.discards[p] for p in order),
                        known=tuple(self.known[p] for p in order),
                        hand_sizes=tuple(self.hand_sizes[p] for p in order), deck_size=self.deck_size)
        own = self.current == me
        pseudo = _Phase(self.phase)
        return TableView(pv, decision_of(pseudo, pending if own else None), pending if own else None)


class _Phase:
    """What ``actions.decision_of`` reads of a state: its phase."""

    __slots__ = ("phase",)

    def __init__(self, phase: Phase) -> None:
        self.phase = phase
