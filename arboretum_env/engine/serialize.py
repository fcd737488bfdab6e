"""Full states from JSON-able dicts (the inverse of ``GameState.to_dict``), with validation.

This module sits above ``state`` (it builds a ``GameState``); ``state`` does not import it.
"""

from __future__ import annotations

from ..errors import UserError

from .cards import CELL_LIMIT, FIRST_CARD_LIMIT, MAX_ARBORETUM_CARDS, NUM_CARDS, NUM_RANKS, pack_cell
from .config import ConfigError, GameConfig
from .rules import NEIGHBOURS, place
from .state import GameState, Phase


class StateFormatError(UserError, ValueError):
    """A state dict that is malformed or inconsistent; the message names the problem."""


def _int_list(data: dict, key: str) -> list[int]:
    value = data.get(key)
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise StateFormatError(f"state field {key!r} must be a list of ints")
    return value


def _card_lists(data: dict, key: str) -> list:
    value = data.get(key)
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, (list, tuple, set, frozenset)) and all(type(c) is int for c in v)
            for v in value):
        raise StateFormatError(f"state field {key!r} must be a list (one per player) of lists of ints")
    return value


def _placement_order(cells: list, p: int) -> list[int]:
    """The cards of ``cells`` (``[row, col, card]``) in breadth-first order from the first one:
    a placement order (each card next to an earlier one) of a connected arboretum."""
    by_cell = {pack_cell(r, c): card for r, c, card in cells}
    if not by_cell:
        return []
    start = pack_cell(cells[0][0], cells[0][1])
    order, seen = [start], {start}
    for cell in order:
        for offset in NEIGHBOURS:
            n = cell + offset
            if n in by_cell and n not in seen:
                seen.add(n)
                order.append(n)
    if len(order) != len(by_cell):
        raise StateFormatError(f"arboretum of player {p} is not orthogonally connected")
    return [by_cell[cell] for cell in order]


def state_from_dict(data: dict) -> GameState:
    """The state that ``GameState.to_dict`` wrote (exactly: ``state_from_dict(s.to_dict()) == s``);
    ``StateFormatError`` names what is malformed or inconsistent."""
    if not isinstance(data, dict):
        raise StateFormatError("a state must be a JSON object")
    missing = [k for k in ("config", "deck", "hands", "discards", "arboretums", "known", "drawn",
                           "phase", "current_player", "turn", "last_turn", "history") if k not in data]
    if missing:
        raise StateFormatError(f"state is missing {', '.join(missing)}")
    try:
        config = GameConfig.from_dict(data["config"])
    except (ConfigError, TypeError) as exc:
        raise StateFormatError(f"state config: {exc}") from None
    if config.species is None or config.starting_player is None:
        raise StateFormatError("state config must name its species and starting player")
    n = config.num_players
    s = GameState()
    s.num_players, s.species, s.starting_player = n, config.species, config.starting_player
    s.seed = data.get("seed")
    try:
        s.setup = None if data.get("setup") is None else GameConfig.from_dict(data["setup"])
    except (ConfigError, TypeError) as exc:
        raise StateFormatError(f"state setup: {exc}") from None
    s.deck = list(_int_list(data, "deck"))
    s.drawn = list(_int_list(data, "drawn"))
    for key in ("hands", "discards", "known"):
        _card_lists(data, key)
    try:
        s.hands = [set(h) for h in data["hands"]]
        s.discards = [list(d) for d in data["discards"]]
        s.known = [set(k) for k in data["known"]]
        orders = data.get("arboretum_order")
        s.arboretums, s.frontier = [], []
        for p, cells in enumerate(data["arboretums"]):
            placed = {card: pack_cell(r, c) for r, c, card in cells}
            if len(placed) != len(cells) or any(
                    not (-CELL_LIMIT <= r <= CELL_LIMIT and -CELL_LIMIT <= c <= CELL_LIMIT)
                    for r, c, _ in cells):
                raise StateFormatError(f"arboretum of player {p} has repeated cards or cells out of range")
            if len(cells) > MAX_ARBORETUM_CARDS:
                raise StateFormatError(f"arboretum of player {p} has {len(cells)} cards; "
                                       f"no game reaches more than {MAX_ARBORETUM_CARDS}")
            connected = _placement_order(cells, p)
            order = orders[p] if orders is not None else connected
            # a card within +-FIRST_CARD_LIMIT (the first one's bound) keeps every cell the
            # arboretum can reach within +-CELL_LIMIT (at most 17 connected cards)
            if cells and not any(-FIRST_CARD_LIMIT <= r <= FIRST_CARD_LIMIT
                                 and -FIRST_CARD_LIMIT <= c <= FIRST_CARD_LIMIT for r, c, _ in cells):
                raise StateFormatError(f"arboretum of player {p} has no card within "
                                       f"+-{FIRST_CARD_LIMIT} (where its first card goes)")
            arboretum, frontier = {}, {}
            for card in order:  # placement order: the frontier's order is the original one
                cell = placed.get(card)
                if cell is None or (arboretum and cell not in frontier):
                    raise StateFormatError(
                        f"arboretum_order of player {p} is not a placement order of its cards")
                place(arboretum, frontier, cell, card)
            if len(arboretum) != len(cells):
                raise StateFormatError(f"arboretum_order of player {p} does not match its cards")
            s.arboretums.append(arboretum)
            s.frontier.append(frontier)
        s.history = [tuple(a) for a in data["history"]]
        s.phase = Phase(data["phase"])
    except StateFormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise StateFormatError(f"malformed state: {exc}") from None
    s.current_player, s.turn, s.last_turn = data["current_player"], data["turn"], bool(data["last_turn"])
    if not (len(s.hands) == len(s.discards) == len(s.arboretums) == len(s.known) == n):
        raise StateFormatError(f"state needs one hand, pile, arboretum and known set per player ({n})")
    if type(s.current_player) is not int or not 0 <= s.current_player < n:
        raise StateFormatError(f"current_player must be in 0..{n - 1}")
    everything = list(s.deck)
    for p in range(n):
        everything += list(s.hands[p]) + s.discards[p] + list(s.arboretums[p].values())
    expected = sorted(sp * NUM_RANKS + r for sp in s.species for r in range(NUM_RANKS))
    if sorted(everything) != expected or any(not 0 <= c < NUM_CARDS for c in everything):
        raise StateFormatError("the cards of the state are not exactly the cards of the species in play")
    if s.last_turn != (not s.deck):
        raise StateFormatError("last_turn must be true exactly when the deck is empty "
                               "(the game ends when the last card of the deck is drawn)")
    if s.phase in (Phase.DRAW_FIRST, Phase.DRAW_SECOND) and not s.deck and not any(s.discards):
        raise StateFormatError(f"phase {s.phase.name} but no draw source has a card "
                               "(a draw with no source is skipped)")
    return s
