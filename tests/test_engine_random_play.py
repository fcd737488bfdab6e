"""Random legal play for 2, 3 and 4 players: invariants at every step, determinism, records,
serialisation, clones, and legal_actions() == what apply() accepts."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from arboretum_env.engine import (
    DECK,
    HAND_SIZE,
    Action,
    ActionKind,
    GameConfig,
    GameRecord,
    GameState,
    IllegalActionError,
    Phase,
    new_game,
    pack_cell,
    random_playout,
    score,
    state_from_dict,
    unpack_cell,
)

MAX_TURNS = {2: 34, 3: 43, 4: 52}  # RULES.md: the deck size after the deal
MIN_TURNS = {2: 17, 3: 22, 4: 26}  # two deck cards a turn
FAST_GAMES = {2: 2000, 3: 1200, 4: 1000}
STEPPED_GAMES = {2: 120, 3: 90, 4: 70}
HAND_IN_PHASE = {Phase.DRAW_FIRST: 7, Phase.DRAW_SECOND: 8, Phase.PLAY: 9, Phase.DISCARD: 8,
                 Phase.GAME_OVER: 7}


def neighbours(cell: int) -> set[int]:
    r, c = unpack_cell(cell)
    return {pack_cell(r - 1, c), pack_cell(r + 1, c), pack_cell(r, c - 1), pack_cell(r, c + 1)}


def all_cards(s: GameState) -> list[int]:
    cards = list(s.deck)
    for p in range(s.num_players):
        cards += [*s.hands[p], *s.discards[p], *s.arboretums[p].values()]
    return cards


def check_state(s: GameState) -> None:
    """Invariants that hold at every step of a normal game."""
    expected = sorted(sp * 8 + r for sp in s.species for r in range(8))
    assert sorted(all_cards(s)) == expected  # every card in exactly one place
    for p in range(s.num_players):
        size = HAND_IN_PHASE[s.phase] if p == s.current_player else HAND_SIZE
        assert len(s.hands[p]) == size, (p, s.phase)
        assert s.known[p] <= s.hands[p]
        arb = s.arboretums[p]
        if arb:
            border = set().union(*(neighbours(c) for c in arb)) - set(arb)
            assert set(s.frontier[p]) == border
    assert s.turn <= MAX_TURNS[s.num_players]
    if s.phase is Phase.GAME_OVER:
        assert s.deck == [] and s.legal_actions() == []
    else:
        assert s.deck or s.last_turn


def check_finished(s: GameState) -> None:
    """A finished game: bounds, placements adjacent to earlier cards, all hands back to 7."""
    n = s.num_players
    check_state(s)
    assert s.game_over
    assert MIN_TURNS[n] <= s.turn <= MAX_TURNS[n]
    assert len(s.history) == 4 * s.turn
    assert [len(h) for h in s.hands] == [HAND_SIZE] * n
    placed: list[set[int]] = [set() for _ in range(n)]
    plays = [a for a in s.history if a[0] == ActionKind.PLAY]
    assert len(plays) == s.turn
    for k, (_, card, row, col, _) in enumerate(plays):
        p = (s.starting_player + k) % n
        cell = pack_cell(row, col)
        assert not placed[p] or (cell not in placed[p] and neighbours(cell) & placed[p])
        placed[p].add(cell)
        assert s.arboretums[p][cell] == card
    assert [set(a) for a in s.arboretums] == placed
    # the last card of the deck was drawn in the final turn
    last_turn_draws = s.history[-4:-2]
    assert any(a[0] == ActionKind.DRAW and a[4] == DECK for a in last_turn_draws)


def play_fast(n: int, seed: int) -> GameState:
    state = new_game(GameConfig(n), seed)
    return random_playout(state, np.random.default_rng(seed))


# ---------------------------------------------------------------- volume: random_playout

@pytest.mark.parametrize("n", [2, 3, 4])
def test_random_playouts_keep_the_invariants(n: int) -> None:
    turns = Counter()
    for seed in range(FAST_GAMES[n]):
        s = play_fast(n, seed)
        check_finished(s)
        turns[s.turn] += 1
        result = score(s)
        assert len(result.players) == n and result.winners
        assert all(p.total == sum(sc.points for sc in p.species.values()) for p in result.players)
        if seed % 10 == 0:
            assert s.to_dict() == play_fast(n, seed).to_dict()  # same seed, same game
            assert GameRecord.of(s).replay() == s
    assert len(turns) > 3  # games of various lengths


@pytest.mark.parametrize("n", [2, 3, 4])
def test_random_playout_from_mid_game(n: int) -> None:
    rng = np.random.default_rng(n)
    for seed in range(30):
        s = new_game(GameConfig(n), seed)
        for _ in range(int(rng.integers(0, 60))):
            if s.game_over:
                break
            actions = s.legal_actions()
            s.apply(actions[int(rng.integers(len(actions)))])
        random_playout(s, rng)
        check_finished(s)


def test_generator_seeded_game_has_no_record() -> None:
    s = new_game(GameConfig(2), np.random.default_rng(3))
    with pytest.raises(ValueError, match="Generator"):
        GameRecord.of(s)


# ---------------------------------------------------------------- step by step

def candidate_actions(s: GameState, rng: np.random.Generator) -> list[Action]:
    """Actions of every kind, legal or not, around the current position."""
    n = s.num_players
    out = [Action(ActionKind.DRAW, source=src) for src in range(-2, n + 1)]
    p = s.current_player
    others = [c for c in range(80) if c not in s.hands[p]]
    cards = sorted(s.hands[p]) + [int(x) for x in rng.choice(others, 2, replace=False)]
    arb = s.arboretums[p]
    if arb:
        rows = [unpack_cell(c)[0] for c in arb]
        cols = [unpack_cell(c)[1] for c in arb]
        cells = [(r, c) for r in range(min(rows) - 2, max(rows) + 3)
                 for c in range(min(cols) - 2, max(cols) + 3)]
    else:
        cells = [(0, 0), (4, -3)]
    out += [Action(ActionKind.PLAY, card, r, c) for card in cards for r, c in cells]
    out += [Action(ActionKind.DISCARD, card) for card in range(80)]
    return out


def check_legal_actions_exact(s: GameState, rng: np.random.Generator) -> None:
    legal = set(s.legal_actions())
    before = s.to_dict()
    accepted = set()
    for action in candidate_actions(s, rng):
        c = s.clone()
        try:
            c.apply(action)
        except IllegalActionError:
            if rng.random() < 0.02:
                assert c.to_dict() == before
            continue
        accepted.add(action)
    assert s.to_dict() == before
    assert legal <= accepted
    extra = accepted - legal
    # legal_actions lists the first card of an arboretum at (0, 0) only, though any cell is
    # accepted (RULES.md: the first card may go anywhere)
    assert all(a.kind == ActionKind.PLAY and not s.arboretums[s.current_player]
               and a.card in s.hands[s.current_player] for a in extra), extra
    assert len(s.legal_actions()) == len(legal)  # no duplicates


def check_clone_independent(s: GameState, rng: np.random.Generator) -> None:
    before = s.to_dict()
    frontiers = [set(f) for f in s.frontier]
    c = s.clone()
    actions = c.legal_actions()
    c.apply(actions[int(rng.integers(len(actions)))])
    c.hands[0].add(999)
    c.deck.append(998)
    c.discards[-1].append(997)
    c.arboretums[0][pack_cell(90, 90)] = 5
    c.known[0].add(996)
    c.history.append((0, -1, 0, 0, -1))
    assert s.to_dict() == before
    assert [set(f) for f in s.frontier] == frontiers


def check_round_trip(s: GameState, rng: np.random.Generator) -> None:
    data = json.loads(json.dumps(s.to_dict()))
    r = state_from_dict(data)
    assert r.to_dict() == s.to_dict() and r == s
    assert [set(f) for f in r.frontier] == [set(f) for f in s.frontier]
    assert set(r.legal_actions()) == set(s.legal_actions())
    seed = int(rng.integers(1 << 30))
    a = random_playout(s.clone(), np.random.default_rng(seed))
    b = random_playout(r, np.random.default_rng(seed))
    assert a.to_dict() == b.to_dict()


def step_through(n: int, seed: int, deep: bool) -> GameState:
    """One game decision by decision (legal_actions + apply, seeded Generator), checking the
    invariants at every step; with ``deep``, the costlier checks at sampled steps."""
    rng = np.random.default_rng(seed)
    check_rng = np.random.default_rng(seed + 1_000_000)  # the checks leave ``rng`` alone
    s = new_game(GameConfig(n), seed)
    placed = [set() for _ in range(n)]
    step = 0
    while not s.game_over:
        check_state(s)
        if deep and step % 9 == 4:
            check_legal_actions_exact(s, check_rng)
            check_clone_independent(s, check_rng)
        if deep and step % 23 == 11:
            check_round_trip(s, check_rng)
        actions = s.legal_actions()
        assert actions and len(set(actions)) == len(actions)
        assert {a.kind for a in actions} == {
            Phase.DRAW_FIRST: {ActionKind.DRAW}, Phase.DRAW_SECOND: {ActionKind.DRAW},
            Phase.PLAY: {ActionKind.PLAY}, Phase.DISCARD: {ActionKind.DISCARD}}[s.phase]
        action = actions[int(rng.integers(len(actions)))]
        p = s.current_player
        if action.kind == ActionKind.PLAY:
            cell = pack_cell(action.row, action.col)
            assert not placed[p] or (cell not in placed[p] and neighbours(cell) & placed[p])
            placed[p].add(cell)
        turn = s.turn
        s.apply(action)
        if action.kind == ActionKind.DISCARD:
            assert s.turn == turn + 1
            if not s.game_over:
                assert s.current_player == (p + 1) % n
                assert all(len(h) == HAND_SIZE for h in s.hands)  # between turns
        step += 1
    check_finished(s)
    return s


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.slow
def test_step_by_step_games(n: int) -> None:
    for seed in range(STEPPED_GAMES[n]):
        s = step_through(n, seed, deep=seed % 4 == 0)
        if seed % 3 == 0:
            again = step_through(n, seed, deep=False)
            assert again.to_dict() == s.to_dict()
        record = GameRecord.of(s)
        assert record.replay() == s
        assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
        upto = int(len(record.actions) * 0.6)
        mid = record.replay(upto)
        assert len(mid.history) == upto
        assert state_from_dict(mid.to_dict()) == mid


def test_round_trip_of_a_finished_game() -> None:
    s = play_fast(3, 11)
    r = state_from_dict(json.loads(json.dumps(s.to_dict())))
    assert r == s and r.game_over and r.legal_actions() == []
    assert score(r) == score(s)
