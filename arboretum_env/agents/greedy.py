"""``GreedyAgent``: a one-decision-deep heuristic that reads the :class:`TableView`.

Everything is recomputed at every call from what the seat can see (no memory):

* **Rights.** For each species, the agent's hand sum (with "1 cancels 8") is compared with a
  distribution of each opponent's sum: the cards known in their hand plus each unseen card of
  that species (not in any arboretum, discard pile or known hand) being in their hand with
  probability ``unknown hand slots / unseen cards``. This gives ``P(I keep the right)`` and, per
  opponent, ``P(they keep it)``.
* **Value of a position** = sum over species of ``P(my right) * (my best path + a small bonus for
  having started the species)`` minus ``sum over opponents P(their right) * their best path``.
  So cards in hand count for the species the agent is building and for blocking the species
  its opponents are building.
* **Play and discard** are chosen together: every (card, cell) of the hand x frontier and every
  discard left over is scored by the value above (best paths after the play come from
  :class:`PathTables`, exact and fast) minus the **discard penalty**: what the discarded card
  would add to the next players' best paths if they drew it (weighted by their right
  probability; the next player fully, later ones less), plus a small bonus per occupied
  neighbour (compact arboretums leave more ways to connect). The best few (card, cell) pairs get
  a one-card look-ahead: half the best path gain that a card kept in hand could add on the next
  turn (so it plays where its hand can continue, and keeps the cards that continue its paths).
  The cell decision (``PLAY_CELL``) and the discard recompute the same objective with the chosen
  card (and cell) fixed.
* **Draws**: a discard-pile top is taken when its value (best placement gain on the own
  frontier + its effect on the rights) beats the expected value of an unseen card (the mean over
  every unseen card) by a margin; otherwise the deck.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..actions import DISCARD, DRAW_DECK, DRAW_DISCARD, PLAY_CARD, Decision, cell_id
from ..engine import rules
from ..engine.cards import NUM_RANKS, unpack_cell
from ..engine.paths import PathTables
from ..engine.rules import EIGHT, NEIGHBOURS, hand_sum, place
from ..engine.view import unseen_cards
from ..table_view import TableView
from .base import Agent, legal_actions

_MAX_SUM = sum(range(1, NUM_RANKS + 1))  # 36


class _Position:
    """Everything one decision needs, computed once from the view."""

    def __init__(self, tv: TableView, start_bonus: float, later_weight: float) -> None:
        pv = self.pv = tv.view
        self.first_draw = tv.decision is Decision.DRAW_FIRST
        n = pv.num_players
        self.species = species = tuple(pv.species)
        self.start_bonus = start_bonus
        self.hand = set(pv.hand)
        self.pool = unseen_cards(pv)
        unknown_slots = [max(pv.hand_sizes[k] - len(pv.known[k]), 0) for k in range(n)]
        pool_size = max(len(self.pool), 1)
        q = [min(unknown_slots[k] / pool_size, 1.0) for k in range(n)]
        q_any = min(sum(unknown_slots[1:]) / pool_size, 1.0)
        pool_set = set(self.pool)
        self.own = PathTables(pv.arboretums[0], species)
        self.own_free = rules.frontier(pv.arboretums[0])
        # the cells to try, ascending ([0]: (0, 0) for the first card, which may go anywhere)
        self.own_frontier = sorted(self.own_free) or [0]
        self.opp = [PathTables(pv.arboretums[k], species) for k in range(1, n)]
        self.opp_frontier = [sorted(rules.frontier(pv.arboretums[k])) for k in range(1, n)]
        self.present = {card >> 3 for card in pv.arboretums[0].values()}
        self.slot = {s: i for i, s in enumerate(species)}
        # per (species slot, I hold its 1): my-win table and per-opponent ">= mine" tables,
        # indexed by my sum; built on first use
        self._q, self._pool_set = q, pool_set
        self._tables: dict[tuple[int, bool], tuple[list[float], list[list[float]]]] = {}
        self._opp_w: dict[int, list[float]] = {}
        self.q8 = []  # probability that an unseen 1 sits in an opponent's hand (my 8 cancelled)
        for s in species:
            one = s * NUM_RANKS
            other_known_one = any(one in pv.known[k] for k in range(1, n))
            self.q8.append(q_any if (one in pool_set) else (1.0 if other_known_one else 0.0))
        self.opp_paths = [[t.base[i] for t in self.opp] for i in range(len(species))]
        self.later = [1.0] + [later_weight ** k for k in range(1, n - 1)]
        self.p_now = self.rights(self.hand)[0]

    # ------------------------------------------------------------------ rights
    def tables(self, i: int, has_one: bool) -> tuple[list[float], list[list[float]]]:
        """(P(every opponent's sum <= m), per opponent P(their sum >= m)) for my sum m = 0..36,
        for species slot ``i``, when I do / do not hold its 1 (which cancels their 8s).

        An opponent's sum: the known cards of that species in their hand plus each unseen card
        of it (``_unseen``) with probability ``_card_q`` (here: their unknown hand slots / unseen
        cards), independently."""
        key = (i, has_one)
        cached = self._tables.get(key)
        if cached is not None:
            return cached
        pv, n, s = self.pv, self.pv.num_players, self.species[i]
        one = s * NUM_RANKS
        unseen = self._unseen(s)
        win = np.ones(_MAX_SUM + 1)
        ge_tables = []
        for k in range(1, n):
            # another player's 1 (mine, or one known in a third hand) cancels their 8
            cancel8 = has_one or any(one in pv.known[j] for j in range(1, n) if j != k)
            eight_value = hand_sum(NUM_RANKS, False, True, cancel8)  # what their 8 adds
            known = sum(eight_value if c & 7 == EIGHT else (c & 7) + 1
                        for c in pv.known[k] if c >> 3 == s)
            dist = np.zeros(_MAX_SUM + 1)
            dist[min(known, _MAX_SUM)] = 1.0
            for c in unseen:
                r = eight_value if c & 7 == EIGHT else (c & 7) + 1
                q = self._card_q(k, i, c & 7)
                if r and q:
                    shifted = np.zeros_like(dist)
                    shifted[r:] = dist[:-r]
                    dist = (1 - q) * dist + q * shifted
            cdf = np.cumsum(dist)
            win *= cdf
            ge_tables.append((1.0 - np.concatenate(([0.0], cdf[:-1]))).tolist())
        cached = self._tables[key] = (win.tolist(), ge_tables)
        return cached

    def _unseen(self, s: int) -> list[int]:
        """The unseen cards of species ``s``, in the order ``tables`` folds them in."""
        return [c for c in self._pool_set if c >> 3 == s]

    def _card_q(self, k: int, i: int, rank: int) -> float:
        """P(an unseen card of species slot ``i`` and rank index ``rank`` is in opponent ``k``'s
        hand): the same for every card here."""
        return self._q[k]

    def rights(self, hand) -> tuple[list[float], float]:
        """(P(my right) per species, expected opponents' points lost to me = sum_k P(right_k) *
        best_k) for a hypothetical final hand."""
        p_me, opp_points = [], 0.0
        for i in range(len(self.species)):
            p, o = self.species_rights(i, hand)
            p_me.append(p)
            opp_points += o
        return p_me, opp_points

    def species_rights(self, i: int, hand) -> tuple[float, float]:
        """``rights`` for species slot ``i`` only."""
        s = self.species[i]
        one, eight = s * NUM_RANKS, s * NUM_RANKS + EIGHT
        total = 0
        for c in hand:
            if c >> 3 == s:
                total += (c & 7) + 1
        has_one = one in hand
        # the sum if an opponent has the 1 (only an 8 can lose anything)
        cancelled = hand_sum(total, has_one, True, True) if eight in hand else total
        q8 = self.q8[i] if cancelled != total else 0.0
        win, ge = self.tables(i, has_one)
        p = (1 - q8) * win[total] + (q8 * win[cancelled] if q8 else 0.0)
        opp_points = 0.0
        for k, best in enumerate(self.opp_paths[i]):
            if best:
                g = ge[k]
                opp_points += best * ((1 - q8) * g[total] + (q8 * g[cancelled] if q8 else 0.0))
        return float(p), opp_points

    def own_values(self, points: list[int], extra_species: int = -1) -> list[float]:
        b = self.start_bonus
        return [pts + (b if (s in self.present or s == extra_species) else 0.0)
                for s, pts in zip(self.species, points)]

    def give_away(self, card: int) -> float:
        """What ``card`` on a discard pile is worth to the next players (their path gain)."""
        total = 0.0
        for k, (table, cells) in enumerate(zip(self.opp, self.opp_frontier)):
            if not cells:
                continue
            best = 0.0
            weights = self._opp_right_now(k)
            for cell in cells:
                gain = table.gain(cell, card, weights)
                if gain > best:
                    best = gain
            total += self.later[k] * best
        return total

    def _opp_right_now(self, k: int) -> list[float]:
        cache = self._opp_w
        if k not in cache:
            weights = []
            for i, s in enumerate(self.species):
                total = sum((c & 7) + 1 for c in self.hand if c >> 3 == s)
                has_one = s * NUM_RANKS in self.hand
                weights.append(self.tables(i, has_one)[1][k][min(total, _MAX_SUM)])
            cache[k] = weights
        return cache[k]

    def placement_gain(self, card: int, p_me: list[float]) -> float:
        """Best weighted gain of placing ``card`` on the own frontier (paths and the bonus for
        starting a species)."""
        table = self.own
        t = card >> 3
        start = p_me[self.slot[t]] * self.start_bonus if t not in self.present else 0.0
        return start + max(0.0, max(table.gain(cell, card, p_me) for cell in self.own_frontier))

    def future_gains(self, tables: PathTables, cells, cards) -> dict[int, float]:
        """Per card: its best weighted path gain if it were played next on ``tables``."""
        weights = self.p_now
        gain = tables.gain
        return {y: max(0.0, max(gain(cell, y, weights) for cell in cells)) for y in cards}


class GreedyAgent(Agent):
    """A heuristic player; see the module docstring. Deterministic: the same view always gives
    the same action (``seed`` is accepted for the agent interface and changes nothing)."""

    name = "greedy"

    def __init__(self, seed: Optional[int] = None, start_bonus: float = 0.5,
                 draw_margin: float = 0.25, later_weight: float = 0.5,
                 future_weight: float = 0.5, lookahead: int = 6, compact: float = 0.05) -> None:
        self.start_bonus = start_bonus
        self.future_weight = future_weight
        self.lookahead = lookahead
        self.compact = compact
        self.draw_margin = draw_margin
        self.later_weight = later_weight
        self.seed(seed)

    def seed(self, seed: Optional[int] = None) -> None:
        self._seed = seed

    def __repr__(self) -> str:
        return f"GreedyAgent(start_bonus={self.start_bonus}, draw_margin={self.draw_margin})"

    def act(self, observation, action_mask, view: Optional[TableView] = None) -> int:
        legal = legal_actions(action_mask)
        if view is None:
            raise ValueError("GreedyAgent needs the TableView of the acting seat: pass "
                             "view=env.unwrapped.table_view(agent) (or use arena.play_game)")
        if not view.on_turn:
            raise ValueError(f"GreedyAgent asked to act while not on turn "
                             f"(decision {view.decision.name}, seat to move +{view.view.to_move})")
        pos = _Position(view, self.start_bonus, self.later_weight)
        decision = view.decision
        if decision is Decision.DRAW_FIRST or decision is Decision.DRAW_SECOND:
            action = self._draw(pos, legal)
        elif decision is Decision.PLAY_CARD:
            card, _, _ = self._play(pos, sorted(pos.hand))
            action = PLAY_CARD + card
        elif decision is Decision.PLAY_CELL:
            _, cell, _ = self._play(pos, [view.pending])
            action = cell_id(view.view.arboretums[0], *unpack_cell(cell))
        elif decision is Decision.DISCARD:
            action = DISCARD + self._discard(pos)
        else:
            raise ValueError(f"GreedyAgent cannot act in decision {decision.name}")
        if not action_mask[action]:
            raise RuntimeError(f"GreedyAgent chose illegal action {action} in {decision.name}")
        return int(action)

    # --------------------------------------------------------------- decisions
    def _play(self, pos: _Position, cards) -> tuple[int, int, int]:
        """Best (card, cell, discard) over ``cards`` x frontier x the rest of the hand."""
        hand = sorted(pos.hand)
        cells = pos.own_frontier
        arboretum = pos.pv.arboretums[0]
        penalty = {d: pos.give_away(d) for d in hand}
        adjacency = np.array([self.compact * sum((c + off) in arboretum for off in NEIGHBOURS)
                              for c in cells])
        candidates = []  # (immediate best, card, cell index, scores over discards, discards)
        for x in cards:
            rest = [c for c in hand if c != x]
            discards, weights, costs = [], [], []
            for d in rest or [-1]:  # -1: a one-card hand leaves nothing to discard
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
            after, free = dict(arboretum), dict(pos.own_free)
            place(after, free, cells[ci], x)
            gains = pos.future_gains(PathTables(after, pos.species), sorted(free),
                                     [c for c in hand if c != x])
            for d, score in zip(discards, scores):
                future = max((g for y, g in gains.items() if y != d), default=0.0)
                total = score + self.future_weight * future
                if total > best[0] + 1e-9:
                    best = (total, x, cells[ci], d)
        return best[1], best[2], best[3]

    def _discard(self, pos: _Position) -> int:
        hand = sorted(pos.hand)
        values = np.array(pos.own_values(pos.own.base))
        gains = pos.future_gains(pos.own, pos.own_frontier, hand)
        best, best_card = -np.inf, hand[0]
        for d in hand:
            p_me, opp_points = pos.rights([c for c in hand if c != d])
            future = max((g for y, g in gains.items() if y != d), default=0.0)
            score = (float(values @ np.array(p_me)) - opp_points - pos.give_away(d)
                     + self.future_weight * future)
            if score > best + 1e-9:
                best, best_card = score, d
        return best_card

    def _card_value(self, pos: _Position, card: int, base_rights, base_values) -> float:
        """Placement gain of ``card`` plus its effect on the rights of its species."""
        i = pos.slot[card >> 3]
        p_old, opp_old = base_rights[i]
        p_new, opp_new = pos.species_rights(i, pos.hand | {card})
        weights = list(pos.p_now)
        weights[i] = p_new
        return pos.placement_gain(card, weights) + (p_new - p_old) * base_values[i] - (opp_new - opp_old)

    def _draw(self, pos: _Position, legal) -> int:
        return max(self._draw_options(pos, legal), key=lambda o: (o[0], -o[1]))[1]

    def _draw_options(self, pos: _Position, legal) -> list[list]:
        """``[value, action]`` for every legal draw (subclasses add their own terms)."""
        base_rights = [pos.species_rights(i, pos.hand) for i in range(len(pos.species))]
        base_values = pos.own_values(pos.own.base)
        options = []
        if DRAW_DECK in legal and pos.pool:
            expected = float(np.mean([self._card_value(pos, c, base_rights, base_values)
                                      for c in pos.pool]))
            options.append([expected + self.draw_margin, DRAW_DECK])
        elif DRAW_DECK in legal:
            options.append([0.0, DRAW_DECK])
        for action in legal:
            if action == DRAW_DECK:
                continue
            pile = pos.pv.discards[action - DRAW_DISCARD]
            options.append([self._card_value(pos, pile[-1], base_rights, base_values), action])
        return options
