"""state_from_dict: exact round trips and a StateFormatError (never another exception,
never a stuck state) for malformed or inconsistent dicts."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from arboretum_env.engine import (
    GameConfig,
    Phase,
    StateFormatError,
    new_game,
    pack_cell,
    random_playout,
    state_from_dict,
)


def base() -> dict:
    return new_game(GameConfig(2, species=range(6), starting_player=0), 0).to_dict()


def three_cards_on_player_0(data: dict, order: list[int] | None) -> tuple[int, int, int]:
    """Move three deck cards to player 0's arboretum at (0, 1), (1, 0), (1, 1): connected,
    but the sorted cell list (0, 1), (1, 0) is not a placement order."""
    a, b, c = data["deck"].pop(), data["deck"].pop(), data["deck"].pop()
    data["arboretums"][0] = [[0, 1, a], [1, 0, b], [1, 1, c]]
    if order is None:
        del data["arboretum_order"]
    else:
        data["arboretum_order"][0] = [[a, b, c][i] for i in order]
    return a, b, c


def test_round_trip_through_json_at_every_step() -> None:
    rng = np.random.default_rng(1)
    s = new_game(GameConfig(3), 5)
    while not s.game_over:
        r = state_from_dict(json.loads(json.dumps(s.to_dict())))
        assert r == s
        assert [list(f) for f in r.frontier] == [list(f) for f in s.frontier]
        actions = s.legal_actions()
        s.apply(actions[int(rng.integers(len(actions)))])
    assert state_from_dict(s.to_dict()) == s


def test_arboretum_without_placement_order_is_rebuilt() -> None:
    data = base()
    a, b, c = three_cards_on_player_0(data, None)
    s = state_from_dict(data)
    assert s.arboretums[0] == {pack_cell(0, 1): a, pack_cell(1, 0): b, pack_cell(1, 1): c}
    assert set(s.frontier[0]) == {pack_cell(r, col) for r, col in
                                  [(-1, 1), (0, 2), (1, 2), (2, 1), (2, 0), (1, -1), (0, 0)]}


def test_arboretum_with_a_given_placement_order() -> None:
    data = base()
    a, b, c = three_cards_on_player_0(data, [0, 2, 1])
    s = state_from_dict(data)
    assert list(s.arboretums[0].values()) == [a, c, b]


def test_arboretum_order_that_is_not_a_placement_order() -> None:
    data = base()
    three_cards_on_player_0(data, [0, 1, 2])
    with pytest.raises(StateFormatError, match="not a placement order"):
        state_from_dict(data)


def test_arboretum_order_naming_a_missing_card() -> None:
    data = base()
    a, b, c = three_cards_on_player_0(data, [0, 2, 1])
    data["arboretum_order"][0][2] = data["deck"][0]
    with pytest.raises(StateFormatError, match="not a placement order"):
        state_from_dict(data)


def test_disconnected_arboretum() -> None:
    data = base()
    a, b = data["deck"].pop(), data["deck"].pop()
    data["arboretums"][1] = [[0, 0, a], [2, 0, b]]
    data["arboretum_order"][1] = [a, b]
    with pytest.raises(StateFormatError, match="player 1 is not orthogonally connected"):
        state_from_dict(data)


@pytest.mark.parametrize("key", ["hands", "discards", "known"])
def test_non_int_card_in_a_per_player_list(key: str) -> None:
    data = base()
    data[key][1] = [*data[key][1], "oak 3"]
    with pytest.raises(StateFormatError, match=key):
        state_from_dict(data)


def test_missing_fields() -> None:
    data = base()
    del data["deck"], data["phase"]
    with pytest.raises(StateFormatError, match="state is missing deck, phase"):
        state_from_dict(data)


def test_cards_not_those_of_the_species_in_play() -> None:
    data = base()
    data["deck"][0] = 79  # willow 8: willow is not in play
    with pytest.raises(StateFormatError, match="not exactly the cards"):
        state_from_dict(data)
    data = base()
    data["hands"][1].append(data["deck"][0])  # one card in two places
    with pytest.raises(StateFormatError, match="not exactly the cards"):
        state_from_dict(data)


def test_bad_phase_and_player() -> None:
    data = base()
    data["phase"] = 9
    with pytest.raises(StateFormatError, match="Phase"):
        state_from_dict(data)
    data = base()
    data["current_player"] = 2
    with pytest.raises(StateFormatError, match="current_player"):
        state_from_dict(data)


def _all_deck_into_arboretums(data: dict) -> None:
    deck, data["deck"] = data["deck"], []
    rows = [[[0, i, card] for i, card in enumerate(deck[:17])],
            [[0, i, card] for i, card in enumerate(deck[17:])]]
    data["arboretums"] = rows
    data["arboretum_order"] = [[card for *_, card in r] for r in rows]


def test_empty_deck_must_be_the_last_turn() -> None:
    data = base()
    _all_deck_into_arboretums(data)
    data["phase"] = int(Phase.PLAY)
    with pytest.raises(StateFormatError, match="last_turn"):
        state_from_dict(data)
    data["last_turn"] = True
    assert state_from_dict(data).phase is Phase.PLAY
    data = base()
    data["last_turn"] = True  # the deck still has cards
    with pytest.raises(StateFormatError, match="last_turn"):
        state_from_dict(data)


def test_draw_phase_without_any_source_is_rejected() -> None:
    """Such a state would be stuck: no legal action, yet not over."""
    data = base()
    _all_deck_into_arboretums(data)
    data["last_turn"] = True
    data["phase"] = int(Phase.DRAW_SECOND)
    with pytest.raises(StateFormatError, match="no draw source"):
        state_from_dict(data)


def test_a_loaded_state_is_never_stuck() -> None:
    """Loaded mid-game states play on to the end."""
    rng = np.random.default_rng(3)
    for seed in range(40):
        s = new_game(GameConfig(2 + seed % 3), seed)
        for _ in range(int(rng.integers(0, 120))):
            if s.game_over:
                break
            actions = s.legal_actions()
            s.apply(actions[int(rng.integers(len(actions)))])
        r = state_from_dict(copy.deepcopy(s.to_dict()))
        assert r.game_over or r.legal_actions()
        random_playout(r, rng)
        assert r.game_over and r.deck == []


def test_arboretum_far_from_the_first_cards_bound() -> None:
    """No card within +-100 (where a first card goes): a state no game reaches, refused (its
    cells could outgrow the cell encoding)."""
    data = base()
    a, b = data["deck"].pop(), data["deck"].pop()
    data["arboretums"][1] = [[101, 0, a], [102, 0, b]]
    data["arboretum_order"][1] = [a, b]
    with pytest.raises(StateFormatError, match="player 1 has no card within"):
        state_from_dict(data)
    data["arboretums"][1] = [[100, 0, a], [101, 0, b]]
    assert len(state_from_dict(data).arboretums[1]) == 2


def test_arboretum_with_more_cards_than_a_game_reaches() -> None:
    data = base()
    cards = [data["deck"].pop() for _ in range(18)]
    data["arboretums"][0] = [[0, i, card] for i, card in enumerate(cards)]
    data["arboretum_order"][0] = cards
    with pytest.raises(StateFormatError, match="player 0 has 18 cards; no game reaches more than 17"):
        state_from_dict(data)
