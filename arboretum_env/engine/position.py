"""Position documents: the score calculator's JSON format, read with validation and written
from any state.

```json
{"species": ["cassia", "dogwood", "jacaranda", "olive", "lilac", "maple"],
 "players": [{"hand": [{"species": "maple", "rank": 8}],
              "arboretum": [{"row": 0, "col": 0, "species": "oak", "rank": 3}]}]}
```

``parse_position`` refuses what no game reaches at scoring time (RULES.md): a species count other
than 6, 8 or 10 for 2, 3 or 4 players, a hand over 7 cards, an arboretum over 17, 15 or 13 cards.
"""

from __future__ import annotations

from ..errors import UserError, unreadable_reason

import json
from dataclasses import dataclass

from .cards import HAND_SIZE, NUM_RANKS, SPECIES, SPECIES_BY_PLAYERS, SPECIES_INDEX, make_card, pack_cell, species_of, rank_of, unpack_cell
from .scoring import ScoreResult, score_position
from .state import GameState


class PositionError(UserError, ValueError):
    """A malformed position document; the message names the problem and where it is."""


def max_arboretum(num_players: int) -> int:
    """The most cards an arboretum can hold at the end (RULES.md, "Numbers worth knowing"): a
    game has at most (deck after the deal) turns, one card planted per turn, shared out in
    turn order: 17 with 2 players, 15 with 3, 13 with 4."""
    turns = SPECIES_BY_PLAYERS[num_players] * NUM_RANKS - HAND_SIZE * num_players
    return -(-turns // num_players)


@dataclass(frozen=True)
class Position:
    species: tuple[int, ...]
    hands: tuple[frozenset[int], ...]
    arboretums: tuple[dict[int, int], ...]
    """Per player: packed cell -> card, translated so that the smallest row and col are 0."""
    offsets: tuple[tuple[int, int], ...]
    """Per player: (row, col) to add to an arboretum cell to get the document's coordinates."""

    def score(self) -> ScoreResult:
        result = score_position(self.hands, self.arboretums, self.species)
        return _shift_paths(result, self.offsets)


def _shift_paths(result: ScoreResult, offsets) -> ScoreResult:
    players = []
    for p, ps in enumerate(result.players):
        dr, dc = offsets[p]
        players.append(ps._replace(species={
            s: sc._replace(path=tuple((r + dr, c + dc) for r, c in sc.path)) for s, sc in ps.species.items()}))
    return result._replace(players=tuple(players))


def _card(entry, where: str, in_play: set[int]) -> int:
    if not isinstance(entry, dict):
        raise PositionError(f"{where}: a card must be an object with species and rank")
    for key in ("species", "rank"):
        if key not in entry:
            raise PositionError(f"{where}: missing key {key!r}")
    name, rank = entry["species"], entry["rank"]
    if not isinstance(name, str) or name not in SPECIES_INDEX:
        raise PositionError(f"{where}: unknown species {name!r}")
    if SPECIES_INDEX[name] not in in_play:
        raise PositionError(f"{where}: species {name!r} is not in play")
    if type(rank) is not int:
        raise PositionError(f"{where}: rank must be an integer 1..8, got {rank!r}")
    if not 1 <= rank <= NUM_RANKS:
        raise PositionError(f"{where}: rank {rank!r} is outside 1..8")
    return make_card(SPECIES_INDEX[name], rank)


def parse_position(doc) -> Position:
    """Validate a position document (already parsed from JSON) and return a ``Position``."""
    if not isinstance(doc, dict):
        raise PositionError("the position must be a JSON object")
    for key in ("species", "players"):
        if key not in doc:
            raise PositionError(f"missing key {key!r}")
    names = doc["species"]
    if not isinstance(names, list) or not names:
        raise PositionError("'species' must be a non-empty list of species names")
    species = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in SPECIES_INDEX:
            raise PositionError(f"species[{i}]: unknown species {name!r}")
        if SPECIES_INDEX[name] in species:
            raise PositionError(f"species[{i}]: species {name!r} listed twice")
        species.append(SPECIES_INDEX[name])
    players = doc["players"]
    if not isinstance(players, list) or not 2 <= len(players) <= 4:
        count = len(players) if isinstance(players, list) else f"a {type(players).__name__}, not a list"
        raise PositionError(f"'players' must list 2 to 4 players, got {count}")
    need = SPECIES_BY_PLAYERS[len(players)]
    if len(species) != need:
        raise PositionError(f"'species' lists {len(species)} species; {len(players)} players play "
                            f"with {need} (RULES.md)")
    in_play = set(species)
    seen: dict[int, str] = {}
    hands, arboretums, offsets = [], [], []

    def take(card: int, where: str) -> None:
        if card in seen:
            raise PositionError(f"{where}: {SPECIES[species_of(card)]} {rank_of(card)} "
                                f"appears twice (also at {seen[card]})")
        seen[card] = where

    for p, player in enumerate(players):
        if not isinstance(player, dict):
            raise PositionError(f"players[{p}]: a player must be an object with hand and arboretum")
        for key in ("hand", "arboretum"):
            if key not in player:
                raise PositionError(f"players[{p}]: missing key {key!r}")
            if not isinstance(player[key], list):
                raise PositionError(f"players[{p}].{key}: must be a list")
        if len(player["hand"]) > HAND_SIZE:
            raise PositionError(f"players[{p}].hand: {len(player['hand'])} cards; a hand holds at most "
                                f"{HAND_SIZE} when the game is scored")
        if len(player["arboretum"]) > max_arboretum(len(players)):
            raise PositionError(f"players[{p}].arboretum: {len(player['arboretum'])} cards; with "
                                f"{len(players)} players an arboretum holds at most "
                                f"{max_arboretum(len(players))}")
        hand = set()
        for i, entry in enumerate(player["hand"]):
            where = f"players[{p}].hand[{i}]"
            card = _card(entry, where, in_play)
            take(card, where)
            hand.add(card)
        cells: dict[tuple[int, int], int] = {}
        for i, entry in enumerate(player["arboretum"]):
            where = f"players[{p}].arboretum[{i}]"
            card = _card(entry, where, in_play)
            for key in ("row", "col"):
                if key not in entry:
                    raise PositionError(f"{where}: missing key {key!r}")
                if type(entry[key]) is not int:
                    raise PositionError(f"{where}: {key} must be an integer, got {entry[key]!r}")
            cell = (entry["row"], entry["col"])
            if cell in cells:
                raise PositionError(f"{where}: two cards on cell {list(cell)}")
            take(card, where)
            cells[cell] = card
        if cells and not _connected(cells):
            raise PositionError(f"players[{p}].arboretum: the cards are not orthogonally connected")
        r0 = min((r for r, _ in cells), default=0)
        c0 = min((c for _, c in cells), default=0)
        hands.append(frozenset(hand))
        arboretums.append({pack_cell(r - r0, c - c0): card for (r, c), card in cells.items()})
        offsets.append((r0, c0))
    return Position(tuple(species), tuple(hands), tuple(arboretums), tuple(offsets))


def _connected(cells: dict[tuple[int, int], int]) -> bool:
    start = next(iter(cells))
    seen, todo = {start}, [start]
    while todo:
        r, c = todo.pop()
        for n in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if n in cells and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(cells)


def _card_doc(card: int) -> dict:
    return {"species": SPECIES[species_of(card)], "rank": rank_of(card)}


def state_to_position(state: GameState) -> dict:
    """Any state as a position document (hands and arboretums of every player)."""
    players = []
    for p in range(state.num_players):
        arboretum = []
        for cell, card in state.arboretums[p].items():
            row, col = unpack_cell(cell)
            arboretum.append({"row": row, "col": col, **_card_doc(card)})
        players.append({"hand": [_card_doc(c) for c in sorted(state.hands[p])], "arboretum": arboretum})
    return {"species": [SPECIES[s] for s in state.species], "players": players}


def format_table(result: ScoreResult, species: tuple[int, ...]) -> str:
    """A readable table: points per species and player ('-' where the player has no right)."""
    n = len(result.players)
    width = max(len(SPECIES[s]) for s in species) + 2
    lines = ["species".ljust(width) + "".join(f"player {p}".rjust(10) for p in range(n))]
    for s in species:
        cells = []
        for ps in result.players:
            sc = ps.species[s]
            cells.append((f"{sc.points} ({len(sc.path)})" if sc.path else str(sc.points)) if sc.right else "-")
        lines.append(SPECIES[s].ljust(width) + "".join(c.rjust(10) for c in cells))
    lines.append("total".ljust(width) + "".join(str(ps.total).rjust(10) for ps in result.players))
    winners = ", ".join(f"player {w}" for w in result.winners)
    lines.append(("shared win: " if len(result.winners) > 1 else "winner: ") + winners)
    lines.append("('-': no right to score; (n): cards in the scored path)")
    return "\n".join(lines)


def score_command(path: str, text: bool = False) -> str:
    """What ``arboretum score PATH`` prints; raises ``PositionError`` on bad input."""
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a byte-order mark is taken as UTF-8 too
            doc = json.load(fh)
    except OSError as exc:
        raise PositionError(f"{path}: cannot read: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PositionError(f"{path}: not valid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit integer, nesting 5,000 deep
        raise PositionError(f"{path}: not a usable position: {unreadable_reason(exc)}") from None
    try:
        position = parse_position(doc)
    except PositionError as exc:
        raise PositionError(f"{path}: {exc}") from None
    result = position.score()
    return format_table(result, position.species) if text else json.dumps(result.to_dict())
