"""``batch.card_gains``: per-card path gains read off observations, against the dict engine's
``placement_gains`` on the same positions (2-4 players, every decision of random games)."""

from __future__ import annotations

import numpy as np

from arboretum_env.actions import apply_id, legal_ids
from arboretum_env.batch.card_gains import GAIN_SEATS, card_gains
from arboretum_env.engine import GameConfig, NUM_CARDS, Phase, new_game
from arboretum_env.engine.path_dp import placement_gains
from arboretum_env.engine.rules import frontier
from arboretum_env.observation import OBS_SIZE, POINTS_SCALE, encode
from arboretum_env.table_view import table_view


def expected_gains(state, pending) -> np.ndarray:
    """The module doc's quantity from the full state, with the dict engine's scorer."""
    me, n = state.current_player, state.num_players
    cards = set(state.hands[me]) | {pile[-1] for pile in state.discards if pile}
    if pending is not None:
        cards.add(pending)
    out = np.zeros((NUM_CARDS, GAIN_SEATS), np.float32)
    for seat in range(GAIN_SEATS):
        arboretum = state.arboretums[(me + seat) % n]
        for card in cards:
            gains = placement_gains(arboretum, card, frontier(arboretum)) if arboretum else {}
            out[card, seat] = (1 + max(gains.values(), default=0)) / POINTS_SCALE
    return out


def test_card_gains_match_the_dict_engine():
    rng = np.random.default_rng(5)
    obs, want = [], []
    for g in range(9):
        state = new_game(GameConfig(2 + g % 3), 700 + g)
        pending = None
        while state.phase is not Phase.GAME_OVER:
            obs.append(encode(table_view(state, state.current_player, pending)))
            want.append(expected_gains(state, pending))
            ids = legal_ids(state, pending)
            pending = apply_id(state, pending, ids[int(rng.random() * len(ids))])
    obs = np.stack(obs)
    assert obs.shape[1] == OBS_SIZE
    rows = np.arange(len(obs))[::-1].copy()  # written in the order of ``rows``
    out = np.full((len(obs) + 3, NUM_CARDS, GAIN_SEATS), 7.0, np.float32)
    card_gains(obs, rows, 3, out)
    assert (out[:3] == 7.0).all()  # rows before ``first`` untouched
    got = out[3:][::-1]
    want = np.stack(want)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    assert (want[:, :, 0] > 1 / POINTS_SCALE).sum() > 100  # real gains were compared, not only zeros
    assert (want[:, :, 1] > 1 / POINTS_SCALE).sum() > 100
