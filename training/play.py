"""``arboretum play``: a person plays Arboretum in the terminal against agents.

The game runs straight on the engine, as ``agents.arena.play_game`` does: the agents get the
environment's observation, mask and table view. At each of the person's decisions the table is
drawn (``render.render_ansi`` from their seat) and the legal moves are listed with numbers; a
move is chosen by its number or by a short text (``deck``, ``p1`` for player 1's discard pile, a
card such as ``m3`` or ``maple 3``, a cell such as ``0,1``). A play is chosen card first, then
cell (``b`` goes back to the card). The first card of an arboretum goes on (0, 0): rows grow
downward, columns rightward, as in the drawing. ``h`` shows help, ``t`` the table again, ``q``
(or end of input) quits. Anything else re-prompts with a message: a typo never ends the game.

Input and output are injectable (``input_fn(prompt) -> str``, ``out``) so that tests can script
a game.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

import numpy as np

from arboretum_env import actions as A
from arboretum_env.engine import GameConfig, GameState, Phase, ScoreResult, best_path, new_game, score
from arboretum_env.engine.cards import SPECIES, SPECIES_LETTERS, card_name, card_short, pack_cell, species_of
from arboretum_env.errors import UserError

SHIPPED_POLICY = Path("models") / "shipped" / "policy.safetensors"
DIRECTIONS = {(1, 0): "above", (-1, 0): "below", (0, 1): "left of", (0, -1): "right of"}
"""Neighbour offset -> where the new cell is relative to that neighbour."""
QUIT_WORDS = {"q", "quit", "exit"}
HELP = """How to answer: type the number of a move, or a short text:
  deck            draw from the deck
  p0 .. p3        draw from that player's discard pile
  m3, maple 3     a card (play or discard it)
  0,1 or 0 1      a cell (row, col) for the card you are playing
  b               back to choosing the card to play
  t               show the table again
  h               this help
  q               quit the game
A turn: draw two cards, play one card into your arboretum (next to a card already there),
discard one card. Rows grow downward and columns rightward, as in the drawing."""


class PlayError(UserError):
    """Bad options for ``arboretum play``."""


class Quit(Exception):
    """The person quit (``q`` or end of input)."""


BACK = object()


@dataclass
class Option:
    label: str
    value: object
    aliases: set = field(default_factory=set)


def _norm(text: str) -> str:
    return re.sub(r"[\s_()\[\]]+", "", text.strip().lower())


def _card_aliases(card: int) -> set:
    species, rank = SPECIES[card >> 3], (card & 7) + 1
    return {_norm(f"{SPECIES_LETTERS[card >> 3]}{rank}"), _norm(f"{species} {rank}")}


def _cell_key(text: str) -> Optional[str]:
    m = re.fullmatch(r"\(?\s*(-?\d+)\s*[, ]\s*(-?\d+)\s*\)?", text.strip())
    return f"{int(m.group(1))},{int(m.group(2))}" if m else None


def _shown(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for an answer (a pasted page is not echoed back)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Console:
    """The person's side: prints to ``out`` and reads with ``input_fn`` until a valid answer."""

    def __init__(self, input_fn: Callable[[str], str] = input, out: TextIO = sys.stdout):
        self.input_fn, self.out = input_fn, out
        self.show_table: Callable[[], None] = lambda: None

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def read(self, prompt: str) -> str:
        try:
            line = self.input_fn(prompt)
        except (EOFError, KeyboardInterrupt):
            raise Quit from None
        except RuntimeError as exc:  # input(): lost sys.stdin (closed while playing)
            if "stdin" not in str(exc):
                raise
            raise Quit from None
        if line is None:
            raise Quit
        return str(line)

    def choose(self, title: str, options: Sequence[Option], back: bool = False):
        """The value of the chosen option (``BACK`` for ``b`` where allowed)."""
        self.say(title)
        for i, opt in enumerate(options, 1):
            self.say(f"  {i:>2}: {opt.label}")
        extra = ", b back" if back else ""
        prompt = f"your move [1-{len(options)}{extra}, h help, q quit]: "
        while True:
            line = self.read(prompt)
            text = line.strip().lower()
            if not text:
                self.say(f"Please type a move number from 1 to {len(options)} (h for help, q to quit).")
                continue
            if text in QUIT_WORDS:
                raise Quit
            if text in ("h", "help", "?"):
                self.say(HELP)
                continue
            if text in ("t", "table"):
                self.show_table()
                for i, opt in enumerate(options, 1):
                    self.say(f"  {i:>2}: {opt.label}")
                continue
            if back and text in ("b", "back"):
                return BACK
            if re.fullmatch(r"[+-]?\d+", text):
                k = int(text) if len(text) <= 9 else None  # never int() of 5,000 digits
                if k is not None and 1 <= k <= len(options):
                    return options[k - 1].value
                self.say(f"There is no move {_shown(text)}: choose a number from 1 to {len(options)}.")
                continue
            key = _cell_key(text) or _norm(text)
            matches = [opt for opt in options if key in opt.aliases]
            if len(matches) == 1:
                return matches[0].value
            self.say(f"Not understood: {_shown(line.strip())!r}. Type a move number from 1 to "
                     f"{len(options)}, or h for help.")


# ----------------------------------------------------------------------------- move lists
def _pile_owner(state: GameState, k: int) -> int:
    return (state.current_player + k) % state.num_players


def draw_options(state: GameState) -> list[Option]:
    options = []
    for a in A.legal_ids(state, None):
        if a == A.DRAW_DECK:
            options.append(Option(f"draw from the deck ({len(state.deck)} cards left)", a, {"deck", "d"}))
        else:
            q = _pile_owner(state, a - A.DRAW_DISCARD)
            top = state.discards[q][-1]
            whose = "your" if q == state.current_player else f"P{q}'s"
            options.append(Option(f"take {card_name(top)} [{card_short(top)}] from {whose} discard pile", a,
                                  {f"p{q}"} | _card_aliases(top)))
    return options


def card_options(state: GameState, verb: str, base: int) -> list[Option]:
    p = state.current_player
    return [Option(f"{verb} {card_name(c)} [{card_short(c)}]", base + c, _card_aliases(c))
            for c in sorted(state.hands[p])]


def cell_options(state: GameState, card: int) -> list[Option]:
    """Where ``card`` may go in the arboretum of the player to move, by engine (row, col), with
    its neighbours and what it does to that species' best path."""
    p = state.current_player
    arboretum = state.arboretums[p]
    s = species_of(card)
    if not arboretum:
        return [Option("(0, 0): start your arboretum", A.cell_id(arboretum, 0, 0), {"0,0"})]
    before = best_path(arboretum, s)[0]
    r0, c0 = A.frame_origin(arboretum)
    options = []
    for a in A.legal_ids(state, card):
        i, j = divmod(a - A.PLAY_CELL, A.FRAME)
        row, col = r0 + i, c0 + j
        near = []
        for (dr, dc), word in DIRECTIONS.items():
            other = arboretum.get(pack_cell(row + dr, col + dc))
            if other is not None:
                near.append(f"{word} {card_name(other)}")
        trial = dict(arboretum)
        trial[pack_cell(row, col)] = card
        after = best_path(trial, s)[0]
        change = f"{before} -> {after}" if after != before else f"stays {before}"
        gain = f"{SPECIES[s]} path {change}"
        options.append((row, col, Option(f"({row}, {col}): {', '.join(near)}; {gain}", a, {f"{row},{col}"})))
    options.sort(key=lambda t: (t[0], t[1]))
    return [o for _, _, o in options]


def describe_move(state: GameState, pending: Optional[int], action: int) -> Optional[str]:
    """What an opponent's decision shows to the table, said before it is applied."""
    p = state.current_player
    if action == A.DRAW_DECK:
        return f"P{p} draws from the deck"
    if A.DRAW_DISCARD <= action < A.PLAY_CARD:
        q = _pile_owner(state, action - A.DRAW_DISCARD)
        whose = "own" if q == p else f"P{q}'s"
        return f"P{p} takes {card_name(state.discards[q][-1])} from {whose} discard pile"
    if A.PLAY_CELL <= action < A.DISCARD and pending is not None:
        r0, c0 = A.frame_origin(state.arboretums[p])
        i, j = divmod(action - A.PLAY_CELL, A.FRAME)
        return f"P{p} plays {card_name(pending)} at ({r0 + i}, {c0 + j})"
    if A.DISCARD <= action < A.NUM_ACTIONS:
        return f"P{p} discards {card_name(action - A.DISCARD)}"
    return None


# ----------------------------------------------------------------------------- the game
@dataclass
class PlayOutcome:
    state: GameState
    seat: int
    result: Optional[ScoreResult]  # None when the person quit
    quit: bool


def human_turn_step(console: Console, state: GameState) -> list[int]:
    """The action ids of one of the person's decisions (a play: card then cell)."""
    phase = state.phase
    if phase in (Phase.DRAW_FIRST, Phase.DRAW_SECOND):
        which = "first" if phase is Phase.DRAW_FIRST else "second"
        return [console.choose(f"Draw your {which} card:", draw_options(state))]
    if phase is Phase.PLAY:
        while True:
            card_id = console.choose("Play a card into your arboretum:",
                                     card_options(state, "play", A.PLAY_CARD))
            card = card_id - A.PLAY_CARD
            cell = console.choose(f"Where does {card_name(card)} go? (row, col)",
                                  cell_options(state, card), back=True)
            if cell is not BACK:
                return [card_id, cell]
    return [console.choose("Discard a card:", card_options(state, "discard", A.DISCARD))]


def play_interactive(opponents: Sequence, num_players: int = 2, seat: int = 0, seed: int = 0,
                     input_fn: Callable[[str], str] = input, out: TextIO = sys.stdout,
                     names: Optional[Sequence[str]] = None) -> PlayOutcome:
    """Play one game: the person in ``seat``, ``opponents`` (agents, in seat order) elsewhere."""
    from arboretum_env.observation import encode
    from arboretum_env.render import render_ansi
    from arboretum_env.engine.position import format_table
    from arboretum_env.table_view import table_view

    console = Console(input_fn, out)
    state = new_game(GameConfig(num_players), seed)
    agents: list = list(opponents)
    agents.insert(seat, None)
    names = list(names or [type(a).__name__ for a in opponents])
    names.insert(seat, "you")
    console.say(f"Arboretum, {num_players} players, game seed {seed}. You are P{seat}. "
                + ", ".join(f"P{p}: {names[p]}" for p in range(num_players) if p != seat) + ".")
    console.say("Type h at any prompt for help, q to quit.")
    console.show_table = lambda: console.say(render_ansi(state, seat))
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    pending = None
    try:
        while not state.game_over:
            p = state.current_player
            if p == seat:
                console.say("")
                console.show_table()
                before = set(state.hands[seat])
                for action in human_turn_step(console, state):
                    pending = A.apply_id(state, pending, action)
                if action < A.PLAY_CARD:
                    drawn = ", ".join(card_name(c) for c in sorted(state.hands[seat] - before))
                    console.say(f"You drew {drawn}." if drawn else "")
                continue
            A.write_mask(state, pending, mask)
            tv = table_view(state, p, pending)
            action = int(agents[p].act(encode(tv), mask, tv))
            line = describe_move(state, pending, action)
            pending = A.apply_id(state, pending, action)
            if line:
                console.say(line)
    except Quit:
        console.say("")
        console.say("You quit the game.")
        return PlayOutcome(state, seat, None, True)
    result = score(state)
    console.say("")
    console.say(render_ansi(state, seat))
    console.say("Final scores:")
    console.say(format_table(result, state.species))
    if seat in result.winners:
        console.say("You win!" if len(result.winners) == 1 else "You share the win.")
    else:
        console.say("You lose: " + ", ".join(f"P{w} ({names[w]})" for w in result.winners)
                    + (" wins." if len(result.winners) == 1 else " share the win."))
    return PlayOutcome(state, seat, result, False)


def default_opponent(out: TextIO) -> str:
    """The shipped agent if it is there, else ``greedy`` (with a note)."""
    for path in (SHIPPED_POLICY, Path(__file__).resolve().parents[1] / SHIPPED_POLICY):
        if path.is_file():
            return str(path)
    out.write(f"note: no shipped agent at {SHIPPED_POLICY}; playing against greedy\n")
    return "greedy"


def play_command(opponents: Optional[Sequence[str]] = None, players: Optional[int] = None,
                 seat: int = 0, seed: Optional[int] = None,
                 input_fn: Callable[[str], str] = input, out: TextIO = sys.stdout) -> PlayOutcome:
    """``arboretum play``: check the options, load the agents, play one game."""
    from training.tournament import load_entrants

    specs = list(opponents or [])
    if players is None and len(specs) > 3:  # no --players: the opponents alone are too many
        raise PlayError(f"{len(specs)} opponents: a table holds at most 3")
    if players is None:
        players = max(2, len(specs) + 1)
    if not 2 <= players <= 4:
        raise PlayError(f"--players must be 2, 3 or 4, got {players}")
    if len(specs) > players - 1:
        raise PlayError(f"{len(specs)} opponents do not fit a {players}-player table "
                        f"(at most {players - 1})")
    if not 0 <= seat < players:
        raise PlayError(f"--seat must be 0..{players - 1} for {players} players, got {seat}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 1_000_000)
    if seed < 0:
        raise PlayError(f"--seed must be 0 or more, got {seed}")
    if input_fn is input and (sys.stdin is None or sys.stdin.closed):
        raise PlayError("standard input is closed: play reads your moves from it "
                        "(run it in a terminal or pipe the moves in)")
    if not specs:
        specs = [default_opponent(out)]
        try:
            load_entrants(specs)
        except UserError as exc:
            out.write(f"note: the shipped agent cannot be used ({exc}); playing against greedy\n")
            specs = ["greedy"]
    specs = [specs[i % len(specs)] for i in range(players - 1)]  # repeated to fill the table
    entrants = load_entrants(specs)
    for i, e in enumerate(entrants):
        e.agent.seed(int(np.random.SeedSequence([seed, i + 1]).generate_state(1)[0]))
    return play_interactive([e.agent for e in entrants], players, seat, seed, input_fn, out,
                            [e.name for e in entrants])
