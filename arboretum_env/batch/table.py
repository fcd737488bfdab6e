"""The compiled fast path's game state: N whole games in one ``int64`` array ``[N, TABLE_SIZE]``.

Row ``i`` holds game ``i`` entirely (deck order included), so the transitions, the scoring,
the observations and the masks of N games run in machine code without touching Python
objects (as in Pgx and EnvPool). The dict engine (``engine.GameState``) stays the plain
reference: games start there (``engine.new_game``, so the deal is written once) and are loaded
here with ``load``; tests step both side by side and compare (``tests/test_batch.py``).

Layout of a row (``T_*`` offsets; per-player blocks are padded to 4 players):

* scalars: player count, species in play (bits), phase (``engine.Phase`` values), player to
  move, turns completed, the last-turn flag, the pending card (``NO_CARD``: none), the cards
  drawn this turn, the deck size, then after the game the totals and the winners (bits);
* the deck, top card last;
* per player: the hand and the known cards as 80 flags each, the hand size, the discard pile
  bottom first and its size, the arboretum's packed cells and cards in the order played, its
  size, and derived values kept up to date after each play: the frame origin
  (``actions.frame_origin``), the best-path points and the card count per species.

Kernels (numba where it is installed; ``available`` says so): ``step_one`` applies one action id
to one row and reports ``OK``, ``ILLEGAL`` (nothing changed) or ``ENDED``; ``step`` does it for a
batch. Layer: env (the action ids of ``actions``); imports no RL library.
"""

from __future__ import annotations

import numpy as np

from .. import actions as _actions
from ..actions import DISCARD, DRAW_DISCARD, FRAME, NUM_ACTIONS, PLAY_CARD, PLAY_CELL, Decision, box_origin
from ..engine import NUM_CARDS, NUM_SPECIES, GameState, Phase
from ..engine.jit_paths import best_paths
from ..engine.jit_playout import available, compile_kernel
from ..engine.rules import hand_sum

SEATS = 4
# scalars
T_PLAYERS, T_SPECIES, T_PHASE, T_CURRENT, T_TURN, T_LAST_TURN, T_PENDING = range(7)
T_DRAWN_LEN = 7
T_DRAWN = 8  # 2 values
T_DECK_LEN = 10
T_WINNERS = 11  # bits, set when the game is over
T_TOTALS = 12  # per player, set when the game is over
T_DECK = T_TOTALS + SEATS  # 80 cards, top last
T_HAND = T_DECK + NUM_CARDS  # per player: 80 flags
T_HAND_SIZE = T_HAND + SEATS * NUM_CARDS  # per player
T_KNOWN = T_HAND_SIZE + SEATS  # per player: 80 flags
T_PILE = T_KNOWN + SEATS * NUM_CARDS  # per player: up to 80 cards, bottom first
T_PILE_LEN = T_PILE + SEATS * NUM_CARDS  # per player
T_CELLS = T_PILE_LEN + SEATS  # per player: packed cells in the order played
T_CARDS = T_CELLS + SEATS * NUM_CARDS  # per player: the cards on those cells
T_SIZE = T_CARDS + SEATS * NUM_CARDS  # per player: cards in the arboretum
T_ORIGIN = T_SIZE + SEATS  # per player: frame origin row, col
T_POINTS = T_ORIGIN + 2 * SEATS  # per player, per species: best-path points
T_COUNTS = T_POINTS + SEATS * NUM_SPECIES  # per player, per species: cards in the arboretum
TABLE_SIZE = T_COUNTS + SEATS * NUM_SPECIES

NO_CARD = -1
OK, ILLEGAL, ENDED, SKIPPED = 0, 1, 2, 3
"""``step_one``'s results (``SKIPPED``: ``step`` was given ``NO_ACTION`` for that game)."""
NO_ACTION = -1
"""In ``step``'s actions: leave that game as it is."""
WIN_LOSS, SCORE_MARGIN = 0, 1
"""Reward modes (``env.REWARD_MODES`` in this order)."""
MARGIN_SCALE = 20.0

_DRAW_FIRST, _DRAW_SECOND, _PLAY, _DISCARD, _GAME_OVER = (
    int(Phase.DRAW_FIRST), int(Phase.DRAW_SECOND), int(Phase.PLAY), int(Phase.DISCARD),
    int(Phase.GAME_OVER))
_D_PLAY_CARD, _D_PLAY_CELL, _D_DISCARD, _D_GAME_OVER = (
    int(Decision.PLAY_CARD), int(Decision.PLAY_CELL), int(Decision.DISCARD), int(Decision.GAME_OVER))
_ALL_SPECIES = np.arange(NUM_SPECIES, dtype=np.int64)
assert (_DRAW_FIRST, _DRAW_SECOND) == (int(Decision.DRAW_FIRST), int(Decision.DRAW_SECOND))


def new_tables(num_games: int) -> np.ndarray:
    return np.zeros((num_games, TABLE_SIZE), np.int64)


def load(row: np.ndarray, state: GameState, pending=None) -> None:
    """Fill one row from an engine state (``pending``: the card chosen to play, in PLAY)."""
    n = state.num_players
    if not 2 <= n <= SEATS:
        raise ValueError(f"{n} players: the fast path holds 2 to {SEATS}")
    row[:] = 0
    row[T_PLAYERS] = n
    row[T_SPECIES] = sum(1 << s for s in state.species)
    row[T_PHASE] = int(state.phase)
    row[T_CURRENT] = state.current_player
    row[T_TURN] = state.turn
    row[T_LAST_TURN] = int(state.last_turn)
    row[T_PENDING] = NO_CARD if pending is None else pending
    row[T_DRAWN_LEN] = len(state.drawn)
    row[T_DRAWN:T_DRAWN + len(state.drawn)] = state.drawn
    row[T_DECK_LEN] = len(state.deck)
    row[T_DECK:T_DECK + len(state.deck)] = state.deck
    for p in range(n):
        row[T_HAND + p * NUM_CARDS + np.fromiter(state.hands[p], np.int64)] = 1
        row[T_HAND_SIZE + p] = len(state.hands[p])
        row[T_KNOWN + p * NUM_CARDS + np.fromiter(state.known[p], np.int64)] = 1
        pile = state.discards[p]
        row[T_PILE + p * NUM_CARDS:T_PILE + p * NUM_CARDS + len(pile)] = pile
        row[T_PILE_LEN + p] = len(pile)
        arboretum = state.arboretums[p]
        row[T_CELLS + p * NUM_CARDS:T_CELLS + p * NUM_CARDS + len(arboretum)] = list(arboretum)
        row[T_CARDS + p * NUM_CARDS:T_CARDS + p * NUM_CARDS + len(arboretum)] = list(arboretum.values())
        row[T_SIZE + p] = len(arboretum)
        if not refresh_arboretum(row, p):
            raise ValueError(f"the arboretum of player {p} does not fit the {FRAME} x {FRAME} frame")
    if state.phase is Phase.GAME_OVER:
        score_game(row)


# ----------------------------------------------------------------------------- kernels
def decision(t):  # pragma: no cover - compiled
    """The ``actions.Decision`` of the player to move."""
    phase = t[T_PHASE]
    if phase == _PLAY:
        return _D_PLAY_CARD if t[T_PENDING] < 0 else _D_PLAY_CELL
    if phase == _DISCARD:
        return _D_DISCARD
    if phase == _GAME_OVER:
        return _D_GAME_OVER
    return phase


def refresh_arboretum(t, p):  # pragma: no cover - compiled
    """Frame origin, best-path points and species counts of player ``p``'s arboretum; returns
    False if its bounding box does not fit the frame."""
    k = t[T_SIZE + p]
    for s in range(NUM_SPECIES):
        t[T_POINTS + p * NUM_SPECIES + s] = 0
        t[T_COUNTS + p * NUM_SPECIES + s] = 0
    if k == 0:
        r0, c0 = box_origin(0, -1, 0, -1)
        t[T_ORIGIN + 2 * p] = r0
        t[T_ORIGIN + 2 * p + 1] = c0
        return True
    cells = t[T_CELLS + p * NUM_CARDS:T_CELLS + p * NUM_CARDS + k].copy()
    cards = t[T_CARDS + p * NUM_CARDS:T_CARDS + p * NUM_CARDS + k].copy()
    r_min = c_min = 1 << 20
    r_max = c_max = -(1 << 20)
    for i in range(k):
        row = (cells[i] + 128) >> 8
        col = cells[i] - (row << 8)
        r_min, r_max = min(r_min, row), max(r_max, row)
        c_min, c_max = min(c_min, col), max(c_max, col)
        t[T_COUNTS + p * NUM_SPECIES + (cards[i] >> 3)] += 1
    r0, c0 = box_origin(r_min, r_max, c_min, c_max)
    t[T_ORIGIN + 2 * p] = r0
    t[T_ORIGIN + 2 * p + 1] = c0
    paths = best_paths(cells, cards, _ALL_SPECIES)
    for s in range(NUM_SPECIES):
        t[T_POINTS + p * NUM_SPECIES + s] = paths[s, 0]
    return r_max - r_min < FRAME and c_max - c_min < FRAME


def _no_source(t):  # pragma: no cover - compiled
    if t[T_DECK_LEN]:
        return False
    for q in range(t[T_PLAYERS]):
        if t[T_PILE_LEN + q]:
            return False
    return True


def _leave_hand(t, p, card):  # pragma: no cover - compiled
    t[T_HAND + p * NUM_CARDS + card] = 0
    t[T_HAND_SIZE + p] -= 1
    t[T_KNOWN + p * NUM_CARDS + card] = 0


def score_game(t):  # pragma: no cover - compiled
    """Totals (rights, then best paths) and winners (bits) of a finished game, as
    ``engine.scoring.score``: an 8 counts 0 where another player holds the 1 of its species;
    every player with the top sum has the right; ties on the total go to the most species in
    the arboretum, then are shared."""
    n = t[T_PLAYERS]
    for p in range(n):
        t[T_TOTALS + p] = 0
    for s in range(NUM_SPECIES):
        if not t[T_SPECIES] >> s & 1:
            continue
        ones = 0
        for p in range(n):
            ones += t[T_HAND + p * NUM_CARDS + s * 8]
        top = -1
        sums = np.zeros(SEATS, np.int64)
        for p in range(n):
            v = 0
            for r in range(8):
                if t[T_HAND + p * NUM_CARDS + s * 8 + r]:
                    v += r + 1
            one = t[T_HAND + p * NUM_CARDS + s * 8]
            v = hand_sum(v, one, t[T_HAND + p * NUM_CARDS + s * 8 + 7], ones > one)
            sums[p] = v
            top = max(top, v)
        for p in range(n):
            if sums[p] == top:
                t[T_TOTALS + p] += t[T_POINTS + p * NUM_SPECIES + s]
    best = -1
    for p in range(n):
        best = max(best, t[T_TOTALS + p])
    variety = np.zeros(SEATS, np.int64)  # species in the arboretum, for the tie-break
    most = -1
    for p in range(n):
        for s in range(NUM_SPECIES):
            if t[T_COUNTS + p * NUM_SPECIES + s]:
                variety[p] += 1
        if t[T_TOTALS + p] == best:
            most = max(most, variety[p])
    winners = 0
    for p in range(n):
        if t[T_TOTALS + p] == best and variety[p] == most:
            winners |= 1 << p
    t[T_WINNERS] = winners


def rewards_of(t, mode, out):  # pragma: no cover - compiled
    """The end-of-game rewards of a scored row into ``out[:players]`` (``env`` documents them)."""
    n = t[T_PLAYERS]
    if mode == WIN_LOSS:
        k = 0
        for p in range(n):
            k += t[T_WINNERS] >> p & 1
        win, loss = (n - k) / (k * (n - 1)), -1.0 / (n - 1)
        for p in range(n):
            out[p] = win if t[T_WINNERS] >> p & 1 else loss
        return
    for p in range(n):
        out[p] = min(1.0, max(-1.0, margin_of(t, p) / MARGIN_SCALE))


def margin_of(t, p):  # pragma: no cover - compiled
    """Seat ``p``'s total minus the highest other seat's total, in points, of a scored row."""
    other = -(1 << 40)
    for q in range(t[T_PLAYERS]):
        if q != p:
            other = max(other, t[T_TOTALS + q])
    return t[T_TOTALS + p] - other


def play_cell_of(t, p, action):  # pragma: no cover - compiled
    """The packed cell that play id ``action`` names for player ``p``, or -1 << 30 if the
    cell is not free and next to the arboretum (any cell is legal in an empty one)."""
    i, j = (action - PLAY_CELL) // FRAME, (action - PLAY_CELL) % FRAME
    cell = (t[T_ORIGIN + 2 * p] + i) * 256 + t[T_ORIGIN + 2 * p + 1] + j
    k = t[T_SIZE + p]
    if k == 0:
        return cell
    near = False
    for q in range(k):
        c = t[T_CELLS + p * NUM_CARDS + q]
        if c == cell:
            return -(1 << 30)
        if c == cell - 256 or c == cell + 256 or c == cell - 1 or c == cell + 1:
            near = True
    return cell if near else -(1 << 30)


def step_one(t, action):  # pragma: no cover - compiled
    """Apply action id ``action`` for the player to move in row ``t`` (as ``actions.apply_id``
    on the engine): ``OK``, ``ENDED`` (the game is over and scored) or ``ILLEGAL`` (nothing
    changed)."""
    if action < 0 or action >= NUM_ACTIONS:
        return ILLEGAL
    n = t[T_PLAYERS]
    p = t[T_CURRENT]
    d = decision(t)
    if d <= _DRAW_SECOND:
        if action == 0:
            if not t[T_DECK_LEN]:
                return ILLEGAL
            t[T_DECK_LEN] -= 1
            card = t[T_DECK + t[T_DECK_LEN]]
            t[T_DECK + t[T_DECK_LEN]] = 0  # stale slots stay 0: a stepped row equals a loaded one
            if t[T_DECK_LEN] == 0:
                t[T_LAST_TURN] = 1
        elif action < DRAW_DISCARD + n:
            q = (p + action - DRAW_DISCARD) % n
            size = t[T_PILE_LEN + q]
            if not size:
                return ILLEGAL
            card = t[T_PILE + q * NUM_CARDS + size - 1]
            t[T_PILE + q * NUM_CARDS + size - 1] = 0
            t[T_PILE_LEN + q] = size - 1
            t[T_KNOWN + p * NUM_CARDS + card] = 1
        else:
            return ILLEGAL
        t[T_HAND + p * NUM_CARDS + card] = 1
        t[T_HAND_SIZE + p] += 1
        t[T_DRAWN + t[T_DRAWN_LEN]] = card
        t[T_DRAWN_LEN] += 1
        if d == _DRAW_FIRST and not _no_source(t):
            t[T_PHASE] = _DRAW_SECOND
        else:
            t[T_PHASE] = _PLAY
        return OK
    if d == _D_PLAY_CARD:
        card = action - PLAY_CARD
        if card < 0 or card >= NUM_CARDS or not t[T_HAND + p * NUM_CARDS + card]:
            return ILLEGAL
        t[T_PENDING] = card
        return OK
    if d == _D_PLAY_CELL:
        if action < PLAY_CELL or action >= DISCARD:
            return ILLEGAL
        cell = play_cell_of(t, p, action)
        if cell == -(1 << 30):
            return ILLEGAL
        card = t[T_PENDING]
        _leave_hand(t, p, card)
        k = t[T_SIZE + p]
        t[T_CELLS + p * NUM_CARDS + k] = cell
        t[T_CARDS + p * NUM_CARDS + k] = card
        t[T_SIZE + p] = k + 1
        refresh_arboretum(t, p)
        t[T_PENDING] = NO_CARD
        t[T_PHASE] = _DISCARD
        return OK
    if d == _D_DISCARD:
        card = action - DISCARD
        if card < 0 or not t[T_HAND + p * NUM_CARDS + card]:
            return ILLEGAL
        _leave_hand(t, p, card)
        top = t[T_PILE_LEN + p]
        t[T_PILE + p * NUM_CARDS + top] = card
        t[T_PILE_LEN + p] = top + 1
        t[T_TURN] += 1
        t[T_DRAWN_LEN] = 0
        t[T_DRAWN] = t[T_DRAWN + 1] = 0
        if t[T_LAST_TURN]:
            t[T_PHASE] = _GAME_OVER
            score_game(t)
            return ENDED
        t[T_CURRENT] = (p + 1) % n
        t[T_PHASE] = _PLAY if _no_source(t) else _DRAW_FIRST
        return OK
    return ILLEGAL


def step(tables, actions, mode, status, rewards):  # pragma: no cover - compiled
    """``step_one`` for every row with its action (``NO_ACTION``: skipped); ``status[i]`` its
    result, and for rows that ended ``rewards[i, :players]`` their end-of-game rewards (other
    rows' rewards are 0)."""
    for i in range(tables.shape[0]):
        t = tables[i]
        for p in range(SEATS):
            rewards[i, p] = 0.0
        if actions[i] == NO_ACTION:
            status[i] = SKIPPED
            continue
        status[i] = step_one(t, actions[i])
        if status[i] == ENDED:
            rewards_of(t, mode, rewards[i])


if available:
    _DEPENDS = (_actions.__file__,)  # box_origin, compiled in
    decision = compile_kernel(decision, depends=_DEPENDS)
    refresh_arboretum = compile_kernel(refresh_arboretum, depends=_DEPENDS)
    _no_source = compile_kernel(_no_source, depends=_DEPENDS)
    _leave_hand = compile_kernel(_leave_hand, depends=_DEPENDS)
    score_game = compile_kernel(score_game, depends=_DEPENDS)
    margin_of = compile_kernel(margin_of, depends=_DEPENDS)
    rewards_of = compile_kernel(rewards_of, depends=_DEPENDS)
    play_cell_of = compile_kernel(play_cell_of, depends=_DEPENDS)
    step_one = compile_kernel(step_one, depends=_DEPENDS)
    step = compile_kernel(step, depends=_DEPENDS)
