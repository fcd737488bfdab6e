"""``arboretum evaluate``: a seeded tournament between any agents, with confidence intervals and
OpenSkill ratings.

**Entrants** are agent specs: a registered agent name (``random``, ``greedy``, ...), a checkpoint
(a run folder: its newest checkpoint, or a ``.zip``; played deterministically through
``training.evaluation.ModelAgent``) or a policy file (``.safetensors``, ``PolicyAgent``; an old
TorchScript ``.pt`` is refused with the command that converts it). A spec
may be listed twice to enter two copies (named ``greedy``, ``greedy#2``): ``N`` players per table
need at least ``N`` entrants.

**Seating.** Games come in *blocks* of ``N`` games that share one deal (the same game seed:
deck, species, starting player). A block seats one table of ``N`` distinct entrants, in the
``N`` cyclic rotations of one seating order: each entrant of the table plays every seat once,
with every hand of the deal ("duplicate" play, which takes much of the luck of the deal out of
the comparison). Block ``b`` takes the combination ``combos[b % C]`` of the ``C = C(K, N)``
combinations of the ``K`` entrants (lexicographic), in the cyclic order
``(b // C) % (N - 1)!`` of that combination (its first entrant fixed, the others permuted), so
that over the passes every relative order comes up too. Two entrants, two players: seats simply
alternate. Seats are exactly balanced when the number of games is a multiple of ``C * N``.

**Seeds.** Block ``b`` deals with ``SeedSequence([seed, b])``; the agent in seat ``s`` of game
``g`` is reseeded with ``SeedSequence([seed, g, s + 1])`` before the game. Same seed, same
results.

**Results.** A sole winner wins, a shared win (a tie after the tie-break) counts as a draw for
every winner, everyone else loses. Rates come with 95% Wilson score intervals:
``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``, ``z = 1.96``.

**Ratings.** OpenSkill's Plackett-Luce model (Weng & Lin 2011; every entrant starts at
``mu = 25``, ``sigma = 25/3``), updated game by game in order; each game ranks its seats
winners first (tied with each other), then the others by score (equal scores tied).
``ordinal = mu - 3·sigma``, a conservative skill estimate; entrants are listed by it.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, TextIO

import numpy as np

from arboretum_env.errors import UserError
from arboretum_env.fileio import atomic_write_text, check_writable
from training.plots import CURVE_FILES
from training.tournament_files import refuse_clobbering, to_json, write_csv, write_plot

Z95 = 1.959963984540054
MAX_GAMES = 1_000_000
"""The most games one tournament plays: every game's record is kept (and written to --json)."""


class TournamentError(UserError):
    """Bad tournament input (agent specs, player counts, output files)."""


# ----------------------------------------------------------------------------- entrants
@dataclass
class Entrant:
    name: str
    spec: str
    kind: str  # "builtin", "checkpoint" or "policy"
    agent: object
    run_folder: Optional[Path] = None  # a run folder (for its learning curve)


def _short(path: Path) -> str:
    """A display name for a file entrant: its stem, with its run's name where the stem alone
    says little (``policy``, ``step_000100000``)."""
    stem, parent = path.stem, path.parent.name
    if parent == "checkpoints":
        parent = path.parent.parent.name
    if parent and (stem in ("policy", "model") or stem.startswith("step_")):
        return f"{parent}/{stem}"
    return stem


def load_agent(spec: str, seed: int = 0, _cache: Optional[dict] = None):
    """``(agent, kind, run_folder)`` for an agent spec; a one-line ``UserError`` if it is bad."""
    from arboretum_env.agents import AGENT_REGISTRY, make_agent

    if not spec.strip():  # Path("") is the current folder
        raise TournamentError("empty agent name: give an agent name, a checkpoint or a policy file")
    if spec.startswith("policy:"):  # the training pool's spelling of a policy file
        return make_agent(spec, seed=seed), "policy", None
    path = Path(spec)
    looks_like_path = path.suffix in (".zip", ".pt", ".safetensors") or "/" in spec or "\\" in spec or path.exists()
    if not looks_like_path:
        try:
            return make_agent(spec, seed=seed), "builtin", None
        except UserError:
            raise
        except (KeyError, ValueError) as exc:
            raise TournamentError(
                f"unknown agent {spec!r}: expected an agent name ({', '.join(sorted(AGENT_REGISTRY))}), a checkpoint "
                f"(run folder or .zip) or a policy file (.safetensors)") from exc
    if path.suffix == ".pt" or (path.is_dir() and not (path / "policy.safetensors").is_file()):
        from training.selfplay_export import selfplay_checkpoint, selfplay_checkpoint_agent

        found = selfplay_checkpoint(path)  # a self-play checkpoint, or a run in the middle of its run
        if found is not None:
            return selfplay_checkpoint_agent(found, seed), "policy", found.parent.parent
    if path.suffix in (".safetensors", ".pt") or (path.is_file() and path.suffix not in (".zip", ".json")):
        if not path.is_file():  # said before importing torch
            raise TournamentError(f"{spec}: no such policy file")
        from arboretum_env.agents import policy_file_agent

        return policy_file_agent(path, seed=seed), "policy", None
    if not path.exists():
        raise TournamentError(f"{spec}: no such checkpoint, run folder or policy file")
    if path.is_dir() and not list(path.glob("checkpoints/step_*.zip")) and (path / "policy.safetensors").is_file():
        from arboretum_env.agents import policy_file_agent  # a self-play run folder: its policy file

        return policy_file_agent(path / "policy.safetensors", seed=seed), "policy", path
    if path.is_file() and path.suffix != ".zip":
        raise TournamentError(f"{spec}: not a checkpoint (.zip), run folder or policy file (.safetensors)")
    cache = {} if _cache is None else _cache
    key = str(path.resolve())
    if key not in cache:
        from training.export import checkpoint_config, load_checkpoint

        model, meta, zip_path = load_checkpoint(path)
        config = checkpoint_config(zip_path, meta)
        cache[key] = model, config.teacher, config.hints
    from training.evaluation import ModelAgent

    run = None
    if path.is_dir():
        run = path
    elif path.parent.name == "checkpoints":
        run = path.parent.parent
    model, advisor, hints = cache[key]
    return ModelAgent(model, advisor, hints=hints), "checkpoint", run


def load_entrants(specs: Sequence[str]) -> list[Entrant]:
    cache: dict = {}
    entrants: list[Entrant] = []
    names: dict[str, int] = {}
    for spec in specs:
        agent, kind, run = load_agent(spec, seed=0, _cache=cache)
        base = spec if kind == "builtin" else (run.name if run is not None and Path(spec).is_dir()
                                               else _short(Path(spec.removeprefix("policy:"))))
        names[base] = names.get(base, 0) + 1
        name = base if names[base] == 1 else f"{base}#{names[base]}"
        entrants.append(Entrant(name, spec, kind, agent, run))
    return entrants


# ----------------------------------------------------------------------------- schedule
def seat_schedule(num_entrants: int, num_players: int, games: int) -> list[tuple[int, ...]]:
    """Per game: the entrant index in each seat (see the module docstring)."""
    k, n = num_entrants, num_players
    combos = list(itertools.combinations(range(k), n))
    orders = {c: [(c[0],) + p for p in itertools.permutations(c[1:])] for c in combos}
    schedule = []
    for g in range(games):
        b, r = divmod(g, n)
        combo = combos[b % len(combos)]
        order = orders[combo][(b // len(combos)) % len(orders[combo])]
        schedule.append(tuple(order[(s - r) % n] for s in range(n)))
    return schedule


def balance_period(num_entrants: int, num_players: int) -> int:
    """The number of games after which every entrant has played every seat equally often."""
    return math.comb(num_entrants, num_players) * num_players


def _seed(*words: int) -> int:
    return int(np.random.SeedSequence(list(words)).generate_state(1)[0])


# ----------------------------------------------------------------------------- statistics
def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` for ``n == 0``)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval always contains p; clamping keeps that true in floating point (p = 0 or 1)
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def game_ranks(scores: Sequence[int], winners: Sequence[int]) -> list[int]:
    """Competition ranks of the seats (1 = best): the winners (tied), then the others by score
    (equal scores tied)."""
    won = set(winners)
    ranks = []
    for s, score in enumerate(scores):
        if s in won:
            ranks.append(1)
        else:
            ranks.append(1 + len(won) + sum(1 for t, other in enumerate(scores)
                                            if t not in won and other > score))
    return ranks


def rate(num_entrants: int, records: Sequence[dict]) -> list[dict]:
    """OpenSkill Plackett-Luce ratings after the games of ``records``, in order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_entrants)]
    for rec in records:
        seats = rec["entrants"]
        teams = [[ratings[e]] for e in seats]
        new = model.rate(teams, ranks=game_ranks(rec["scores"], rec["winners"]))
        for e, team in zip(seats, new):
            ratings[e] = team[0]
    return [{"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for r in ratings]


@dataclass
class TournamentResult:
    entrants: list[Entrant]
    num_players: int
    games: int
    seed: int
    records: list[dict] = field(default_factory=list)
    stats: list[dict] = field(default_factory=list)

    def ranking(self) -> list[int]:
        """Entrant indexes, best ordinal first."""
        return sorted(range(len(self.entrants)), key=lambda i: -self.stats[i]["rating"]["ordinal"])


def entrant_stats(k: int, n: int, records: Sequence[dict]) -> list[dict]:
    stats = []
    ratings = rate(k, records)
    for e in range(k):
        games = wins = draws = 0
        scores, margins = [], []
        seats = [0] * n
        for rec in records:
            if e not in rec["entrants"]:
                continue
            s = rec["entrants"].index(e)
            games += 1
            seats[s] += 1
            scores.append(rec["scores"][s])
            margins.append(rec["scores"][s] - max(x for t, x in enumerate(rec["scores"]) if t != s))
            if s in rec["winners"]:
                if len(rec["winners"]) == 1:
                    wins += 1
                else:
                    draws += 1
        losses = games - wins - draws
        row = {"games": games, "wins": wins, "draws": draws, "losses": losses, "games_per_seat": seats}
        for label, count in (("win", wins), ("draw", draws), ("loss", losses)):
            row[f"{label}_rate"] = count / games if games else 0.0
            row[f"{label}_ci"] = list(wilson(count, games))
        row["avg_score"] = float(np.mean(scores)) if scores else 0.0
        row["avg_margin"] = float(np.mean(margins)) if margins else 0.0
        row["rating"] = ratings[e]
        stats.append(row)
    return stats


def run_tournament(entrants: Sequence[Entrant], num_players: int, games: int, seed: int,
                   progress: bool = False) -> TournamentResult:
    """Play the games (see the module docstring) and compute every entrant's statistics."""
    from arboretum_env.agents.arena import play_game

    k, n = len(entrants), num_players
    result = TournamentResult(list(entrants), n, games, seed)
    schedule = seat_schedule(k, n, games)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, desc="games", unit="game", file=sys.stderr, leave=False)
    for g, seats in enumerate(schedule):
        game_seed = _seed(seed, g // n)
        agents = [entrants[e].agent for e in seats]
        for s, agent in enumerate(agents):
            agent.seed(_seed(seed, g, s + 1))
        score = play_game([a.act for a in agents], n, seed=game_seed)
        totals = [int(t) for t in score.totals]
        winners = [int(w) for w in score.winners]
        result.records.append({
            "game": g, "seed": game_seed, "entrants": list(seats),
            "seats": [entrants[e].name for e in seats], "scores": totals, "winners": winners,
            "winner_names": [entrants[seats[w]].name for w in winners]})
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    result.stats = entrant_stats(k, n, result.records)
    return result


# ----------------------------------------------------------------------------- outputs
def _ci(rate: float, ci) -> str:
    return f"{rate:5.3f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def format_results(result: TournamentResult) -> str:
    k, n = len(result.entrants), result.num_players
    period = balance_period(k, n)
    lines = [f"tournament: {result.games} games, {n} players per table, {k} entrants, seed {result.seed}"
             f" (seats rotated; balanced every {period} games"
             + ("" if result.games % period == 0 else ", not exactly at this count") + ")"]
    width = max(8, *(len(e.name) for e in result.entrants))
    head = (f"{'#':>2} {'entrant':<{width}} {'games':>5}  {'win [95% CI]':<20} {'draw [95% CI]':<20} "
            f"{'loss [95% CI]':<20} {'score':>6} {'margin':>7} {'mu':>6} {'sigma':>6} {'ordinal':>7}")
    lines += [head, "-" * len(head)]
    for place, i in enumerate(result.ranking(), 1):
        st, r = result.stats[i], result.stats[i]["rating"]
        lines.append(f"{place:>2} {result.entrants[i].name:<{width}} {st['games']:>5}  "
                     f"{_ci(st['win_rate'], st['win_ci']):<20} {_ci(st['draw_rate'], st['draw_ci']):<20} "
                     f"{_ci(st['loss_rate'], st['loss_ci']):<20} {st['avg_score']:>6.2f} "
                     f"{st['avg_margin']:>+7.2f} {r['mu']:>6.2f} {r['sigma']:>6.2f} {r['ordinal']:>7.2f}")
    lines.append("win = sole winner, draw = shared win; margin = score minus best other score; "
                 "rating: OpenSkill Plackett-Luce, ordinal = mu - 3 sigma")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- command
def _check_output(path: Optional[str], option: str, suffix: Optional[str] = None) -> Optional[Path]:
    """Before any game: the file name, and that a file can be written there."""
    if path is None:
        return None
    if suffix and Path(path).suffix.lower() != suffix:
        raise TournamentError(f"{option} {path}: the file name must end in {suffix}")
    target = check_writable(path, option)
    if not target.parent.is_dir():  # a mistyped folder is not made silently
        raise TournamentError(f"{option} {path}: folder {str(target.parent)!r} does not exist")
    return target


def evaluate_command(specs: Sequence[str], players: int = 2, games: int = 40, seed: int = 0,
                     json_path: Optional[str] = None, csv_path: Optional[str] = None,
                     plot_path: Optional[str] = None, run: Optional[str] = None,
                     progress: bool = False, out: Optional[TextIO] = None) -> str:
    """``arboretum evaluate``: validate (output paths included), play, print, write the files.
    The table and each ``wrote FILE`` line go to ``out`` as soon as they exist (so a file that
    cannot be written loses nothing); without ``out`` they are returned as one text."""
    if not 2 <= players <= 4:
        raise TournamentError(f"--players must be 2, 3 or 4, got {players}")
    if not 1 <= games <= MAX_GAMES:
        shown = str(games) if len(str(games)) <= 20 else str(games)[:17] + "..."
        raise TournamentError(f"--games must be at least 1 and at most {MAX_GAMES:,}, got {shown}")
    if seed < 0:
        raise TournamentError(f"--seed must be 0 or more, got {seed}")
    if len(specs) < players:
        raise TournamentError(
            f"{players} players per table need at least {players} entrants, got {len(specs)}; "
            f"list an agent twice to enter it twice (e.g. 'greedy greedy')")
    refuse_clobbering([("--json", json_path), ("--csv", csv_path), ("--plot", plot_path)],
                      [*specs, *([run] if run else [])])
    outputs = (_check_output(json_path, "--json"), _check_output(csv_path, "--csv"),
               _check_output(plot_path, "--plot", ".png"))
    run_path = None
    if run is not None:
        if plot_path is None:
            raise TournamentError("--run draws the run's learning curve in the --plot file; give --plot too")
        run_path = Path(run)
        if not any((run_path / name).is_file() for name in CURVE_FILES):
            raise TournamentError(f"--run {run}: no evaluations.jsonl or curve.jsonl in that folder "
                                  f"(not a run folder?)")
    entrants = load_entrants(specs)
    result = run_tournament(entrants, players, games, seed, progress=progress)
    lines: list[str] = []

    def say(line: str) -> None:
        if out is None:
            lines.append(line)
        else:
            print(line, file=out, flush=True)

    say(format_results(result))
    json_out, csv_out, plot_out = outputs
    try:
        if json_out:
            atomic_write_text(json_out, json.dumps(to_json(result), indent=1))
            say(f"wrote {json_out}")
        if csv_out:
            write_csv(result, csv_out)
            say(f"wrote {csv_out}")
        if plot_out:
            runs = [run_path] if run_path else []
            runs += [e.run_folder for e in entrants if e.run_folder is not None and e.run_folder not in runs]
            write_plot(result, plot_out, runs)
            say(f"wrote {plot_out}")
    except OSError as exc:
        raise TournamentError(f"cannot write {exc.filename or 'an output file'}: {exc.strerror or exc}") from None
    return "\n".join(lines)
