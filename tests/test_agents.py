"""Agents: the interface, RandomAgent, GreedyAgent (its heuristics and its strength), the
registry and the engine-level game loop (arboretum_env/agents)."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env import actions as A
from arboretum_env.agents import (
    AGENT_REGISTRY,
    BASELINES,
    HEURISTIC_AGENTS,
    Agent,
    GreedyAgent,
    RandomAgent,
    make_agent,
    register_agent,
)
from arboretum_env.agents.arena import play_game
from arboretum_env.engine.paths import PathTables
from arboretum_env.engine import (
    GameConfig,
    IllegalActionError,
    Phase,
    best_path,
    make_card,
    new_game,
    pack_cell,
    score,
)
from arboretum_env.observation import OBS_SIZE, encode
from arboretum_env.table_view import table_view

C, D, J, O, L, G = range(6)  # cassia, dogwood, jacaranda, olive, lilac, magnolia
SIX = (C, D, J, O, L, G)


def card(species: int, rank: int) -> int:
    return make_card(species, rank)


def build_state(hands, arboretums, discards=((), ()), phase=Phase.PLAY, known=None, seed=0):
    """A 2-player game with player 0 to move, the given hands, arboretums ({(row, col): card})
    and discard piles; every other card of the six species is in the deck."""
    state = new_game(GameConfig(2, species=SIX, starting_player=0), seed)
    used = set()
    for p in range(2):
        state.hands[p].clear()
        state.hands[p].update(hands[p])
        state.arboretums[p].clear()
        for (r, c), x in arboretums[p].items():
            state.arboretums[p][pack_cell(r, c)] = x
        empty = sorted({cell + off for cell in state.arboretums[p] for off in (-256, 1, 256, -1)}
                       - set(state.arboretums[p]))
        kind = type(state.frontier[p])
        state.frontier[p] = dict.fromkeys(empty) if kind is dict else set(empty)
        state.discards[p][:] = list(discards[p])
        state.known[p].clear()
        if known:
            state.known[p].update(known[p])
        used |= set(hands[p]) | set(arboretums[p].values()) | set(discards[p])
    assert sum(len(h) for h in hands) + sum(len(a) for a in arboretums) + sum(
        len(d) for d in discards) == len(used), "a card is used twice"
    state.deck[:] = [x for x in state.deck if x not in used]
    state.phase = phase
    state.current_player = 0
    return state


def act(agent, state, pending=None) -> int:
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    A.write_mask(state, pending, mask)
    return agent.act(np.zeros(OBS_SIZE, np.float32), mask, table_view(state, state.current_player, pending))


# ----------------------------------------------------------------------------- interface
def test_agents_implement_the_interface():
    for agent in (RandomAgent(0), GreedyAgent(), make_agent("random", 1), make_agent("greedy")):
        assert isinstance(agent, Agent)
        agent.seed(3)
        agent.seed(None)


@pytest.mark.parametrize("agent", [RandomAgent(0), GreedyAgent()])
def test_an_all_zero_mask_is_refused(agent):
    state = new_game(GameConfig(2), 0)
    view = table_view(state, 0, None)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros(OBS_SIZE, np.float32), np.zeros(A.NUM_ACTIONS, np.int8), view)


def test_greedy_needs_the_view():
    state = new_game(GameConfig(2), 0)
    mask = A.write_mask(state, None, np.zeros(A.NUM_ACTIONS, np.int8))
    with pytest.raises(ValueError, match="TableView"):
        GreedyAgent().act(np.zeros(OBS_SIZE, np.float32), mask, None)


def test_random_agent_is_uniform_over_legal_actions_and_seeded():
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    legal = [3, 17, 100, 400]
    mask[legal] = 1
    agent = RandomAgent(7)
    picks = [agent.act(None, mask) for _ in range(4000)]
    counts = np.bincount(picks, minlength=A.NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == set(legal)
    assert counts[legal].min() > 850  # about 1000 each
    again = RandomAgent(7)
    assert [again.act(None, mask) for _ in range(50)] == picks[:50]
    agent.seed(7)
    assert [agent.act(None, mask) for _ in range(50)] == picks[:50]


def test_make_agent_and_the_registry():
    assert isinstance(make_agent("random", 0), RandomAgent)
    assert isinstance(make_agent("GREEDY"), GreedyAgent)
    with pytest.raises(ValueError, match="unknown agent 'nope': expected one of .*greedy.*random"):
        make_agent("nope")
    seen = {}

    def factory(argument, seed):
        seen["args"] = (argument, seed)
        return RandomAgent(seed)

    register_agent("testkind", factory)
    try:
        assert isinstance(make_agent("testkind:some/file.pt", 5), RandomAgent)
        assert seen["args"] == ("some/file.pt", 5)
        with pytest.raises(ValueError, match="already registered"):
            register_agent("testkind", factory)
    finally:
        AGENT_REGISTRY.pop("testkind")


def test_one_list_of_baseline_agents():
    """The agents registry is the one list of built-in agents: make_agent builds each by name
    with its seed, and the training config reads the same dict."""
    import training.config

    assert training.config.BASELINES is BASELINES
    assert set(BASELINES) == {"random", *HEURISTIC_AGENTS} and "greedy" in HEURISTIC_AGENTS
    for name, cls in BASELINES.items():
        agent = make_agent(name, 3)
        assert type(agent) is cls and name in AGENT_REGISTRY
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[[A.DRAW_DECK, A.DRAW_DISCARD + 1, A.DRAW_DISCARD + 2]] = 1
    made, direct = make_agent("random", 3), RandomAgent(3)
    assert [made.act(None, mask) for _ in range(30)] == [direct.act(None, mask) for _ in range(30)]


# ----------------------------------------------------------------------------- path tables
def test_path_tables_match_best_path_with_the_card_added():
    rng = np.random.default_rng(1)
    checked = 0
    for g in range(60):
        n = 2 + g % 3
        state = new_game(GameConfig(n), g)
        for _ in range(int(rng.integers(10, 200))):
            if state.game_over:
                break
            legal = state.legal_actions()
            state.apply(legal[rng.integers(len(legal))])
        for p in range(n):
            arboretum = state.arboretums[p]
            if not arboretum:
                continue
            tables = PathTables(arboretum, state.species)
            assert tables.base == [best_path(arboretum, s)[0] for s in state.species]
            free = [x for s in state.species for x in range(8 * s, 8 * s + 8)
                    if x not in arboretum.values()]
            for cell in list(state.frontier[p])[:5]:
                for x in rng.choice(free, 6, replace=False):
                    x = int(x)
                    got = tables.through(cell, x)
                    arboretum[cell] = x
                    want = [best_path(arboretum, s)[0] for s in state.species]
                    del arboretum[cell]
                    assert got == want
                    weights = rng.random(len(state.species))
                    assert tables.gain(cell, x, weights) == pytest.approx(
                        float(np.dot(weights, np.array(want) - np.array(tables.base))))
                    checked += 1
    assert checked > 1000


# ----------------------------------------------------------------------------- greedy heuristics
BURIED = [card(C, 5), card(C, 6), card(C, 7), card(C, 8), card(D, 4)]
"""Cassia 5-8 buried in P1's discard pile: nobody can outbid P0 for the cassia right."""


def _building_cassia():
    """P0 has cassia 1-2-3 in a row; P1 has a few unrelated cards."""
    mine = {(0, 0): card(C, 1), (0, 1): card(C, 2), (0, 2): card(C, 3)}
    theirs = {(0, 0): card(J, 8), (0, 1): card(O, 3)}
    return mine, theirs


def test_greedy_plays_the_card_that_extends_its_path_where_it_extends():
    mine, theirs = _building_cassia()
    hand0 = [card(C, 4), card(D, 2), card(D, 5), card(J, 3), card(J, 6), card(O, 2), card(O, 7),
             card(L, 4), card(G, 3)]
    hand1 = [card(D, 1), card(J, 1), card(O, 1), card(L, 1), card(G, 1), card(G, 8), card(L, 8)]
    state = build_state([hand0, hand1], [mine, theirs], discards=([], BURIED))
    agent = GreedyAgent()
    choice = act(agent, state)
    assert choice == A.PLAY_CARD + card(C, 4)
    pending = A.apply_id(state, None, choice)
    cell = act(agent, state, pending)
    A.apply_id(state, pending, cell)
    # 1-2-3-4 all cassia from a 1: 4 x 2 + 1
    assert best_path(state.arboretums[0], C)[0] == 9


def test_greedy_recomputes_the_best_cell_for_any_pending_card():
    mine, theirs = _building_cassia()
    mine[(1, 2)] = card(J, 2)
    hand0 = [card(C, 4), card(D, 2), card(D, 5), card(J, 3), card(J, 6), card(O, 2), card(O, 7),
             card(L, 4), card(G, 3)]
    hand1 = [card(D, 1), card(J, 1), card(O, 1), card(L, 1), card(G, 1), card(G, 8), card(L, 8)]
    state = build_state([hand0, hand1], [mine, theirs], discards=([], BURIED))
    # someone else chose jacaranda 6: the best cell is next to the jacaranda 2 (a 2-card path)
    pending = A.apply_id(state, None, A.PLAY_CARD + card(J, 6))
    A.apply_id(state, pending, act(GreedyAgent(), state, pending))
    assert best_path(state.arboretums[0], J)[0] == 2


def test_greedy_draws_a_useful_discard_and_otherwise_the_deck():
    mine, theirs = _building_cassia()
    hand0 = [card(D, 2), card(D, 5), card(J, 3), card(J, 6), card(O, 2), card(O, 7), card(L, 4)]
    hand1 = [card(D, 1), card(J, 1), card(O, 1), card(L, 1), card(G, 1), card(G, 8), card(L, 8)]
    useful = build_state([hand0, hand1], [mine, theirs],
                         discards=([], BURIED + [card(G, 2), card(C, 4)]), phase=Phase.DRAW_FIRST)
    assert act(GreedyAgent(), useful) == A.DRAW_DISCARD + 1
    useless = build_state([hand0, hand1], [mine, theirs],
                          discards=([], BURIED + [card(C, 4), card(G, 2)]), phase=Phase.DRAW_FIRST)
    assert act(GreedyAgent(), useless) == A.DRAW_DECK


def test_greedy_does_not_discard_what_extends_an_opponents_path():
    mine = {(0, 0): card(J, 1), (0, 1): card(J, 2), (0, 2): card(J, 3)}
    junk = [card(O, 4), card(O, 8), card(L, 8)]  # no paths of olive or lilac anywhere
    hand0 = [card(J, 4), card(J, 5), card(J, 6), card(J, 7), card(J, 8)] + junk
    hand1 = [card(C, 1), card(C, 2), card(C, 3), card(L, 1), card(G, 1), card(G, 8), card(L, 2)]
    # P1: dogwood 1 and 7 with an empty cell between them: olive 4 there makes 1-4-7 (4 points)
    theirs = {(0, 0): card(D, 1), (0, 2): card(D, 7), (1, 0): card(C, 8), (1, 1): card(C, 7),
              (1, 2): card(C, 6)}
    state = build_state([hand0, hand1], [mine, theirs], phase=Phase.DISCARD)
    threatened = act(GreedyAgent(), state) - A.DISCARD
    assert threatened in hand0 and not 2 <= (threatened & 7) + 1 <= 6, \
        "any rank 2..6 would complete dogwood 1-x-7 for P1"
    # without the dogwood 1 nothing is dangerous, and the same hand loses a rank 2..6 card
    # (olive 4 is worth nothing to P0; jacaranda 4, 5 and 6 each extend 1-2-3 equally well)
    calm = dict(theirs)
    del calm[(0, 0)]
    hand1_calm = hand1[:-1] + [card(D, 1)]
    state = build_state([hand0, hand1_calm], [mine, calm], phase=Phase.DISCARD)
    relaxed = act(GreedyAgent(), state) - A.DISCARD
    assert 2 <= (relaxed & 7) + 1 <= 6


def test_greedy_keeps_a_card_that_wins_the_right_to_its_path():
    # P0: cassia 1-2-3-4-8 in a row (13 points). The cassia 7 in hand cannot improve it, and it
    # has the lowest id (the tie-break would throw it first), but it outbids an opponent who
    # may hold the unseen cassia 5 or 6 (not both: 11 > 7).
    mine = {(0, i): card(C, r) for i, r in enumerate((1, 2, 3, 4, 8))}
    hand0 = [card(C, 7), card(D, 3), card(J, 4), card(O, 5), card(L, 6), card(G, 7), card(D, 8),
             card(J, 2)]
    hand1 = [card(D, 1), card(J, 1), card(O, 1), card(L, 1), card(G, 1), card(L, 8), card(O, 8)]
    state = build_state([hand0, hand1], [mine, {}], phase=Phase.DISCARD)
    tables = PathTables(state.arboretums[0], SIX)
    assert all(tables.through(cell, card(C, 7)) == tables.base for cell in state.frontier[0])
    choice = act(GreedyAgent(), state) - A.DISCARD
    assert choice != card(C, 7) and choice in hand0
    # once cassia 5 and 6 are seen in a discard pile, nobody else can hold cassia: the right is
    # safe (a 0-0 tie scores) and the cassia 7 is worth nothing any more
    state = build_state([hand0, hand1], [mine, {}], discards=([card(C, 5), card(C, 6), card(G, 2)], []),
                        phase=Phase.DISCARD)
    assert act(GreedyAgent(), state) - A.DISCARD == card(C, 7)


# ----------------------------------------------------------------------------- the game loop
def test_play_game_gives_agents_the_env_observation_and_the_view():
    calls = []

    class Recorder(Agent):
        def __init__(self, seat):
            self.seat, self.rng = seat, np.random.default_rng(seat)

        def act(self, observation, action_mask, view=None):
            assert view.view.observer == self.seat and view.on_turn
            assert observation.shape == (OBS_SIZE,) and observation.dtype == np.float32
            np.testing.assert_array_equal(observation, encode(view))
            legal = np.flatnonzero(action_mask)
            calls.append(len(legal))
            return int(self.rng.choice(legal))

    state = new_game(GameConfig(3), 11)
    result = play_game([Recorder(0), Recorder(1), Recorder(2)], state=state)
    assert state.phase is Phase.GAME_OVER
    assert result == score(state)
    plays = sum(1 for entry in state.history if entry[0] == 1)  # a play is two decisions
    assert len(calls) == len(state.history) + plays


def test_play_game_is_reproducible_and_reports_illegal_actions():
    a = play_game([GreedyAgent(), RandomAgent(3)], 2, 5)
    b = play_game([GreedyAgent(), RandomAgent(3)], 2, 5)
    assert a == b
    with pytest.raises(IllegalActionError, match="illegal action 488"):
        play_game([lambda obs, mask, view: 488, RandomAgent(0)], 2, 0)
    with pytest.raises(ValueError, match="3 agents for a 2-player game"):
        play_game([RandomAgent(0)] * 3, state=new_game(GameConfig(2), 0))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_greedy_plays_legal_whole_games_with_any_table_size(n):
    for seed in range(2):
        agents = [GreedyAgent() if p % 2 == 0 else RandomAgent(p + seed) for p in range(n)]
        result = play_game(agents, n, seed)
        assert len(result.totals) == n


@pytest.mark.slow
def test_greedy_beats_random_in_at_least_90_percent_of_two_player_games():
    greedy = GreedyAgent()
    games, wins = 40, 0
    for i in range(games):
        seat = i % 2
        agents = [greedy, RandomAgent(i)] if seat == 0 else [RandomAgent(i), greedy]
        result = play_game(agents, 2, 1000 + i // 2)
        wins += result.winners == (seat,)
    assert wins >= 0.9 * games, f"greedy won {wins} of {games}"


@pytest.mark.slow
def test_greedy_beats_random_with_more_players():
    wins = 0
    for i in range(8):
        n = 3 + i % 2
        seat = i % n
        agents = [RandomAgent(10 * i + p) for p in range(n)]
        agents[seat] = GreedyAgent()
        wins += seat in play_game(agents, n, i).winners
    assert wins >= 6
