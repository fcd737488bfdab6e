"""Plots: the learning curve of a run (win rates against the baselines over timesteps)."""

from __future__ import annotations

import json
from pathlib import Path

from arboretum_env.fileio import atomic_write


CURVE_FILES = ("evaluations.jsonl", "curve.jsonl")
"""A run's evaluations during training: the SB3 path's, then the self-play trainer's."""


def read_evaluations(folder: Path) -> list[dict]:
    """The run's evaluations during training, each ``{"timesteps": N, baseline: {"win_rate": w,
    ...}, ...}``: the SB3 path's ``evaluations.jsonl`` as written, or the self-play trainer's
    ``curve.jsonl`` (``step`` and per-statistic dicts of baselines) in that form; ``[]`` if
    the folder has neither."""
    folder = Path(folder)
    path = next((folder / name for name in CURVE_FILES if (folder / name).is_file()), None)
    if path is None:
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if path.name == "evaluations.jsonl":
        return records
    out = []
    for r in records:
        row: dict = {"timesteps": r["step"], "wall_s": r.get("wall_s")}
        for stat in ("win_rate", "draw_rate", "mean_margin"):
            for baseline, value in (r.get(stat) or {}).items():
                row.setdefault(baseline, {})[stat] = value
        out.append(row)
    return out


def plot_learning_curve(folder: Path, out: Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_evaluations(folder)
    out = Path(out) if out else Path(folder) / "learning_curve.png"
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    names = sorted({k for r in records for k, v in r.items() if isinstance(v, dict) and "win_rate" in v})
    for name in names:
        points = [(r["timesteps"], r[name]["win_rate"]) for r in records if name in r]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"vs {name}")
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner timesteps")
    ax.set_ylabel("win rate")
    ax.set_title(f"{Path(folder).name}: evaluation during training")
    if names:
        ax.legend(loc="lower right")
    fig.tight_layout()
    with atomic_write(out) as fh:
        fig.savefig(fh, format="png")
    plt.close(fig)
    return out
