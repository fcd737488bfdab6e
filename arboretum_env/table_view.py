"""What an agent may know when it decides: the engine's seat-relative ``PlayerView`` plus the
environment's two-step play (the decision faced and the card chosen to play, if any).

Heuristic agents read this; the observation encoder writes it into the float tensor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .actions import Decision, decision_of
from .engine import GameState, PlayerView, observe


@dataclass(frozen=True)
class TableView:
    view: PlayerView
    decision: Decision
    """The decision of the player to move (``view.to_move`` is its seat offset)."""
    pending: Optional[int]
    """The card chosen to play during ``Decision.PLAY_CELL``; only the player to move sees it
    (the others see the card once it is placed)."""

    @property
    def on_turn(self) -> bool:
        return self.view.to_move == 0 and self.decision is not Decision.GAME_OVER


def table_view(state: GameState, observer: int, pending: Optional[int]) -> TableView:
    own = observer == state.current_player
    return TableView(observe(state, observer), decision_of(state, pending), pending if own else None)
