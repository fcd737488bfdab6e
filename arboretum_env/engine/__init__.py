"""The Arboretum rules engine: pure Python, no RL library (see docs/design.md)."""

from .cards import (
    HAND_SIZE,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SPECIES,
    SPECIES,
    SPECIES_BY_PLAYERS,
    SPECIES_LETTERS,
    card_name,
    card_short,
    make_card,
    pack_cell,
    rank_of,
    species_of,
    unpack_cell,
)
from .config import ConfigError, GameConfig
from .playout import random_playout
from .position import PositionError, parse_position, score_command, state_to_position
from .record import GameRecord
from .scoring import PlayerScore, ScoreResult, SpeciesScore, best_path, rights, score_position
from .serialize import StateFormatError, state_from_dict
from .state import DECK, Action, ActionKind, GameState, IllegalActionError, Phase, new_game
from .view import PlayerView, observe


def score(state: GameState) -> ScoreResult:
    """The score breakdown of a state's hands and arboretums (final once the game is over)."""
    return score_position(state.hands, state.arboretums, state.species)


__all__ = [name for name in dir() if not name.startswith("_")]
