"""Turn structure per RULES.md: draws, placement, the end of the game, skipped draws, and
illegal actions (IllegalActionError naming action, phase and reason; the state unchanged)."""

from __future__ import annotations

import pytest

from arboretum_env.engine import (
    DECK,
    Action,
    ActionKind,
    GameConfig,
    GameState,
    IllegalActionError,
    Phase,
    new_game,
    pack_cell,
    state_from_dict,
    unpack_cell,
)

SIX = ["cassia", "dogwood", "jacaranda", "olive", "lilac", "magnolia"]  # species 0..5


def fresh(n: int = 2, seed: int = 0) -> GameState:
    species = None if n == 4 else list(range({2: 6, 3: 8}[n]))
    return new_game(GameConfig(n, species=species, starting_player=0), seed)


def edited(state: GameState, **changes) -> GameState:
    """``state`` rebuilt through to_dict/state_from_dict with some fields replaced."""
    data = state.to_dict()
    data.update(changes)
    return state_from_dict(data)


def with_piles(state: GameState, piles: list[int], keep: int | None = None) -> GameState:
    """Move cards from the top of the deck onto the discard piles: ``piles[p]`` cards onto
    player p's pile; with ``keep``, all but ``keep`` of the remaining deck go under pile 1."""
    deck = list(state.deck)
    discards = [[] for _ in range(state.num_players)]
    for p, k in enumerate(piles):
        for _ in range(k):
            discards[p].append(deck.pop())
    if keep is not None:
        discards[1][:0] = deck[:len(deck) - keep]
        deck = deck[len(deck) - keep:]
    return edited(state, deck=deck, discards=discards)


def draw_twice(state: GameState) -> None:
    state.draw(DECK)
    state.draw(DECK)


def some_card(state: GameState, player: int | None = None) -> int:
    return min(state.hands[state.current_player if player is None else player])


def assert_illegal(state: GameState, action: Action, *reason: str) -> IllegalActionError:
    """``action`` raises IllegalActionError naming it, the phase and the reason, through both
    ``apply`` and the named method, and leaves the state exactly as it was."""
    before = state.to_dict()
    phase = state.phase.name
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert action.describe() in message
    assert f"phase {phase}" in message
    for fragment in reason:
        assert fragment in message
    assert state.to_dict() == before
    method = {ActionKind.DRAW: lambda: state.draw(action.source),
              ActionKind.PLAY: lambda: state.play(action.card, action.row, action.col),
              ActionKind.DISCARD: lambda: state.discard(action.card)}[action.kind]
    with pytest.raises(IllegalActionError, match=phase):
        method()
    assert state.to_dict() == before
    return info.value


def draw(source: int) -> Action:
    return Action(ActionKind.DRAW, source=source)


def play(card: int, row: int, col: int) -> Action:
    return Action(ActionKind.PLAY, card, row, col)


def discard(card: int) -> Action:
    return Action(ActionKind.DISCARD, card)


# ---------------------------------------------------------------- a turn

def test_a_turn_is_draw_draw_play_discard() -> None:
    s = fresh()
    assert s.phase is Phase.DRAW_FIRST and s.current_player == 0
    first = s.draw(DECK)
    assert s.phase is Phase.DRAW_SECOND and first in s.hands[0] and s.drawn == [first]
    second = s.draw(DECK)
    assert s.phase is Phase.PLAY and len(s.hands[0]) == 9 and s.drawn == [first, second]
    s.play(first, 0, 0)
    assert s.phase is Phase.DISCARD and s.arboretums[0] == {pack_cell(0, 0): first}
    s.discard(second)
    assert s.discards[0] == [second] and len(s.hands[0]) == 7
    assert (s.phase, s.current_player, s.turn, s.drawn) == (Phase.DRAW_FIRST, 1, 1, [])


def test_first_drawn_card_is_seen_before_the_second_source_is_chosen() -> None:
    s = with_piles(fresh(), [0, 1])
    top_of_deck = s.deck[-1]
    assert s.draw(DECK) == top_of_deck
    assert s.phase is Phase.DRAW_SECOND and s.drawn == [top_of_deck]
    assert set(s.draw_sources()) == {DECK, 1}


def test_both_draws_from_the_same_pile() -> None:
    s = with_piles(fresh(), [0, 3])
    a, b, c = s.discards[1]
    assert s.draw(1) == c
    assert s.discards[1] == [a, b]
    assert s.draw(1) == b  # the newly exposed card
    assert s.discards[1] == [a]
    assert {b, c} <= s.hands[0] and {b, c} <= s.known[0]
    assert s.phase is Phase.PLAY


def test_drawing_from_ones_own_pile() -> None:
    s = with_piles(fresh(), [2, 0])
    a, b = s.discards[0]
    assert 0 in s.draw_sources()
    assert s.draw(0) == b and s.draw(0) == a
    assert s.discards[0] == [] and {a, b} <= s.hands[0]


def test_cards_taken_from_piles_are_known_until_played_or_discarded() -> None:
    s = with_piles(fresh(), [0, 2])
    a, b = s.discards[1]
    s.draw(1)
    s.draw(1)
    assert s.known[0] == {a, b}
    s.play(b, 0, 0)
    s.discard(a)
    assert s.known[0] == set()


def test_first_card_may_go_anywhere() -> None:
    for row, col in [(0, 0), (7, -13), (-100, 100)]:
        s = fresh()
        draw_twice(s)
        card = some_card(s)
        s.play(card, row, col)
        assert s.arboretums[0] == {pack_cell(row, col): card}


def _one_card_arboretum() -> GameState:
    """Player 0 to draw, with one card already at (0, 0)."""
    s = fresh()
    deck = list(s.deck)
    placed = deck.pop(0)
    s = edited(s, deck=deck, arboretums=[[[0, 0, placed]], []],
               arboretum_order=[[placed], []])
    draw_twice(s)
    return s


def test_later_cards_go_orthogonally_adjacent_on_an_empty_cell() -> None:
    s = _one_card_arboretum()
    cells = {(a.row, a.col) for a in s.legal_actions()}
    assert cells == {(-1, 0), (1, 0), (0, -1), (0, 1)}
    card = some_card(s)
    s.play(card, 0, 1)
    assert s.arboretums[0][pack_cell(0, 1)] == card


@pytest.mark.parametrize("row, col, reason", [
    (0, 0, "that cell is taken"),
    (1, 1, "not orthogonally adjacent"),
    (-1, -1, "not orthogonally adjacent"),
    (0, 2, "not orthogonally adjacent"),
    (5, 5, "not orthogonally adjacent"),
])
def test_illegal_placement(row: int, col: int, reason: str) -> None:
    s = _one_card_arboretum()
    assert_illegal(s, play(some_card(s), row, col), reason)


# ---------------------------------------------------------------- the end of the game

def test_deck_running_out_on_the_first_draw() -> None:
    s = with_piles(fresh(), [2, 0], keep=1)
    assert len(s.deck) == 1 and s.discards[1]
    last = s.deck[-1]
    assert s.draw(DECK) == last
    assert s.deck == [] and s.phase is Phase.DRAW_SECOND
    assert set(s.draw_sources()) == {0, 1}  # the second draw comes from a discard pile
    assert_illegal(s, draw(DECK), "the deck is empty")
    s.draw(1)
    s.play(some_card(s), 0, 0)
    s.discard(some_card(s))
    assert s.phase is Phase.GAME_OVER and s.game_over
    assert s.current_player == 0 and s.turn == 1  # nobody else moves
    assert s.legal_actions() == []
    for action in (draw(DECK), draw(0), play(some_card(s, 1), 0, 0), discard(some_card(s, 1))):
        assert_illegal(s, action, "it is not time")


def test_deck_running_out_on_the_second_draw() -> None:
    s = with_piles(fresh(), [0, 0], keep=2)
    draw_twice(s)
    assert s.deck == [] and s.phase is Phase.PLAY
    s.play(some_card(s), 3, 3)
    s.discard(some_card(s))
    assert s.game_over and s.current_player == 0


def test_game_goes_on_while_the_deck_has_cards() -> None:
    s = with_piles(fresh(), [0, 0], keep=3)
    draw_twice(s)
    s.play(some_card(s), 0, 0)
    s.discard(some_card(s))
    assert not s.game_over and s.current_player == 1 and len(s.deck) == 1


def test_draw_with_no_source_is_skipped() -> None:
    s = fresh()
    deck = list(s.deck)
    rest = deck[:-1]  # 33 cards into the arboretums: no discard pile holds anything
    rows = [[[0, i, card] for i, card in enumerate(rest[:17])],
            [[0, i, card] for i, card in enumerate(rest[17:])]]
    s = edited(s, deck=deck[-1:], arboretums=rows,
               arboretum_order=[[card for *_, card in r] for r in rows])
    assert s.draw_sources() == [DECK]
    s.draw(DECK)
    assert s.phase is Phase.PLAY  # no source for the second draw: skipped
    assert len(s.hands[0]) == 8 and len(s.drawn) == 1
    assert_illegal(s, draw(DECK), "it is not time to draw")
    s.play(some_card(s), 1, 0)
    s.discard(some_card(s))
    assert s.game_over and len(s.hands[0]) == 6


# ---------------------------------------------------------------- illegal actions

def test_illegal_draw_from_a_player_who_does_not_exist() -> None:
    s = fresh()
    for source in (2, 5, -2):
        assert_illegal(s, draw(source), f"no player {source}")
    assert_illegal(fresh(3), draw(3), "no player 3")


def test_illegal_draw_from_an_empty_pile() -> None:
    s = fresh()
    assert_illegal(s, draw(1), "the discard pile of player 1 is empty")
    assert_illegal(s, draw(0), "the discard pile of player 0 is empty")


def test_illegal_draw_outside_the_draw_phases() -> None:
    s = fresh()
    draw_twice(s)
    assert_illegal(s, draw(DECK), "it is not time to draw")
    s.play(some_card(s), 0, 0)
    assert_illegal(s, draw(DECK), "it is not time to draw")


def test_illegal_play_outside_the_play_phase() -> None:
    s = fresh()
    card = some_card(s)
    assert_illegal(s, play(card, 0, 0), "it is not time to play")
    s.draw(DECK)
    assert_illegal(s, play(card, 0, 0), "it is not time to play")
    s.draw(DECK)
    s.play(card, 0, 0)
    assert_illegal(s, play(some_card(s), 0, 1), "it is not time to play")


def test_illegal_play_of_a_card_not_in_hand() -> None:
    s = fresh()
    draw_twice(s)
    not_in_play = 79  # willow 8: species 9 is not among species 0..5
    for card in (some_card(s, 1), not_in_play, s.deck[0]):
        assert_illegal(s, play(card, 0, 0), "that card is not in hand")


def test_illegal_play_of_a_nonsense_card() -> None:
    s = fresh()
    draw_twice(s)
    for card in (80, -1):
        assert_illegal(s, play(card, 0, 0), "not in hand")


def test_illegal_play_outside_the_coordinate_range() -> None:
    s = fresh()
    draw_twice(s)
    assert_illegal(s, play(some_card(s), 101, 0), "within +-100 for the first card")
    assert_illegal(s, play(some_card(s), 0, -101), "within +-100 for the first card")
    before = s.to_dict()
    with pytest.raises(IllegalActionError, match="the first card goes within"):
        s.play_cell(some_card(s), pack_cell(101, 0))  # a packed cell past the first card's bound
    assert s.to_dict() == before


def test_an_arboretum_grows_past_the_first_cards_bound() -> None:
    """The first card on the bound's corner: every action ``legal_actions`` offers is applied,
    whole games long, and the states round-trip (no size limit from the cell encoding)."""
    import random
    for seed in range(4):
        rng = random.Random(seed)
        s = fresh(seed=seed)
        s.draw(DECK)
        s.draw(DECK)
        s.play(some_card(s), 100, -100)
        while s.phase is not Phase.GAME_OVER:
            s.apply(rng.choice(s.legal_actions()))
            assert state_from_dict(s.to_dict()).to_dict() == s.to_dict()
        reach = max(abs(x) for cell in s.arboretums[0] for x in unpack_cell(cell))
        assert len(s.arboretums[0]) >= 15 and 100 < reach <= 117


def test_illegal_play_with_non_int_coordinates() -> None:
    s = fresh()
    draw_twice(s)
    assert_illegal(s, play(some_card(s), 0.0, 0), "must be ints")


def test_illegal_discard_outside_the_discard_phase() -> None:
    s = fresh()
    card = some_card(s)
    assert_illegal(s, discard(card), "it is not time to discard")
    draw_twice(s)
    assert_illegal(s, discard(card), "it is not time to discard")


def test_illegal_discard_of_a_card_not_in_hand() -> None:
    s = fresh()
    draw_twice(s)
    played = some_card(s)
    s.play(played, 0, 0)
    for card in (played, some_card(s, 1), 79):
        assert_illegal(s, discard(card), "that card is not in hand")


def test_illegal_action_of_the_wrong_player_cards() -> None:
    """It is player 1's turn: player 0's cards cannot be played or discarded."""
    s = fresh()
    draw_twice(s)
    s.play(some_card(s), 0, 0)
    s.discard(some_card(s))
    draw_twice(s)
    assert_illegal(s, play(some_card(s, 0), 0, 0), "by player 1", "not in hand")


def test_illegal_unknown_action_kind_names_the_phase() -> None:
    s = fresh()
    before = s.to_dict()
    with pytest.raises(IllegalActionError) as info:
        s.apply((7, -1, 0, 0, DECK))
    assert s.to_dict() == before
    assert "DRAW_FIRST" in str(info.value)


def test_unknown_action_kind_is_rejected_and_changes_nothing() -> None:
    s = fresh()
    before = s.to_dict()
    with pytest.raises(IllegalActionError, match="unknown action kind 7"):
        s.apply((7, -1, 0, 0, DECK))
    assert s.to_dict() == before


def test_numpy_integer_cards_are_taken_as_ints() -> None:
    """numpy integers (as a policy's argmax gives them) are accepted and stored as plain ints,
    so that the state stays JSON-able."""
    import json

    import numpy as np

    s = fresh()
    draw_twice(s)
    p = s.current_player
    played = some_card(s)
    s.play(np.int64(played), 0, 0)
    discarded = some_card(s)
    s.discard(np.int64(discarded))
    assert s.arboretums[p] == {pack_cell(0, 0): played} and s.discards[p] == [discarded]
    assert played not in s.hands[p] and discarded not in s.hands[p]
    stored = [*s.arboretums[p].values(), *s.discards[p], *(v for a in s.history for v in a)]
    assert all(type(v) is int for v in stored), [type(v) for v in stored]
    assert state_from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_numpy_integer_draw_source_is_a_player_index() -> None:
    import numpy as np

    s = with_piles(fresh(), [1, 0])
    top = s.discards[0][-1]
    drawn = s.draw(np.int64(0))
    assert drawn == top and top in s.hands[s.current_player] and s.discards[0] == []
    assert type(s.history[-1][-1]) is int and s.history[-1][-1] == 0
