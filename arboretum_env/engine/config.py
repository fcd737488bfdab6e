"""Game configuration: player count, species in play, starting player."""

from __future__ import annotations

from ..errors import UserError

from dataclasses import dataclass
from typing import Optional, Sequence, Union

from .cards import NUM_SPECIES, SPECIES, SPECIES_BY_PLAYERS, SPECIES_INDEX


class ConfigError(UserError, ValueError):
    """An invalid game configuration; the message says what is wrong."""


SpeciesSpec = Union[int, str]


@dataclass(frozen=True)
class GameConfig:
    """What a game is set up with.

    ``species``: the species in play, by canonical name or index (``None``: drawn from the seed);
    ``starting_player``: ``None`` draws it from the seed. ``validate`` (run on construction)
    normalises species to a sorted tuple of indexes.
    """

    num_players: int = 2
    species: Optional[Sequence[SpeciesSpec]] = None
    starting_player: Optional[int] = None

    def __post_init__(self) -> None:
        n = self.num_players
        if isinstance(n, bool) or not isinstance(n, int) or n not in SPECIES_BY_PLAYERS:
            raise ConfigError(f"num_players must be 2, 3 or 4, got {n!r}")
        if self.species is not None:
            object.__setattr__(self, "species", _normalise_species(self.species, n))
        sp = self.starting_player
        if sp is not None and (isinstance(sp, bool) or not isinstance(sp, int) or not 0 <= sp < n):
            raise ConfigError(f"starting_player must be an int in 0..{n - 1}, got {sp!r}")

    @property
    def num_species(self) -> int:
        return SPECIES_BY_PLAYERS[self.num_players]

    def to_dict(self) -> dict:
        return {
            "num_players": self.num_players,
            "species": None if self.species is None else [SPECIES[s] for s in self.species],
            "starting_player": self.starting_player,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "GameConfig":
        if not isinstance(data, dict):
            raise ConfigError(f"a game config must be a mapping, got {type(data).__name__}")
        unknown = set(data) - {"num_players", "species", "starting_player"}
        if unknown:
            raise ConfigError(f"unknown game config keys: {', '.join(sorted(unknown))}")
        return cls(**data)


def _normalise_species(species: Sequence[SpeciesSpec], num_players: int) -> tuple[int, ...]:
    if isinstance(species, (str, bytes)):
        raise ConfigError("species must be a list of species, not a single string")
    indexes = []
    for s in species:
        if isinstance(s, str):
            if s not in SPECIES_INDEX:
                raise ConfigError(f"unknown species {s!r} (known: {', '.join(SPECIES)})")
            indexes.append(SPECIES_INDEX[s])
        elif isinstance(s, int) and not isinstance(s, bool) and 0 <= s < NUM_SPECIES:
            indexes.append(s)
        else:
            raise ConfigError(f"unknown species {s!r}")
    if len(set(indexes)) != len(indexes):
        dup = sorted({SPECIES[i] for i in indexes if indexes.count(i) > 1})
        raise ConfigError(f"duplicated species: {', '.join(dup)}")
    need = SPECIES_BY_PLAYERS[num_players]
    if len(indexes) != need:
        raise ConfigError(
            f"{num_players} players play with {need} species, got {len(indexes)}")
    return tuple(sorted(indexes))
