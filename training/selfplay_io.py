"""The self-play trainer's run folder: nothing overwritten, nothing half-written, nothing lost.

* ``lock()`` holds the folder with ``training.run_folder.RunLock`` (a second process is kept
  out; a lock left by a dead process never blocks) and, under it, claims the folder with
  ``run_folder.claim``: a fresh run into a folder that already holds a run is refused
  (``--resume``, another ``run_name``, or ``overwrite``, run_folder's ``replace``, which moves
  the old run aside to ``<name>.replaced-<time>``); a resume needs a checkpoint.
* Checkpoints (``checkpoints/step_N.pt``: tensors only, read back with ``weights_only=True``;
  ``step_N.json``: steps, wall time, schedules, RNG state, config) are written to a temporary
  name and renamed when complete (``arboretum_env.fileio``); resume takes the newest intact one
  and names any damaged one it skips. ``trainer_state`` is what a checkpoint holds of the
  trainer, ``restore_trainer`` puts it back; ``check_resumable`` refuses, in one line, a config
  that would build another network than the checkpoint's.
* The curve (``curve.jsonl``: per evaluation the step, the training wall time, the win, draw
  and loss rates and margin per baseline, the OpenSkill rating of that checkpoint) is also in
  TensorBoard (``tb/``) and drawn in ``learning_curve.png`` after each evaluation.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from dataclasses import asdict
from pathlib import Path

import torch
import yaml

from arboretum_env.fileio import atomic_write_bytes, atomic_write_text

from .run_folder import RunFolderError, RunLock, claim, refuse_other_model
from .selfplay_config import network_kwargs
from .selfplay_export import checkpoint_files
from .tournament import rate

__all__ = ["RunFolder", "RunFolderError", "restore_trainer", "trainer_state", "write_curve_plot"]


class RunFolder:
    """A self-play run's folder. Nothing is checked or written until ``lock()``."""

    def __init__(self, path: Path, config, resume: bool = False, overwrite: bool = False):
        self.path, self.config = Path(path), config
        self.resume, self.overwrite = resume, overwrite
        self.checkpoints = self.path / "checkpoints"
        self._writer = None
        self._records: list[dict] = []

    # ------------------------------------------------------------------ lock
    @contextlib.contextmanager
    def lock(self):
        """Hold the folder for this process, claim it as asked (refused, or the old run moved
        aside with ``overwrite``), then create it and write ``config.yaml`` (fresh runs)."""
        with RunLock(self.path):
            moved = claim(self.path, self.resume, self.overwrite, checkpoints="step_*.pt")
            if moved is not None:
                print(f"moved the old run to {moved}", file=sys.stderr)
            self.checkpoints.mkdir(parents=True, exist_ok=True)
            if not self.resume:
                atomic_write_text(self.path / "config.yaml",
                                  yaml.safe_dump(asdict(self.config), sort_keys=False))
            self._records = self._read_jsonl("eval_records.jsonl")
            try:
                yield self
            finally:
                if self._writer is not None:
                    self._writer.close()
                    self._writer = None

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, steps: int, tensors: dict, meta: dict) -> Path:
        """``checkpoints/step_<steps>.pt`` (tensors) and ``.json`` (the rest), each atomically."""
        path = self.checkpoints / f"step_{steps}.pt"
        buffer = io.BytesIO()
        torch.save(tensors, buffer)
        atomic_write_bytes(path, buffer.getvalue())
        atomic_write_text(path.with_suffix(".json"), json.dumps(meta))  # written last: marks it whole
        return path

    def config_dict(self) -> dict:
        return asdict(self.config)

    def load_newest_checkpoint(self, tensor_keys=None, meta_keys=None) -> tuple[dict, dict]:
        """The newest checkpoint that reads back whole (the trainer's keys present: by default
        ``trainer_state``'s); each newer one that does not is named, with what is wrong, and
        skipped."""
        tensor_keys, meta_keys = tensor_keys or TENSOR_KEYS, meta_keys or META_KEYS
        for path in checkpoint_files(self.checkpoints):
            try:
                meta = json.loads(path.with_suffix(".json").read_text())
                tensors = torch.load(path, map_location="cpu", weights_only=True)
                missing = _missing(tensors, tensor_keys) or _missing(meta, meta_keys)
                if missing:
                    raise ValueError(missing)
                int(meta["steps"])
                return tensors, meta
            except Exception as exc:  # damaged or half-written: say so, try the one before
                reason = str(exc).splitlines()[0][:120] if isinstance(exc, ValueError) and str(exc) else ""
                print(f"skipping damaged checkpoint {path.name}: {type(exc).__name__}"
                      + (f" ({reason})" if reason else ""), file=sys.stderr)
        raise RunFolderError(f"{self.path}: no intact checkpoint to resume from")

    def check_resumable(self, meta: dict) -> None:
        """One ``RunFolderError`` line when the config would build another trainer than the
        checkpoint's (its network, its critic or its table size), before the trainer takes any of
        the checkpoint's weights (a mismatch would otherwise fail inside ``load_state_dict``)."""
        def shape(config: dict) -> dict:
            return {**network_kwargs(config), "hand_critic": int(config.get("hand_critic", 0) or 0),
                    "num_players": config.get("num_players")}

        saved = meta.get("config") if isinstance(meta.get("config"), dict) else {}
        try:
            theirs, ours = shape(saved), shape(asdict(self.config))
        except (TypeError, ValueError):
            raise RunFolderError(f"{self.path}: its newest checkpoint does not say which network it trained") from None
        refuse_other_model(self.path, theirs, ours)

    # ------------------------------------------------------------------ curves
    def _read_jsonl(self, name: str) -> list[dict]:
        path = self.path / name
        if not path.exists():
            return []
        out = []
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by an interrupt
                continue
        return out

    def curve(self) -> list[dict]:
        return self._read_jsonl("curve.jsonl")

    def _append(self, name: str, rows: list[dict]) -> None:
        path = self.path / name
        old = path.read_text() if path.exists() else ""
        atomic_write_text(path, old + "".join(json.dumps(r) + "\n" for r in rows))

    def forget_after(self, steps: int) -> None:
        """Drop curve points and evaluation games of steps after ``steps`` (resuming from an
        older checkpoint than the newest, which was damaged)."""
        for name in ("curve.jsonl", "eval_records.jsonl"):
            rows = self._read_jsonl(name)
            kept = [r for r in rows if r["step"] <= steps]
            if len(kept) < len(rows):
                atomic_write_text(self.path / name, "".join(json.dumps(r) + "\n" for r in kept))
        self._records = [r for r in self._records if r["step"] <= steps]

    def writer(self):
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.path / "tb"))
        return self._writer

    def log_scalars(self, steps: int, stats: dict) -> None:
        for key, value in stats.items():
            self.writer().add_scalar(f"train/{key}", value, steps)

    def latest_rates(self) -> dict:
        curve = self.curve()
        if not curve:
            return {}
        return {f"vs_{k}": f"{v:.2f}" for k, v in curve[-1]["win_rate"].items()}

    def record_evaluation(self, trainer, evaluation: dict) -> dict:
        """Append one curve point (and its games, for the ratings); redraw the plot."""
        steps = trainer.steps
        baselines = sorted(evaluation)
        for name in baselines:
            for r in evaluation[name]["records"]:
                self._records.append({"step": steps, "baseline": name, **r})
        self._append("eval_records.jsonl", [r for r in self._records if r["step"] == steps])
        row = {"step": steps, "wall_s": round(trainer.wall, 1),
               "win_rate": {k: v["win_rate"] for k, v in evaluation.items()},
               "draw_rate": {k: v["draw_rate"] for k, v in evaluation.items()},
               "mean_margin": {k: v["mean_margin"] for k, v in evaluation.items()},
               "rating": self.ratings().get(str(steps))}
        self._append("curve.jsonl", [row])
        w = self.writer()
        for name, rate_ in row["win_rate"].items():
            w.add_scalar(f"eval/win_rate_vs_{name}", rate_, steps)
            w.add_scalar(f"eval_by_wall_time/win_rate_vs_{name}", rate_, int(trainer.wall))
        if row["rating"] is not None:
            w.add_scalar("eval/openskill_ordinal", row["rating"], steps)
        w.flush()
        write_curve_plot(self.curve(), self.path / "learning_curve.png", self.path.name)
        return row

    def ratings(self) -> dict:
        """OpenSkill ordinal per checkpoint step, from every evaluation game so far (the
        baselines are entrants too)."""
        names = sorted({f"step {r['step']}" for r in self._records} | {r["baseline"] for r in self._records})
        index = {name: i for i, name in enumerate(names)}
        games = []
        for r in self._records:
            n = len(r["scores"])
            seats = [index[r["baseline"]]] * n
            seats[r["seat"]] = index[f"step {r['step']}"]
            if len(set(seats)) < 2:
                continue
            games.append({"entrants": seats, "scores": r["scores"], "winners": r["winners"]})
        rated = rate(len(names), _merge_baseline_seats(games))
        return {name.split(" ")[1]: round(rated[i]["ordinal"], 2) for name, i in index.items()
                if name.startswith("step ")}

    # ------------------------------------------------------------------ the end
    def finish(self, trainer, final: dict) -> dict:
        """``evaluation.json``: steps, training wall time and speed, the final evaluation."""
        summary = {name: {k: v for k, v in r.items() if k != "records"} for name, r in final.items()}
        out = {"steps": trainer.steps, "wall_s": round(trainer.wall, 1),
               "steps_per_s": round(trainer.steps / max(trainer.wall, 1e-9)), "final": summary}
        atomic_write_text(self.path / "evaluation.json", json.dumps(out, indent=2))
        return out


TENSOR_KEYS = ("net", "optimizer", "snapshots", "generator")
META_KEYS = ("steps", "wall_s", "next_eval", "next_snapshot", "snapshot_steps", "rng", "config")
"""What every checkpoint holds (``trainer_state``; ``critic`` too with ``hand_critic``)."""


def _missing(part, keys) -> str:
    if not isinstance(part, dict):
        return f"not a mapping but {type(part).__name__}"
    absent = [k for k in keys if k not in part]
    return f"no {', '.join(map(repr, absent))}" if absent else ""


def trainer_state(trainer) -> tuple[dict, dict]:
    """What a checkpoint of ``training.selfplay.SelfPlayTrainer`` holds: tensors (read back with
    ``weights_only=True``) and JSON (``RunFolder.save_checkpoint`` writes both)."""
    tensors = {"net": trainer.net.state_dict(), "optimizer": trainer.optimizer.state_dict(),
               "snapshots": [s.state_dict() for s in trainer.snapshots],
               "generator": trainer.generator.get_state()}
    if trainer.critic is not None:
        tensors["critic"] = trainer.critic.state_dict()
    meta = {"steps": trainer.steps, "wall_s": trainer.wall, "next_eval": trainer.next_eval,
            "next_snapshot": trainer.next_snapshot, "snapshot_steps": trainer.snapshot_steps,
            "rng": trainer.rng.bit_generator.state, "config": asdict(trainer.c)}
    return tensors, meta


def restore_trainer(trainer, tensors: dict, meta: dict) -> None:
    """Put a checkpoint (``trainer_state``'s two parts) back into a trainer built from the same
    config (``RunFolder.check_resumable`` first)."""
    trainer.net.load_state_dict(tensors["net"])
    if trainer.critic is not None:
        trainer.critic.load_state_dict(tensors["critic"])
    trainer.optimizer.load_state_dict(tensors["optimizer"])
    trainer.generator.set_state(tensors["generator"])
    trainer.snapshots, trainer.snapshot_steps = [], []
    for sd in tensors["snapshots"]:
        trainer.add_snapshot()
        trainer.snapshots[-1].load_state_dict(sd)
    trainer.snapshot_steps = list(meta["snapshot_steps"])
    trainer.steps, trainer.wall = int(meta["steps"]), float(meta["wall_s"])
    trainer.next_eval, trainer.next_snapshot = meta["next_eval"], meta["next_snapshot"]
    trainer.rng.bit_generator.state = meta["rng"]


def _merge_baseline_seats(games: list[dict]) -> list[dict]:
    """OpenSkill needs one team per entrant: the baseline's seats of a game form one team
    (scored by its best seat)."""
    out = []
    for g in games:
        seats, scores, winners = g["entrants"], g["scores"], set(g["winners"])
        team_of = {}
        for s, e in enumerate(seats):
            team_of.setdefault(e, []).append(s)
        entrants = list(team_of)
        best = [max(scores[s] for s in team_of[e]) for e in entrants]
        won = [i for i, e in enumerate(entrants) if any(s in winners for s in team_of[e])]
        out.append({"entrants": entrants, "scores": best, "winners": won})
    return out


def write_curve_plot(curve: list[dict], out: Path, title: str) -> Path:
    """Per baseline the win rate and the mean score margin, and the OpenSkill rating of each
    checkpoint, over learner steps (left) and training wall time (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(10, 9), dpi=100, sharex="col", sharey="row")
    names = sorted({k for row in curve for k in row["win_rate"]})
    for col, x in enumerate(("step", "wall_s")):
        for name in names:
            rows = [r for r in curve if name in r["win_rate"]]
            xs = [r[x] for r in rows]
            axes[0, col].plot(xs, [r["win_rate"][name] for r in rows], marker="o", label=f"vs {name}")
            margins = [r for r in rows if name in r.get("mean_margin", {})]
            axes[1, col].plot([r[x] for r in margins], [r["mean_margin"][name] for r in margins], marker="o",
                              label=f"vs {name}")
        rated = [r for r in curve if r.get("rating") is not None]
        axes[2, col].plot([r[x] for r in rated], [r["rating"] for r in rated], marker="o", color="black")
        axes[0, col].axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        axes[1, col].axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
        axes[2, col].set_xlabel(("learner steps", "training wall time (s)")[col])
    axes[0, 0].set_ylim(0, 1)
    axes[0, 0].set_ylabel("win rate (sole wins)")
    axes[1, 0].set_ylabel("mean score margin")
    axes[2, 0].set_ylabel("OpenSkill rating (ordinal)")
    axes[0, 0].legend(loc="lower right")
    fig.suptitle(f"{title}: self-play from scratch, evaluation against fixed baselines")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out

