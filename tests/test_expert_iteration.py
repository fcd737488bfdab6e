"""benchmarks/expert_iteration.py: searched self-play games are recorded as the env shows them,
one candidate records the policy itself, workers do not change the record, the kept data is
checked against the settings, and bad arguments are one-line errors. The strength it reports is
measured by running the script, not here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from arboretum_env.batch import table as T
from arboretum_env.engine import GameConfig, new_game
from arboretum_env.env import raw_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# imported by its package name, so that the worker processes can find its functions
iteration = importlib.import_module("benchmarks.expert_iteration")
POLICY = str(iteration.ROOT / "models/selfplay_2p/policy.safetensors")

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def test_changed_by_search_counts_per_decision_kind():
    from arboretum_env.actions import DISCARD, DRAW_DECK, PLAY_CARD, PLAY_CELL

    searched = np.array([DRAW_DECK, DRAW_DECK, PLAY_CARD, PLAY_CELL, DISCARD, DISCARD])
    plain = np.array([DRAW_DECK, DRAW_DECK + 1, PLAY_CARD, PLAY_CELL + 3, DISCARD + 1, DISCARD + 2])
    assert iteration.changed_by_search(searched, plain) == {
        "all": round(4 / 6, 4), "draw": 0.5, "card": 0.0, "cell": 1.0, "discard": 1.0}


def test_one_candidate_records_the_policy_and_the_env_observations():
    obs, masks, searched, plain = iteration.searched_games(POLICY, 1, 5, 0, 2, 1)
    assert np.array_equal(searched, plain)
    assert (masks[np.arange(len(searched)), searched] == 1).all()
    env = raw_env(num_players=2)
    env.reset_to(new_game(GameConfig(2), 5 + iteration.DEAL_OFFSET))
    for o, m, a in zip(obs, masks, searched):
        seen = env.observe(env.agent_selection)
        assert np.array_equal(seen["observation"].astype(np.float16), o)
        assert np.array_equal(seen["action_mask"], m)
        env.step(int(a))
    assert env.state.game_over


def test_workers_do_not_change_the_record():
    one = iteration.record(POLICY, 2, 1, 1, 1, workers=1)
    two = iteration.record(POLICY, 2, 1, 1, 1, workers=2)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))


def test_kept_games_are_read_back_only_with_their_settings(tmp_path, capsys):
    data = tmp_path / "games.npz"
    argv = ["--games", "1", "--determinizations", "1", "--candidates", "1", "--epochs", "1",
            "--eval-games", "2", "--workers", "1", "--data", str(data)]
    first = iteration.main(argv)
    assert data.is_file() and first["decisions"] > 50
    assert first["changed_by_search"]["all"] == 0.0  # one candidate: the policy's own argmax
    assert iteration.main(argv)["decisions"] == first["decisions"]
    with pytest.raises(SystemExit):
        iteration.main(argv[:5] + ["2"] + argv[6:])
    assert "holds games of other settings" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv,message", [
    (["--games", "0"], "must be at least 1"),
    (["--lr", "2"], "must be between 0 and 1"),
    (["--policy", "no/such/file.safetensors"], "no such policy file"),
])
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    with pytest.raises(SystemExit):
        iteration.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "".join(err)
