"""The env's fast path to the observation: one observer's vector, kept up to date step by step.

``IncrementalEncoder(encoder, observer).update(state, pending, touched, step)`` keeps the
observer's last vector and rewrites only the sections that changed, reading the same fields
the ``TableView`` exposes and sharing the per-arboretum and per-pile caches of an
``observation.ObservationEncoder``. The layout (``observation.SECTIONS``) is defined there
once; tests/test_env_observation.py checks at every step of many games that this vector equals
the reference ``ObservationEncoder.encode`` of the observer's ``TableView``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .actions import FRAME, Decision, decision_of
from .engine import NUM_CARDS, NUM_SPECIES
from .engine import jit_gains
from .engine.path_dp import placement_gains
from .observation import (  # the layout and the reference encoder's caches
    DECK_SCALE,
    FRAME_CELLS,
    OBS_SIZE,
    ObservationEncoder,
    PILE_BLOCK,
    PLANES_BLOCK,
    SEATS,
    SUMMARY_BLOCK,
    TURN_SCALE,
    _GAIN_EMPTY,
    _GAIN_VALUE,
    _HALF,
    _O_ARB_PLANES,
    _O_DECISION,
    _O_DECK,
    _O_DRAWN,
    _O_GAIN,
    _O_HAND,
    _O_HAND_SIZES,
    _O_KNOWN,
    _O_PENDING,
    _O_PILES,
    _O_PLAYERS,
    _O_RIGHTS,
    _O_SPECIES,
    _O_SUMMARY,
    _O_SUMS,
    _O_TO_MOVE,
    _O_TURN,
    _RANK,
    _SIZE_VALUE,
    _SUM_VALUE,
    _ZEROS,
)


class IncrementalEncoder:
    """The observation of one observer, kept up to date step after step (the env's fast path).

    It keeps that observer's last observation and rewrites only what changed since: the
    header, the hand, the drawn cards, the pending card, and per seat whatever changed of hand
    size, known cards, discard pile and arboretum (the last two by the identity of their
    cached blocks); the visible hand sums and the rights are recomputed from per-seat parts
    that are themselves only recomputed when their cards change. ``update(state, pending)``
    returns the internal buffer (copy it before handing it out). It reads exactly the fields
    that ``table_view`` exposes to the observer; tests/test_env_observation.py checks every
    update against a full ``encode`` of the observer's ``TableView``.
    """

    __slots__ = ("encoder", "observer", "buffer", "_mv", "_updated_at", "_header", "_species",
                 "_species_bits", "_hand", "_drawn", "_pending", "_sizes", "_known", "_piles",
                 "_pile_objects", "_pile_saved", "_entries", "_own_values", "_own", "_own_ones",
                 "_own_eights", "_seen", "_seen_version", "_others_key", "_others_ones",
                 "_others_max", "_others_bits", "_others_written", "_own_written", "_rights_bits",
                 "_gain", "_gain_full")

    def __init__(self, encoder: ObservationEncoder, observer: int) -> None:
        self.encoder = encoder
        self.observer = observer
        self.buffer = np.zeros(OBS_SIZE, np.float32)
        self._mv = memoryview(self.buffer)
        self.clear()

    def clear(self) -> None:
        """Forget everything (a new game)."""
        self._mv[:] = _ZEROS
        self._updated_at = None  # the env's step counter at the last update (see update)
        self._header: tuple[int, ...] = ()
        self._species = None
        self._hand: frozenset[int] = frozenset()
        self._drawn: list[int] = []
        self._pending: Optional[int] = None
        self._sizes = [-1] * SEATS
        self._known: list = [frozenset()] * SEATS
        self._piles: list = [None] * SEATS
        self._pile_objects: list = [None] * SEATS  # the state's pile lists, and copies
        self._pile_saved: list = [None] * SEATS
        self._entries: list = [None] * SEATS
        self._own_values: list = []
        # visible hand sums: the observer's raw sums and the bits (species) of its 1s and 8s,
        # kept up to date; per other seat with known cards a _Seen (None without)
        self._own = [0] * NUM_SPECIES
        self._own_ones = self._own_eights = 0
        self._seen: list = [None] * SEATS
        self._seen_version = 0
        self._others_key = None
        self._others_ones = 0  # species of which another seat visibly holds the 1
        self._others_max = [0] * NUM_SPECIES  # per species: the best visible sum of the other seats
        self._others_bits = 0  # species where that sum is not 0
        self._others_written: list[int] = []
        self._own_written = [0.0] * NUM_SPECIES
        self._species_bits = 0
        self._rights_bits = 0
        self._gain: list[int] = []
        self._gain_full = False

    def update(self, state, pending: Optional[int], touched=None, now: int = 0) -> np.ndarray:
        """Bring the observation up to date and return the buffer. ``touched`` (optional, from
        the env): per player, the step counter at which its hand size, known cards, discard
        pile or arboretum last changed; ``now``: the current step counter. Seats untouched
        since this observer's last update are skipped."""
        mv = self._mv
        encoder = self.encoder
        observer = self.observer
        n = state.num_players
        current = state.current_player
        to_move = (current - observer) % n
        decision = decision_of(state, pending)

        # player_count, decision, to_move, deck_size, turn, species_in_play
        header = (_O_PLAYERS + n - 2, _O_DECISION + decision, _O_TO_MOVE + to_move)
        if header != self._header:
            for i in self._header:
                mv[i] = 0.0
            for i in header:
                mv[i] = 1.0
            self._header = header
        mv[_O_DECK] = len(state.deck) / DECK_SCALE
        mv[_O_TURN] = state.turn / TURN_SCALE
        species = state.species
        changed = 0  # species whose visible hand sums may have changed (bits)
        if species is not self._species:
            mv[_O_SPECIES:_O_SPECIES + NUM_SPECIES] = encoder._species.get(species) or encoder._species_block(species)
            self._species = species
            self._species_bits = sum(1 << s for s in species)
            self._rights_bits = 0
            mv[_O_RIGHTS:_O_RIGHTS + NUM_SPECIES] = _ZEROS[:NUM_SPECIES]
            changed = _ALL_SPECIES

        # hand (and the observer's raw sums), drawn, pending
        hand = state.hands[observer]
        if hand != self._hand:
            own = self._own
            for c in self._hand.symmetric_difference(hand):
                bit = 1 << (c >> 3)
                changed |= bit
                if c in hand:  # drawn
                    mv[_O_HAND + c] = 1.0
                    own[c >> 3] += _RANK[c]
                    if c & 7 == 0:
                        self._own_ones |= bit
                    elif c & 7 == 7:
                        self._own_eights |= bit
                else:  # played or discarded
                    mv[_O_HAND + c] = 0.0
                    own[c >> 3] -= _RANK[c]
                    if c & 7 == 0:
                        self._own_ones &= ~bit
                    elif c & 7 == 7:
                        self._own_eights &= ~bit
            self._hand = frozenset(hand)
        if to_move:  # what the observer saw of another player's turn
            seen = state.known[current]
            drawn = [c for c in state.drawn if c in seen] if seen else []
            pending = None
        else:
            drawn = state.drawn
        if drawn != self._drawn:
            for c in self._drawn:
                mv[_O_DRAWN + c] = 0.0
            for c in drawn:
                mv[_O_DRAWN + c] = 1.0
            self._drawn = drawn[:]
        if pending != self._pending:
            if self._pending is not None:
                mv[_O_PENDING + self._pending] = 0.0
            if pending is not None:
                mv[_O_PENDING + pending] = 1.0
            self._pending = pending

        # per seat: hand size, known cards, discard pile, arboretum
        hands, known, discards, arboretums = state.hands, state.known, state.discards, state.arboretums
        sizes, knowns, piles, entries, seens = self._sizes, self._known, self._piles, self._entries, self._seen
        pile_objects, pile_saved = self._pile_objects, self._pile_saved
        piles_cache, arboretums_cache = encoder._piles, encoder._arboretums
        since = self._updated_at if touched is not None else None
        for k, i in _SEATS_FROM[n][observer]:
            if since is not None and touched[i] <= since:
                continue
            size = len(hands[i])
            if size != sizes[k]:
                mv[_O_HAND_SIZES + k] = _SIZE_VALUE[size]
                sizes[k] = size
            cards = known[i]
            if cards != knowns[k]:
                o = _O_KNOWN + k * NUM_CARDS
                old = knowns[k]
                for c in old - cards:
                    mv[o + c] = 0.0
                for c in cards - old:
                    mv[o + c] = 1.0
                knowns[k] = frozen = frozenset(cards)
                if k:
                    seens[k] = _seen_of(frozen) if frozen else None
                    self._seen_version += 1
                    changed |= _OTHERS_CHANGED
            pile = discards[i]
            if pile is not pile_objects[k] or pile != pile_saved[k]:  # else: unchanged
                if pile:
                    entry = piles_cache.get(id(pile))
                    if entry is not None and entry[0] is pile and entry[1] == pile:
                        block = entry[2]
                    else:
                        block = encoder._pile(pile)
                else:
                    block = None
                pile_objects[k], pile_saved[k] = pile, pile[:]
                if block is not piles[k]:
                    o = _O_PILES + k * PILE_BLOCK
                    mv[o:o + PILE_BLOCK] = _ZERO_PILE if block is None else block
                    piles[k] = block
            arboretum = arboretums[i]
            entry = entries[k]
            if entry is None or entry.arboretum is not arboretum or entry.size != len(arboretum):
                entry = arboretums_cache.get(id(arboretum))
                if entry is None or entry.arboretum is not arboretum or entry.size != len(arboretum):
                    entry = encoder.arboretum(arboretum)
                o = _O_SUMMARY + k * SUMMARY_BLOCK
                mv[o:o + SUMMARY_BLOCK] = entry.summary_view
                o = _O_ARB_PLANES + k * PLANES_BLOCK
                mv[o:o + PLANES_BLOCK] = entry.planes_view
                entries[k] = entry
                if k == 0:
                    for j, _ in self._own_values:
                        mv[j] = 0.0
                    self._own_values = values = entry.species_values()
                    for j, v in values:
                        mv[j] = v
        mine = entries[0]
        self._updated_at = now if touched is not None else None

        if changed:
            self._sums_and_rights(mv, species, n, changed)

        # gain_plane
        if self._gain_full:
            mv[_O_GAIN:_O_GAIN + FRAME_CELLS] = _ZEROS[:FRAME_CELLS]
            self._gain_full = False
        elif self._gain:
            for j in self._gain:
                mv[j] = 0.0
            self._gain = []
        if pending is not None and decision is Decision.PLAY_CELL:
            if mine.size and jit_gains.available:
                cells, cards = mine.arrays()
                jit_gains.frame_gains(cells, cards, pending, mine.points[pending >> 3], FRAME,
                                      self.buffer, _O_GAIN, _GAIN_VALUES)
                self._gain_full = True  # cleared whole at the next update
            elif mine.size:
                gains = placement_gains(mine.arboretum, pending, mine.frontier(), mine.buckets, mine.points)
                r0, c0 = mine.origin
                base = _O_GAIN - r0 * FRAME - c0
                written = []
                for cell, gain in gains.items():
                    row = (cell + _HALF) >> 8
                    j = base + row * FRAME + cell - (row << 8)
                    mv[j] = _GAIN_VALUE[gain]
                    written.append(j)
                self._gain = written
            else:
                mv[_O_GAIN:_O_GAIN + FRAME_CELLS] = _GAIN_EMPTY
                self._gain_full = True
        return self.buffer

    def _sums_and_rights(self, mv, species, n: int, changed: int) -> None:
        """hand_sums ('1 cancels 8' among the visible cards) and rights, for the species in
        ``changed`` (bits). The other seats' part is redone when their known cards or the
        observer's 1s changed, and then also the species where it was or is not 0."""
        seens = self._seen
        own_ones = self._own_ones
        key = (self._seen_version, own_ones)
        if key != self._others_key:
            self._others_key = key
            for j in self._others_written:
                mv[j] = 0.0
            written = []
            others_ones = 0
            for k in range(1, n):
                if seens[k] is not None:
                    others_ones |= seens[k].ones
            all_ones = others_ones | own_ones
            best = [0] * NUM_SPECIES  # per species: the best visible sum of the other seats
            nonzero = 0  # bits: species where it is not 0
            for k in range(1, n):
                seen = seens[k]
                if seen is None:
                    continue
                # a 1 held by anyone else cancels this seat's 8 (a card is in one place only,
                # so the others' 1s are all_ones without this seat's own)
                cancel = seen.eights & all_ones & ~seen.ones
                o = _O_SUMS + k * NUM_SPECIES
                for s, v in seen.items:
                    if cancel >> s & 1:
                        v -= 8
                    if v:
                        mv[o + s] = _SUM_VALUE[v]
                        written.append(o + s)
                        if v > best[s]:
                            best[s] = v
                        nonzero |= 1 << s
            # the own sums and rights can change only where another seat's sum was or is not
            # 0 (that covers the others' 1s, which cancel the observer's 8s: a 1 counts 1)
            changed |= nonzero | self._others_bits
            self._others_written = written
            self._others_ones = others_ones
            self._others_max = best
            self._others_bits = nonzero
        own = self._own
        cancel = self._own_eights & self._others_ones
        best = self._others_max
        own_written = self._own_written
        rights = self._rights_bits
        changed &= self._species_bits
        while changed:
            low = changed & -changed
            changed ^= low
            s = low.bit_length() - 1
            v = own[s] - 8 if cancel & low else own[s]
            value = _SUM_VALUE[v]
            if value != own_written[s]:
                mv[_O_SUMS + s] = own_written[s] = value
            if v >= best[s]:
                rights |= low
            else:
                rights &= ~low
        if rights != self._rights_bits:
            self._rights_bits = rights
            mv[_O_RIGHTS:_O_RIGHTS + NUM_SPECIES] = self.encoder._bits_block(rights)


class _Seen:
    """The visible part of another seat's hand (its known cards): raw sums per species, and
    the bits (species) of its 1s and 8s."""

    __slots__ = ("items", "ones", "eights")

    def __init__(self, cards: frozenset[int]) -> None:
        row = [0] * NUM_SPECIES
        ones = eights = 0
        for c in cards:
            row[c >> 3] += _RANK[c]
            if c & 7 == 0:
                ones |= 1 << (c >> 3)
            elif c & 7 == 7:
                eights |= 1 << (c >> 3)
        self.items = [(s, v) for s, v in enumerate(row) if v]  # (species, raw sum), sum > 0
        self.ones, self.eights = ones, eights


_SEEN: dict[frozenset, _Seen] = {}


def _seen_of(cards: frozenset[int]) -> _Seen:
    """The shared ``_Seen`` of a set of known cards (every observer sees the same sets)."""
    seen = _SEEN.get(cards)
    if seen is None:
        if len(_SEEN) >= 4096:
            _SEEN.clear()
        seen = _SEEN[cards] = _Seen(cards)
    return seen


_GAIN_VALUES = np.array(_GAIN_VALUE, np.float32)
_ZERO_PILE = memoryview(np.zeros(PILE_BLOCK, np.float32)).toreadonly()
_ALL_SPECIES = (1 << NUM_SPECIES) - 1
_SEATS_FROM = {n: [[(k, (observer + k) % n) for k in range(n)] for observer in range(n)] for n in (2, 3, 4)}
"""``_SEATS_FROM[n][observer]``: (seat offset k, player) pairs in turn order from the observer."""
_OTHERS_CHANGED = 1 << NUM_SPECIES
"""A bit above the species bits of ``changed``: another seat's known cards changed."""
