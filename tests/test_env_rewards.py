"""Rewards and infos at the end of the game, shared wins, score_margin, and illegal actions
(raw_env raises ValueError; through env() the PettingZoo convention applies)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from arboretum_env.actions import DISCARD, DRAW_DECK, PLAY_CELL, IllegalActionError
from arboretum_env.engine import GameState, Phase, score, state_from_dict
from arboretum_env.env import env, raw_env, score_margin_rewards, win_loss_rewards


def play_out(e, seed: int):
    """Random masked play to the end; returns the finished env's rewards as seen by last()."""
    rng = np.random.default_rng(seed)
    seen = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            seen[agent] = (reward, info)
            e.step(None)
            continue
        assert reward == 0
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[int(rng.random() * len(legal))]))
    return seen


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_win_loss_rewards_and_infos_at_game_end(num_players):
    for seed in range(3):
        e = raw_env(num_players=num_players)
        e.reset(seed=seed)
        seen = play_out(e, seed)
        assert set(seen) == set(e.possible_agents) and not e.agents
        result = score(e.state)
        rewards = {a: r for a, (r, _) in seen.items()}
        assert sum(rewards.values()) == pytest.approx(0)
        assert rewards == pytest.approx(e.final_rewards)
        winners = [f"player_{p}" for p in result.winners]
        flags = [int(p in result.winners) for p in range(num_players)]
        assert e.score_breakdown() == result.to_dict()
        for agent, (reward, info) in seen.items():
            p = e.possible_agents.index(agent)
            # flat: numbers and fixed-length lists only (frameworks stack infos into arrays)
            assert info == {"score": result.totals[p], "won": flags[p], "scores": list(result.totals),
                            "winners": flags}
            assert np.asarray([info["scores"], info["winners"]]).shape == (2, num_players)
            if agent not in winners:
                assert reward == pytest.approx(-1 / (num_players - 1))
        if len(winners) == 1:
            assert rewards[winners[0]] == 1
        if num_players == 2 and len(winners) == 1:
            loser = next(a for a in e.possible_agents if a not in winners)
            assert rewards[loser] == -1


def test_win_loss_values():
    for n in (2, 3, 4):
        for k in range(1, n + 1):
            values = win_loss_rewards(n, list(range(k)))
            assert sum(values) == pytest.approx(0)
            assert values[0] == pytest.approx(Fraction(n - k, k * (n - 1)))
            assert all(v == pytest.approx(-1 / (n - 1)) for v in values[k:])
    assert win_loss_rewards(2, [0]) == [1, -1]
    assert win_loss_rewards(2, [0, 1]) == [0, 0]
    assert win_loss_rewards(3, [2]) == [-0.5, -0.5, 1]
    assert win_loss_rewards(3, [0, 1]) == [0.25, 0.25, -0.5]
    assert win_loss_rewards(4, [0, 1, 2]) == pytest.approx([1 / 9, 1 / 9, 1 / 9, -1 / 3])


def test_score_margin_values():
    assert score_margin_rewards([30, 10]) == [1.0, -1.0]
    assert score_margin_rewards([12, 7, 12]) == [0.0, -0.25, 0.0]
    assert score_margin_rewards([5, 9, 1, 0]) == pytest.approx([-0.2, 0.2, -0.4, -0.45])


def last_discard_state(num_players: int, planted: dict[int, list[int]]) -> GameState:
    """Player 0 is about to discard on the last turn (deck empty); player p's arboretum holds
    the cards ``planted[p]`` in a row; no hand holds a cassia (species 0). Used to make shared
    wins."""
    species = list(range({2: 6, 3: 8, 4: 10}[num_players]))
    cards = [s * 8 + r for s in species for r in range(8)]
    used = {c for cs in planted.values() for c in cs}
    free = sorted((c for c in cards if c not in used), key=lambda c: (c >> 3 == 0, c))  # cassia last
    hands = [free[:8]] + [free[8 + 7 * q:15 + 7 * q] for q in range(num_players - 1)]
    rest = free[8 + 7 * (num_players - 1):]
    discards = [rest] + [[] for _ in range(num_players - 1)]
    arboretums = [[[0, i, c] for i, c in enumerate(planted.get(p, []))] for p in range(num_players)]
    return state_from_dict({
        "config": {"num_players": num_players, "species": species, "starting_player": 0},
        "seed": None, "deck": [], "hands": hands, "discards": discards, "arboretums": arboretums,
        "known": [[] for _ in range(num_players)], "drawn": [], "phase": int(Phase.DISCARD),
        "current_player": 0, "turn": 40, "last_turn": True, "history": [],
    })


@pytest.mark.parametrize("num_players,planted,winners", [
    (2, {}, [0, 1]),                                  # 0-0, no species: shared by both
    (3, {0: [0], 1: [8]}, [0, 1]),                    # 0-0-0; one species each for 0 and 1
    (4, {0: [0], 1: [8], 2: [16]}, [0, 1, 2]),
    (4, {3: [0, 1]}, [3]),                            # cassia 1-2 scores 3 (everyone has the right)
])
def test_shared_wins_through_the_env(num_players, planted, winners):
    state = last_discard_state(num_players, planted)
    e = raw_env(num_players=num_players)
    e.reset_to(state)
    e.step(DISCARD + min(state.hands[0]))
    assert all(e.terminations.values())
    assert e.infos["player_0"]["winners"] == [int(p in winners) for p in range(num_players)]
    expected = win_loss_rewards(num_players, winners)
    assert [e.rewards[a] for a in e.possible_agents] == pytest.approx(expected)
    assert sum(e.rewards.values()) == pytest.approx(0)


def test_score_margin_mode():
    state = last_discard_state(3, {2: [0, 1]})
    e = raw_env(num_players=3, reward_mode="score_margin")
    e.reset_to(state)
    e.step(DISCARD + min(state.hands[0]))
    assert [e.rewards[a] for a in e.possible_agents] == pytest.approx([-3 / 20, -3 / 20, 3 / 20])


def test_illegal_action_on_raw_env_raises_and_changes_nothing():
    e = raw_env(num_players=2)
    e.reset(seed=4)
    before = e.state.to_dict()
    with pytest.raises(ValueError) as info:
        e.step(PLAY_CELL + 5)
    message = str(info.value)
    assert isinstance(info.value, IllegalActionError)
    assert "illegal action" in message and str(PLAY_CELL + 5) in message
    assert "DRAW_FIRST" in message and "legal ids: 0" in message
    assert e.state.to_dict() == before
    for bad in (-1, 489, None, "x"):
        with pytest.raises(ValueError):
            e.step(bad)
    e.step(DRAW_DECK)  # still playable


def test_illegal_action_through_env_ends_the_game_with_illegal_reward():
    e = env(num_players=3)
    e.reset(seed=5)
    offender = e.agent_selection
    e.step(PLAY_CELL)  # not legal while drawing
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1
    assert all(r == 0 for a, r in e.rewards.items() if a != offender)
    seen = {}
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        assert term or trunc
        seen[agent] = reward
        e.step(None)
    assert seen[offender] == -1 and not e.agents


def test_bad_arguments():
    for kwargs in ({"num_players": 5}, {"reward_mode": "points"}, {"render_mode": "video"},
                   {"species": ["oak"]}, {"starting_player": 2}):
        with pytest.raises(ValueError):
            raw_env(**kwargs)
