"""``TempoAgent``: the strongest heuristic here, ``GreedyPlusAgent`` plus a plan for who draws
the last card of the deck.

The game ends when the last deck card is drawn, after that player's turn (RULES.md, "End of
the game"). That player, the *last mover*, takes the final decisions knowing that nobody moves
again, and often has had one turn more than the others: in 200 greedy-vs-greedy games
(2 players) the last mover won 121 of the 196 games that had a sole winner. Neither
``GreedyAgent`` nor ``GreedyPlusAgent`` plans for it; this agent does, with the draws, which
decide how many deck cards are left after its turn:

* Near the end (at most ``window`` cards in the deck) it counts, for every draw option, the deck
  sizes ``r`` its turn can leave (a deck draw now, and for the first draw each possible second
  draw: the deck, or a discard pile if one has a card).
* It assumes that every other player draws both cards from the deck (what the greedy agent does
  on most turns). Then the deck runs out during the turn ``ceil(r / 2)`` turns later, which is
  its own again exactly when ``ceil(r / 2)`` is a multiple of the player count; ``r = 0`` means
  it draws the last card now.
* Every draw option that can reach such an ``r`` gets ``tempo_bonus`` added to the value the
  greedy heuristic gives it (points of a best path, weighted by the chance of holding the
  right), so the agent gives up a somewhat better card to end the game itself.

Everything else (play, discard, the value of each draw, the pessimistic opponent-hand model,
the exact final turn) is ``GreedyPlusAgent``'s. Measured (2 players, seats alternated on shared
deals, against the default ``GreedyAgent``; docs/training.md has every run): the tempo plan
alone, on top of ``GreedyAgent``, won 56.9% of 1,000 games; on top of ``GreedyPlusAgent`` (this
class, defaults ``tempo_bonus=5``, ``window=8``) 68.3% [65.4%, 71.1%] of 1,000 fresh games,
where ``GreedyPlusAgent`` alone wins 58.6%.
"""

from __future__ import annotations

from typing import Optional

from ..actions import DRAW_DECK
from .greedy import _Position
from .greedy_plus import GreedyPlusAgent


def ends_on_own_turn(left: int, num_players: int) -> bool:
    """Whether the player who leaves ``left`` deck cards after its turn draws the last one,
    if every other player draws two deck cards a turn (``left == 0``: it just did)."""
    return left == 0 or (-(-left // 2)) % num_players == 0


class TempoAgent(GreedyPlusAgent):
    """``GreedyPlusAgent`` that draws so as to be the one who draws the last deck card (see the
    module docstring); ``tempo_bonus=0`` is ``GreedyPlusAgent`` itself. Other keywords are
    ``GreedyPlusAgent``'s and ``GreedyAgent``'s. Deterministic."""

    name = "tempo"

    def __init__(self, seed: Optional[int] = None, tempo_bonus: float = 5.0, window: int = 8,
                 **plus) -> None:
        super().__init__(seed, **plus)
        self.tempo_bonus = tempo_bonus
        self.window = window

    def __repr__(self) -> str:
        return f"TempoAgent(tempo_bonus={self.tempo_bonus}, window={self.window})"

    def _draw_options(self, pos: _Position, legal) -> list[list]:
        options = super()._draw_options(pos, legal)
        deck = pos.pv.deck_size
        if deck > self.window or not self.tempo_bonus:
            return options
        n = pos.pv.num_players
        pile_cards = sum(len(pile) for pile in pos.pv.discards)
        for option in options:
            if option[1] == DRAW_DECK:
                left, piles_after = deck - 1, pile_cards
            else:
                left, piles_after = deck, pile_cards - 1
            if not pos.first_draw or left == 0:
                reach = [left]
            else:  # the second draw: the deck, or a discard pile if one has a card
                reach = [left - 1] + ([left] if piles_after else [])
            if any(ends_on_own_turn(r, n) for r in reach):
                option[0] += self.tempo_bonus
        return options
