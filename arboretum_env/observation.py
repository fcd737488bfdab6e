"""The observation tensor: observe-then-encode (as in the Hanabi Learning Environment).

``table_view.table_view`` says what one seat may know (``TableView``: the engine's seat-relative
``PlayerView`` plus the decision and the pending card); ``ObservationEncoder.encode`` writes it,
section by section, into a preallocated float32 vector of ``OBS_SIZE`` values, all in [0, 1].

Layout rules:

* **Seat-relative.** Seat 0 is the observer, seat k the player k places later in turn order.
  Every per-seat part is padded to 4 seats (absent seats are zeros), so the shape is the same
  for 2, 3 and 4 players.
* **Species** always use the canonical order (10 slots, ``engine.SPECIES``); species not in play
  stay 0. A **card** slot is the card id ``species * 8 + rank - 1`` (80 slots).
* **Spatial planes** are 18 x 18 (row-major, 324 values) in the *action frame*
  (``actions.frame_origin``): plane cell ``i * 18 + j`` is the cell that action
  ``PLAY_CELL + i * 18 + j`` would play on in that arboretum. Each arboretum has its own frame.

``SECTIONS`` (in order: name, width, meaning and scale) is the single source of the layout table
of the env docstring and ``docs/env.md`` (``layout_table()`` renders it); ``encode`` asserts
each section's width as it writes it, and the module asserts the total (``OBS_SIZE``).

Four ways to write the same vector:

* ``ObservationEncoder.encode(table_view)``: the reference, from a ``TableView``;
* ``ObservationEncoder.encode_state(state, observer, pending)``: from a state, without building
  the view (it reads the fields the view exposes, nothing else);
* ``jit_observation.encode(table, out, ...)``: the env's compiled path (numba), from a mirror of
  the table in one int array that the env keeps up to date action by action;
* ``incremental_encoder.IncrementalEncoder(encoder, observer).update(state, pending)``: the env's
  path without numba; it keeps the observer's last vector and rewrites only what changed.

The tests check that they all agree at every step of many games.

Speed: each arboretum's features (best path points, frame, planes, the observer's species
values, the frontier) are cached per arboretum object and card count, and grown by one card
from the previous entry (arboretums only grow); each discard pile's block is cached along the
pile's history (a draw returns a pile to an earlier state). Planes are built with numpy fancy
indexing; cached blocks are copied with ``memoryview`` slices, and small card sets (a hand, the
known cards) written one value at a time through a ``memoryview`` (faster than numpy for under
~20 values); nothing is rebuilt from Python lists of floats.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from .actions import FRAME, FRAME_CELLS, MAX_PLAYERS, Decision, decision_of, frame_origin
from .engine import NUM_CARDS, NUM_RANKS, NUM_SPECIES
from .engine.cards import CELL_STRIDE
from .engine.path_dp import forward, placement_gains, rank_buckets, species_ranges
from .table_view import TableView

# ----------------------------------------------------------------------------- scales
DECK_SCALE = 80.0
"""deck size / 80."""
TURN_SCALE = 64.0
"""turn / 64 (a game has at most 52 turns)."""
HAND_SCALE = 9.0
"""hand size / 9 (7 between turns, 9 after both draws)."""
SUM_SCALE = 36.0
"""hand sum of a species / 36 (1 + 2 + ... + 8)."""
POINTS_SCALE = 20.0
"""path points / 20 (the best possible path scores 19: eight cards 1..8 of one species)."""
COUNT_SCALE = 8.0
"""cards of a species / 8."""
PILE_SCALE = 80.0
"""discard depth value: (80 - depth) / 80, depth 0 = top card."""
RANK_SCALE = 8.0
SPECIES_SCALE = 10.0

DECISIONS = len(Decision)

# ----------------------------------------------------------------------------- layout
OBS_LAYOUT_VERSION = 1
"""Bumped whenever the meaning of any observation value changes (policy files record it)."""

SEATS = MAX_PLAYERS
PILE_BLOCK = 2 * NUM_CARDS
"""Per seat in ``discard_piles``: 80 depth values, then the 80-value top-card one-hot."""
SUMMARY_BLOCK = NUM_CARDS + 2 * NUM_SPECIES
"""Per seat in ``arboretum_summary``: 80 cards present, 10 path points, 10 species counts."""
PLANES_BLOCK = 2 * FRAME_CELLS
"""Per seat in ``arboretum_planes``: the rank plane, then the species plane."""

SECTIONS: list[tuple[str, int, str]] = [
    ("player_count", 3, "one-hot: 2, 3 or 4 players"),
    ("decision", DECISIONS,
     "one-hot `actions.Decision`: DRAW_FIRST, DRAW_SECOND, PLAY_CARD, PLAY_CELL, DISCARD, GAME_OVER"),
    ("to_move", SEATS, "one-hot: seat of the player to move (0 = the observer)"),
    ("deck_size", 1, "cards left in the deck / 80"),
    ("turn", 1, "turns completed / 64 (a game has at most 52)"),
    ("species_in_play", NUM_SPECIES, "multi-hot: the species of this game"),
    ("hand", NUM_CARDS, "multi-hot: the observer's hand"),
    ("drawn", NUM_CARDS,
     "multi-hot: cards drawn this turn that the observer saw (all of them on its own turn, "
     "otherwise those taken from discard piles)"),
    ("pending", NUM_CARDS,
     "one-hot: the card chosen to play; during PLAY_CELL, for the player to move only"),
    ("rights", NUM_SPECIES,
     "per species in play: 1 if the observer would hold the right to score it given what it "
     "sees (its hand against the others' known cards, '1 cancels 8', ties included), else 0"),
    ("hand_sizes", SEATS, "per seat: cards in hand / 9"),
    ("hand_sums", SEATS * NUM_SPECIES,
     "per seat, per species: rank sum / 36 of the cards of that hand the observer sees (seat 0: "
     "its whole hand; others: their known cards), '1 cancels 8' applied among those cards"),
    ("known_cards", SEATS * NUM_CARDS,
     "per seat, multi-hot: cards known to be in that hand (taken from a discard pile, not "
     "played or discarded since); seat 0: what the others know of the observer's hand"),
    ("discard_piles", SEATS * PILE_BLOCK,
     "per seat, 160 values: for each card in that discard pile (80 - depth) / 80, depth 0 = top "
     "(1.0 = top card, smaller = deeper, 0 = not in the pile); then the top card one-hot (80)"),
    ("arboretum_summary", SEATS * SUMMARY_BLOCK,
     "per seat, 100 values: multi-hot cards in that arboretum (80); per species the points / 20 "
     "of its best current path there (`engine.scoring.best_path`, regardless of rights) (10); "
     "per species its cards there / 8 (10)"),
    ("arboretum_planes", SEATS * PLANES_BLOCK,
     "per seat, two 18 x 18 planes in that arboretum's action frame: rank / 8, then "
     "(species index + 1) / 10; 0 = empty cell"),
    ("own_species_planes", NUM_SPECIES * FRAME_CELLS,
     "10 planes 18 x 18 (canonical species order), the observer's arboretum in its action "
     "frame: rank / 8 where a card of that species lies, else 0"),
    ("gain_plane", FRAME_CELLS,
     "18 x 18, the observer's action frame; during PLAY_CELL for the player to move: on every "
     "legal cell (1 + gain) / 20, gain = growth of the best-path points of the pending card's "
     "species if the card goes there; 0 on other cells and in other decisions"),
]


def _offsets(sections) -> dict[str, int]:
    out, at = {}, 0
    for name, width, _ in sections:
        out[name] = at
        at += width
    return out


OBS_SIZE = sum(w for _, w, _ in SECTIONS)
OFFSETS = _offsets(SECTIONS)
WIDTHS = {name: w for name, w, _ in SECTIONS}
assert OBS_SIZE == 7835, OBS_SIZE
assert OBS_SIZE <= 10_000

_O_PLAYERS = OFFSETS["player_count"]
_O_DECISION = OFFSETS["decision"]
_O_TO_MOVE = OFFSETS["to_move"]
_O_DECK = OFFSETS["deck_size"]
_O_TURN = OFFSETS["turn"]
_O_SPECIES = OFFSETS["species_in_play"]
_O_HAND = OFFSETS["hand"]
_O_DRAWN = OFFSETS["drawn"]
_O_PENDING = OFFSETS["pending"]
_O_RIGHTS = OFFSETS["rights"]
_O_HAND_SIZES = OFFSETS["hand_sizes"]
_O_SUMS = OFFSETS["hand_sums"]
_O_KNOWN = OFFSETS["known_cards"]
_O_PILES = OFFSETS["discard_piles"]
_O_SUMMARY = OFFSETS["arboretum_summary"]
_O_ARB_PLANES = OFFSETS["arboretum_planes"]
_O_PLANES = OFFSETS["own_species_planes"]
_O_GAIN = OFFSETS["gain_plane"]
# Inside one seat's blocks.
_P_TOP = NUM_CARDS
_A_POINTS = NUM_CARDS
_A_COUNTS = NUM_CARDS + NUM_SPECIES
_A_SPECIES = FRAME_CELLS

_STRIDE = CELL_STRIDE
_HALF = CELL_STRIDE // 2
_GAIN_EMPTY = memoryview(np.full(FRAME_CELLS, 1.0 / POINTS_SCALE, np.float32))
"""The gain plane of an empty arboretum: every cell is legal and a single card gains 0."""
_CACHE_LIMIT = 4096


def layout_table() -> str:
    """The observation layout as a Markdown table (env docstring and docs/env.md)."""
    lines = ["| offset | width | section | meaning and scale |", "|---:|---:|---|---|"]
    for name, width, desc in SECTIONS:
        lines.append(f"| {OFFSETS[name]} | {width} | `{name}` | {desc} |")
    lines.append(f"| | {OBS_SIZE} | | total (`OBS_SIZE`) |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- caches
_RANK_VALUE = [((c & 7) + 1) / RANK_SCALE for c in range(NUM_CARDS)]
_SPECIES_VALUE = [((c >> 3) + 1) / SPECIES_SCALE for c in range(NUM_CARDS)]


class _Arboretum:
    """Cached features of one arboretum at one card count (``size``): ``summary_view`` and
    ``planes_view`` (its parts of ``arboretum_summary`` and ``arboretum_planes``, memoryviews
    of float32, never written through), ``species_values()`` and ``frontier()`` (built on first use), the
    frame ``origin`` (as ``actions.frame_origin``), the best path ``points`` per species and the
    DP's rank ``buckets``.

    Built from scratch, or grown from the entry of the same arboretum one card earlier
    (``previous``): arboretums only grow, by insertion (the new card is the dict's last item),
    so only the new card's effects are computed. tests/test_env_observation.py checks that
    grown entries equal entries built from scratch."""

    __slots__ = ("arboretum", "size", "origin", "points", "buckets", "summary_view", "planes_view",
                 "_summary", "_planes", "_species_values", "_frontier", "_previous", "_cells",
                 "_cards", "_box", "_ranges", "_arrays")

    def __init__(self, arboretum: Mapping[int, int], previous: Optional["_Arboretum"] = None) -> None:
        self.arboretum = arboretum  # keeps the object alive: its id stays unique in the cache
        self.size = size = len(arboretum)
        self._species_values = self._frontier = self._previous = self._arrays = None
        if not size:
            self.origin = frame_origin(arboretum)
            self.points = [0] * NUM_SPECIES
            self.buckets = [[], [], [], [], [], [], [], []]
            self._cells, self._cards, self._box = [], [], None
            self._ranges = ([8] * NUM_SPECIES, [-1] * NUM_SPECIES, [0] * NUM_SPECIES)
            self._summary = np.zeros(SUMMARY_BLOCK, np.float32)
            self._planes = np.zeros(PLANES_BLOCK, np.float32)
        elif previous is not None and previous.size == size - 1 and size > 1:
            self._grow(previous)
        else:
            self._build()
        self.summary_view = memoryview(self._summary)  # internal: never written through
        self.planes_view = memoryview(self._planes)

    # --------------------------------------------------------------- from scratch
    def _build(self) -> None:
        arboretum = self.arboretum
        self.buckets = buckets = rank_buckets(arboretum)
        rows, cols, cards = [], [], []
        for cell, card in arboretum.items():
            row = (cell + _HALF) // _STRIDE
            rows.append(row)
            cols.append(cell - row * _STRIDE)
            cards.append(card)
        self._box = (min(rows), max(rows), min(cols), max(cols))
        self._cards = cards
        self.origin = r0, c0 = self._origin()
        self._cells = [(r - r0) * FRAME + (c - c0) for r, c in zip(rows, cols)]
        self._ranges = lows, highs, counts = species_ranges(cards)
        self.points = points = [
            forward(arboretum, buckets, s, lows[s], highs[s])[3] if counts[s] >= 2 else 0
            for s in range(NUM_SPECIES)]
        self._fill_planes()
        summary = np.zeros(SUMMARY_BLOCK, np.float32)
        summary[cards] = 1.0
        summary[_A_POINTS:_A_COUNTS + NUM_SPECIES] = (
            [p / POINTS_SCALE for p in points] + [c / COUNT_SCALE for c in counts])
        self._summary = summary

    def _origin(self) -> tuple[int, int]:
        r_min, r_max, c_min, c_max = self._box
        r0 = r_min - (FRAME - (r_max - r_min + 1)) // 2  # actions.frame_origin
        c0 = c_min - (FRAME - (c_max - c_min + 1)) // 2
        assert r0 <= r_min and r_max < r0 + FRAME and c0 <= c_min and c_max < c0 + FRAME, \
            "the arboretum does not fit its frame"
        return r0, c0

    def _fill_planes(self) -> None:
        """The rank and species planes, written with numpy fancy indexing."""
        planes = np.zeros(PLANES_BLOCK, np.float32)
        cells, cards = self._cells, self._cards
        planes[cells] = [_RANK_VALUE[c] for c in cards]
        planes[[_A_SPECIES + i for i in cells]] = [_SPECIES_VALUE[c] for c in cards]
        self._planes = planes

    # --------------------------------------------------------------- one card more
    def _grow(self, previous: "_Arboretum") -> None:
        arboretum = self.arboretum
        cell, card = next(reversed(arboretum.items()))
        s, rank = card >> 3, card & 7
        row = (cell + _HALF) // _STRIDE
        col = cell - row * _STRIDE

        # rank buckets: the new entry, and its neighbours see it (copy on write)
        buckets = previous.buckets[:]
        lower, higher = [], []
        get = arboretum.get
        for n in (cell - _STRIDE, cell + 1, cell + _STRIDE, cell - 1):
            other = get(n)
            if other is not None:
                r = other & 7
                if r == rank:
                    continue
                bucket = buckets[r] = buckets[r][:] if buckets[r] is previous.buckets[r] else buckets[r]
                for i, e in enumerate(bucket):
                    if e[0] == n:
                        break
                if r < rank:
                    lower.append(n)
                    bucket[i] = (n, e[1], e[2], e[3] + [cell])
                else:
                    higher.append(n)
                    bucket[i] = (n, e[1], e[2] + [cell], e[3])
        buckets[rank] = previous.buckets[rank] + [(cell, card, lower, higher)]
        self.buckets = buckets

        # frame
        r_min, r_max, c_min, c_max = previous._box
        self._box = (row if row < r_min else r_min, row if row > r_max else r_max,
                     col if col < c_min else c_min, col if col > c_max else c_max)
        self._cards = previous._cards + [card]
        self.origin = r0, c0 = self._origin()
        index = (row - r0) * FRAME + col - c0
        p0 = previous.origin
        shift = (r0 - p0[0]) * FRAME + (c0 - p0[1])  # old frame index - new frame index
        if shift:
            self._cells = [i - shift for i in previous._cells] + [index]
        else:
            self._cells = previous._cells + [index]

        # points: only paths through the new card are new. It may start, end or lie inside a
        # path of its own species; it lies strictly inside a path of another species t only if
        # it has a lower and a higher neighbour and t has cards below and above its rank.
        lows, highs, counts = previous._ranges
        counts = counts[:]
        counts[s] += 1
        if rank < lows[s]:
            lows = lows[:]
            lows[s] = rank
        if rank > highs[s]:
            highs = highs[:]
            highs[s] = rank
        self._ranges = (lows, highs, counts)
        summary = previous._summary.copy()
        smv = memoryview(summary)
        smv[card] = 1.0
        smv[_A_COUNTS + s] = counts[s] / COUNT_SCALE
        old = previous.points
        points = old
        if lower or higher:
            for t in ((s,) if not (lower and higher) else range(NUM_SPECIES)):
                if counts[t] >= 2 and (t == s or lows[t] < rank < highs[t]):
                    p = forward(arboretum, buckets, t, lows[t], highs[t])[3]
                    if p != old[t]:
                        if points is old:
                            points = old[:]
                        points[t] = p
                        smv[_A_POINTS + t] = p / POINTS_SCALE
        self.points = points
        self._summary = summary

        if not shift:
            planes = previous._planes.copy()
        else:  # the frame moved: every card moves by -shift in each plane (all stay inside)
            planes = np.zeros(PLANES_BLOCK, np.float32)
            old = previous._planes
            for b in (0, FRAME_CELLS):
                if shift > 0:
                    planes[b:b + FRAME_CELLS - shift] = old[b + shift:b + FRAME_CELLS]
                else:
                    planes[b - shift:b + FRAME_CELLS] = old[b:b + FRAME_CELLS + shift]
        pmv = memoryview(planes)
        pmv[index] = _RANK_VALUE[card]
        pmv[_A_SPECIES + index] = _SPECIES_VALUE[card]
        self._planes = planes
        self._previous = previous  # for species_values() and frontier()

    # --------------------------------------------------------------- built on first use
    def species_values(self) -> list[tuple[int, float]]:
        """The nonzero values of ``own_species_planes`` for this arboretum: (index in the
        observation, rank / 8)."""
        if self._species_values is None:
            previous = self._previous
            card = self._cards[-1] if self._cards else None
            if previous is not None and previous._species_values is not None:
                new = (_O_PLANES + (card >> 3) * FRAME_CELLS + self._cells[-1], _RANK_VALUE[card])
                shift = (self.origin[0] - previous.origin[0]) * FRAME + self.origin[1] - previous.origin[1]
                if shift:
                    self._species_values = [(j - shift, v) for j, v in previous._species_values] + [new]
                else:
                    self._species_values = previous._species_values + [new]
            else:
                self._species_values = [(_O_PLANES + (c >> 3) * FRAME_CELLS + i, _RANK_VALUE[c])
                                        for i, c in zip(self._cells, self._cards)]
            if self._frontier is not None:
                self._previous = None
        return self._species_values

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The cards' frame indices and the cards, as int64 arrays (for ``engine.jit_gains``)."""
        if self._arrays is None:
            self._arrays = (np.array(self._cells, np.int64), np.array(self._cards, np.int64))
        return self._arrays

    def frontier(self) -> set[int]:
        """Empty cells orthogonally next to the arboretum (packed)."""
        if self._frontier is None:
            arboretum = self.arboretum
            previous = self._previous
            if previous is not None and previous._frontier is not None:
                cell = next(reversed(arboretum))
                out = set(previous._frontier)
                out.discard(cell)
                for n in (cell - _STRIDE, cell + 1, cell + _STRIDE, cell - 1):
                    if n not in arboretum:
                        out.add(n)
            else:
                out = set()
                for cell in arboretum:
                    for n in (cell - _STRIDE, cell + 1, cell + _STRIDE, cell - 1):
                        if n not in arboretum:
                            out.add(n)
            self._frontier = out
            if self._species_values is not None:
                self._previous = None
        return self._frontier


_DEPTHS = [np.arange(NUM_CARDS - n + 1, NUM_CARDS + 1, dtype=np.float32) / PILE_SCALE
           for n in range(NUM_CARDS + 1)]
"""``_DEPTHS[n][i]``: the depth value of position ``i`` (bottom first) of a pile of ``n`` cards."""


def _pile_block(pile) -> memoryview:
    block = np.zeros(PILE_BLOCK, np.float32)
    block[list(pile)] = _DEPTHS[len(pile)]
    block[_P_TOP + pile[-1]] = 1.0
    return memoryview(block).toreadonly()


# The section widths the encoder writes, checked against SECTIONS.
assert (WIDTHS["player_count"], WIDTHS["decision"], WIDTHS["to_move"], WIDTHS["deck_size"],
        WIDTHS["turn"], WIDTHS["species_in_play"]) == (3, DECISIONS, SEATS, 1, 1, NUM_SPECIES)
assert WIDTHS["hand"] == WIDTHS["drawn"] == WIDTHS["pending"] == NUM_CARDS
assert WIDTHS["rights"] == NUM_SPECIES and WIDTHS["hand_sizes"] == SEATS
assert WIDTHS["hand_sums"] == SEATS * NUM_SPECIES and WIDTHS["known_cards"] == SEATS * NUM_CARDS
assert WIDTHS["discard_piles"] == SEATS * PILE_BLOCK and PILE_BLOCK == 2 * NUM_CARDS
assert WIDTHS["arboretum_summary"] == SEATS * SUMMARY_BLOCK
assert WIDTHS["arboretum_planes"] == SEATS * PLANES_BLOCK
assert WIDTHS["own_species_planes"] == NUM_SPECIES * FRAME_CELLS
assert WIDTHS["gain_plane"] == FRAME_CELLS


# ----------------------------------------------------------------------------- encoder
class ObservationEncoder:
    """Writes a ``TableView`` into a float32 vector of ``OBS_SIZE`` values (see ``SECTIONS``).

    ``encode(tv)`` writes into the encoder's preallocated ``buffer`` (overwritten by the next
    call) and returns it; ``encode(tv, out)`` writes into ``out`` instead (``zeroed=True``: the
    caller guarantees that ``out`` is all zeros, e.g. fresh from ``np.zeros``).
    ``encode_state(state, observer, pending, out)`` writes the same values straight from a
    state: it reads exactly the fields ``table_view`` exposes (tests/test_env_observation.py
    checks that both agree).

    The caches hold public data only, keyed by the identity of the view's containers (the
    state's own arboretum dicts and discard lists, kept alive by the cache so that their ids
    stay unique): an arboretum entry is valid while the arboretum has the same card count
    (arboretums only grow), a pile entry while the pile equals the saved copy.
    ``clear_cache()`` drops them (the env does so at every reset).
    """

    def __init__(self) -> None:
        self.buffer = np.zeros(OBS_SIZE, np.float32)
        self._buffer_view = memoryview(self.buffer)
        self._arboretums: dict[int, _Arboretum] = {}
        self._piles: dict[int, tuple] = {}
        self._species: dict[tuple[int, ...], memoryview] = {}
        self._bits: dict[int, memoryview] = {}

    def clear_cache(self) -> None:
        self._arboretums.clear()
        self._piles.clear()

    def arboretum(self, arboretum: Mapping[int, int]) -> _Arboretum:
        """The cached features of an arboretum (built, or grown by one card, on a miss)."""
        cache = self._arboretums
        entry = cache.get(id(arboretum))
        size = len(arboretum)
        if entry is not None and entry.arboretum is arboretum:
            if entry.size == size:
                return entry
            previous = entry if entry.size == size - 1 else None
        else:
            previous = None
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
        entry = cache[id(arboretum)] = _Arboretum(arboretum, previous)
        return entry

    def _pile(self, pile) -> memoryview:
        """The cached block of a discard pile. Piles change at the top only, so each pile keeps
        the blocks of its earlier states: after a draw the pile is one of them again."""
        piles = self._piles
        entry = piles.get(id(pile))
        if entry is not None and entry[0] is pile:
            if entry[1] == pile:
                return entry[2]
            history = entry[3]
            size = len(pile)
            while history and len(history[-1][0]) > size:
                history.pop()
            if history and history[-1][0] == pile:
                saved, block = history[-1]
                piles[id(pile)] = (pile, saved, block, history)
                return block
        else:
            history = []
            if len(piles) >= _CACHE_LIMIT:
                piles.clear()
        saved = list(pile)
        while history and history[-1][0] != saved[:len(history[-1][0])]:
            history.pop()
        block = _pile_block(pile)
        history.append((saved, block))
        piles[id(pile)] = (pile, saved, block, history)
        return block

    def _bits_block(self, bits: int) -> memoryview:
        """10 values: 1.0 for each species whose bit is set."""
        block = self._bits.get(bits)
        if block is None:
            block = self._bits[bits] = memoryview(np.array(
                [(bits >> s) & 1 for s in range(NUM_SPECIES)], np.float32)).toreadonly()
        return block

    def _species_block(self, species: tuple[int, ...]) -> memoryview:
        block = self._species.get(species)
        if block is None:
            array = np.zeros(NUM_SPECIES, np.float32)
            array[list(species)] = 1.0
            block = self._species[species] = memoryview(array).toreadonly()
        return block

    def _target(self, out: Optional[np.ndarray], zeroed: bool):
        if out is None:
            out, mv = self.buffer, self._buffer_view
        else:
            mv = memoryview(out)
            if not zeroed:
                assert mv.format == "f" and mv.shape == (OBS_SIZE,), "out must be float32 (OBS_SIZE,)"
        if not zeroed:
            mv[:] = _ZEROS
        return out, mv

    def encode(self, tv: TableView, out: Optional[np.ndarray] = None, zeroed: bool = False) -> np.ndarray:
        """Write the observation of ``tv`` (see ``SECTIONS``); returns the array written."""
        out, mv = self._target(out, zeroed)
        view = tv.view
        self._write(mv, view.num_players, 0, tv.decision, view.to_move, view.deck_size, view.turn,
                    view.species, view.hand, view.drawn, tv.pending, view.known, view.discards,
                    view.arboretums, view.hand_sizes, None)
        return out

    def encode_state(self, state, observer: int, pending: Optional[int],
                     out: Optional[np.ndarray] = None, zeroed: bool = False) -> np.ndarray:
        """``encode(table_view(state, observer, pending), out)`` without building the view."""
        out, mv = self._target(out, zeroed)
        n = state.num_players
        current = state.current_player
        to_move = (current - observer) % n
        decision = decision_of(state, pending)
        if to_move:  # what the observer saw of another player's turn
            seen = state.known[current]
            drawn = [c for c in state.drawn if c in seen] if seen else ()
            pending = None
        else:
            drawn = state.drawn
        hands = state.hands
        self._write(mv, n, observer, decision, to_move, len(state.deck), state.turn, state.species,
                    hands[observer], drawn, pending, state.known, state.discards, state.arboretums,
                    None, hands)
        return out

    def _write(self, mv, n, rot, decision, to_move, deck_size, turn, species, hand, drawn,
               pending, known, discards, arboretums, hand_sizes, hands) -> None:
        """The encoder proper. Seat k's containers are at index ``(rot + k) % n`` of
        ``known``, ``discards``, ``arboretums`` and ``hand_sizes`` (or ``hands``, whose sizes
        are taken) (``rot`` = 0 for a ``PlayerView``'s seat-relative tuples, the observer for a
        state's lists)."""
        assert 2 <= n <= SEATS and 0 <= to_move < n
        widths = WIDTHS

        # player_count, decision, to_move, deck_size, turn, species_in_play
        assert widths["player_count"] == 3 and widths["decision"] == DECISIONS
        assert widths["to_move"] == SEATS and widths["deck_size"] == widths["turn"] == 1
        assert widths["species_in_play"] == NUM_SPECIES
        mv[_O_PLAYERS + n - 2] = 1.0
        mv[_O_DECISION + decision] = 1.0
        mv[_O_TO_MOVE + to_move] = 1.0
        mv[_O_DECK] = deck_size / DECK_SCALE
        mv[_O_TURN] = turn / TURN_SCALE
        in_play = self._species.get(species)
        if in_play is None:
            in_play = self._species_block(species)
        mv[_O_SPECIES:_O_SPECIES + NUM_SPECIES] = in_play

        # hand (and the observer's visible hand sums), drawn, pending
        assert widths["hand"] == widths["drawn"] == widths["pending"] == NUM_CARDS
        own = [0] * NUM_SPECIES
        for c in hand:
            mv[_O_HAND + c] = 1.0
            own[c >> 3] += _RANK[c]
        ones = 0  # bit (seat * 10 + species): that seat visibly holds the 1 of that species
        eights = None
        if not _ONES.isdisjoint(hand):
            for c in _ONES.intersection(hand):
                ones |= 1 << (c >> 3)
        if not _EIGHTS.isdisjoint(hand):
            eights = [(0, c >> 3) for c in _EIGHTS.intersection(hand)]
        for c in drawn:
            mv[_O_DRAWN + c] = 1.0
        if pending is not None:
            mv[_O_PENDING + pending] = 1.0

        # per seat: hand_sizes, known_cards (and visible sums), discard_piles,
        # arboretum_summary, arboretum_planes
        assert widths["hand_sizes"] == SEATS and widths["known_cards"] == SEATS * NUM_CARDS
        assert widths["discard_piles"] == SEATS * PILE_BLOCK
        assert widths["arboretum_summary"] == SEATS * SUMMARY_BLOCK
        assert widths["arboretum_planes"] == SEATS * PLANES_BLOCK
        arboretums_cache, piles_cache = self._arboretums, self._piles
        sums = None  # per other seat with known cards: its visible hand sums
        mine = None
        for k in range(n):
            i = rot + k
            if i >= n:
                i -= n
            mv[_O_HAND_SIZES + k] = _SIZE_VALUE[len(hands[i]) if hand_sizes is None else hand_sizes[i]]
            seen = known[i]
            if seen:
                o = _O_KNOWN + k * NUM_CARDS
                for c in seen:
                    mv[o + c] = 1.0
                if k:
                    row = [0] * NUM_SPECIES
                    for c in seen:
                        row[c >> 3] += _RANK[c]
                        if c & 7 == 0:
                            ones |= 1 << (k * NUM_SPECIES + (c >> 3))
                        elif c & 7 == 7:
                            eights = [(k, c >> 3)] if eights is None else eights + [(k, c >> 3)]
                    if sums is None:
                        sums = {k: row}
                    else:
                        sums[k] = row
            pile = discards[i]
            if pile:
                entry = piles_cache.get(id(pile))
                if entry is not None and entry[0] is pile and entry[1] == pile:
                    block = entry[2]
                else:
                    block = self._pile(pile)
                o = _O_PILES + k * PILE_BLOCK
                mv[o:o + PILE_BLOCK] = block
            arboretum = arboretums[i]
            entry = arboretums_cache.get(id(arboretum))
            if entry is None or entry.arboretum is not arboretum or entry.size != len(arboretum):
                entry = self.arboretum(arboretum)
            if entry.size:
                o = _O_SUMMARY + k * SUMMARY_BLOCK
                mv[o:o + SUMMARY_BLOCK] = entry.summary_view
                o = _O_ARB_PLANES + k * PLANES_BLOCK
                mv[o:o + PLANES_BLOCK] = entry.planes_view
            if k == 0:
                mine = entry

        # hand_sums ('1 cancels 8' among the visible cards), rights
        assert widths["hand_sums"] == SEATS * NUM_SPECIES and widths["rights"] == NUM_SPECIES
        if eights is not None:
            for k, s in eights:
                if ones & ~(1 << (k * NUM_SPECIES + s)) & _SPECIES_BITS[s]:
                    (sums[k] if k else own)[s] -= 8
        for s in species:
            if own[s]:
                mv[_O_SUMS + s] = _SUM_VALUE[own[s]]
        if sums is None:
            mv[_O_RIGHTS:_O_RIGHTS + NUM_SPECIES] = in_play
        else:
            lost = set()
            for k, row in sums.items():
                o = _O_SUMS + k * NUM_SPECIES
                for s in species:
                    v = row[s]
                    if v:
                        mv[o + s] = _SUM_VALUE[v]
                        if v > own[s]:
                            lost.add(s)
            for s in species:
                if s not in lost:
                    mv[_O_RIGHTS + s] = 1.0

        # own_species_planes (its few nonzero values), gain_plane
        assert widths["own_species_planes"] == NUM_SPECIES * FRAME_CELLS
        assert widths["gain_plane"] == FRAME_CELLS
        if mine.size:
            for i, v in mine.species_values():
                mv[i] = v
            if pending is not None and decision is Decision.PLAY_CELL:
                gains = placement_gains(mine.arboretum, pending, mine.frontier(), mine.buckets, mine.points)
                r0, c0 = mine.origin
                base = _O_GAIN - r0 * FRAME - c0
                for cell, gain in gains.items():
                    row = (cell + _HALF) >> 8
                    mv[base + row * FRAME + cell - (row << 8)] = _GAIN_VALUE[gain]
        elif pending is not None and decision is Decision.PLAY_CELL:
            mv[_O_GAIN:_O_GAIN + FRAME_CELLS] = _GAIN_EMPTY


_GAIN_VALUE = [(1 + g) / POINTS_SCALE for g in range(int(POINTS_SCALE))]
_SUM_VALUE = [v / SUM_SCALE for v in range(37)]
_SIZE_VALUE = [v / HAND_SCALE for v in range(NUM_CARDS + 1)]
_RANK = [(c & 7) + 1 for c in range(NUM_CARDS)]
_ONES = frozenset(range(0, NUM_CARDS, NUM_RANKS))
_EIGHTS = frozenset(range(NUM_RANKS - 1, NUM_CARDS, NUM_RANKS))
_ZEROS = memoryview(np.zeros(OBS_SIZE, np.float32)).toreadonly()
_SPECIES_BITS = [sum(1 << (k * NUM_SPECIES + s) for k in range(SEATS)) for s in range(NUM_SPECIES)]
"""Per species: the bits of every seat in the ``ones`` mask of ``encode``."""


def encode(tv: TableView) -> np.ndarray:
    """A fresh observation vector for ``tv`` (convenience; an encoder reuses its caches)."""
    return ObservationEncoder().encode(tv).copy()
