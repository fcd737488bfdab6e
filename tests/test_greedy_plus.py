"""GreedyPlusAgent, the teacher (arboretum_env/agents/greedy_plus.py): the agent interface,
legal and deterministic actions on real game states, its reduction to GreedyAgent when its
changes are switched off, the turn horizon and the exact final turn."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env import actions as A
from arboretum_env.agents import Agent, GreedyAgent, RandomAgent, make_agent
from arboretum_env.agents import greedy_plus
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.greedy_plus import CALIBRATION, GreedyPlusAgent, own_turns_left
from arboretum_env.engine import GameConfig, Phase, new_game, score
from arboretum_env.observation import OBS_SIZE
from arboretum_env.table_view import table_view

from tests.test_agents import C, D, J, L, O, act, build_state, card


def _mask(state, pending=None):
    return A.write_mask(state, pending, np.zeros(A.NUM_ACTIONS, np.int8))


def test_interface_and_refusals():
    agent = GreedyPlusAgent()
    assert isinstance(agent, Agent) and isinstance(agent, GreedyAgent)
    agent.seed(3)
    agent.seed(None)
    state = new_game(GameConfig(2), 0)
    obs = np.zeros(OBS_SIZE, np.float32)
    with pytest.raises(ValueError, match="TableView"):
        agent.act(obs, _mask(state), None)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(obs, np.zeros(A.NUM_ACTIONS, np.int8), table_view(state, 0, None))
    other = 1 - state.current_player
    with pytest.raises(ValueError, match="not on turn"):
        agent.act(obs, _mask(state), table_view(state, other, None))


def test_registered_as_greedy_plus():
    assert isinstance(make_agent("greedy_plus"), GreedyPlusAgent)
    assert type(make_agent("greedy")) is GreedyAgent


def test_calibration_table_shape():
    assert len(CALIBRATION) == 2 and all(len(row) == 2 for row in CALIBRATION)
    assert all(len(r) == 8 and all(0 < f < 3 for f in r) for row in CALIBRATION for r in row)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_games_only_legal_actions(players):
    """Every decision of whole games (the final turn included) is legal; the arena raises on
    an illegal action, and so does the agent itself."""
    for g in range(2):
        agents = [GreedyPlusAgent()] + [RandomAgent(g + s) for s in range(players - 1)]
        if g:
            agents = agents[::-1]
        result = play_game(agents, players, seed=100 + g)
        assert len(result.totals) == players


def test_self_play_game_finishes():
    result = play_game([GreedyPlusAgent(), GreedyPlusAgent()], 2, seed=7)
    assert len(result.winners) >= 1


def test_actions_on_random_states_are_legal_and_deterministic():
    rng = np.random.default_rng(5)
    checked = set()
    for g in range(12):
        state = new_game(GameConfig(2 + g % 2), 1000 + g)
        for _ in range(int(rng.integers(0, 400))):
            if state.game_over:
                break
            legal = state.legal_actions()
            state.apply(legal[rng.integers(len(legal))])
        if state.game_over:
            continue
        # the engine state sits at a draw, play or discard decision: ask the agent there, and
        # once more at the play-cell step of the card it chose
        pending = None
        for _ in range(2):
            mask = _mask(state, pending)
            view = table_view(state, state.current_player, pending)
            first = GreedyPlusAgent().act(None, mask, view)
            assert mask[first] == 1
            assert GreedyPlusAgent().act(None, mask, view) == first  # a fresh agent agrees
            assert GreedyPlusAgent(seed=99).act(None, mask, view) == first  # seed changes nothing
            checked.add(view.decision)
            if A.PLAY_CARD <= first < A.PLAY_CARD + 80 and pending is None:
                pending = A.apply_id(state, pending, first)
            else:
                break
    assert len(checked) >= 3


def test_with_its_changes_off_it_plays_exactly_like_greedy():
    plain = GreedyPlusAgent(q_scale=1.0, calibrated=False, horizon=False, final_exact=False)
    for seed in (3, 4):
        ours = play_game([plain, GreedyAgent()], 2, seed=seed)
        theirs = play_game([GreedyAgent(), GreedyAgent()], 2, seed=seed)
        assert ours.totals == theirs.totals and ours.winners == theirs.winners


def test_own_turns_left_counts_deck_draws():
    state = new_game(GameConfig(2, starting_player=0), 0)
    assert state.phase is Phase.DRAW_FIRST and len(state.deck) == 34
    # after this turn's 2 draws 32 cards are left: 16 more turns, 8 of them ours
    assert own_turns_left(table_view(state, 0, None)) == 8
    state.deck[:] = state.deck[:5]  # 5 cards: we draw 2, they draw 2, we draw the last one
    assert own_turns_left(table_view(state, 0, None)) == 1
    state.deck[:] = state.deck[:4]  # 4 cards: the opponent's turn is the last one
    assert own_turns_left(table_view(state, 0, None)) == 0


def _final_turn_state():
    """P0 discards on the final turn (the deck is empty). P0 has a 13-point cassia path, P1 a
    13-point dogwood path. P0's cassia 7 outbids P1's cassia 6 and P0's dogwood 6 takes the
    dogwood right from P1's dogwood 5: keeping both wins 13-0."""
    mine = {(0, i): card(C, r) for i, r in enumerate((1, 2, 3, 4, 8))}
    theirs = {(0, i): card(D, r) for i, r in enumerate((1, 2, 3, 4, 8))}
    hand0 = [card(C, 7), card(D, 6), card(J, 2), card(J, 5), card(O, 3), card(O, 6), card(L, 2),
             card(L, 7)]
    hand1 = [card(C, 6), card(D, 5), card(J, 3), card(O, 2), card(O, 4), card(L, 3), card(L, 4)]
    state = build_state([hand0, hand1], [mine, theirs], phase=Phase.DISCARD)
    state.discards[1][:] = list(state.deck)  # the rest of the cards: the deck is empty
    state.deck[:] = []
    state.last_turn = True  # P0 drew the last card this turn
    return state, hand0


def test_final_turn_is_searched_exactly(monkeypatch):
    state, hand0 = _final_turn_state()
    calls = []
    best = greedy_plus._FinalEvaluator.best

    def spy(self, *args):
        calls.append(args)
        return best(self, *args)

    monkeypatch.setattr(greedy_plus._FinalEvaluator, "best", spy)
    choice = act(GreedyPlusAgent(), state) - A.DISCARD
    assert calls, "the final-turn search was not used"
    assert choice in hand0 and choice not in (card(C, 7), card(D, 6))
    A.apply_id(state, None, A.DISCARD + choice)
    assert state.game_over
    result = score(state)
    assert result.winners == (0,) and result.totals == (13, 0)
