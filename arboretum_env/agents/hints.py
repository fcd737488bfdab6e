"""Optional observation hints: what a careful player works out before each decision.

Layer: agents (it asks the heuristic agents for their advice; the policy agent, the wrapper
and training import it). ``SingleAgentEnv(..., hints=True)`` (and ``hints: true`` in a training
config) appends ``HINT_SIZE`` values to the observation (after the standard sections), written
only for the player to move; ``with_hints(obs, table_view, HintWriter(), mask)`` does it for any caller:

| section | width | meaning (scaled by / 20, clipped to 1) |
|---|---|---|
| ``hint_play_gains`` | 80 | during PLAY_CARD, per card in hand: the largest growth of the own best-path points (all species in play summed) over the legal cells |
| ``hint_give_away`` | 80 | during DISCARD, per card in hand: the largest growth of any opponent's best-path points if that opponent took the card and placed it on its best cell |
| ``hint_pile_gains`` | 4 | during DRAW_FIRST / DRAW_SECOND, per seat: the growth of the own best-path points that the top card of that seat's discard pile could bring |
| ``hint_advice`` | 489 | one-hot: the action the advisor (``GreedyAgent``, ``GreedyPlusAgent`` or ``TempoAgent``) would take (all zeros when not on turn) |

The advisor is named when the writer is made (``HintWriter("tempo")``; default ``"greedy"``);
policy files record :func:`hint_spec` (layout version, sizes, scale, the advisor's name and
parameters) and are refused where this version writes other hints (:func:`check_hint_spec`).
The advice makes the heuristic a prior that a policy can follow and learn to overrule (residual
policy learning); the other sections are the raw quantities behind it.

They cost time (an exact "what if this card went there" for every card and cell, through
:class:`engine.paths.PathTables`), so they are off by default; the shipped agent is
trained with them on. Hidden information is respected: they use only the observer's hand and
public cards.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from typing import Mapping

import numpy as np

from ..actions import NUM_ACTIONS, Decision
from ..engine import NUM_CARDS
from ..engine.paths import PathTables
from ..engine.rules import frontier
from ..errors import UserError
from ..table_view import TableView
from .greedy import GreedyAgent
from .greedy_plus import GreedyPlusAgent
from .tempo import TempoAgent

HINT_SECTIONS: list[tuple[str, int, str]] = [
    ("hint_play_gains", NUM_CARDS, "PLAY_CARD: per hand card, best own best-path growth / 20"),
    ("hint_give_away", NUM_CARDS, "DISCARD: per hand card, best opponent best-path growth / 20"),
    ("hint_pile_gains", 4, "DRAW: per seat's pile top, own best-path growth / 20"),
    ("hint_advice", NUM_ACTIONS, "one-hot: the advisor agent's choice for the player to move"),
]
ADVISORS = {"greedy": GreedyAgent, "greedy_plus": GreedyPlusAgent, "tempo": TempoAgent}
"""The heuristic agents whose choice the advice section can carry."""
HINT_SIZE = sum(width for _, width, _ in HINT_SECTIONS)
SCALE = 20.0
_PLAY, _GIVE, _PILE, _ADVICE = 0, NUM_CARDS, 2 * NUM_CARDS, 2 * NUM_CARDS + 4
ADVICE_OFFSET = HINT_SIZE - NUM_ACTIONS
"""Where the advice one-hot starts inside the hints (it is their last section)."""
HINT_LAYOUT_VERSION = 1
"""Bumped whenever what the hint values mean changes (sections, order, scale, gain rule)."""
CACHE_SIZE = 16
"""Placement tables kept by a ``HintWriter`` (least recently used dropped): enough for the
arboretums of the tables it is writing for, bounded however many games it sees."""


class HintSpecError(UserError):
    """A policy that reads hints written differently from this version's."""


def advisor_params(advisor: str) -> dict:
    """The constructor parameters (``seed`` aside) of the advisor, as a default instance holds
    them: what makes its advice what it is."""
    if advisor not in ADVISORS:
        raise HintSpecError(f"unknown hint advisor {advisor!r}: expected one of {', '.join(ADVISORS)}")
    cls = ADVISORS[advisor]
    agent = cls()
    params = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for name, p in inspect.signature(init).parameters.items():
            if name in ("self", "seed") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            value = getattr(agent, name, p.default)
            if isinstance(value, (bool, int, float, str)) or value is None:
                params[name] = value
    return dict(sorted(params.items()))


def hint_spec(advisor: str) -> dict:
    """What a policy that reads hints was trained on; stored in policy files (``hints``)."""
    return {"layout": HINT_LAYOUT_VERSION, "size": HINT_SIZE, "scale": SCALE,
            "sections": [[name, width] for name, width, _ in HINT_SECTIONS],
            "advisor": advisor, "advisor_params": advisor_params(advisor)}


def check_hint_spec(found, what: str) -> str:
    """The advisor named by a stored :func:`hint_spec`; ``HintSpecError`` (one line naming
    every difference) unless this version writes the same hints."""
    if not isinstance(found, dict) or not isinstance(found.get("advisor"), str):
        raise HintSpecError(f"{what}: its hint description is missing or malformed")
    ours = hint_spec(found["advisor"])
    diffs = [f"{key} {found.get(key)!r} (this version: {ours[key]!r})"
             for key in ours if found.get(key) != ours[key]]
    if diffs:
        raise HintSpecError(f"{what} reads hints written differently: " + "; ".join(diffs))
    return found["advisor"]


class HintWriter:
    """Writes the hint sections; keeps the placement tables of the last ``CACHE_SIZE``
    arboretums it saw (an arboretum only grows, so its size tells whether they are current)."""

    def __init__(self, advisor: str = "greedy") -> None:
        if advisor not in ADVISORS:
            raise ValueError(f"unknown hint advisor {advisor!r}: expected one of {', '.join(ADVISORS)}")
        self._tables: OrderedDict[int, tuple[int, tuple, PathTables]] = OrderedDict()
        self.advisor = advisor
        self._advisor = ADVISORS[advisor]()

    def _tables_of(self, arboretum: Mapping[int, int], species) -> PathTables:
        key = id(arboretum)  # safe: a cached entry holds the arboretum, so its id is not reused
        species = tuple(species)
        cached = self._tables.get(key)
        if (cached is not None and cached[0] == len(arboretum) and cached[1] == species
                and cached[2].arboretum is arboretum):
            self._tables.move_to_end(key)
            return cached[2]
        tables = PathTables(arboretum, species)
        self._tables[key] = (len(arboretum), species, tables)
        self._tables.move_to_end(key)
        while len(self._tables) > CACHE_SIZE:
            self._tables.popitem(last=False)
        return tables

    def best_gain(self, arboretum: Mapping[int, int], frontier, species, card: int) -> int:
        """Largest growth of the summed best-path points if ``card`` goes on a free cell."""
        if not arboretum:
            return 0
        tables = self._tables_of(arboretum, species)
        base = tables.base
        best = 0
        for cell in frontier:
            gain = sum(v - base[si] for si, v in tables.improvements(cell, card).items())
            if gain > best:
                best = gain
        return best

    def write(self, tv: TableView, mask: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The hint values of ``tv`` (``mask``: the legal actions of the observer; written into
        ``out`` if given)."""
        if out is None:
            out = np.zeros(HINT_SIZE, np.float32)
        assert out.shape == (HINT_SIZE,), out.shape
        out[:] = 0.0
        view = tv.view
        if view.to_move != 0:
            return out
        species = view.species
        frontiers = [free_cells(a) for a in view.arboretums]
        own, own_frontier = view.arboretums[0], frontiers[0]
        if tv.decision is Decision.PLAY_CARD:
            for card in view.hand:
                out[_PLAY + card] = self.best_gain(own, own_frontier, species, card)
        elif tv.decision is Decision.DISCARD:
            for card in view.hand:
                out[_GIVE + card] = max(
                    self.best_gain(view.arboretums[k], frontiers[k], species, card)
                    for k in range(1, view.num_players))
        elif tv.decision in (Decision.DRAW_FIRST, Decision.DRAW_SECOND):
            for k in range(view.num_players):
                pile = view.discards[k]
                if pile:
                    out[_PILE + k] = self.best_gain(own, own_frontier, species, pile[-1])
        np.minimum(out / SCALE, 1.0, out=out)
        if tv.on_turn and mask.any():
            out[_ADVICE + self._advisor.act(None, mask, tv)] = 1.0
        return out


def free_cells(arboretum: Mapping[int, int]) -> list[int]:
    """Empty cells orthogonally next to the arboretum (packed), in a fixed order (the frontier's,
    ``engine.rules.frontier``)."""
    return list(frontier(arboretum))


def with_hints(observation: np.ndarray, tv: TableView, writer: "HintWriter",
               mask: np.ndarray) -> np.ndarray:
    """The standard observation followed by the hints (a new float32 array)."""
    return np.concatenate([observation, writer.write(tv, mask)]).astype(np.float32, copy=False)

