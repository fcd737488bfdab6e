"""``batch.determinize``: the hidden cards are dealt again, and nothing the seat sees changes."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.batch import observe as batch_observe
from arboretum_env.batch import table as T
from arboretum_env.batch.determinize import determinize, hidden_cards
from arboretum_env.engine import NUM_CARDS, GameConfig, new_game
from arboretum_env.observation import OBS_SIZE

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def positions(num_players: int, games: int, seed: int):
    """Rows of random legal play at every decision of ``games`` games."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    status, rewards = np.zeros(1, np.int64), np.zeros((1, T.SEATS))
    for g in range(games):
        tables = T.new_tables(1)
        T.load(tables[0], new_game(GameConfig(num_players), seed + g))
        while True:
            yield tables[0].copy()
            batch_observe.masks(tables, mask)
            legal = np.flatnonzero(mask[0])
            T.step(tables, legal[rng.integers(len(legal))][None], T.WIN_LOSS, status, rewards)
            if status[0] == T.ENDED:
                break


def view(row: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    obs = np.zeros((1, OBS_SIZE), np.float32)
    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    batch_observe.observe(row[None], np.array([seat]), obs)
    batch_observe.masks(row[None], mask)
    return obs[0], mask[0]


def locations(row: np.ndarray) -> np.ndarray:
    """How many times each card is somewhere: hands, deck, discard piles, arboretums."""
    count = np.zeros(NUM_CARDS, np.int64)
    for p in range(int(row[T.T_PLAYERS])):
        count += row[T.T_HAND + p * NUM_CARDS:T.T_HAND + (p + 1) * NUM_CARDS]
        np.add.at(count, row[T.T_PILE + p * NUM_CARDS:][:row[T.T_PILE_LEN + p]], 1)
        np.add.at(count, row[T.T_CARDS + p * NUM_CARDS:][:row[T.T_SIZE + p]], 1)
    np.add.at(count, row[T.T_DECK:T.T_DECK + row[T.T_DECK_LEN]], 1)
    return count


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_mover_sees_the_same_game_and_every_card_stays_once(num_players):
    rng = np.random.default_rng(num_players)
    changed = checked = 0
    for row in positions(num_players, 3, 40 * num_players):
        if row[T.T_PHASE] == int(T.Phase.GAME_OVER):
            continue
        seat = int(row[T.T_CURRENT])
        dealt = determinize(row, seat, rng)
        obs, mask = view(row, seat)
        obs_d, mask_d = view(dealt, seat)
        assert np.array_equal(obs, obs_d) and np.array_equal(mask, mask_d)
        assert np.array_equal(locations(dealt), locations(row))
        assert set(locations(row)) <= {0, 1}
        for p in range(num_players):
            block = slice(T.T_HAND + p * NUM_CARDS, T.T_HAND + (p + 1) * NUM_CARDS)
            known = row[T.T_KNOWN + p * NUM_CARDS:T.T_KNOWN + (p + 1) * NUM_CARDS] == 1
            assert dealt[T.T_HAND_SIZE + p] == row[T.T_HAND_SIZE + p] == dealt[block].sum()
            assert (dealt[block][known & (row[block] == 1)] == 1).all()  # known cards stay
            if p == seat:
                assert np.array_equal(dealt[block], row[block])
        # only the hidden places differ
        hidden = set(hidden_cards(row, seat).tolist())
        assert set(hidden_cards(dealt, seat).tolist()) == hidden
        differs = np.flatnonzero(dealt != row)
        hands = [T.T_HAND + p * NUM_CARDS for p in range(num_players) if p != seat]
        assert all(T.T_DECK <= i < T.T_DECK + NUM_CARDS or
                   any(h <= i < h + NUM_CARDS for h in hands) for i in differs)
        changed += bool(len(differs))
        checked += 1
    assert checked > 100 and changed > checked // 2


def test_the_same_generator_state_gives_the_same_deal():
    row = next(r for i, r in enumerate(positions(2, 1, 7)) if i == 30)
    seat = int(row[T.T_CURRENT])
    a = determinize(row, seat, np.random.default_rng(5))
    b = determinize(row, seat, np.random.default_rng(5))
    c = determinize(row, seat, np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(row, next(r for i, r in enumerate(positions(2, 1, 7)) if i == 30))  # input kept


def test_a_dealt_game_plays_to_its_end():
    rng = np.random.default_rng(1)
    row = next(r for i, r in enumerate(positions(3, 1, 3)) if i == 40)
    tables = determinize(row, int(row[T.T_CURRENT]), rng)[None].copy()
    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    status, rewards = np.zeros(1, np.int64), np.zeros((1, T.SEATS))
    for _ in range(1000):
        batch_observe.masks(tables, mask)
        legal = np.flatnonzero(mask[0])
        T.step(tables, legal[rng.integers(len(legal))][None], T.WIN_LOSS, status, rewards)
        assert status[0] != T.ILLEGAL
        if status[0] == T.ENDED:
            break
    assert status[0] == T.ENDED


def test_bad_requests_are_one_line_errors():
    row = next(positions(2, 1, 0))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="seat 2 is not a player"):
        determinize(row, 2, rng)
    with pytest.raises(ValueError, match="one loaded game row"):
        determinize(T.new_tables(1)[0], 0, rng)
    pending = next(r for r in positions(2, 1, 0) if r[T.T_PENDING] != T.NO_CARD)
    with pytest.raises(ValueError, match="card chosen to play"):
        determinize(pending, 1 - int(pending[T.T_CURRENT]), rng)
