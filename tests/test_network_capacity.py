"""benchmarks/network_capacity.py: greedy's decisions are recorded as the env shows them, the
decision kinds come from the action ids, and a tiny run gives the documented JSON fields. The
strength it reports is measured by running the script, not here."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.actions import DISCARD, DRAW_DECK, NUM_ACTIONS, PLAY_CARD, PLAY_CELL
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.observation import OBS_SIZE

from tests.scripts import load_script

capacity = load_script("benchmarks/network_capacity.py")


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


def test_games_split_into_parts_give_the_same_decisions():
    whole = capacity.greedy_decisions(2, seed=9)
    parts = [capacity.greedy_decisions(1, seed=9, first=g) for g in (0, 1)]
    for i in range(3):
        assert np.array_equal(whole[i], np.concatenate([p[i] for p in parts]))


def test_held_out_accuracy_pairs_each_prediction_with_its_own_decision():
    torch = pytest.importorskip("torch")
    obs, masks, actions = capacity.greedy_decisions(1, seed=3)
    answer = {row.tobytes(): int(a) for row, a in zip(obs.astype(np.float32), actions)}

    def oracle(batch):  # knows greedy's action of every recorded observation
        logits = torch.zeros(len(batch), masks.shape[1])
        for i, row in enumerate(batch.numpy()):
            logits[i, answer[row.tobytes()]] = 1.0
        return logits, torch.zeros(len(batch))

    rows = np.random.default_rng(0).permutation(len(actions))[:60]  # unsorted on purpose
    got = capacity.held_out_accuracy(oracle, obs, masks, actions, rows, chunk=7)  # several forwards
    assert got == {"all": 1.0, **{name: 1.0 for k, name in enumerate(capacity.KINDS)
                                  if (capacity.kind_of(actions[rows]) == k).any()}}
    # and a net that is always wrong scores 0
    wrong = capacity.held_out_accuracy(lambda b: (-oracle(b)[0], None), obs, masks, actions, rows, chunk=7)
    assert wrong["all"] < 0.5


def test_tiny_run_reports_every_field():
    out = capacity.main(["--games", "2", "--epochs", "1", "--eval-games", "2", "--threads", "1",
                         "--workers", "1"])
    assert out["benchmark"] == "network_capacity" and out["samples"] > 100
    assert set(out["held_out_accuracy"]) == {"all", *capacity.KINDS}
    for name in ("random", "greedy"):
        result = out["clone_against"][name]
        assert 0.0 <= result["win_rate"] + result["draw_rate"] <= 1.0
    assert out["network"]["parameters"] > 0


def test_depth_reaches_the_cloned_network():
    out = capacity.main(["--games", "1", "--epochs", "1", "--eval-games", "1", "--threads", "1",
                         "--workers", "1", "--card-hidden", "8", "--depth", "1"])
    plain = PlaneNet(8, 128, 8).size_report()["parameters"]
    assert out["network"]["depth"] == 1 and out["network"]["parameters"] > plain


@pytest.mark.parametrize("bad", [["--games", "0"], ["--epochs", "-1"], ["--workers", "two"], ["--seed", "-3"],
                                 ["--depth", "17"]])
def test_bad_arguments_are_one_line_errors(bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        capacity.main(bad)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("usage:") is False and bad[0] in err[-1] and "Traceback" not in "\n".join(err)
