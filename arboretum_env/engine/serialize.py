"""Full states from JSON-able dicts (the inverse of ``GameState.to_dict``), with validation."""

from __future__ import annotations

from ..errors import UserError

from .cards import CELL_LIMIT, NUM_CARDS, NUM_RANKS, pack_cell
from .config import ConfigError, GameConfig
from .state import GameState, Phase, place


class StateFormatError(UserError, ValueError):
    """A state dict that is malformed or inconsistent; the message names the problem."""


def _int_list(data: dict, key: str) -> list[int]:
    value = data.get(key)
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise StateFormatError(f"state field {key!r} must be a list of ints")
    return value


def state_from_dict(data: dict) -> GameState:
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
            order = orders[p] if orders is not None else [card for _, _, card in cells]
            arboretum, frontier = {}, {}
            for card in order:  # placement order: the frontier's order is the original one
                place(arboretum, frontier, placed[card], card)
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
    return s
