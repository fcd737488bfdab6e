"""``training.rollout_search``: candidates, deals and lockstep play-outs of the searched policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.batch import table as T
from arboretum_env.engine import GameConfig, Phase, new_game
from training.rollout_search import RolloutSearch

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


@pytest.fixture(scope="module")
def net() -> PlaneNet:
    torch.manual_seed(3)
    return PlaneNet(4, 32).eval()


def row_after(net: PlaneNet, seed: int, decisions: int, num_players: int = 2) -> np.ndarray:
    """A game row after ``decisions`` decisions of the network's argmax play."""
    tables = T.new_tables(1)
    T.load(tables[0], new_game(GameConfig(num_players), seed))
    search = RolloutSearch(net)
    status, rewards = np.zeros(1, np.int64), np.zeros((1, T.SEATS))
    for _ in range(decisions):
        logits, _ = search.logits(tables)
        T.step(tables, logits.argmax(1), T.WIN_LOSS, status, rewards)
        assert status[0] == T.OK
    return tables[0]


def test_candidates_are_the_most_likely_legal_actions_and_the_choice_is_one(net):
    search = RolloutSearch(net, determinizations=3, candidates=4)
    row = row_after(net, 11, 12)
    logits, mask = search.logits(row[None])
    legal = np.flatnonzero(mask[0])
    assert len(legal) > 4
    result = search.choose(row, np.random.default_rng(0))
    assert list(result.candidates) == list(legal[np.argsort(-logits[0, legal], kind="stable")][:4])
    assert result.action in result.candidates and mask[0, result.action] == 1
    assert result.values.shape == (4,) and result.rollouts == 12
    assert result.values[list(result.candidates).index(result.action)] == result.values.max()


def test_one_candidate_is_the_policy_and_a_forced_action_costs_nothing(net):
    row = row_after(net, 5, 20)
    logits, _ = RolloutSearch(net).logits(row[None])
    alone = RolloutSearch(net, 2, 1).choose(row, np.random.default_rng(0))
    assert alone.action == int(logits.argmax()) and alone.rollouts == 0
    start = T.new_tables(1)[0]
    T.load(start, new_game(GameConfig(2), 0))  # first draw, every discard pile empty: the deck only
    forced = RolloutSearch(net).choose(start, np.random.default_rng(0))
    assert forced.rollouts == 0 and len(forced.candidates) == 1


def test_the_same_generator_gives_the_same_search_and_the_row_is_kept(net):
    row = row_after(net, 8, 30)
    kept = row.copy()
    a = RolloutSearch(net, 4, 3).choose(row, np.random.default_rng(9))
    b = RolloutSearch(net, 4, 3).choose(row, np.random.default_rng(9))
    assert a.action == b.action and np.array_equal(a.values, b.values)
    assert np.array_equal(row, kept)


@pytest.mark.parametrize("num_players", [2, 3])
def test_lockstep_play_outs_equal_one_at_a_time(net, num_players):
    # rows that end at different steps must not disturb the others
    search = RolloutSearch(net)
    rows = np.stack([row_after(net, 100 + i, 10 * i, num_players) for i in range(4)])
    seat = 1
    firsts = []
    for r in rows:
        logits, _ = search.logits(r[None])
        firsts.append(int(np.flatnonzero(np.isfinite(logits[0]))[-1]))  # a legal action, not the argmax
    together = search.play_out(rows.copy(), np.array(firsts), seat)
    alone = [search.play_out(r[None].copy(), np.array([a]), seat)[0] for r, a in zip(rows, firsts)]
    assert np.array_equal(together, alone)
    finished = rows.copy()
    search.play_out(finished, np.array(firsts), seat)
    assert (finished[:, T.T_PHASE] == int(Phase.GAME_OVER)).all()
    totals = finished[:, T.T_TOTALS:T.T_TOTALS + num_players]
    assert np.array_equal(together, totals[:, seat] - np.delete(totals, seat, axis=1).max(axis=1))


def test_samples_follow_the_masked_softmax_at_the_temperature(net):
    logits = np.full((1, 6), -np.inf)
    logits[0, [1, 2, 4]] = [0.0, np.log(2.0), np.log(5.0)]  # probabilities 1/8, 2/8, 5/8
    rng = np.random.default_rng(0)
    picks = np.concatenate([RolloutSearch(net, temperature=1.0).pick(np.repeat(logits, 1000, 0), rng)
                            for _ in range(8)])
    share = np.bincount(picks, minlength=6) / len(picks)
    assert share[[0, 3, 5]].sum() == 0
    assert np.allclose(share[[1, 2, 4]], [1 / 8, 2 / 8, 5 / 8], atol=0.015)
    hotter = RolloutSearch(net, temperature=4.0).pick(np.repeat(logits, 8000, 0), rng)
    assert abs(np.mean(hotter == 4) - 5 ** 0.25 / (1 + 2 ** 0.25 + 5 ** 0.25)) < 0.015
    cold = RolloutSearch(net, temperature=1e-6).pick(np.repeat(logits, 100, 0), rng)
    assert (cold == 4).all() and (RolloutSearch(net).pick(logits) == 4).all()


def test_sampled_play_outs_are_legal_and_reproducible(net):
    rows = np.stack([row_after(net, 200 + i, 15) for i in range(6)])
    first = RolloutSearch(net).logits(rows)[0].argmax(1)
    hot = RolloutSearch(net, temperature=1.0)
    a = hot.play_out(rows.copy(), first, 0, np.random.default_rng(2))
    b = hot.play_out(rows.copy(), first, 0, np.random.default_rng(2))
    c = hot.play_out(rows.copy(), first, 0, np.random.default_rng(3))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ValueError, match="need a generator"):
        hot.play_out(rows.copy(), first, 0)


def test_bad_settings_and_finished_games_are_refused(net):
    with pytest.raises(ValueError, match="determinizations and candidates must be >= 1"):
        RolloutSearch(net, 0, 4)
    for temperature in (-0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="temperature must be a finite number"):
            RolloutSearch(net, temperature=temperature)
    over = T.new_tables(1)
    T.load(over[0], new_game(GameConfig(2), 1))
    RolloutSearch(net).play_out(over, np.array([RolloutSearch(net).logits(over)[0].argmax()]), 0)
    with pytest.raises(ValueError, match="the game is over"):
        RolloutSearch(net).choose(over[0], np.random.default_rng(0))
