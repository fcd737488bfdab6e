"""Agents anywhere (issue 15 point 5): one seat driven only from its own view (``arboretum_env.seat``):
a ``SeatTracker`` fed the public moves, the mask and observation derived from its view, decisions
made from those; everything equal to the env's own in 50 games. Also ``determinize`` (a full state
consistent with the view), ``actions.cell_of`` (the inverse of ``cell_id``) and the ``shipped``
agent name."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env import actions as A
from arboretum_env.agents import make_agent
from arboretum_env.engine import DECK, observe
from arboretum_env.env import raw_env
from arboretum_env.seat import SeatTracker, action_mask, determinize, legal_ids, move_of, observation
from arboretum_env.table_view import table_view

GAMES = 50


def same_view(a, b) -> None:
    for field in a.__dataclass_fields__:
        x, y = getattr(a, field), getattr(b, field)
        if field == "arboretums":
            x, y = [dict(v) for v in x], [dict(v) for v in y]
        elif field in ("known", "discards"):
            x, y = [list(v) if field == "discards" else set(v) for v in x], [
                list(v) if field == "discards" else set(v) for v in y]
        elif field == "hand":
            x, y = set(x), set(y)
        assert x == y, field


def play_tracked(game: int, num_players: int, rng: np.random.Generator, checks: dict) -> None:
    env = raw_env(num_players=num_players)
    env.reset(seed=1000 + game)
    state = env.state
    seat = game % num_players
    me = env.possible_agents[seat]
    tracker = SeatTracker(seat, num_players, state.species, state.starting_player, set(state.hands[seat]))
    agent = make_agent("greedy") if game % 2 else make_agent("random", seed=game)
    other = make_agent("random", seed=10_000 + game)
    pending = None  # this seat's chosen card: the tracked seat's own knowledge
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        same_view(tracker.view(pending).view, observe(state, seat))  # every step, either seat to move
        if name == me:
            tv = tracker.view(pending)
            assert tv.decision == env.table_view(me).decision and tv.pending == env.pending
            mask, ob = action_mask(tv), observation(tv)
            assert np.array_equal(mask, obs["action_mask"]) and legal_ids(tv) == A.legal_ids(state, env.pending)
            assert np.array_equal(ob, obs["observation"])
            action = agent.act(ob, mask, tv)
            if game % 2:  # the deterministic agent: the same decision from the env's own inputs
                assert action == agent.act(obs["observation"], obs["action_mask"], env.table_view(me))
            move = move_of(tv, action)
            checks["decisions"] += 1
        else:
            action = other.act(obs["observation"], obs["action_mask"], env.table_view(name))
            move = None
        mover, before = state.current_player, len(state.history)
        env.step(action)
        if move is not None and move[0] == "choose":
            pending = move[1]
            continue
        if len(state.history) == before:  # another seat chose its card: not public
            continue
        entry = state.history[-1]
        if move is not None:  # the seat's own move, as it would send it to a server
            pending = None
            expected = {"draw": (0, -1, 0, 0, move[1]), "discard": (2, move[1], 0, 0, DECK)}.get(
                move[0], (1, *move[1:], DECK))
            assert tuple(entry) == expected
        card = state.drawn[-1] if entry[0] == 0 and mover == seat and entry[4] == DECK else None
        tracker.apply(mover, entry, card)
        if rng.random() < 0.05 and not state.game_over:  # a determinized state matches the view
            view = tracker.view(pending)
            full = determinize(view, rng)
            same_view(observe(full, seat), view.view)
            assert full.current_player == state.current_player and full.phase is state.phase
            if view.on_turn:
                assert A.legal_ids(full, pending) == legal_ids(view)
                assert np.array_equal(observation(table_view(full, seat, pending)), observation(view))
            checks["determinized"] += 1
    assert tracker.phase is state.phase and tracker.turn == state.turn


def test_one_seat_driven_from_its_view_alone_matches_the_env():
    rng = np.random.default_rng(0)
    checks = {"decisions": 0, "determinized": 0}
    for game in range(GAMES):
        play_tracked(game, 2 + game % 3, rng, checks)
    print(checks)
    assert checks["decisions"] > 50 * 50 and checks["determinized"] > 100


def test_cell_of_inverts_cell_id():
    rng = np.random.default_rng(1)
    env = raw_env(num_players=2)
    env.reset(seed=3)
    for _ in range(200):
        if env.state.game_over:
            break
        for arboretum in env.state.arboretums:
            for action in (A.PLAY_CELL, A.DISCARD - 1, *rng.integers(A.PLAY_CELL, A.DISCARD, 5)):
                assert A.cell_id(arboretum, *A.cell_of(arboretum, int(action))) == action
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    with pytest.raises(ValueError, match="not a frame cell"):
        A.cell_of({}, A.DISCARD)


def test_tracker_refuses_moves_out_of_order():
    env = raw_env(num_players=2)
    env.reset(seed=5)
    s = env.state
    seat = 1 - s.current_player
    tracker = SeatTracker(seat, 2, s.species, s.starting_player, s.hands[seat])
    with pytest.raises(ValueError, match="out of order"):
        tracker.discard(seat, next(iter(s.hands[seat])))
    with pytest.raises(ValueError, match="pass the card"):
        SeatTracker(s.current_player, 2, s.species, s.starting_player, s.hands[s.current_player]).draw(
            s.current_player, DECK)


def test_determinize_refuses_an_inconsistent_view():
    env = raw_env(num_players=2)
    env.reset(seed=6)
    view = env.table_view(env.agent_selection)
    bad = view.view.__class__(**{**view.view.__dict__, "deck_size": view.view.deck_size + 1})
    with pytest.raises(ValueError, match="inconsistent view"):
        determinize(bad, 0)


def test_shipped_is_an_agent_name():
    from arboretum_env.agents import SHIPPED_POLICY
    from arboretum_env.agents.policy import PolicyAgent

    agent = make_agent("shipped", seed=1)
    assert isinstance(agent, PolicyAgent) and agent.path == str(SHIPPED_POLICY) and agent.hints.advisor == "tempo"
    with pytest.raises(ValueError, match="no argument"):
        make_agent("shipped:x")
