"""``AfterstateAgent``: a learned value of positions, played by trying every choice (one ply).

At each decision of its turn the agent builds every position its choice can lead to (each draw
source; each hand card on each free cell with each discard) and plays the one its value rates
best. A deck draw is rated by the mean value over a few unseen cards (``deck_samples``, drawn
from the agent's own generator). The play, its cell and the discard are chosen together at the
``PLAY_CARD`` decision and played out at the next two.

**The value** is a sum over the species in play of one small network ``f`` applied to each
species' features (the score is a sum over species, so the value is too):
``V = sum_i f(x_i)``, ``f``: ``FEATURES -> hidden -> hidden -> 1`` (ReLU). It estimates the final
score margin / 20 of the seat whose position it is (own total minus the other's).

**The features** of species slot ``i`` (``SPECIES_FEATURES``, in order) come from the seat's own
view (``PlayerView``) and nothing else: what the rules score (best paths, hand sums with '1
cancels 8'), what is visible (arboretums, discard pile tops, cards known in the other's hand)
and what is not (the count and rank sum of unseen cards). Cards hidden from the seat are never
read: the tests reshuffle them and compare.

2 players only. The file format (a safetensors file, ``FORMAT`` in its description) and
:func:`load_value_file` / :func:`save_value_file` are at the end. Layer: agents (numpy and
safetensors; torch only in ``training``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ..actions import DISCARD, DRAW_DECK, DRAW_DISCARD, PLAY_CARD, Decision, cell_id
from ..engine.cards import NUM_RANKS, unpack_cell
from ..engine.paths import PathTables
from ..engine.rules import frontier
from ..engine.view import unseen_cards
from ..errors import UserError
from ..fileio import atomic_write_bytes
from ..table_view import TableView
from ..versions import check_versions, current_versions
from .base import Agent, legal_actions

SPECIES_FEATURES: tuple[tuple[str, str], ...] = (
    ("own_points", "best path points of the species in the own arboretum / 20"),
    ("own_cards", "cards of the species in the own arboretum / 8"),
    ("other_points", "the same in the other player's arboretum / 20"),
    ("other_cards", "cards of the species in the other player's arboretum / 8"),
    ("hand_sum", "rank sum of the species in hand / 36 (an 8 counts 0 if the other is known to hold the 1)"),
    ("hand_one", "1 if the hand holds the species' 1"),
    ("hand_eight", "1 if the hand holds the species' 8"),
    ("hand_cards", "cards of the species in hand / 8"),
    ("other_known_sum", "rank sum of the cards known in the other's hand / 36 ('1 cancels 8' likewise)"),
    ("unseen_cards", "cards of the species the seat has not seen / 8"),
    ("unseen_sum", "their rank sum / 36"),
    ("sum_ahead", "1 if hand_sum > other_known_sum"),
    ("sum_level", "1 if hand_sum == other_known_sum"),
    ("own_pile_top", "rank / 8 of the own discard pile's top card if it is of the species, else 0"),
    ("other_pile_top", "the same for the other's discard pile"),
    ("deck", "cards left in the deck / 80 (the same for every species)"),
    ("hand_size", "cards in hand / 9 (the same for every species)"),
    ("hand_reach", "the most one hand card adds to the species' best path, played on the own "
                   "arboretum as it stands / 20"),
)
FEATURES = len(SPECIES_FEATURES)


def feature_table() -> str:
    """``SPECIES_FEATURES`` as a markdown table (docs/afterstate.md holds it verbatim)."""
    rows = [f"| {k} | `{name}` | {meaning} |" for k, (name, meaning) in enumerate(SPECIES_FEATURES)]
    return "\n".join(["| # | feature | meaning |", "|---|---|---|", *rows])
FORMAT = "arboretum-afterstate/1"
META_KEY = "arboretum"
LAYERS = ("l1", "l2", "l3")


class AfterstateFileError(UserError):
    """A missing, damaged or mismatched afterstate value file."""


def rank_value(card: int) -> int:
    return (card & 7) + 1


# ----------------------------------------------------------------------------- features
class Position:
    """What one decision of the seat knows and its choice does not change (``view``: the
    seat's ``PlayerView``, the seat itself at index 0, the other at index 1)."""

    def __init__(self, view) -> None:
        if view.num_players != 2:
            raise ValueError(f"AfterstateAgent plays 2-player games, not {view.num_players}")
        self.view = view
        self.species = species = tuple(view.species)
        self.slot = {s: i for i, s in enumerate(species)}
        self.own = PathTables(view.arboretums[0], species)
        self.base = np.array(self.own.base, float)
        self.other_points = np.array(PathTables(view.arboretums[1], species).base, float)
        self.own_cards = self._count(view.arboretums[0].values())
        self.other_cards = self._count(view.arboretums[1].values())
        self.pool = unseen_cards(view)
        self.unseen_cards = self._count(self.pool)
        self.unseen_sum = self._count(self.pool, rank_value)
        self.other_known = frozenset(view.known[1])
        self.deck = view.deck_size / 80.0
        self.cells = sorted(frontier(view.arboretums[0])) or [0]
        self._reach: dict[int, np.ndarray] = {}

    def _count(self, cards, weight: Callable[[int], int] = lambda c: 1) -> np.ndarray:
        out = np.zeros(len(self.species))
        for c in cards:
            out[self.slot[c >> 3]] += weight(c)
        return out

    def reach(self, card: int) -> np.ndarray:
        """Per species, the most its best path grows if ``card`` goes on the best free cell."""
        out = self._reach.get(card)
        if out is None:
            out = np.zeros(len(self.species))
            for cell in self.cells:
                for i, points in self.own.improvements(cell, card).items():
                    out[i] = max(out[i], points - self.base[i])
            self._reach[card] = out
        return out

    def hand_part(self, hand, own_top: int, other_top: int, unseen=None) -> np.ndarray:
        """``[species, FEATURES - 2]``: every feature but ``own_points`` and ``own_cards``, for a
        hand and pile tops (``-1``: an empty pile) and, after a deck draw, the unseen counts."""
        n = len(self.species)
        hand_sum, one, eight, count, reach = (np.zeros(n) for _ in range(5))
        for c in hand:
            i, r = self.slot[c >> 3], rank_value(c)
            count[i] += 1
            one[i] += r == 1
            if r == NUM_RANKS:
                eight[i] = 1
                r = 0 if (c - 7) in self.other_known else r
            hand_sum[i] += r
            reach = np.maximum(reach, self.reach(c))
        known = np.zeros(n)
        for c in self.other_known:
            r = rank_value(c)
            known[self.slot[c >> 3]] += 0 if (r == NUM_RANKS and (c - 7) in hand) else r
        tops = np.zeros((2, n))
        for k, top in enumerate((own_top, other_top)):
            if top >= 0:
                tops[k, self.slot[top >> 3]] = rank_value(top) / 8
        unseen_cards, unseen_sum = (self.unseen_cards, self.unseen_sum) if unseen is None else unseen
        columns = [self.other_points / 20, self.other_cards / 8, hand_sum / 36, one, eight, count / 8,
                   known / 36, unseen_cards / 8, unseen_sum / 36, (hand_sum > known) * 1.0,
                   (hand_sum == known) * 1.0, tops[0], tops[1], np.full(n, self.deck),
                   np.full(n, len(hand) / 9), reach / 20]
        assert len(columns) == FEATURES - 2
        return np.stack(columns, axis=1)

    @staticmethod
    def assemble(own_points: np.ndarray, own_cards: np.ndarray, hand_part: np.ndarray) -> np.ndarray:
        """``[..., species, FEATURES]`` from the own arboretum's part and ``hand_part``."""
        own = np.stack(np.broadcast_arrays(own_points / 20, own_cards / 8), axis=-1)
        out = np.concatenate([np.broadcast_to(own, hand_part.shape[:-1] + (2,)), hand_part], axis=-1)
        assert out.shape[-1] == FEATURES
        return out

    def tops(self) -> list[int]:
        return [pile[-1] if pile else -1 for pile in self.view.discards]

    def now(self) -> np.ndarray:
        """The features of the position as it stands."""
        tops = self.tops()
        return self.assemble(self.base, self.own_cards, self.hand_part(self.view.hand, *tops))


# ----------------------------------------------------------------------------- the value
class Value:
    """``V(x) = sum over species of f(x_i)`` in numpy, from the weights ``l1.weight`` ...
    ``l3.bias`` (``torch.nn.Linear`` layout: ``[out, in]``)."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.layers = [(np.ascontiguousarray(np.asarray(weights[f"{n}.weight"], np.float32).T),
                        np.asarray(weights[f"{n}.bias"], np.float32)) for n in LAYERS]
        if self.layers[0][0].shape[0] != FEATURES or self.layers[-1][0].shape[1] != 1:
            raise ValueError(f"value weights: expected {FEATURES} features in and 1 value out, got "
                             f"{self.layers[0][0].shape[0]} in and {self.layers[-1][0].shape[1]} out")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``x [..., species, FEATURES]`` -> ``[...]`` (in float32, as the network was trained)."""
        h = np.asarray(x, np.float32)
        for k, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h[..., 0].sum(-1)


# ----------------------------------------------------------------------------- the agent
_CHOICES = (Decision.DRAW_FIRST, Decision.DRAW_SECOND, Decision.PLAY_CARD)
"""The decisions at which the agent values positions (``PLAY_CELL`` and ``DISCARD`` play its plan)."""


class AfterstateAgent(Agent):
    """One-ply play with a learned ``Value``. ``epsilon``: the chance of a uniform choice at a
    decision (training only); ``record(seat, x)``, if given, receives the features of every
    position the agent reaches on its turn: after each draw (as drawn) and after its play and
    discard (as chosen)."""

    name = "afterstate"

    def __init__(self, value: Value, seed: Optional[int] = None, epsilon: float = 0.0,
                 deck_samples: int = 6, record: Optional[Callable[[int, np.ndarray], None]] = None,
                 metadata: Optional[dict] = None) -> None:
        self.value, self.epsilon, self.deck_samples, self.record = value, epsilon, deck_samples, record
        self.rng = np.random.default_rng(seed)
        self.metadata = metadata or {}
        self._plan: Optional[tuple[int, int, int]] = None

    def seed(self, seed: Optional[int] = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask, view: Optional[TableView] = None) -> int:
        legal = legal_actions(action_mask)
        if not isinstance(view, TableView):
            raise TypeError(f"AfterstateAgent.act needs the acting seat's TableView, got {type(view).__name__}")
        decision = view.decision
        pos = Position(view.view) if decision in _CHOICES else None  # the cell and discard follow the plan
        if self.record is not None and decision in (Decision.DRAW_SECOND, Decision.PLAY_CARD):
            self.record(view.view.observer, pos.now())  # the position its draw led to
        if decision in (Decision.DRAW_FIRST, Decision.DRAW_SECOND):
            action = self._draw(pos, action_mask)
        elif decision is Decision.PLAY_CARD:
            card, cell, discard, x = self._play(pos)
            self._plan = (card, cell, discard)
            if self.record is not None:
                self.record(view.view.observer, x)
            action = PLAY_CARD + card
        elif decision is Decision.PLAY_CELL and self._plan and self._plan[0] == view.pending:
            action = cell_id(view.view.arboretums[0], *unpack_cell(self._plan[1]))
        elif decision is Decision.DISCARD and self._plan and self._plan[2] in view.view.hand:
            action = DISCARD + self._plan[2]
        else:
            raise ValueError(f"AfterstateAgent: no plan for decision {decision.name} (it chooses the "
                             f"card, cell and discard together at PLAY_CARD)")
        if action not in legal:
            raise RuntimeError(f"AfterstateAgent chose illegal action {action} in {decision.name}")
        return int(action)

    def _explore(self, n: int) -> Optional[int]:
        return int(self.rng.integers(n)) if self.epsilon and self.rng.random() < self.epsilon else None

    def _draw(self, pos: Position, mask) -> int:
        view, hand, tops = pos.view, set(pos.view.hand), pos.tops()
        options, values = [], []
        for k in range(2):
            if mask[DRAW_DISCARD + k]:
                pile = view.discards[k]
                after = list(tops)
                after[k] = pile[-2] if len(pile) > 1 else -1
                x = pos.assemble(pos.base, pos.own_cards, pos.hand_part(hand | {pile[-1]}, *after))
                options.append(DRAW_DISCARD + k)
                values.append(float(self.value(x)))
        if mask[DRAW_DECK]:
            pool = pos.pool
            picks = self.rng.choice(len(pool), size=min(self.deck_samples, len(pool)), replace=False) if pool else []
            xs = []
            for j in picks:
                card, i = pool[j], pos.slot[pool[j] >> 3]
                unseen = (pos.unseen_cards.copy(), pos.unseen_sum.copy())
                unseen[0][i] -= 1
                unseen[1][i] -= rank_value(card)
                xs.append(pos.assemble(pos.base, pos.own_cards, pos.hand_part(hand | {card}, *tops, unseen)))
            options.append(DRAW_DECK)
            values.append(float(self.value(np.stack(xs)).mean()) if xs else 0.0)
        pick = self._explore(len(options))
        return options[int(np.argmax(values)) if pick is None else pick]

    def _play(self, pos: Position) -> tuple[int, int, int, np.ndarray]:
        """The best (card, cell, discard) and the features of the position it leads to."""
        hand = sorted(pos.view.hand)
        other_top = pos.tops()[1]
        pairs, parts = [], []  # (card, discard) and its hand part
        for card in hand:
            rest = [c for c in hand if c != card]
            for discard in rest or [-1]:
                pairs.append((card, discard))
                parts.append(pos.hand_part([c for c in rest if c != discard], discard, other_top))
        places, owns = [], []  # (card, cell) and the own arboretum's part after it
        for card in hand:
            cards = pos.own_cards.copy()
            cards[pos.slot[card >> 3]] += 1
            for cell in pos.cells:
                points = pos.base.copy()
                for i, p in pos.own.improvements(cell, card).items():
                    points[i] = p
                places.append((card, cell))
                owns.append(np.stack([points / 20, cards / 8], axis=-1))
        of_card: dict[int, list[int]] = {}
        for q, (card, _) in enumerate(pairs):
            of_card.setdefault(card, []).append(q)
        p_index = [p for p, (card, _) in enumerate(places) for _ in of_card[card]]
        q_index = [q for card, _ in places for q in of_card[card]]
        x = np.concatenate([np.stack(owns)[p_index], np.stack(parts)[q_index]], axis=-1)
        pick = self._explore(len(x))
        j = int(np.argmax(self.value(x))) if pick is None else pick
        card, cell = places[p_index[j]]
        return card, cell, pairs[q_index[j]][1], x[j]


# ----------------------------------------------------------------------------- files
def _checksum(weights: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(weights):
        a = np.ascontiguousarray(weights[name], np.float32)
        digest.update(json.dumps([name, list(a.shape)]).encode())
        digest.update(a.tobytes())
    return "sha256:" + digest.hexdigest()


def save_value_file(path, weights: dict[str, np.ndarray], metadata: dict) -> Path:
    """Write the value's weights (float32) and a JSON description (``metadata`` plus the format,
    versions, feature names and checksum) as a safetensors file, atomically."""
    from safetensors.numpy import save

    arrays = {k: np.ascontiguousarray(v, np.float32) for k, v in weights.items()}
    Value(arrays)  # a file that would not load is never written
    description = {**metadata, "format": FORMAT, "versions": current_versions(),
                   "features": [name for name, _ in SPECIES_FEATURES], "checksum": _checksum(arrays)}
    path = Path(path)
    atomic_write_bytes(path, save(arrays, metadata={META_KEY: json.dumps(description)}))
    return path


def value_file_description(path) -> Optional[dict]:
    """The description of an afterstate value file, or None for any other file (read from the
    safetensors header: nothing in the file is run)."""
    try:
        with open(path, "rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            if not 0 < size < 1 << 24:
                return None
            header = json.loads(fh.read(size))
        description = json.loads(header.get("__metadata__", {}).get(META_KEY, "null"))
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    return description if isinstance(description, dict) and description.get("format") == FORMAT else None


def load_value_file(path) -> tuple[Value, dict]:
    """``(Value, description)`` of a value file; one ``AfterstateFileError`` line for anything
    wrong (not such a file, other versions or features, damaged weights)."""
    from safetensors.numpy import load_file

    description = value_file_description(path)
    if description is None:
        raise AfterstateFileError(f"{path}: not an afterstate value file")
    check_versions(description.get("versions"), str(path))
    if description.get("features") != [name for name, _ in SPECIES_FEATURES]:
        raise AfterstateFileError(f"{path}: its features are not this version's")
    try:
        weights = load_file(str(path))
        if _checksum(weights) != description.get("checksum"):
            raise AfterstateFileError(f"{path}: the weights do not match their checksum (damaged?)")
        return Value(weights), description
    except (OSError, ValueError, KeyError) as exc:
        raise AfterstateFileError(f"{path}: cannot read its weights ({exc})".splitlines()[0]) from None


def afterstate_agent(path, seed: Optional[int] = None) -> AfterstateAgent:
    value, description = load_value_file(path)
    return AfterstateAgent(value, seed=seed, metadata=description)
