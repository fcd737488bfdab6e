"""The files ``arboretum evaluate`` writes: JSON (everything), CSV (one row per entrant) and the
PNG plot (ratings, and learning curves of run folders). Each is written whole or not at all
(``atomic_write``). ``result`` is a ``training.tournament.TournamentResult`` (not imported:
``tournament`` imports this module).

Also the check, shared with ``arboretum export``, that no output lands on a file the command
reads (:func:`input_paths`, :func:`refuse_output_over_inputs`) nor on another output
(:func:`refuse_same_outputs`): refused before any work, so a refused command loses nothing."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from arboretum_env.errors import UserError
from arboretum_env.fileio import atomic_write
from training.plots import CURVE_FILES


class OutputOverInputError(UserError):
    """An output path that is a file the command reads, or another output of the command."""


# ----------------------------------------------------------------------------- outputs over inputs
RUN_STATE_FOLDERS = ("checkpoints", "pool")
"""A run's folders of training state: nothing a command writes goes in them."""
RUN_READ_FILES = ("policy.safetensors", *CURVE_FILES)
"""A run folder's files that ``evaluate`` reads (its entrant, its learning curve): no output
replaces them while they exist (``export RUN -o RUN/policy.safetensors`` mid-run is fine)."""


def _run_paths(run: Path) -> list[tuple[Path, bool, str]]:
    out = [(run / name, True, f"inside the input run's {name}/ ({run})") for name in RUN_STATE_FOLDERS]
    out += [(run / name, False, f"a file of the input run {run}") for name in RUN_READ_FILES
            if (run / name).exists()]
    out += [(p, False, "an input checkpoint") for p in run.glob("step_*")]  # a checkpoints folder given as is
    return out


def input_paths(spec: str) -> list[tuple[Path, bool, str]]:
    """``(path, is_folder, what)`` for everything a command reads through the input ``spec`` (an
    agent spec, a checkpoint, a policy file or a run folder): the file, a checkpoint's ``.json``
    and, for a run folder or a file in its ``checkpoints/``, the run's state (a folder stands for
    every file under it). Empty for an agent name that is not a path."""
    path = Path(spec[len("policy:"):] if spec.startswith("policy:") else spec)
    if not str(spec).strip() or not path.exists():
        return []
    if path.is_dir():
        return _run_paths(path) + (_run_paths(path.parent) if path.name == "checkpoints" else [])
    out = [(path, False, "the input file")]
    if path.suffix in (".zip", ".pt"):
        out.append((path.with_suffix(".json"), False, "the input checkpoint's .json"))
    if path.parent.name == "checkpoints":
        out += _run_paths(path.parent.parent)
    return out


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return path.absolute()


def _same_file(a: Path, b: Path) -> bool:
    if _resolved(a) == _resolved(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links too
    except OSError:
        return False


def refuse_output_over_inputs(option: str, output: Optional[str | Path], inputs) -> None:
    """A one-line ``OutputOverInputError`` if ``output`` is (resolves to) one of ``inputs`` (from
    :func:`input_paths`) or lies inside an input folder."""
    if output is None:
        return
    target = Path(output)
    for path, folder, what in inputs:
        hit = _resolved(target).is_relative_to(_resolved(path)) if folder else _same_file(target, path)
        if hit:
            raise OutputOverInputError(f"{option} {output}: that is {what}; give another name")


def refuse_clobbering(outputs: Sequence[tuple[str, Optional[str | Path]]], specs: Sequence[str]) -> None:
    """Before any work: no two ``(option, path)`` outputs the same file, none of them a file the
    inputs ``specs`` name (:func:`input_paths`)."""
    refuse_same_outputs(outputs)
    for spec in specs:
        paths = input_paths(spec)
        for option, path in outputs:
            refuse_output_over_inputs(option, path, paths)


def refuse_same_outputs(outputs: Sequence[tuple[str, Optional[str | Path]]]) -> None:
    """A one-line ``OutputOverInputError`` if two of ``(option, path)`` name the same file."""
    given = [(option, Path(path)) for option, path in outputs if path is not None]
    for i, (option, path) in enumerate(given):
        for other, earlier in given[:i]:
            if _same_file(path, earlier):
                raise OutputOverInputError(f"{option} {path}: the same file as {other}; give each output its own name")


def to_json(result) -> dict:
    return {
        "num_players": result.num_players, "games": result.games, "seed": result.seed,
        "seating": "blocks of N games on one deal, cyclic seat rotations (training/tournament.py)",
        "rating_model": "openskill PlackettLuce, ordinal = mu - 3 sigma",
        "entrants": [{"name": e.name, "spec": e.spec, "kind": e.kind, **result.stats[i]}
                     for i, e in enumerate(result.entrants)],
        "ranking": [result.entrants[i].name for i in result.ranking()],
        "records": result.records,
    }


CSV_FIELDS = ["name", "spec", "kind", "games", "wins", "draws", "losses",
              "win_rate", "win_ci_low", "win_ci_high", "draw_rate", "draw_ci_low", "draw_ci_high",
              "loss_rate", "loss_ci_low", "loss_ci_high", "avg_score", "avg_margin", "mu", "sigma", "ordinal"]


def write_csv(result, path: Path) -> None:
    with atomic_write(path, "w") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for e, st in zip(result.entrants, result.stats):
            row = {"name": e.name, "spec": e.spec, "kind": e.kind, **st["rating"]}
            row.update({k: v for k, v in st.items() if k in CSV_FIELDS})
            for label in ("win", "draw", "loss"):
                row[f"{label}_ci_low"], row[f"{label}_ci_high"] = st[f"{label}_ci"]
            writer.writerow(row)


def write_plot(result, path: Path, runs: Sequence[Path]) -> None:
    """Ratings (mu with +-sigma bars, ordinal marked) and, per run, its learning curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.plots import read_evaluations

    curves = [(Path(run), read_evaluations(run)) for run in runs]
    curves = [(run, recs) for run, recs in curves if recs]
    fig, axes = plt.subplots(1, 1 + bool(curves), figsize=(6 + 6 * bool(curves), 4.2), dpi=100, squeeze=False)
    ax = axes[0][0]
    order = result.ranking()
    names = [result.entrants[i].name for i in order]
    mus = [result.stats[i]["rating"]["mu"] for i in order]
    sigmas = [result.stats[i]["rating"]["sigma"] for i in order]
    x = np.arange(len(order))
    ax.bar(x, mus, yerr=sigmas, capsize=4, color="tab:green", alpha=0.8, label="mu ± sigma")
    ax.scatter(x, [result.stats[i]["rating"]["ordinal"] for i in order], color="black", zorder=3,
               marker="_", s=200, label="ordinal (mu - 3 sigma)")
    ax.set_xticks(x, names, rotation=20 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center")
    ax.set_ylabel("OpenSkill rating")
    ax.set_title(f"{result.games} games, {result.num_players} players, seed {result.seed}")
    ax.legend(loc="best", fontsize=8)
    if curves:
        ax = axes[0][1]
        for run, recs in curves:
            baselines = sorted({k for r in recs for k, v in r.items()
                                if isinstance(v, dict) and "win_rate" in v})
            for b in baselines:
                pts = [(r["timesteps"], r[b]["win_rate"]) for r in recs if b in r and "timesteps" in r]
                label = f"{run.name} vs {b}" if len(curves) > 1 else f"vs {b}"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        ax.set_ylim(0, 1)
        ax.set_xlabel("learner timesteps")
        ax.set_ylabel("win rate")
        ax.set_title("learning curve" + (f": {curves[0][0].name}" if len(curves) == 1 else ""))
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    with atomic_write(path) as fh:
        fig.savefig(fh, format="png")
    plt.close(fig)
