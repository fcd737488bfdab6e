"""The optional hint sections: layout, exact values, legality of the advice, no leaks."""

import numpy as np
import pytest

from arboretum_env import actions as A
from arboretum_env.agents.greedy import GreedyAgent
from arboretum_env.agents.tempo import TempoAgent
from arboretum_env.engine import GameConfig, new_game
from arboretum_env.engine.scoring import best_path
from arboretum_env.agents.hints import (ADVICE_OFFSET, ADVISORS, CACHE_SIZE, HINT_SECTIONS, HINT_SIZE, HintWriter,
                                        free_cells)
from arboretum_env.table_view import table_view


def states(num_players, games, seed):
    """(state, pending) at every decision of random games."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        state, pending = new_game(GameConfig(num_players), seed + g), None
        while not state.game_over:
            yield state, pending
            pending = A.apply_id(state, pending, int(rng.choice(A.legal_ids(state, pending))))


def mask_of(state, pending):
    return A.write_mask(state, pending, np.zeros(A.NUM_ACTIONS, np.int8))


def test_widths_add_up_and_advice_comes_last():
    assert HINT_SIZE == sum(w for _, w, _ in HINT_SECTIONS)
    assert HINT_SECTIONS[-1][0] == "hint_advice" and ADVICE_OFFSET == HINT_SIZE - A.NUM_ACTIONS


def test_only_the_player_to_move_gets_hints():
    writer = HintWriter()
    for state, pending in states(3, 2, 1):
        for observer in range(3):
            if observer != state.current_player:
                tv = table_view(state, observer, pending)
                assert not writer.write(tv, np.zeros(A.NUM_ACTIONS, np.int8)).any()


def test_advice_is_the_greedy_choice_and_legal():
    writer, greedy = HintWriter(), GreedyAgent()
    for i, (state, pending) in enumerate(states(2, 2, 5)):
        if i % 3:
            continue
        tv = table_view(state, state.current_player, pending)
        mask = mask_of(state, pending)
        advice = writer.write(tv, mask)[ADVICE_OFFSET:]
        assert advice.sum() == 1 and mask[int(advice.argmax())] == 1
        assert int(advice.argmax()) == greedy.act(None, mask, tv)


@pytest.mark.slow
def test_advice_of_the_tempo_advisor():
    writer, tempo = HintWriter("tempo"), TempoAgent()
    differs = 0
    for state, pending in states(2, 3, 7):
        tv = table_view(state, state.current_player, pending)
        mask = mask_of(state, pending)
        advice = int(writer.write(tv, mask)[ADVICE_OFFSET:].argmax())
        assert advice == tempo.act(None, mask, tv)
        differs += advice != GreedyAgent().act(None, mask, tv)
    assert differs >= 1  # the two advisors do not always agree (near the end of the game)
    with pytest.raises(ValueError, match="unknown hint advisor 'oracle'"):
        HintWriter("oracle")


def test_play_gains_equal_a_recount_with_the_scorer():
    writer = HintWriter()
    checked = 0
    for state, pending in states(2, 3, 9):
        tv = table_view(state, state.current_player, pending)
        if tv.decision is not A.Decision.PLAY_CARD or not state.arboretums[state.current_player]:
            continue
        hints = writer.write(tv, mask_of(state, pending))
        arboretum = state.arboretums[state.current_player]
        base = sum(best_path(arboretum, s)[0] for s in state.species)
        for card in state.hands[state.current_player]:
            best = 0
            for cell in free_cells(arboretum):
                after = {**arboretum, cell: card}
                best = max(best, sum(best_path(after, s)[0] for s in state.species) - base)
            assert hints[card] == pytest.approx(min(best / 20, 1.0))
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("advisor", sorted(ADVISORS))
def test_hints_do_not_depend_on_hidden_cards(advisor):
    """Swapping opponents' unknown hand cards with deck cards leaves the mover's hints alone,
    the advice of every advisor included."""
    writer = HintWriter(advisor)
    rng = np.random.default_rng(3)
    compared = 0
    every = 4 if advisor == "greedy" else 9
    for i, (state, pending) in enumerate(states(3, 2, 21)):
        if i % every:
            continue
        me = state.current_player
        tv = table_view(state, me, pending)
        mask = mask_of(state, pending)
        before = writer.write(tv, mask).copy()
        other = state.clone()
        for p in range(3):
            if p == me:
                continue
            hidden = sorted(other.hands[p] - other.known[p])
            for card in hidden:
                if not other.deck:
                    break
                j = int(rng.integers(len(other.deck)))
                other.hands[p].discard(card)
                other.hands[p].add(other.deck[j])
                other.deck[j] = card
        after = HintWriter(advisor).write(table_view(other, me, pending), mask)
        np.testing.assert_array_equal(before, after)
        compared += 1
    assert compared > 15


def test_the_cache_stays_bounded_over_10000_games():
    """Two fresh arboretums per game for 10,000 games (what a long evaluation feeds a writer):
    the placement-table cache never holds more than CACHE_SIZE of them."""
    writer = HintWriter()
    species = (0, 1, 2, 3, 4, 5)
    seen = 0
    for game in range(10_000):
        for player in range(2):
            arboretum = {0: (game + player) % 48}
            writer.best_gain(arboretum, free_cells(arboretum), species, 7)
            seen += 1
            assert len(writer._tables) <= CACHE_SIZE
    assert seen == 20_000 and len(writer._tables) == CACHE_SIZE


def test_cached_tables_follow_a_growing_arboretum():
    """The cache is keyed by the arboretum and its size: gains after a card is added are new."""
    writer = HintWriter()
    for state, pending in states(2, 1, 31):
        arboretum = state.arboretums[state.current_player]
        if not arboretum:
            continue
        for card in list(state.hands[state.current_player])[:2]:
            fresh = HintWriter().best_gain(dict(arboretum), free_cells(arboretum), state.species, card)
            assert writer.best_gain(arboretum, free_cells(arboretum), state.species, card) == fresh


def test_single_agent_env_with_hints():
    """``SingleAgentEnv(hints=True)``: the observation carries the hints after the standard
    sections, with the advisor's legal choice as the advice, through a whole game."""
    from arboretum_env.observation import OBS_SIZE
    from arboretum_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv(num_players=2, opponents="greedy", hints=True, advisor="tempo", seed=4)
    assert env.observation_space.shape == (OBS_SIZE + HINT_SIZE,)
    obs, _ = env.reset(seed=4)
    tempo, steps, done = TempoAgent(), 0, False
    while not done:
        assert obs.shape == (OBS_SIZE + HINT_SIZE,) and env.observation_space.contains(obs)
        mask = env.action_masks()
        advice = obs[OBS_SIZE + ADVICE_OFFSET:]
        assert advice.sum() == 1 and mask[int(advice.argmax())] == 1
        if steps % 5 == 0:
            view = env.env.table_view(env.agent)
            assert int(advice.argmax()) == tempo.act(None, mask, view)
        obs, _, done, _, _ = env.step(int(advice.argmax()))
        steps += 1
    assert steps > 20
    plain = SingleAgentEnv(num_players=2, opponents="greedy", seed=4)
    assert plain.reset(seed=4)[0].shape == (OBS_SIZE,)
