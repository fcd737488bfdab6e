"""Game configuration: validation (ConfigError with a message) and set-up from the seed."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.engine import (
    HAND_SIZE,
    SPECIES,
    ConfigError,
    GameConfig,
    new_game,
    species_of,
)
from arboretum_env.errors import UserError


def test_config_error_is_a_value_error_and_a_user_error() -> None:
    assert issubclass(ConfigError, ValueError)
    assert issubclass(ConfigError, UserError)


@pytest.mark.parametrize("n", [1, 5, 0, -2])
def test_bad_player_count(n: int) -> None:
    with pytest.raises(ConfigError, match=rf"num_players must be 2, 3 or 4, got {n}"):
        GameConfig(n)


@pytest.mark.parametrize("n", ["2", 2.0, True, None])
def test_player_count_must_be_an_int(n) -> None:
    with pytest.raises(ConfigError, match="num_players"):
        GameConfig(n)


def test_unknown_species_name() -> None:
    species = ["cassia", "dogwood", "jacaranda", "olive", "lilac", "birch"]
    with pytest.raises(ConfigError, match=r"unknown species 'birch'"):
        GameConfig(2, species=species)


@pytest.mark.parametrize("bad", [10, -1, 3.0])
def test_unknown_species_index(bad) -> None:
    with pytest.raises(ConfigError, match="unknown species"):
        GameConfig(2, species=[0, 1, 2, 4, 5, bad])


def test_duplicated_species() -> None:
    species = ["cassia", "dogwood", "oak", "olive", "lilac", "oak"]
    with pytest.raises(ConfigError, match=r"duplicated species: oak"):
        GameConfig(2, species=species)


def test_duplicated_species_by_name_and_index() -> None:
    with pytest.raises(ConfigError, match=r"duplicated species: cassia"):
        GameConfig(2, species=["cassia", 0, 1, 2, 3, 4])


@pytest.mark.parametrize("n, count", [(2, 5), (2, 7), (3, 6), (3, 10), (4, 8)])
def test_wrong_species_count(n: int, count: int) -> None:
    need = {2: 6, 3: 8, 4: 10}[n]
    with pytest.raises(ConfigError, match=rf"{n} players play with {need} species, got {count}"):
        GameConfig(n, species=list(range(count)))


def test_species_as_a_single_string() -> None:
    with pytest.raises(ConfigError, match="not a single string"):
        GameConfig(2, species="cassia")


@pytest.mark.parametrize("n, start", [(2, 2), (2, -1), (3, 3), (4, 4), (4, 1.0), (2, True)])
def test_bad_starting_player(n: int, start) -> None:
    with pytest.raises(ConfigError, match=rf"starting_player must be an int in 0\.\.{n - 1}"):
        GameConfig(n, starting_player=start)


def test_from_dict_rejects_unknown_keys() -> None:
    with pytest.raises(ConfigError, match="unknown game config keys: colour"):
        GameConfig.from_dict({"num_players": 2, "colour": "red"})


def test_config_dict_round_trip() -> None:
    config = GameConfig(3, species=["oak", "willow", "maple", "cassia", "olive", "lilac",
                                    "dogwood", "magnolia"], starting_player=2)
    assert config.species == tuple(sorted(config.species))
    assert GameConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("n", [2, 3, 4])
def test_named_species_and_starting_player_are_honoured(n: int) -> None:
    names = list(SPECIES[::-1][:{2: 6, 3: 8, 4: 10}[n]])
    for start in range(n):
        for seed in range(3):
            state = new_game(GameConfig(n, species=names, starting_player=start), seed)
            assert state.current_player == start == state.starting_player
            assert [SPECIES[s] for s in state.species] == sorted(names, key=SPECIES.index)
            cards = [*state.deck, *(c for h in state.hands for c in h)]
            assert sorted(cards) == sorted(s * 8 + r for s in state.species for r in range(8))
            assert {SPECIES[species_of(c)] for c in cards} == set(names)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_set_up_deals_seven_cards(n: int) -> None:
    state = new_game(GameConfig(n), 123)
    assert [len(h) for h in state.hands] == [HAND_SIZE] * n
    assert len(state.deck) == {2: 34, 3: 43, 4: 52}[n]
    assert state.discards == [[] for _ in range(n)]
    assert all(not a for a in state.arboretums)
    assert state.turn == 0 and not state.game_over


@pytest.mark.parametrize("n", [2, 3])
def test_species_and_starting_player_from_the_seed_are_reproducible(n: int) -> None:
    drawn_species, drawn_starts = set(), set()
    for seed in range(40):
        a = new_game(GameConfig(n), seed)
        b = new_game(GameConfig(n), seed)
        c = new_game(GameConfig(n), np.random.default_rng(seed))
        assert a.to_dict() == b.to_dict()
        assert (a.species, a.starting_player, a.deck) == (c.species, c.starting_player, c.deck)
        assert len(a.species) == {2: 6, 3: 8}[n] and len(set(a.species)) == len(a.species)
        drawn_species.add(a.species)
        drawn_starts.add(a.starting_player)
    assert len(drawn_species) > 10  # really drawn, not fixed
    assert drawn_starts == set(range(n))


def test_different_seeds_give_different_deals() -> None:
    deals = {tuple(new_game(GameConfig(2, species=range(6)), seed).deck) for seed in range(20)}
    assert len(deals) == 20


def test_four_players_use_all_species() -> None:
    for seed in range(5):
        assert new_game(GameConfig(4), seed).species == tuple(range(10))


def test_new_game_rejects_a_bad_seed() -> None:
    with pytest.raises(TypeError, match="seed must be"):
        new_game(GameConfig(2), "42")
