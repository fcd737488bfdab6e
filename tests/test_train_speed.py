"""benchmarks/train_speed.py: both trainers run in turns and the last line's figures agree with
each other (ratio, rounds, network, targets). The speeds themselves are measured by running the
script (docs/benchmarks.md), not here."""

from __future__ import annotations

import pytest

from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.batch import table as T

from tests.scripts import load_script

train_speed = load_script("benchmarks/train_speed.py")

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def test_a_short_run_reports_consistent_figures():
    out = train_speed.main(["--seconds", "0.2", "--rounds", "2", "--threads", "1", "--sb3-envs", "1",
                            "--channels", "2", "--hidden", "16"])
    assert out["benchmark"] == "train_speed" and out["threads"] == 1
    assert out["selfplay_steps_per_s"] > 0 and out["sb3_steps_per_s"] > 0
    assert len(out["ratio_per_round"]) == 2 and all(r > 0 for r in out["ratio_per_round"])
    # the ratio is of the two rounded rates' unrounded values: within rounding of their quotient
    assert out["ratio"] == pytest.approx(out["selfplay_steps_per_s"] / out["sb3_steps_per_s"], rel=0.01)
    assert out["network"] == {"name": "plane_net", **PlaneNet(channels=2, hidden=16).size_report()}
    assert out["ppo"]["channels"] == 2 and out["ppo"]["hidden"] == 16
    split = out["selfplay_split"]
    assert split["collect_us_per_step"] > 0 and split["update_us_per_step"] > 0
    # collection and update together make up the trainer's time per step
    per_step = 1e6 / out["selfplay_steps_per_s"]
    assert split["collect_us_per_step"] + split["update_us_per_step"] == pytest.approx(per_step, rel=0.01)
    targets = out["targets"]
    assert targets == {"selfplay_steps_per_s": train_speed.TARGET_STEPS, "ratio": train_speed.TARGET_RATIO}
    assert out["targets_met"] == {key: out[key] >= target
                                  for key, target in targets.items()}


@pytest.mark.parametrize("argv", [["--seconds", "0"], ["--rounds", "0"], ["--threads", "0"], ["--sb3-envs", "0"]])
def test_bad_arguments_are_one_line_errors(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_speed.main(argv)
    assert exit_info.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith("error: --seconds must be positive; --rounds, --threads and --sb3-envs at least 1")
