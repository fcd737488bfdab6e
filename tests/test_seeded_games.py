"""``SeededGames``: one generator of game seeds behind ``reset()``, restarted by ``reset(seed)``."""

import numpy as np

from arboretum_env import raw_env
from arboretum_env.seeded_games import GAME_SEED_BOUND, SeededGames


def _first_observation(env) -> np.ndarray:
    return env.observe(env.agent_selection)["observation"].copy()


def _sequence(env, games: int, seed=None) -> list:
    """(game seed, first observation) of ``games`` games: ``reset(seed)`` then ``reset()``s."""
    out = []
    for g in range(games):
        env.reset(seed=seed if g == 0 else None)
        out.append((env.last_game_seed, _first_observation(env)))
    return out


def test_same_seed_same_games_and_a_new_game_each_reset():
    a = _sequence(SeededGames(raw_env()), 4, seed=11)
    b = _sequence(SeededGames(raw_env()), 4, seed=11)
    assert [s for s, _ in a] == [s for s, _ in b]
    assert all(np.array_equal(x, y) for (_, x), (_, y) in zip(a, b))
    seeds = [s for s, _ in a]
    assert len(set(seeds)) == 4 and all(0 <= s < GAME_SEED_BOUND for s in seeds)
    # each game is the plain env's game of its seed
    plain = raw_env()
    plain.reset(seed=seeds[2])
    assert np.array_equal(_first_observation(plain), a[2][1])


def test_reset_with_a_seed_restarts_the_sequence():
    env = SeededGames(raw_env())
    first = _sequence(env, 3, seed=5)
    again = _sequence(env, 3, seed=5)
    assert [s for s, _ in first] == [s for s, _ in again]
    other = _sequence(env, 3, seed=6)
    assert [s for s, _ in other] != [s for s, _ in first]


def test_constructor_seed_and_reseed_start_the_same_sequence():
    built = SeededGames(raw_env(), seed=9)
    built.reset()
    reseeded = SeededGames(raw_env())
    reseeded.reseed(9)
    reseeded.reset()
    assert built.last_game_seed == reseeded.last_game_seed
    assert built.last_game_seed == int(np.random.default_rng(9).integers(GAME_SEED_BOUND))
