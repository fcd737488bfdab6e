"""Pictures of the table as one player sees it: text (``ansi``) and an RGB array (``rgb_array``).

Both show every arboretum, the viewer's own hand (the other hands only as counts, plus the cards
known to be in them because they were taken from a discard pile), the discard piles, the deck
size, whose turn it is and the phase, and the scores.

Scores: while the game runs, the rights to each species depend on hidden hands, so showing
``engine.score(state)`` would leak them. Mid-game the renderings therefore show each player's
*path points* (the sum of their best paths over all species, as if they held every right), which
is public; once the game is over (or with ``reveal=True``) they show the real score
(``engine.score(state).totals``) and every hand.
"""

from __future__ import annotations

import numpy as np

from .actions import FRAME, frame_origin
from .engine import (
    NUM_SPECIES,
    SPECIES,
    SPECIES_LETTERS,
    GameState,
    Phase,
    best_path,
    card_short,
    score,
    unpack_cell,
)

# Ten clearly distinct species colours (Tableau 10, reordered so neighbours in the canonical
# order differ strongly).
SPECIES_COLOURS: tuple[tuple[int, int, int], ...] = (
    (237, 201, 72),   # cassia: yellow
    (255, 157, 167),  # dogwood: pink
    (118, 72, 178),   # jacaranda: purple
    (89, 161, 79),    # olive: green
    (186, 176, 172),  # lilac: grey-lilac
    (242, 142, 43),   # magnolia: orange
    (225, 87, 89),    # maple: red
    (78, 121, 167),   # royal poinciana: blue
    (156, 117, 95),   # oak: brown
    (118, 183, 178),  # willow: teal
)
assert len(set(SPECIES_COLOURS)) == NUM_SPECIES

BACKGROUND = (250, 248, 240)
GRID = (222, 218, 205)
INK = (20, 20, 20)
HIGHLIGHT = (200, 30, 30)


def _reveal(state: GameState, reveal: bool) -> bool:
    return reveal or state.phase is Phase.GAME_OVER


def path_points(state: GameState) -> list[int]:
    """Per player: the sum of the best path of every species in play (public information)."""
    return [sum(best_path(a, s)[0] for s in state.species) for a in state.arboretums]


def _scores_line(state: GameState, reveal: bool) -> str:
    n = state.num_players
    if _reveal(state, reveal):
        result = score(state)
        label = "final scores" if state.phase is Phase.GAME_OVER else "scores (all hands)"
        parts = [f"P{p} {result.totals[p]}" for p in range(n)]
        winners = ", ".join(f"P{w}" for w in result.winners)
        return f"{label}: {'  '.join(parts)}  -  {'winner' if len(result.winners) == 1 else 'winners'}: {winners}"
    points = path_points(state)
    parts = [f"P{p} {points[p]}" for p in range(n)]
    return "path points (rights not decided yet): " + "  ".join(parts)


def _status_line(state: GameState) -> str:
    if state.phase is Phase.GAME_OVER:
        return f"game over after {state.turn} turns - deck {len(state.deck)}"
    return (f"turn {state.turn + 1} - player P{state.current_player} to move - "
            f"phase {state.phase.name} - deck {len(state.deck)}")


def _cards(cards) -> str:
    return " ".join(card_short(c) for c in sorted(cards)) or "-"


def arboretum_grid(arboretum) -> list[str]:
    """Text lines of an arboretum: a header of column numbers, then one labelled line per row."""
    if not arboretum:
        return ["(empty)"]
    cells = {unpack_cell(c): card for c, card in arboretum.items()}
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    r0, r1, c0, c1 = min(rows), max(rows), min(cols), max(cols)
    lines = ["     " + " ".join(f"{c:>3}" for c in range(c0, c1 + 1))]
    for r in range(r0, r1 + 1):
        row = " ".join(f"{card_short(cells[(r, c)]):>3}" if (r, c) in cells else "  ."
                       for c in range(c0, c1 + 1))
        lines.append(f"{r:>4} {row}")
    return lines


def render_ansi(state: GameState, viewer: int, reveal: bool = False) -> str:
    """The table as text, as player ``viewer`` sees it (``reveal``: show every hand)."""
    n = state.num_players
    if not 0 <= viewer < n:
        raise ValueError(f"viewer must be a player index 0..{n - 1}, got {viewer!r}")
    show_all = _reveal(state, reveal)
    lines = [
        f"Arboretum - {n} players - viewer P{viewer}",
        _status_line(state),
        "species: " + ", ".join(f"{SPECIES_LETTERS[s]}={SPECIES[s]}" for s in state.species),
        _scores_line(state, reveal),
    ]
    for k in range(n):
        p = (viewer + k) % n
        tags = []
        if p == viewer:
            tags.append("you")
        if p == state.current_player and state.phase is not Phase.GAME_OVER:
            tags.append("to move")
        tag = f" ({', '.join(tags)})" if tags else ""
        lines.append("")
        lines.append(f"== P{p}{tag} ==")
        hand = state.hands[p]
        if p == viewer or show_all:
            lines.append(f"hand ({len(hand)}): {_cards(hand)}")
        else:
            known = state.known[p]
            extra = f"; known: {_cards(known)}" if known else ""
            lines.append(f"hand: {len(hand)} cards{extra}")
        lines.append("discard pile (bottom to top): "
                     + (" ".join(card_short(c) for c in state.discards[p]) or "-"))
        lines.extend(arboretum_grid(state.arboretums[p]))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- rgb_array
CELL = 24
FRAME_CELLS = FRAME  # the action frame: cell (i, j) here is PLAY_CELL + i * 18 + j
PANEL_W = CELL * FRAME_CELLS + 2 * 8
HEADER_H = 22
INFO_H = 38
PANEL_H = HEADER_H + INFO_H + CELL * FRAME_CELLS + 8
TOP_H = 64


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizing
        return ImageFont.load_default()


def _text_colour(rgb) -> tuple[int, int, int]:
    r, g, b = rgb
    return INK if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (255, 255, 255)


def _draw_card(draw, x: int, y: int, card: int, font, size: int = CELL, letter: bool = False) -> None:
    colour = SPECIES_COLOURS[card >> 3]
    draw.rectangle([x + 1, y + 1, x + size - 2, y + size - 2], fill=colour, outline=INK)
    text = card_short(card) if letter else str((card & 7) + 1)
    draw.text((x + size / 2, y + size / 2), text, fill=_text_colour(colour), font=font, anchor="mm")


def _draw_card_row(draw, x: int, y: int, cards, font, size: int = 20) -> int:
    for card in cards:
        _draw_card(draw, x, y, card, font, size)
        x += size + 2
    return x


def image_size(num_players: int) -> tuple[int, int]:
    """(height, width) of ``render_rgb_array`` for a table of ``num_players``."""
    cols = 2
    rows = (num_players + 1) // 2
    return TOP_H + rows * PANEL_H, cols * PANEL_W


def panel_origin(seat_offset: int) -> tuple[int, int]:
    """(x, y) of the top-left corner of the panel of the seat ``seat_offset`` places after the
    viewer (the viewer's panel is first)."""
    return (seat_offset % 2) * PANEL_W + 8, TOP_H + (seat_offset // 2) * PANEL_H


def cell_origin(seat_offset: int, i: int, j: int) -> tuple[int, int]:
    """(x, y) of the top-left corner of frame cell (i, j) of that seat's arboretum (the frame of
    ``actions.frame_origin``: cell (i, j) is the cell action ``PLAY_CELL + 18 i + j`` plays on)."""
    px, py = panel_origin(seat_offset)
    return px + j * CELL, py + HEADER_H + INFO_H + i * CELL


def render_rgb_array(state: GameState, viewer: int, reveal: bool = False) -> np.ndarray:
    """A picture of the table as player ``viewer`` sees it: (H, W, 3) uint8, fixed size per
    player count (see :func:`image_size`)."""
    from PIL import Image, ImageDraw

    n = state.num_players
    if not 0 <= viewer < n:
        raise ValueError(f"viewer must be a player index 0..{n - 1}, got {viewer!r}")
    show_all = _reveal(state, reveal)
    height, width = image_size(n)
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font, small, big = _font(12), _font(11), _font(15)

    # top strip: status, scores, legend
    draw.text((8, 4), _status_line(state) + f"   (viewer P{viewer})", fill=INK, font=big)
    draw.text((8, 24), _scores_line(state, reveal), fill=INK, font=font)
    x = 8
    for s in state.species:
        draw.rectangle([x, 44, x + 14, 58], fill=SPECIES_COLOURS[s], outline=INK)
        label = SPECIES[s].replace("_", " ")
        draw.text((x + 18, 44), label, fill=INK, font=small)
        x += 22 + int(draw.textlength(label, font=small)) + 8

    totals = score(state).totals if show_all else path_points(state)
    for k in range(n):
        p = (viewer + k) % n
        px, py = panel_origin(k)
        to_move = p == state.current_player and state.phase is not Phase.GAME_OVER
        title = f"P{p}" + (" (you)" if p == viewer else "") + (" - to move" if to_move else "")
        title += f" - {'score' if show_all else 'path points'} {totals[p]}"
        draw.text((px, py + 3), title, fill=HIGHLIGHT if to_move else INK, font=big)
        # hand
        hy = py + HEADER_H
        if p == viewer or show_all:
            draw.text((px, hy + 3), "hand", fill=INK, font=small)
            _draw_card_row(draw, px + 34, hy, sorted(state.hands[p]), small, 17)
        else:
            draw.text((px, hy + 3), f"hand: {len(state.hands[p])} cards", fill=INK, font=small)
            if state.known[p]:
                draw.text((px + 110, hy + 3), "known", fill=INK, font=small)
                _draw_card_row(draw, px + 148, hy, sorted(state.known[p]), small, 17)
        # discard pile: the top cards, top rightmost
        pile = state.discards[p]
        dy = hy + 19
        draw.text((px, dy + 3), f"discards ({len(pile)})", fill=INK, font=small)
        _draw_card_row(draw, px + 80, dy, pile[-15:], small, 17)
        # arboretum, in its 18 x 18 frame
        gy = py + HEADER_H + INFO_H
        r0, c0 = frame_origin(state.arboretums[p])
        draw.rectangle([px, gy, px + CELL * FRAME_CELLS, gy + CELL * FRAME_CELLS], outline=GRID)
        for i in range(1, FRAME_CELLS):
            draw.line([px + i * CELL, gy, px + i * CELL, gy + CELL * FRAME_CELLS], fill=GRID)
            draw.line([px, gy + i * CELL, px + CELL * FRAME_CELLS, gy + i * CELL], fill=GRID)
        for cell, card in state.arboretums[p].items():
            r, c = unpack_cell(cell)
            i, j = r - r0, c - c0
            if 0 <= i < FRAME_CELLS and 0 <= j < FRAME_CELLS:
                _draw_card(draw, *cell_origin(k, i, j), card, font, letter=True)
    return np.asarray(image, dtype=np.uint8).copy()


def save_png(state: GameState, viewer: int, path: str, reveal: bool = False) -> None:
    """Write ``render_rgb_array`` to a PNG file."""
    from PIL import Image

    Image.fromarray(render_rgb_array(state, viewer, reveal)).save(path)


def species_colour(species: int) -> tuple[int, int, int]:
    return SPECIES_COLOURS[species]


__all__ = ["render_ansi", "render_rgb_array", "save_png", "image_size", "arboretum_grid",
           "path_points", "SPECIES_COLOURS", "species_colour", "cell_origin", "panel_origin"]
