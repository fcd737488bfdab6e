"""The compiled fast path (``arboretum_env.batch``) against the plain reference: the dict engine
for transitions and scores, ``observation.encode`` for observations, ``actions.legal_ids`` for
masks; N games stepped at once."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import NUM_ACTIONS, apply_id, legal_ids
from arboretum_env.batch import observe as batch_observe
from arboretum_env.batch import table as T
from arboretum_env.engine import GameConfig, new_game, score
from arboretum_env.env import score_margin_rewards, win_loss_rewards
from arboretum_env.observation import OBS_SIZE, encode
from arboretum_env.table_view import table_view

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


@pytest.mark.parametrize("num_players,mode", [(2, T.WIN_LOSS), (3, T.SCORE_MARGIN), (4, T.WIN_LOSS)])
def test_batch_steps_like_the_engine(num_players, mode):
    games = 6
    rng = np.random.default_rng(num_players)
    states = [new_game(GameConfig(num_players), 50 * num_players + g) for g in range(games)]
    pendings = [None] * games
    tables = T.new_tables(games)
    for row, state in zip(tables, states):
        T.load(row, state)
    obs = np.zeros((games, OBS_SIZE), np.float32)
    masks = np.zeros((games, NUM_ACTIONS), np.int8)
    status = np.zeros(games, np.int64)
    rewards = np.zeros((games, T.SEATS))
    ended = np.zeros(games, bool)
    compared = 0
    while not ended.all():
        observers = rng.integers(num_players, size=games)
        batch_observe.observe(tables, observers, obs)
        batch_observe.masks(tables, masks)
        actions = np.zeros(games, np.int64)
        for g, state in enumerate(states):
            if ended[g]:
                assert not masks[g].any()
                actions[g] = 0  # stepping a finished game is refused
                continue
            tv = table_view(state, int(observers[g]), pendings[g])
            assert np.array_equal(obs[g], encode(tv)), (g, np.flatnonzero(obs[g] != encode(tv)))
            ids = legal_ids(state, pendings[g])
            assert list(np.flatnonzero(masks[g])) == ids
            actions[g] = ids[int(rng.random() * len(ids))]
            pendings[g] = apply_id(state, pendings[g], int(actions[g]))
            compared += 1
        T.step(tables, actions, mode, status, rewards)
        for g, state in enumerate(states):
            if ended[g]:
                assert status[g] == T.ILLEGAL
                continue
            loaded = T.new_tables(1)[0]
            T.load(loaded, state, pendings[g])
            assert np.array_equal(loaded, tables[g]), np.flatnonzero(loaded != tables[g])
            if status[g] == T.ENDED:
                ended[g] = True
                result = score(state)
                expected = (win_loss_rewards(num_players, result.winners) if mode == T.WIN_LOSS
                            else score_margin_rewards(result.totals))
                assert rewards[g, :num_players].tolist() == pytest.approx(expected)
                assert tables[g, T.T_TOTALS:T.T_TOTALS + num_players].tolist() == list(result.totals)
            else:
                assert status[g] == T.OK and not rewards[g].any()
    assert compared > 100 * games


def test_illegal_ids_change_nothing():
    state = new_game(GameConfig(3), 5)
    table = T.new_tables(1)
    T.load(table[0], state)
    before = table.copy()
    legal = set(legal_ids(state, None))
    for action in [-1, NUM_ACTIONS, *range(NUM_ACTIONS)]:
        if action in legal:
            continue
        assert T.step_one(table[0], action) == T.ILLEGAL
        assert np.array_equal(table, before)
