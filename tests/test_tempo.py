"""TempoAgent: GreedyPlusAgent plus a plan for who draws the last deck card
(arboretum_env/agents/tempo.py). Its strength is measured by benchmarks (benchmarks/agents.py
--policy tempo --opponents greedy), not here."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env import actions as A
from arboretum_env.agents import GreedyPlusAgent, TempoAgent, make_agent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.tempo import ends_on_own_turn
from arboretum_env.engine import GameConfig, Phase, new_game
from arboretum_env.table_view import table_view
from test_agents import BURIED, C, D, G, J, L, O, _building_cassia, act, build_state, card


def test_who_draws_the_last_card():
    # 2 players drawing two deck cards a turn: leaving 3 or 4 lets the opponent leave 1 or 2
    assert [r for r in range(13) if ends_on_own_turn(r, 2)] == [0, 3, 4, 7, 8, 11, 12]
    assert [r for r in range(13) if ends_on_own_turn(r, 3)] == [0, 5, 6, 11, 12]
    assert [r for r in range(17) if ends_on_own_turn(r, 4)] == [0, 7, 8, 15, 16]


def _useful_pile_state(deck_size: int):
    """Player 0 to draw; the top of player 1's pile extends its cassia 1-2-3 (the greedy
    heuristic takes it); ``deck_size`` cards left in the deck."""
    mine, theirs = _building_cassia()
    hand0 = [card(D, 2), card(D, 5), card(J, 3), card(J, 6), card(O, 2), card(O, 7), card(L, 4)]
    hand1 = [card(D, 1), card(J, 1), card(O, 1), card(L, 1), card(G, 1), card(G, 8), card(L, 8)]
    state = build_state([hand0, hand1], [mine, theirs],
                        discards=([], BURIED + [card(G, 2), card(C, 4)]), phase=Phase.DRAW_FIRST)
    del state.deck[deck_size:]
    return state


def test_takes_the_deck_to_draw_the_last_card_itself():
    # two cards left: deck then deck ends the game on its own turn; the pile would leave the
    # last card to the opponent
    state = _useful_pile_state(2)
    assert act(GreedyPlusAgent(), state) == A.DRAW_DISCARD + 1
    assert act(TempoAgent(), state) == A.DRAW_DECK


def test_takes_the_pile_to_leave_three_cards():
    # three cards left: any deck draw leaves 1 or 2 for the opponent; two pile draws leave 3
    state = _useful_pile_state(3)
    assert act(TempoAgent(), state) == A.DRAW_DISCARD + 1
    A.apply_id(state, None, A.DRAW_DISCARD + 1)
    assert act(TempoAgent(), state) != A.DRAW_DECK  # the second draw from a pile too


def test_far_from_the_end_it_draws_like_greedy_plus():
    for deck_size in (9, 20):
        state = _useful_pile_state(deck_size)
        assert act(TempoAgent(), state) == act(GreedyPlusAgent(), state)


def test_without_the_bonus_it_is_greedy_plus():
    tempo, greedy = TempoAgent(tempo_bonus=0.0), GreedyPlusAgent()
    state = new_game(GameConfig(2), 4)
    pending = None
    decisions = 0
    while state.phase is not Phase.GAME_OVER:
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        A.write_mask(state, pending, mask)
        tv = table_view(state, state.current_player, pending)
        action = greedy.act(None, mask, tv)
        assert tempo.act(None, mask, tv) == action
        pending = A.apply_id(state, pending, action)
        decisions += 1
    assert decisions > 60


@pytest.mark.parametrize("n", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_plays_legal_reproducible_games(n):
    first = play_game([TempoAgent() for _ in range(n)], n, seed=11)
    again = play_game([make_agent("tempo") for _ in range(n)], n, seed=11)
    assert first.to_dict() == again.to_dict()
    assert repr(TempoAgent()) == "TempoAgent(tempo_bonus=5.0, window=8)"
