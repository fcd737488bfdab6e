"""Game records: config + seed + the list of decisions, replayable to the identical state."""

from __future__ import annotations

from dataclasses import dataclass

from .config import GameConfig
from .state import Action, ActionKind, GameState, new_game


@dataclass(frozen=True)
class GameRecord:
    config: GameConfig
    seed: int
    actions: tuple[Action, ...]

    @classmethod
    def of(cls, state: GameState) -> "GameRecord":
        """The record of a game started from an int seed (``new_game(config, seed)``)."""
        if state.seed is None or state.setup is None:
            raise ValueError("this game was started from a Generator, not an int seed: it has no record")
        return cls(state.setup, state.seed, tuple(Action(ActionKind(a[0]), *a[1:]) for a in state.history))

    def replay(self, upto: int | None = None) -> GameState:
        """The state after the first ``upto`` actions (all by default)."""
        state = new_game(self.config, self.seed)
        for action in self.actions[:upto]:
            state.apply(action)
        return state

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "seed": self.seed,
                "actions": [[int(a.kind), a.card, a.row, a.col, a.source] for a in self.actions]}

    @classmethod
    def from_dict(cls, data: dict) -> "GameRecord":
        try:
            actions = tuple(Action(ActionKind(a[0]), *a[1:]) for a in data["actions"])
            return cls(GameConfig.from_dict(data["config"]), int(data["seed"]), actions)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"malformed game record: {exc}") from None
