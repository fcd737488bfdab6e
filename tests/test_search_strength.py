"""benchmarks/search_strength.py: the plain and searched agents play the same deals, one
candidate is the plain policy exactly, and bad arguments are one-line errors. The strength it
reports is measured by running the script, not here."""

from __future__ import annotations

import pytest

from arboretum_env.batch import table as T

from tests.scripts import load_script

strength = load_script("benchmarks/search_strength.py")

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def test_one_candidate_plays_exactly_the_policy():
    out = strength.main(["--deals", "1", "--determinizations", "3", "--candidates", "1", "--workers", "1",
                         "--opponent", "greedy"])
    assert out["plain"]["games"] == out["searched"]["games"] == 2
    for key in ("wins", "draws", "losses", "mean_margin"):
        assert out["plain"][key] == out["searched"][key]
    assert out["margin_gain"]["mean"] == 0.0 and out["searched"]["playouts_per_decision"] == 0.0


def test_a_search_plays_out_its_candidates_on_each_deal():
    game = strength.play(str(strength.ROOT / "models/selfplay_2p/policy.safetensors"), "random", 1, 4,
                         True, 1, 2)
    assert game["decisions"] > 30 and game["searched"]
    assert game["decisions"] < game["playouts"] <= 2 * game["decisions"]
    again = strength.play(str(strength.ROOT / "models/selfplay_2p/policy.safetensors"), "random", 1, 4,
                          True, 1, 2)
    assert (again["margin"], again["playouts"]) == (game["margin"], game["playouts"])


@pytest.mark.parametrize("argv,message", [
    (["--deals", "0"], "must be at least 1"),
    (["--policy", "no/such/file.safetensors"], "no such policy file"),
    (["--seed", "-1"], "must be at least 0"),
    (["--temperature", "nan"], "must be a finite number"),
])
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    with pytest.raises(SystemExit):
        strength.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "".join(err)
