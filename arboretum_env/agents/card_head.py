"""``CardHead``: per-card logits for ``PlaneNet`` (choose a card to play, discard a card, take a
discard pile's top card), one small network shared by all 80 cards.

Why: the global summary of ``PlaneNet`` chooses among the hand's cards through one linear layer,
and so has to learn each card's fit to the arboretum and to the rights separately. Measured on
the first 9 M-step ``models/selfplay_2p`` policy (2026-12-04, no shaping) against greedy (200
games each, seats alternated): letting greedy choose only the card to play raised the win rate
from 6.8% to 25.5% (margin -10.0 -> -4.9), the discard alone to 16.0%, the cell alone changed
nothing (the gain plane already scores cells). So the card decisions are where the policy
loses. Result: without reward shaping, a 6.5 M-step run with the head was not significantly
stronger than the plain network; with ``reward_shaping: score_potential`` it doubled the wins
against greedy (24.7% against 12.4% of 1,000 games, ``docs/selfplay.md``), so the long recipe
(``configs/selfplay_2p.yaml``) uses ``card_hidden: 32``; the default stays 0 (the quickstart
is faster without it).

What each card reads, from the observation only:

* **its own values** (19): in hand, drawn, pending, known in each seat's hand (4), its depth
  and whether it is the top in each discard pile (8), in each seat's arboretum (4);
* **its species** (``SPECIES_INPUTS``): in play, the observer's right, hand sums and best-path
  points and counts of every seat, and the rank rows (8 each) of that species in the hand, in
  the next seat's known cards, in the first two seats' arboretums and discard piles;
* **the frontier**: whether the card lies in the observer's (or the next seat's) arboretum
  with an empty neighbour (so a path can grow from it), for the card itself and, per species,
  for each of its ranks; read off the rank and species planes by fixed arithmetic (a learned
  layer over every cell and species measured 5x slower than the rest of the network);
* with ``gains`` (``PlaneNet(card_gains=True)``), for each card in view (hand, pending card,
  pile tops), what it would add to its species' best path in the observer's and in the next
  seat's arboretum (``batch.card_gains``: the gain plane's quantity for every such card, a
  compiled search over the observation's planes, computed outside the network), and per
  species those of each of its ranks;
* the global summary ``h`` of ``PlaneNet`` and a learned vector per card (its species and
  rank).

Species are treated alike (shared weights): what the head learns about one species' cards
serves all of them. The parts are summed into ``card_hidden`` units (relu), and one linear layer
gives three logits per card, added to ``PlaneNet``'s: ``PLAY_CARD + c``, ``DISCARD + c``, and
``DRAW_DISCARD + k`` gets the take logit of the top card of seat ``k``'s pile.

Layer: agents (torch only).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..actions import DISCARD, DRAW_DISCARD, FRAME, FRAME_CELLS, MAX_PLAYERS, PLAY_CARD
from ..batch.card_gains import GAIN_SEATS, card_gains
from ..engine import NUM_CARDS, NUM_RANKS, NUM_SPECIES
from ..observation import OFFSETS, PILE_BLOCK, RANK_SCALE, SPECIES_SCALE, SUMMARY_BLOCK

SEATS = MAX_PLAYERS
FRONTIER_SEATS = 2
"""Seats (from the observer) whose arboretum's frontier cards are read."""
FRONTIER_PLANES = 2 * FRONTIER_SEATS
"""The planes ``frontier_flags`` reads: the rank and species planes of those seats' arboretums."""


def card_inputs() -> np.ndarray:
    """``[80, CARD_INPUTS]`` observation indexes of each card's own values (see the module doc)."""
    cards = np.arange(NUM_CARDS)
    cols = [OFFSETS["hand"] + cards, OFFSETS["drawn"] + cards, OFFSETS["pending"] + cards]
    for k in range(SEATS):
        cols.append(OFFSETS["known_cards"] + k * NUM_CARDS + cards)
        cols.append(OFFSETS["discard_piles"] + k * PILE_BLOCK + cards)
        cols.append(OFFSETS["discard_piles"] + k * PILE_BLOCK + NUM_CARDS + cards)
        cols.append(OFFSETS["arboretum_summary"] + k * SUMMARY_BLOCK + cards)
    return np.stack(cols, axis=1)


def species_inputs() -> np.ndarray:
    """``[10, SPECIES_INPUTS]`` observation indexes of each species' values (see the module doc)."""
    rows = []
    for s in range(NUM_SPECIES):
        ranks = s * NUM_RANKS + np.arange(NUM_RANKS)
        cols = [[OFFSETS["species_in_play"] + s], [OFFSETS["rights"] + s]]
        for k in range(SEATS):
            cols.append([OFFSETS["hand_sums"] + k * NUM_SPECIES + s])
            summary = OFFSETS["arboretum_summary"] + k * SUMMARY_BLOCK + NUM_CARDS
            cols.append([summary + s, summary + NUM_SPECIES + s])
        cols.append(OFFSETS["hand"] + ranks)
        cols.append(OFFSETS["known_cards"] + NUM_CARDS + ranks)
        for k in range(2):
            cols.append(OFFSETS["arboretum_summary"] + k * SUMMARY_BLOCK + ranks)
            cols.append(OFFSETS["discard_piles"] + k * PILE_BLOCK + ranks)
        rows.append(np.concatenate(cols))
    return np.stack(rows)


CARD_INPUTS = card_inputs().shape[1]
SPECIES_INPUTS = species_inputs().shape[1]
assert CARD_INPUTS == 3 + 4 * SEATS and SPECIES_INPUTS == 2 + 3 * SEATS + 6 * NUM_RANKS


def frontier_flags(cells: torch.Tensor) -> torch.Tensor:
    """``[B, 80, FRONTIER_SEATS]``: 1 where the card lies in that seat's arboretum with an empty
    neighbour, read off the rank and species planes of ``PlaneNet``'s cell-major ``[B, 324,
    n_planes]`` (only the first ``FRONTIER_PLANES`` are read; fixed arithmetic, nothing learned,
    so a trainer may compute it once per stored decision)."""
    batch = cells.shape[0]
    out = []
    for seat in range(FRONTIER_SEATS):
        rank, species = cells[:, :, 2 * seat], cells[:, :, 2 * seat + 1]
        empty = F.pad((rank == 0).to(cells.dtype).view(batch, FRAME, FRAME), (1, 1, 1, 1), value=1.0)
        near_empty = (empty[:, :-2, 1:-1] + empty[:, 2:, 1:-1] + empty[:, 1:-1, :-2]
                      + empty[:, 1:-1, 2:]).view(batch, FRAME_CELLS).clamp(max=1.0)
        card = (torch.round(species * SPECIES_SCALE) - 1) * NUM_RANKS + torch.round(rank * RANK_SCALE) - 1
        card = torch.where(rank > 0, card, torch.full_like(card, NUM_CARDS)).clamp(0, NUM_CARDS).long()
        flags = torch.zeros(batch, NUM_CARDS + 1, dtype=cells.dtype, device=cells.device)
        flags.scatter_(1, card, near_empty * (rank > 0).to(cells.dtype))
        out.append(flags[:, :NUM_CARDS])
    return torch.stack(out, dim=2)


def card_extra_width(gains: bool) -> int:
    """Per-card extras the head reads beside the observation's values: the frontier flags, then
    with ``gains`` the path gains (``batch.card_gains``)."""
    return FRONTIER_SEATS + (GAIN_SEATS if gains else 0)


def card_extras(obs: torch.Tensor, planes_at: int, gains: bool) -> torch.Tensor:
    """``[B, 80, card_extra_width(gains)]`` of observations ``[B, OBS_SIZE]``: the frontier flags
    (``frontier_flags``), then with ``gains`` the per-card path gains (``batch.card_gains``, a
    compiled function of the observation, so not traceable: an exported network takes them as
    an input). A trainer computes them once per stored decision."""
    batch = obs.shape[0]
    planes = obs[:, planes_at:planes_at + FRONTIER_PLANES * FRAME_CELLS].reshape(batch, FRONTIER_PLANES, FRAME_CELLS)
    flags = frontier_flags(planes.transpose(1, 2))
    if not gains:
        return flags
    obs_np = obs.detach().cpu().numpy()
    out = np.zeros((batch, NUM_CARDS, GAIN_SEATS), np.float32)
    card_gains(np.ascontiguousarray(obs_np, dtype=np.float32), np.arange(batch), 0, out)
    return torch.cat([flags, torch.from_numpy(out).to(flags)], dim=2)


class CardHead(nn.Module):
    """See the module doc. Indexes into the observation are buffers (not saved: they follow
    from ``observation.SECTIONS``)."""

    def __init__(self, hidden: int, card_hidden: int, gains: bool = False, deep: bool = False):
        super().__init__()
        self.gains, self.deep = gains, deep
        extra = card_extra_width(gains)
        self.register_buffer("card_idx", torch.as_tensor(card_inputs().reshape(-1)), persistent=False)
        self.register_buffer("species_idx", torch.as_tensor(species_inputs().reshape(-1)), persistent=False)
        tops = [OFFSETS["discard_piles"] + k * PILE_BLOCK + NUM_CARDS for k in range(SEATS)]
        self.register_buffer("top_idx", torch.as_tensor(
            np.stack([t + np.arange(NUM_CARDS) for t in tops]).reshape(-1)), persistent=False)
        self.card_in = nn.Linear(CARD_INPUTS + extra, card_hidden)
        self.species_in = nn.Linear(SPECIES_INPUTS + NUM_RANKS * extra, card_hidden, bias=False)
        self.global_in = nn.Linear(hidden, card_hidden, bias=False)
        self.card_embed = nn.Parameter(torch.zeros(NUM_CARDS, card_hidden))
        last = nn.Linear(card_hidden, 3)
        nn.init.orthogonal_(last.weight, gain=0.01)
        nn.init.zeros_(last.bias)
        # ``deep``: one more hidden layer before the logits (PlaneNet's ``depth``)
        self.out = nn.Sequential(nn.Linear(card_hidden, card_hidden), nn.ReLU(), last) if deep else last
        self.card_hidden = card_hidden

    def forward(self, other: torch.Tensor, frontier: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``[B, 80, 3]``: play, discard and take logits per card, from ``PlaneNet``'s non-plane
        values ``other``, the per-card extras ``frontier`` (``card_extras``: the frontier flags,
        and the gains with ``gains``) and its global summary ``h``."""
        batch, width = other.shape[0], self.card_hidden
        cards = other.index_select(1, self.card_idx).view(batch, NUM_CARDS, CARD_INPUTS)
        species = other.index_select(1, self.species_idx).view(batch, NUM_SPECIES, SPECIES_INPUTS)
        extra = frontier.shape[2]
        rows = frontier.reshape(batch, NUM_SPECIES, NUM_RANKS * extra)  # per species, rank-major
        species = self.species_in(torch.cat([species, rows], dim=2))  # [B, 10, H]
        # what a card shares with its species and the row, plus its own embedding, in one
        # broadcast ([B, 10, 1, H] + [10, 8, H]; cards are species-major), then its own values
        # through card_in added in the same matrix product (addmm): fewer [B, 80, H] passes
        per_species = species + self.global_in(h)[:, None, :] + self.card_in.bias
        shared = per_species[:, :, None, :] + self.card_embed.view(NUM_SPECIES, NUM_RANKS, width)
        own = torch.cat([cards, frontier], dim=2).view(batch * NUM_CARDS, CARD_INPUTS + extra)
        z = torch.addmm(shared.view(batch * NUM_CARDS, width), own, self.card_in.weight.t())
        return self.out(torch.relu(z)).view(batch, NUM_CARDS, 3)

    def add_to(self, logits: torch.Tensor, other: torch.Tensor, frontier: torch.Tensor,
               h: torch.Tensor) -> torch.Tensor:
        """``logits [B, 489]`` plus the card logits (a new tensor)."""
        batch = other.shape[0]
        per_card = self(other, frontier, h)
        tops = other.index_select(1, self.top_idx).view(batch, SEATS, NUM_CARDS)
        take = torch.bmm(tops, per_card[:, :, 2:3]).squeeze(2)  # [B, 4]
        extra = torch.cat([logits.new_zeros(batch, DRAW_DISCARD), take, per_card[:, :, 0],
                           logits.new_zeros(batch, DISCARD - PLAY_CARD - NUM_CARDS), per_card[:, :, 1]], dim=1)
        return logits + extra

    def multiply_adds(self, hidden: int) -> int:
        h, extra = self.card_hidden, card_extra_width(self.gains)
        return (NUM_CARDS * (CARD_INPUTS + extra) * h
                + NUM_SPECIES * (SPECIES_INPUTS + NUM_RANKS * extra) * h + hidden * h
                + NUM_CARDS * h * 3 + SEATS * NUM_CARDS + (NUM_CARDS * h * h if self.deep else 0))
