"""benchmarks/network_capacity.py: greedy's decisions are recorded as the env shows them, the
decision kinds come from the action ids, and a tiny run gives the documented JSON fields. The
strength it reports is measured by running the script, not here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from arboretum_env.actions import DISCARD, DRAW_DECK, NUM_ACTIONS, PLAY_CARD, PLAY_CELL
from arboretum_env.observation import OBS_SIZE

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "network_capacity.py"
spec = importlib.util.spec_from_file_location("network_capacity", SCRIPT)
capacity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(capacity)


def test_kinds_follow_the_action_ranges():
    ids = np.array([DRAW_DECK, PLAY_CARD - 1, PLAY_CARD, PLAY_CELL - 1, PLAY_CELL, DISCARD - 1, DISCARD,
                    NUM_ACTIONS - 1])
    assert capacity.kind_of(ids).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_recorded_decisions_are_legal_and_deterministic():
    obs, masks, actions = capacity.greedy_decisions(1, seed=5)
    again = capacity.greedy_decisions(1, seed=5)
    assert obs.shape == (len(actions), OBS_SIZE) and masks.shape == (len(actions), NUM_ACTIONS)
    assert masks[np.arange(len(actions)), actions].all()  # every recorded action was legal
    assert np.array_equal(actions, again[2]) and np.array_equal(obs, again[0])
    kinds = capacity.kind_of(actions)
    # a 2-player game: each turn two draws, a card, a cell and a discard
    assert (kinds == 1).sum() == (kinds == 2).sum() == (kinds == 3).sum() > 0
    assert (kinds == 0).sum() == 2 * (kinds == 1).sum()


def test_tiny_run_reports_every_field():
    out = capacity.main(["--games", "2", "--epochs", "1", "--eval-games", "2", "--threads", "1"])
    assert out["benchmark"] == "network_capacity" and out["samples"] > 100
    assert set(out["held_out_accuracy"]) == {"all", *capacity.KINDS}
    for name in ("random", "greedy"):
        result = out["clone_against"][name]
        assert 0.0 <= result["win_rate"] + result["draw_rate"] <= 1.0
    assert out["network"]["parameters"] > 0
