"""Text and picture renderings of the table (arboretum_env/render.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arboretum_env.actions import frame_origin
from arboretum_env.engine import (
    SPECIES,
    GameConfig,
    Phase,
    card_short,
    new_game,
    random_playout,
    score,
    unpack_cell,
)
from arboretum_env.render import (
    CELL,
    SPECIES_COLOURS,
    cell_origin,
    image_size,
    path_points,
    render_ansi,
    render_rgb_array,
)


def _advance(state, decisions: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        if state.game_over:
            break
        legal = state.legal_actions()
        state.apply(legal[rng.integers(len(legal))])
    return state


def make_state(n: int, stage: str, seed: int = 0):
    state = new_game(GameConfig(n), seed)
    if stage == "mid":
        _advance(state, 25 * n + 3, seed)  # a few turns each, stopping inside a turn
    elif stage == "over":
        random_playout(state, np.random.default_rng(seed))
    return state


STATES = [(n, stage) for n in (2, 3, 4) for stage in ("fresh", "mid", "over")]


def _token(text: str, card: int) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){card_short(card)}(?![0-9])", text) is not None


def parse_grids(text: str) -> dict[int, dict[tuple[int, int], str]]:
    """Player -> {(row, col): short card} read back from the ansi text's grids."""
    grids: dict[int, dict[tuple[int, int], str]] = {}
    player, columns = None, None
    for line in text.splitlines():
        m = re.match(r"== P(\d) ", line)
        if m:
            player, columns = int(m.group(1)), None
            grids[player] = {}
            continue
        if player is None:
            continue
        if re.fullmatch(r" {5}(\s*-?\d+)+", line):
            columns = [int(c) for c in line.split()]
            continue
        if columns is not None and re.match(r"\s*-?\d+ ", line):
            row = int(line[:4])
            cells = [line[5 + 4 * i: 8 + 4 * i].strip() for i in range(len(columns))]
            for col, cell in zip(columns, cells):
                if cell != ".":
                    grids[player][(row, col)] = cell
    return grids


@pytest.mark.parametrize("n,stage", STATES)
def test_ansi_shows_the_table(n, stage):
    state = make_state(n, stage, seed=10 * n + len(stage))
    for viewer in range(n):
        text = render_ansi(state, viewer)
        # every arboretum, as a labelled grid, cell for cell
        grids = parse_grids(text)
        assert sorted(grids) == list(range(n))
        for p in range(n):
            want = {unpack_cell(c): card_short(card) for c, card in state.arboretums[p].items()}
            assert grids[p] == want
        # the viewer's hand, every discard pile bottom to top, the deck, turn, phase
        hand_line = next(line for line in text.splitlines() if line.startswith("hand ("))
        assert hand_line.split(": ", 1)[1].split() == [card_short(c) for c in sorted(state.hands[viewer])]
        for p in range(n):
            pile = " ".join(card_short(c) for c in state.discards[p]) or "-"
            assert f"discard pile (bottom to top): {pile}" in text
        assert f"deck {len(state.deck)}" in text
        if state.phase is Phase.GAME_OVER:
            assert "game over" in text
        else:
            assert state.phase.name in text and f"player P{state.current_player} to move" in text
        assert f"viewer P{viewer}" in text


@pytest.mark.parametrize("n", [2, 3, 4])
def test_ansi_hides_the_opponents_hands(n):
    state = make_state(n, "mid", seed=n)
    for viewer in range(n):
        text = render_ansi(state, viewer)
        for p in range(n):
            if p == viewer:
                continue
            assert f"hand: {len(state.hands[p])} cards" in text
            for card in state.hands[p]:
                if card in state.known[p]:
                    assert _token(text, card), "cards taken from a discard pile are public"
                else:
                    assert not _token(text, card), f"P{viewer} sees P{p}'s {card_short(card)}"
        assert all(_token(text, c) for c in state.hands[viewer])


def test_known_cards_of_opponents_are_shown():
    # play until some player has taken a card from a discard pile
    for seed in range(50):
        state = make_state(2, "mid", seed=seed)
        holders = [p for p in range(2) if state.known[p]]
        if holders:
            p = holders[0]
            text = render_ansi(state, 1 - p)
            assert "known: " + " ".join(card_short(c) for c in sorted(state.known[p])) in text
            return
    pytest.fail("no game with a known card found")


def test_scores_mid_game_are_public_path_points_and_final_scores_at_the_end():
    state = make_state(2, "mid", seed=4)
    text = render_ansi(state, 0)
    points = path_points(state)
    assert "path points (rights not decided yet): " + "  ".join(
        f"P{p} {points[p]}" for p in range(2)) in text
    assert "final scores" not in text
    random_playout(state, np.random.default_rng(1))
    text = render_ansi(state, 0)
    totals = score(state).totals
    assert "final scores: " + "  ".join(f"P{p} {totals[p]}" for p in range(2)) in text
    # at the end every hand is shown (scoring reveals them)
    assert all(_token(text, c) for h in state.hands for c in h)


def test_reveal_shows_every_hand_and_the_real_scores():
    state = make_state(3, "mid", seed=5)
    text = render_ansi(state, 0, reveal=True)
    assert all(_token(text, c) for h in state.hands for c in h)
    assert "scores (all hands): " + "  ".join(f"P{p} {t}" for p, t in enumerate(score(state).totals)) in text


def test_bad_viewer_is_refused():
    state = make_state(2, "fresh")
    with pytest.raises(ValueError, match="viewer"):
        render_ansi(state, 2)
    with pytest.raises(ValueError, match="viewer"):
        render_rgb_array(state, -1)


def test_species_colours_are_distinct():
    assert len(SPECIES_COLOURS) == len(SPECIES) == 10
    colours = np.array(SPECIES_COLOURS, dtype=float)
    for i in range(10):
        for j in range(i + 1, 10):
            assert np.abs(colours[i] - colours[j]).sum() > 60, (SPECIES[i], SPECIES[j])


@pytest.mark.parametrize("n,stage", STATES)
def test_rgb_array_draws_every_card_in_its_species_colour(n, stage):
    state = make_state(n, stage, seed=3 * n + len(stage))
    viewer = n - 1
    image = render_rgb_array(state, viewer)
    assert image.dtype == np.uint8 and image.shape == (*image_size(n), 3)
    for k in range(n):
        p = (viewer + k) % n
        r0, c0 = frame_origin(state.arboretums[p])
        for cell, card in state.arboretums[p].items():
            r, c = unpack_cell(cell)
            x, y = cell_origin(k, r - r0, c - c0)
            # a pixel inside the card, away from its label
            assert tuple(image[y + 3, x + 3]) == SPECIES_COLOURS[card >> 3], card_short(card)
            assert tuple(image[y + CELL - 4, x + CELL - 4]) == SPECIES_COLOURS[card >> 3]
    # the legend shows every species in play
    legend = {tuple(px) for px in image[44:60].reshape(-1, 3)}
    assert all(SPECIES_COLOURS[s] in legend for s in state.species)


def test_rgb_array_depends_on_the_viewer_and_not_on_hidden_cards():
    state = make_state(2, "mid", seed=8)
    a, b = render_rgb_array(state, 0), render_rgb_array(state, 1)
    assert a.shape == b.shape and not np.array_equal(a, b)
    # the opponent's hidden hand does not change the picture
    other = state.clone()
    hidden = sorted(set(other.hands[1]) - set(other.known[1]))
    swap_in = other.deck[0]
    other.hands[1].discard(hidden[0])
    other.hands[1].add(swap_in)
    other.deck[0] = hidden[0]
    assert np.array_equal(render_rgb_array(other, 0), a)


def test_rank_numbers_are_drawn():
    state = make_state(2, "over", seed=2)
    image = render_rgb_array(state, 0)
    cell, card = next(iter(state.arboretums[0].items()))
    r0, c0 = frame_origin(state.arboretums[0])
    r, c = unpack_cell(cell)
    x, y = cell_origin(0, r - r0, c - c0)
    patch = image[y + 2:y + CELL - 2, x + 2:x + CELL - 2].reshape(-1, 3)
    colour = np.array(SPECIES_COLOURS[card >> 3])
    # the label's ink: pixels far from the card colour
    assert (np.abs(patch.astype(int) - colour).sum(axis=1) > 150).sum() >= 10
