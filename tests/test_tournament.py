"""``arboretum evaluate``: the seating scheme, the statistics, a random-vs-greedy tournament, its
files, reproducibility, and one-line errors for bad input."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from training import tournament as T

ROOT = Path(__file__).resolve().parents[1]
GAMES = 40  # greedy beats random in ~all games: 40 orders the ratings reliably, in ~12 s


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "training.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


# ----------------------------------------------------------------------------- pure parts
@pytest.mark.parametrize("k,n", [(2, 2), (3, 2), (4, 2), (3, 3), (4, 3), (4, 4), (5, 4)])
def test_schedule_rotates_every_entrant_through_every_seat(k: int, n: int) -> None:
    period = T.balance_period(k, n)
    schedule = T.seat_schedule(k, n, 2 * period)
    for table in schedule:
        assert len(set(table)) == n and all(0 <= e < k for e in table)
    seats = Counter((e, s) for table in schedule for s, e in enumerate(table))
    assert set(seats.values()) == {2 * period * n // k // n}, seats
    assert len(seats) == k * n  # every entrant in every seat


def test_two_entrants_alternate_seats() -> None:
    assert T.seat_schedule(2, 2, 4) == [(0, 1), (1, 0), (0, 1), (1, 0)]


def test_wilson_interval() -> None:
    lo, hi = T.wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert T.wilson(0, 10)[0] == 0.0 and T.wilson(10, 10)[1] == 1.0
    assert T.wilson(0, 0) == (0.0, 1.0)
    for s in range(21):
        lo, hi = T.wilson(s, 20)
        assert lo <= s / 20 <= hi


def test_game_ranks_winners_first_then_scores() -> None:
    assert T.game_ranks([10, 7], [0]) == [1, 2]
    assert T.game_ranks([9, 9, 3], [0, 1]) == [1, 1, 3]  # shared win: tied
    assert T.game_ranks([9, 9, 5, 5], [1]) == [2, 1, 3, 3]  # lost the tie-break: after the winner


# ----------------------------------------------------------------------------- a tournament
@pytest.fixture(scope="module")
def greedy_vs_random(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    text = T.evaluate_command(["random", "greedy"], players=2, games=GAMES, seed=11,
                              json_path=str(out / "r.json"), csv_path=str(out / "r.csv"),
                              plot_path=str(out / "r.png"))
    return text, out


@pytest.mark.slow
def test_table_and_rates(greedy_vs_random) -> None:
    text, out = greedy_vs_random
    assert "greedy" in text and "random" in text and "95% CI" in text
    data = json.loads((out / "r.json").read_text())
    assert data["games"] == GAMES and len(data["records"]) == GAMES
    for e in data["entrants"]:
        assert e["games"] == GAMES
        assert e["win_rate"] + e["draw_rate"] + e["loss_rate"] == pytest.approx(1.0)
        assert e["wins"] + e["draws"] + e["losses"] == GAMES
        for label in ("win", "draw", "loss"):
            lo, hi = e[f"{label}_ci"]
            assert 0 <= lo <= e[f"{label}_rate"] <= hi <= 1
        assert e["games_per_seat"] == [GAMES // 2, GAMES // 2]  # seats rotated
    by_name = {e["name"]: e for e in data["entrants"]}
    g, r = by_name["greedy"], by_name["random"]
    assert g["rating"]["ordinal"] > r["rating"]["ordinal"]
    assert g["rating"]["mu"] > r["rating"]["mu"]
    assert g["win_rate"] > 0.8 and g["avg_score"] > r["avg_score"]
    assert data["ranking"] == ["greedy", "random"]
    for rating in (g["rating"], r["rating"]):
        assert rating["ordinal"] == pytest.approx(rating["mu"] - 3 * rating["sigma"])


@pytest.mark.slow
def test_records_rotate_seats(greedy_vs_random) -> None:
    data = json.loads((greedy_vs_random[1] / "r.json").read_text())
    seen = Counter(tuple(rec["seats"]) for rec in data["records"])
    assert seen == {("random", "greedy"): GAMES // 2, ("greedy", "random"): GAMES // 2}
    for rec in data["records"]:
        assert len(rec["scores"]) == 2 and rec["winners"]
        assert rec["winner_names"] == [rec["seats"][w] for w in rec["winners"]]
    # a block of two games shares its deal
    assert data["records"][0]["seed"] == data["records"][1]["seed"] != data["records"][2]["seed"]


@pytest.mark.slow
def test_csv_and_plot(greedy_vs_random) -> None:
    out = greedy_vs_random[1]
    with open(out / "r.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["name"] for row in rows] == ["random", "greedy"]
    for row in rows:
        rates = [float(row[f"{label}_rate"]) for label in ("win", "draw", "loss")]
        assert sum(rates) == pytest.approx(1.0)
        assert float(row["win_ci_low"]) <= float(row["win_rate"]) <= float(row["win_ci_high"])
        assert math.isfinite(float(row["ordinal"]))
    assert (out / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_same_seed_same_results(greedy_vs_random) -> None:
    # the first games of a tournament do not depend on its length: replay 4 of the 40
    data = json.loads((greedy_vs_random[1] / "r.json").read_text())
    again = T.run_tournament(T.load_entrants(["random", "greedy"]), 2, 4, seed=11)
    assert again.records == data["records"][:4]
    other = T.run_tournament(T.load_entrants(["random", "greedy"]), 2, 4, seed=12)
    assert [r["scores"] for r in other.records] != [r["scores"] for r in again.records]


def test_three_players_names_and_seats() -> None:
    def go(seed):
        return T.run_tournament(T.load_entrants(["random", "random", "random"]), 3, 3, seed)

    a, b = go(5), go(5)
    assert [e.name for e in a.entrants] == ["random", "random#2", "random#3"]
    assert a.records == b.records and a.stats == b.stats
    for st in a.stats:  # one block of 3 games on one deal: each entrant once in each seat
        assert st["games_per_seat"] == [1, 1, 1]
    assert len({r["seed"] for r in a.records}) == 1


def test_learning_curve_in_the_plot(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = [{"timesteps": t, "random": {"win_rate": w}, "greedy": {"win_rate": w / 2}}
             for t, w in ((100, 0.5), (200, 0.7), (300, 0.9))]
    (run / "evaluations.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    text = T.evaluate_command(["random", "random"], games=2, seed=0,
                              plot_path=str(tmp_path / "p.png"), run=str(run))
    assert "wrote" in text and (tmp_path / "p.png").stat().st_size > 1000


def test_a_selfplay_runs_curve_in_the_plot(tmp_path: Path) -> None:
    """The self-play trainer's curve.jsonl (here the shipped run's) is read as the SB3 path's
    evaluations are: ``--run`` takes a self-play run folder."""
    from training.plots import read_evaluations

    run = tmp_path / "run"
    run.mkdir()
    shipped = ROOT / "models" / "selfplay_2p" / "curve.jsonl"
    (run / "curve.jsonl").write_text(shipped.read_text())
    records = read_evaluations(run)
    raw = [json.loads(line) for line in shipped.read_text().splitlines()]
    assert [r["timesteps"] for r in records] == [r["step"] for r in raw] and len(records) > 3
    assert records[-1]["greedy"] == {"win_rate": raw[-1]["win_rate"]["greedy"],
                                     "draw_rate": raw[-1]["draw_rate"]["greedy"],
                                     "mean_margin": raw[-1]["mean_margin"]["greedy"]}
    text = T.evaluate_command(["random", "random"], games=2, seed=0,
                              plot_path=str(tmp_path / "p.png"), run=str(run))
    assert "wrote" in text and (tmp_path / "p.png").stat().st_size > 1000
    with pytest.raises(T.TournamentError, match="no evaluations.jsonl or curve.jsonl"):
        T.evaluate_command(["random", "random"], games=2, seed=0, plot_path=str(tmp_path / "q.png"),
                           run=str(tmp_path))


# ----------------------------------------------------------------------------- bad input
def _checkpoint(folder: Path, versions: dict | None = None, corrupt_zip: bool = True) -> Path:
    folder.mkdir(parents=True)
    zpath = folder / "step_000000100.zip"
    if corrupt_zip:
        zpath.write_bytes(b"not a zip at all")
    else:
        with zipfile.ZipFile(zpath, "w") as z:
            z.writestr("data", "{}")
    from arboretum_env.versions import current_versions

    meta = {"timesteps": 100, "versions": {**current_versions(), **(versions or {})}}
    zpath.with_suffix(".json").write_text(json.dumps(meta))
    return folder


def bad_inputs(tmp: Path) -> dict[str, list[str]]:
    (tmp / "junk.pt").write_bytes(b"\x00garbage")
    (tmp / "empty_run").mkdir()
    return {
        "unknown agent": ["no-such-agent", "random"],
        "missing checkpoint": [str(tmp / "missing_run"), "random"],
        "missing zip": [str(tmp / "nope.zip"), "random"],
        "missing policy": [str(tmp / "nope.pt"), "random"],
        "players 5": ["random", "greedy", "--players", "5"],
        "players 1": ["random", "greedy", "--players", "1"],
        "one entrant": ["random"],
        "too few for 3": ["random", "greedy", "--players", "3"],
        "games 0": ["random", "greedy", "--games", "0"],
        "negative seed": ["random", "greedy", "--seed", "-1"],
        "plot not png": ["random", "greedy", "--plot", str(tmp / "x.jpg")],
        "json folder missing": ["random", "greedy", "--json", str(tmp / "no" / "x.json")],
        "run without plot": ["random", "greedy", "--run", str(tmp)],
        "run without evaluations": ["random", "greedy", "--plot", str(tmp / "p.png"), "--run", str(tmp)],
        # these load torch (and SB3): the in-process test below covers them too
        "version mismatch": [str(_checkpoint(tmp / "old", {"observation_layout": -1}, False)), "random"],
        "corrupt checkpoint": [str(_checkpoint(tmp / "corrupt")), "random"],
        "corrupt policy": [str(tmp / "junk.pt"), "random"],
        "empty run folder": [str(tmp / "empty_run"), "random"],
    }


TORCH_CASES = ("corrupt checkpoint", "corrupt policy", "empty run folder")


@pytest.mark.slow
def test_bad_inputs_give_one_line_and_exit_2(tmp_path: Path) -> None:
    cases = {k: v for k, v in bad_inputs(tmp_path).items() if k not in TORCH_CASES}
    base = [sys.executable, "-m", "training.cli", "evaluate"]
    procs = {name: subprocess.Popen(base + args + ([] if "--games" in args else ["--games", "2"]),
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, args in cases.items()}
    errors = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, (name, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arboretum: error: "), (name, err)
        assert "Traceback" not in err and out == "", (name, out)
        errors[name] = lines[0]
    assert "unknown agent 'no-such-agent'" in errors["unknown agent"]
    assert "observation_layout" in errors["version mismatch"]
    assert "--players" in errors["players 5"]
    assert "at least 3 entrants" in errors["too few for 3"]


def test_bad_inputs_in_process(tmp_path: Path) -> None:
    """Every bad input, through ``cli.main``: a ``UserError`` becomes one line and exit 2."""
    from training import cli

    for name, args in bad_inputs(tmp_path).items():
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli.main(["evaluate", *args, *([] if "--games" in args else ["--games", "2"])])
        lines = err.getvalue().strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("arboretum: error: "), (name, lines)
    assert "corrupt" in lines[0] or "no checkpoint" in lines[0]


def test_cli_runs_and_writes_json(tmp_path: Path) -> None:
    result = run_cli("evaluate", "random", "random", "--games", "4", "--seed", "3",
                     "--json", str(tmp_path / "e.json"))
    assert result.returncode == 0, result.stderr
    assert "random#2" in result.stdout
    assert len(json.loads((tmp_path / "e.json").read_text())["records"]) == 4


# ----------------------------------------------------------------------------- model entrants
@pytest.mark.slow
def test_checkpoint_folder_and_policy_file_entrants(tmp_path: Path) -> None:
    """An (untrained) MaskablePPO checkpoint in a run folder and its exported policy file take
    part like any agent; the run's learning curve goes into the plot."""
    import gymnasium as gym
    import numpy as np

    from arboretum_env.actions import NUM_ACTIONS
    from arboretum_env.observation import OBS_SIZE
    from training.config import TrainConfig, config_to_dict
    from training.export import export_policy, save_checkpoint
    from training.train import new_model

    class Spaces(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        action_space = gym.spaces.Discrete(NUM_ACTIONS)

    config = TrainConfig(network="mlp", hidden=16, hints=False, n_steps=8, batch_size=8)
    run = tmp_path / "tiny_run"
    model = new_model(config, Spaces(), run)
    save_checkpoint(model, run / "checkpoints", 0, config=config_to_dict(config))
    (run / "evaluations.jsonl").write_text(json.dumps({"timesteps": 0, "random": {"win_rate": 0.5}}) + "\n")
    policy = export_policy(model, run / "policy.safetensors", {"timesteps": 0})
    text = T.evaluate_command([str(run), str(policy), "random"], players=2, games=6, seed=1,
                              json_path=str(tmp_path / "m.json"), plot_path=str(tmp_path / "m.png"))
    data = json.loads((tmp_path / "m.json").read_text())
    kinds = {e["name"]: e["kind"] for e in data["entrants"]}
    assert kinds == {"tiny_run": "checkpoint", "tiny_run/policy": "policy", "random": "builtin"}, text
    assert all(e["games"] == 4 for e in data["entrants"])  # 3 tables of 2, each played twice
    assert (tmp_path / "m.png").stat().st_size > 1000
