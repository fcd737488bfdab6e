"""No leaks: reshuffling what an observer cannot see (the deck order; the cards of other hands
that the observer does not know of, swapped with deck cards or between those hands, hand sizes
kept) leaves that observer's observation unchanged, through every encoding path."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.batch import observe as batch_observe
from arboretum_env.batch import table as batch_table
from arboretum_env.actions import apply_id, legal_ids
from arboretum_env.engine import GameConfig, Phase, new_game
from arboretum_env.env import raw_env
from arboretum_env.observation import encode
from arboretum_env.table_view import table_view


def reshuffle_hidden(state, observer: int, rng: np.random.Generator, keep=()) -> bool:
    """Permute, in place, the cards ``observer`` cannot see: the deck and the unknown cards
    of the other hands (each hand keeps its size and its known cards); the cards in ``keep``
    (the mover's chosen card) stay. Cards drawn this turn follow their replacement. Returns
    whether anything could move."""
    n = state.num_players
    slots = [("deck", i) for i in range(len(state.deck))]
    for q in range(n):
        if q != observer:
            slots += [("hand", q, c) for c in sorted(state.hands[q] - state.known[q] - set(keep))]
    cards = [state.deck[s[1]] if s[0] == "deck" else s[2] for s in slots]
    if len(cards) < 2:
        return False
    shuffled = [cards[i] for i in rng.permutation(len(cards))]
    mapping = dict(zip(cards, shuffled))
    state.deck = [mapping[c] for c in state.deck]
    for q in range(n):
        if q != observer:
            known = state.known[q]
            state.hands[q] = {mapping.get(c, c) if c not in known else c for c in state.hands[q]}
    if state.current_player != observer:
        state.drawn = [mapping.get(c, c) if c not in state.known[state.current_player] else c
                       for c in state.drawn]
    return True


def random_positions(num_players: int, games: int, seed: int):
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = new_game(GameConfig(num_players), seed * 100 + g)
        pending = None
        while state.phase is not Phase.GAME_OVER:
            if rng.random() < 0.35:
                yield state.clone(), pending
            ids = legal_ids(state, pending)
            pending = apply_id(state, pending, ids[int(rng.random() * len(ids))])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_reshuffling_hidden_cards_changes_no_observation(num_players):
    rng = np.random.default_rng(num_players)
    checked = moved = 0
    for state, pending in random_positions(num_players, 6, seed=num_players):
        for observer in range(num_players):
            before = encode(table_view(state, observer, pending)).copy()
            shuffled = state.clone()
            if not reshuffle_hidden(shuffled, observer, rng):
                continue
            moved += shuffled.to_dict() != state.to_dict()
            after = encode(table_view(shuffled, observer, pending))
            assert np.array_equal(before, after), (observer, np.flatnonzero(before != after))
            if batch_table.available:  # the compiled fast path, from the reshuffled state
                table = batch_table.new_tables(1)
                batch_table.load(table[0], shuffled, pending)  # the kernel shows it to the mover only
                fast = np.zeros((1, before.size), np.float32)
                batch_observe.observe(table, np.array([observer]), fast)
                assert np.array_equal(before, fast[0])
            checked += 1
    assert checked > 300 and moved > checked // 2


@pytest.mark.parametrize("num_players,compiled", [(2, True), (4, True), (2, False), (4, False)])
def test_env_observations_survive_reshuffles_mid_game(num_players, compiled, monkeypatch):
    """The env's observers, mid-game, see nothing of a reshuffle of their hidden cards: the
    compiled path (its one-game table reloaded from the reshuffled state) and the reference
    encoder used without numba."""
    if compiled and not batch_table.available:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(batch_table, "available", compiled)
    rng = np.random.default_rng(7)
    e = raw_env(num_players=num_players)
    e.reset(seed=7)
    checked = 0
    while not all(e.terminations.values()):
        for agent in e.possible_agents:
            observer = int(agent.split("_")[1])
            before = e.observe(agent)["observation"].copy()
            keep = () if e.pending is None else (e.pending,)
            if rng.random() < 0.3 and reshuffle_hidden(e.state, observer, rng, keep):
                e._mask_step = -1  # observe again at this step, on the reshuffled state,
                if compiled:  # whose hidden hands changed behind the env's back
                    batch_table.load(e._table[0], e.state, e.pending)
                assert np.array_equal(e.observe(agent)["observation"], before)
                checked += 1
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(legal[int(rng.random() * len(legal))]))
    assert checked > 50


def test_what_other_players_drew_from_the_deck_stays_hidden():
    """During another player's turn the observer sees only the drawn cards that came from a
    discard pile; the pending card only once it is placed."""
    state = new_game(GameConfig(2, starting_player=0), 1)
    apply_id(state, None, 0)  # player 0 draws from the deck
    tv = table_view(state, 1, None)
    assert tv.view.drawn == ()
    state.discards[1].append(state.deck.pop())
    apply_id(state, None, 2)  # player 0 takes the top of player 1's pile
    tv = table_view(state, 1, None)
    assert tv.view.drawn == (state.drawn[1],)
    first, second = sorted(state.hands[0])[:2]
    assert table_view(state, 1, first).pending is None
    a = encode(table_view(state, 1, first)).copy()
    b = encode(table_view(state, 1, second))
    assert np.array_equal(a, b)  # which card was chosen stays hidden (that one was, is public)
