"""``GreedyPlusAgent``: :class:`GreedyAgent` with end-game awareness (the teacher agent).

Draft; see the class docstring.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..actions import DISCARD, DRAW_DECK, DRAW_DISCARD, PLAY_CARD, Decision, cell_id
from ..engine.cards import NUM_RANKS, unpack_cell
from ..table_view import TableView
from .base import legal_actions
from .greedy import _MAX_SUM, _OFFSETS, GreedyAgent, _Position, frontier
from ..engine.paths import PathTables


def own_turns_left(view) -> int:
    """How many more turns the observer gets after the current one, if every draw from now on
    comes from the deck (the usual case): the deck left after this turn's remaining draws is
    drawn 2 cards a turn, seats in order, and the turn that draws the last card is the last."""
    pv = view.view
    deck = pv.deck_size
    if view.decision is Decision.DRAW_FIRST:
        deck -= 2
    elif view.decision is Decision.DRAW_SECOND:
        deck -= 1
    if deck <= 0:
        return 0
    turns = -(-deck // 2)  # turns after this one
    n = pv.num_players
    return turns // n


def own_turns_left_of(view, k: int) -> int:
    """How many more turns seat ``k`` (offset from the observer, who is on turn) gets after
    the current turn, if every draw from now on comes from the deck."""
    pv = view.view
    deck = pv.deck_size
    if view.decision is Decision.DRAW_FIRST:
        deck -= 2
    elif view.decision is Decision.DRAW_SECOND:
        deck -= 1
    if deck <= 0:
        return 0
    turns = -(-deck // 2)
    n = pv.num_players
    # the turns after this one go to seats 1, 2, ..., n-1, 0, 1, ...
    return (turns - k + n) // n if k else turns // n


# P(an unseen card ends in GreedyAgent's final hand) / (its unknown hand slots / unseen cards),
# measured over 150 GreedyAgent self-play games (62,109 card x decision samples, seeds
# 90000-90149), by [opponent has the species in its arboretum][opponent discarded the
# species][rank - 1]. GreedyAgent keeps high cards, of species it grows, and drops the species
# it discards.
CALIBRATION = (((0.41, 0.48, 0.78, 1.12, 1.37, 1.48, 1.76, 1.00),
                (0.26, 0.30, 0.35, 0.35, 0.50, 0.61, 0.80, 0.45)),
               ((0.24, 0.61, 0.94, 1.13, 1.36, 1.58, 2.02, 1.24),
                (0.48, 0.32, 0.84, 0.87, 0.95, 1.18, 1.34, 0.68)))


class _PlusPosition(_Position):
    """``_Position`` whose opponent hand model includes each unseen card with probability
    ``q_scale`` x (unknown hand slots / unseen cards), capped at 1."""

    def __init__(self, tv: TableView, start_bonus: float, later_weight: float,
                 q_scale: float = 1.0, opp_bias: float = 0.0, q_future: float = 0.0,
                 ge_scale: float = 1.0, calibrated: bool = False) -> None:
        self.opp_bias = opp_bias
        self.calibrated = calibrated
        self.ge_scale = ge_scale
        super().__init__(tv, start_bonus, later_weight)
        pv = tv.view
        if q_future:
            # the opponents' final hands are picked from what they hold now plus what they
            # still draw: count q_future x their future deck draws as extra unknown slots
            n = pv.num_players
            deck = pv.deck_size
            pool_size = max(len(self.pool), 1)
            q = [0.0]
            for k in range(1, n):
                slots = max(pv.hand_sizes[k] - len(pv.known[k]), 0)
                turns = own_turns_left_of(tv, k)
                extra = min(2 * turns, deck)
                q.append(min((slots + q_future * extra) / pool_size, 1.0))
            q_any = min(sum(q[1:]), 1.0)
            self._q = q
            self.q8 = [q_any if 0 < q8 < 1 else q8 for q8 in self.q8]
            self._tables.clear()
            self._opp_w.clear()
            self.p_now = self.rights(self.hand)[0]
        # per opponent, per species slot: how much likelier than average an unseen card of
        # that species is in their hand (they keep what continues their arboretum)
        self._bias = []
        self._cal = []  # per opponent, per species slot: the CALIBRATION row (or None)
        for k in range(1, pv.num_players):
            grown = {c >> 3 for c in pv.arboretums[k].values()}
            dropped = {c >> 3 for c in pv.discards[k]}
            self._bias.append([1.0 + opp_bias if s in grown else 1.0 for s in self.species])
            self._cal.append([CALIBRATION[s in grown][s in dropped] for s in self.species])
        if calibrated:
            # q8: P(the unseen 1 of a species is in an opponent's hand)
            for i, s in enumerate(self.species):
                if 0 < self.q8[i] < 1:
                    self.q8[i] = min(sum(min(self._q[k] * self._cal[k - 1][i][0] * q_scale, 1.0)
                                         for k in range(1, pv.num_players)), 1.0)
            self._tables.clear()
            self._opp_w.clear()
            self.q_scale = q_scale
            self.p_now = self.rights(self.hand)[0]
        elif q_scale != 1.0 or opp_bias:
            self._q = [min(q * q_scale, 1.0) for q in self._q]
            self.q8 = [min(q * q_scale, 1.0) if 0 < q < 1 else q for q in self.q8]
            self._tables.clear()
            self._opp_w.clear()
            self.p_now = self.rights(self.hand)[0]

    def tables(self, i: int, has_one: bool):
        """``_Position.tables`` with a per-species inclusion probability (``opp_bias``)."""
        if not hasattr(self, "_bias") or (not self.opp_bias and self.ge_scale == 1.0
                                          and not self.calibrated):
            return super().tables(i, has_one)
        key = (i, has_one)
        cached = self._tables.get(key)
        if cached is not None:
            return cached
        pv, n, s = self.pv, self.pv.num_players, self.species[i]
        one, eight = s * NUM_RANKS, s * NUM_RANKS + NUM_RANKS - 1
        unseen = [c for c in self._pool_set if c >> 3 == s]
        win = np.ones(_MAX_SUM + 1)
        ge_tables = []
        for k in range(1, n):
            cancel8 = has_one or any(one in pv.known[j] for j in range(1, n) if j != k)
            known = sum((c & 7) + 1 for c in pv.known[k]
                        if c >> 3 == s and not (c == eight and cancel8))
            q = self._q[k] * self._bias[k - 1][i]
            cal = self._cal[k - 1][i]
            cdfs = []
            for scale in ((1.0,) if self.ge_scale == 1.0 else (1.0, self.ge_scale)):
                dist = np.zeros(_MAX_SUM + 1)
                dist[min(known, _MAX_SUM)] = 1.0
                for c in unseen:
                    r = 0 if (c == eight and cancel8) else (c & 7) + 1
                    if self.calibrated:
                        qq = 1.0 if q >= 1.0 else min(q * scale * cal[c & 7] * self.q_scale, 1.0)
                    else:
                        qq = min(q * scale, 1.0)
                    if r and qq:
                        shifted = np.zeros_like(dist)
                        shifted[r:] = dist[:-r]
                        dist = (1 - qq) * dist + qq * shifted
                cdfs.append(np.cumsum(dist))
            win *= cdfs[0]
            ge_tables.append((1.0 - np.concatenate(([0.0], cdfs[-1][:-1]))).tolist())
        cached = self._tables[key] = (win.tolist(), ge_tables)
        return cached


class GreedyPlusAgent(GreedyAgent):
    name = "greedy_plus"

    def __init__(self, seed: Optional[int] = None, *, final_exact: bool = True,
                 horizon: bool = True, samples: int = 256, pair_weight: float = 0.0,
                 pair_top: int = 3, q_scale: float = 1.0, q_decay: bool = False,
                 opp_bias: float = 0.0, q_future: float = 0.0, ge_scale: float = 1.0,
                 deny_weight: float = 0.0, calibrated: bool = False, **kwargs) -> None:
        super().__init__(seed, **kwargs)
        self.pair_weight = pair_weight
        self.pair_top = pair_top
        self.q_scale = q_scale
        self.q_decay = q_decay
        self.opp_bias = opp_bias
        self.q_future = q_future
        self.ge_scale = ge_scale
        self.deny_weight = deny_weight
        self.calibrated = calibrated
        self._pairs_on = True
        self.final_exact = final_exact
        self.horizon = horizon
        self.samples = samples

    def __repr__(self) -> str:
        return (f"GreedyPlusAgent(final_exact={self.final_exact}, horizon={self.horizon}, "
                f"samples={self.samples})")

    # ------------------------------------------------------------------ entry point
    def act(self, observation, action_mask, view: Optional[TableView] = None) -> int:
        legal = legal_actions(action_mask)
        if view is None:
            raise ValueError("GreedyPlusAgent needs the TableView of the acting seat: pass "
                             "view=env.unwrapped.table_view(agent) (or use arena.play_game)")
        if not view.on_turn:
            raise ValueError(f"GreedyPlusAgent asked to act while not on turn "
                             f"(decision {view.decision.name}, seat to move +{view.view.to_move})")
        decision = view.decision
        pv = view.view
        final = pv.deck_size == 0 and self.final_exact
        if final and decision in (Decision.PLAY_CARD, Decision.PLAY_CELL, Decision.DISCARD,
                                  Decision.DRAW_SECOND):
            action = self._final(view, legal)
        else:
            left = own_turns_left(view)
            saved = (self.future_weight, self.start_bonus, self.pair_weight)
            try:
                if self.horizon and left == 0:
                    self.future_weight, self.start_bonus, self.pair_weight = 0.0, 0.0, 0.0
                elif self.horizon and left == 1:
                    self.pair_weight = 0.0
                q_scale = self.q_scale
                if self.q_decay:
                    q_scale = 1.0 + (q_scale - 1.0) * min(left, 4) / 4
                pos = _PlusPosition(view, self.start_bonus, self.later_weight, q_scale, self.opp_bias,
                                     self.q_future, self.ge_scale, self.calibrated)
                action = self._greedy_action(pos, view, legal)
            finally:
                self.future_weight, self.start_bonus, self.pair_weight = saved
        if not action_mask[action]:
            raise RuntimeError(f"GreedyPlusAgent chose illegal action {action} in {decision.name}")
        return int(action)

    def _greedy_action(self, pos: _Position, view: TableView, legal) -> int:
        decision = view.decision
        if decision is Decision.DRAW_FIRST or decision is Decision.DRAW_SECOND:
            return self._draw(pos, legal)
        if decision is Decision.PLAY_CARD:
            card, _, _ = self._play(pos, sorted(pos.hand))
            return PLAY_CARD + card
        if decision is Decision.PLAY_CELL:
            _, cell, _ = self._play(pos, [view.pending])
            return cell_id(view.view.arboretums[0], *unpack_cell(cell))
        if decision is Decision.DISCARD:
            return DISCARD + self._discard(pos)
        raise ValueError(f"GreedyPlusAgent cannot act in decision {decision.name}")

    def _draw(self, pos: _Position, legal) -> int:
        """GreedyAgent._draw plus denial: a pile top is worth ``deny_weight`` x what it would
        give the next players (minus what the card under it would give them)."""
        if not self.deny_weight:
            return super()._draw(pos, legal)
        base_rights = [pos.species_rights(i, pos.hand) for i in range(len(pos.species))]
        base_values = pos.own_values(pos.own.base)
        options = []
        if DRAW_DECK in legal and pos.pool:
            expected = float(np.mean([self._card_value(pos, c, base_rights, base_values)
                                      for c in pos.pool]))
            options.append((expected + self.draw_margin, DRAW_DECK))
        elif DRAW_DECK in legal:
            options.append((0.0, DRAW_DECK))
        for action in legal:
            if action == DRAW_DECK:
                continue
            pile = pos.pv.discards[action - DRAW_DISCARD]
            value = self._card_value(pos, pile[-1], base_rights, base_values)
            deny = pos.give_away(pile[-1]) - (pos.give_away(pile[-2]) if len(pile) > 1 else 0.0)
            options.append((value + self.deny_weight * deny, action))
        return max(options, key=lambda o: (o[0], -o[1]))[1]

    # ------------------------------------------------------------------ look-ahead
    def _future(self, pos: _Position, arboretum, cards) -> dict[int, float]:
        """Per possible discard ``d`` (and -1: none): the look-ahead value of keeping
        ``cards`` minus ``d``: ``future_weight`` x the best one-card gain next turn plus
        ``pair_weight`` x what a second kept card adds after the best first one."""
        tables = PathTables(arboretum, pos.species)
        cells = frontier(arboretum)
        weights = pos.p_now
        gain = tables.gain
        single = {}
        where = {}
        for y in cards:
            best, best_cell = 0.0, None
            for cell in cells:
                g = gain(cell, y, weights)
                if g > best:
                    best, best_cell = g, cell
            single[y] = best
            where[y] = best_cell
        pairs = []  # (first + second, y, z)
        if self.pair_weight:
            firsts = sorted((y for y in cards if where[y] is not None), key=lambda y: -single[y])
            for y in firsts[:self.pair_top]:
                after = dict(arboretum)
                after[where[y]] = y
                t2 = PathTables(after, pos.species)
                cells2 = frontier(after)
                for z in cards:
                    if z == y:
                        continue
                    g2 = max(0.0, max(t2.gain(cell, z, weights) for cell in cells2))
                    if g2 > 0:
                        pairs.append((single[y] + g2, y, z))
            pairs.sort(key=lambda p: -p[0])
        out = {}
        for d in list(cards) + [-1]:
            f1 = max((g for y, g in single.items() if y != d), default=0.0)
            f2 = next((v for v, y, z in pairs if y != d and z != d), f1)
            out[d] = self.future_weight * f1 + self.pair_weight * max(f2 - f1, 0.0)
        return out

    def _play(self, pos: _Position, cards) -> tuple[int, int, int]:
        """GreedyAgent._play with the look-ahead of :meth:`_future`."""
        hand = sorted(pos.hand)
        cells = pos.own_frontier
        arboretum = pos.pv.arboretums[0]
        penalty = {d: pos.give_away(d) for d in hand}
        adjacency = np.array([self.compact * sum((c + off) in arboretum for off in _OFFSETS)
                              for c in cells])
        candidates = []
        for x in cards:
            rest = [c for c in hand if c != x]
            discards, weights, costs = [], [], []
            for d in rest or [-1]:
                p_me, opp_points = pos.rights([c for c in rest if c != d])
                discards.append(d)
                weights.append(p_me)
                costs.append(opp_points + penalty.get(d, 0.0))
            values = np.array([pos.own_values(pos.own.through(cell, x), x >> 3) for cell in cells])
            scores = values @ np.array(weights).T - np.array(costs)[None, :] + adjacency[:, None]
            top = scores.max(axis=1)
            for ci in range(len(cells)):
                candidates.append((float(top[ci]), x, ci, scores[ci], discards))
        candidates.sort(key=lambda c: -c[0])
        best = (-np.inf, cards[0], cells[0], hand[0])
        for _, x, ci, scores, discards in candidates[:self.lookahead]:
            after = dict(arboretum)
            after[cells[ci]] = x
            future = self._future(pos, after, [c for c in hand if c != x])
            for d, score in zip(discards, scores):
                total = score + future[d]
                if total > best[0] + 1e-9:
                    best = (total, x, cells[ci], d)
        return best[1], best[2], best[3]

    def _discard(self, pos: _Position) -> int:
        hand = sorted(pos.hand)
        values = np.array(pos.own_values(pos.own.base))
        future = self._future(pos, pos.pv.arboretums[0], hand)
        best, best_card = -np.inf, hand[0]
        for d in hand:
            p_me, opp_points = pos.rights([c for c in hand if c != d])
            score = (float(values @ np.array(p_me)) - opp_points - pos.give_away(d) + future[d])
            if score > best + 1e-9:
                best, best_card = score, d
        return best_card

    # ------------------------------------------------------------------ the final turn
    def _final(self, view: TableView, legal) -> int:
        pos = _Position(view, 0.0, self.later_weight)
        ev = _FinalEvaluator(pos, self.samples)
        decision = view.decision
        hand = sorted(pos.hand)
        arboretum = pos.pv.arboretums[0]
        if decision is Decision.DISCARD:
            _, _, _, d = ev.best(hand, None, None)
            return DISCARD + d
        if decision is Decision.PLAY_CELL:
            _, _, cell, _ = ev.best(hand, [view.pending], None)
            return cell_id(arboretum, *unpack_cell(cell))
        if decision is Decision.PLAY_CARD:
            _, x, _, _ = ev.best(hand, hand, None)
            return PLAY_CARD + x
        # DRAW_SECOND with an empty deck: the pile top that gives the best final position
        best = None
        for action in legal:
            if action == DRAW_DECK:
                continue
            top = pos.pv.discards[action - DRAW_DISCARD][-1]
            value = ev.best(sorted(pos.hand | {top}), None, top)[0]
            if best is None or value > best[0] + 1e-12:
                best = (value, action)
        return int(best[1]) if best is not None else int(legal[0])


class _FinalEvaluator:
    """Win probability of final positions, over sampled hidden hands of the opponents."""

    def __init__(self, pos: _Position, samples: int) -> None:
        self.pos = pos
        pv = pos.pv
        n = pv.num_players
        species = pos.species
        ns = len(species)
        slot = pos.slot
        pool = np.array(pos.pool, dtype=np.int64)
        unknown = [max(pv.hand_sizes[k] - len(pv.known[k]), 0) for k in range(1, n)]
        need = sum(unknown)
        seed = hash((tuple(sorted(pv.hand)), tuple(pos.pool), pv.turn)) & 0xFFFFFFFF
        rng = np.random.default_rng(seed)
        if need == 0 or len(pool) == 0:
            samples = 1
        self.S = samples
        # per opponent: raw sums, has 1, has 8 (S x species)
        self.opp_sum, self.opp_one, self.opp_eight = [], [], []
        if need:
            need = min(need, len(pool))
            idx = np.argsort(rng.random((samples, len(pool))), axis=1)[:, :need]
            dealt = pool[idx]
        else:
            dealt = np.zeros((samples, 0), dtype=np.int64)
        start = 0
        for k in range(1, n):
            u = min(unknown[k - 1], dealt.shape[1] - start)
            cards = dealt[:, start:start + u]
            start += u
            sums = np.zeros((samples, ns))
            one = np.zeros((samples, ns), dtype=bool)
            eight = np.zeros((samples, ns), dtype=bool)
            for c in pv.known[k]:
                i = slot.get(c >> 3)
                if i is None:
                    continue
                sums[:, i] += (c & 7) + 1
                one[:, i] |= (c & 7) == 0
                eight[:, i] |= (c & 7) == 7
            if u:
                spc = cards >> 3
                rank = (cards & 7) + 1
                for i, s in enumerate(species):
                    m = spc == s
                    sums[:, i] += (rank * m).sum(axis=1)
                    one[:, i] |= (m & (rank == 1)).any(axis=1)
                    eight[:, i] |= (m & (rank == 8)).any(axis=1)
            self.opp_sum.append(sums)
            self.opp_one.append(one)
            self.opp_eight.append(eight)
        self.any_opp_one = np.zeros((samples, ns), dtype=bool)
        for one in self.opp_one:
            self.any_opp_one |= one
        self.opp_paths = [np.array(t.base, dtype=float) for t in pos.opp]
        self.opp_variety = [len({c >> 3 for c in pv.arboretums[k].values()}) for k in range(1, n)]

    def value(self, final_hand, paths: np.ndarray, variety: np.ndarray) -> np.ndarray:
        """P(win) + P(shared win) / 2 for one final hand and F arboretum options
        (``paths``: F x species best paths, ``variety``: F)."""
        pos = self.pos
        ns = len(pos.species)
        raw = np.zeros(ns)
        has_one = np.zeros(ns, dtype=bool)
        has_eight = np.zeros(ns, dtype=bool)
        for c in final_hand:
            i = pos.slot.get(c >> 3)
            if i is None:
                continue
            raw[i] += (c & 7) + 1
            has_one[i] |= (c & 7) == 0
            has_eight[i] |= (c & 7) == 7
        mine = raw[None, :] - 8.0 * (has_eight & ~has_one)[None, :] * self.any_opp_one
        my_right = np.ones((self.S, ns), dtype=bool)
        opp_totals = []
        for k, sums in enumerate(self.opp_sum):
            theirs = sums - 8.0 * (self.opp_eight[k] & ~self.opp_one[k] & (has_one[None, :] | self._other_one(k)))
            my_right &= mine >= theirs
            opp_totals.append(theirs)
        top_other = None
        for k, theirs in enumerate(opp_totals):
            best_all = np.maximum(mine, np.max(np.stack(opp_totals), axis=0))
            right_k = theirs >= best_all
            total_k = right_k.astype(float) @ self.opp_paths[k]  # S
            top_other = total_k if top_other is None else np.maximum(top_other, total_k)
        my_total = my_right.astype(float) @ paths.T  # S x F
        win = my_total > top_other[:, None]
        tie = my_total == top_other[:, None]
        # tie-break on variety (2 players exact; more players approximate)
        best_var = max(self.opp_variety) if self.opp_variety else 0
        win_tb = tie & (variety[None, :] > best_var)
        draw = tie & (variety[None, :] == best_var)
        margin = (my_total - top_other[:, None]).mean(axis=0)
        return (win | win_tb).mean(axis=0) + 0.5 * draw.mean(axis=0) + 1e-4 * margin

    def _other_one(self, k: int) -> np.ndarray:
        other = np.zeros_like(self.any_opp_one)
        for j, one in enumerate(self.opp_one):
            if j != k:
                other |= one
        return other

    def best(self, hand, cards, drawn) -> tuple[float, int, int, int]:
        """(value, card, cell, discard) maximising the final value. ``cards``: the cards that may
        be played (None: the card is already placed, only the discard is chosen)."""
        pos = self.pos
        arboretum = pos.pv.arboretums[0]
        present = {c >> 3 for c in arboretum.values()}
        best = (-np.inf, -1, -1, hand[0])
        if cards is None:  # discard only (or: draw evaluation where the play is still to come)
            if drawn is not None:
                return self.best(hand, hand, None)
            paths = np.array([pos.own.base], dtype=float)
            variety = np.array([len(present)])
            for d in hand:
                v = float(self.value([c for c in hand if c != d], paths, variety)[0])
                if v > best[0] + 1e-12:
                    best = (v, -1, -1, d)
            return best
        cells = pos.own_frontier
        for x in cards:
            paths = np.array([pos.own.through(cell, x) for cell in cells], dtype=float)
            variety = np.full(len(cells), len(present | {x >> 3}))
            rest = [c for c in hand if c != x]
            for d in rest or [-1]:
                vals = self.value([c for c in rest if c != d], paths, variety)
                j = int(np.argmax(vals))
                if vals[j] > best[0] + 1e-12:
                    best = (float(vals[j]), x, cells[j], d)
        return best
