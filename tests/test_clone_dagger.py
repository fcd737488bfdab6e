"""benchmarks/clone_dagger.py: the clone's own actions are played, greedy's become the labels, the
agreement counts them per kind, and the JSON is as documented. The strengths it reports are
measured by running the script, not here."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env.agents import make_agent
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.env import raw_env

from tests.scripts import load_script

dagger = load_script("benchmarks/clone_dagger.py")


def small_net(seed: int = 0) -> PlaneNet:
    torch.manual_seed(seed)
    return PlaneNet(channels=4, hidden=16, card_hidden=8, card_gains=True).eval()


def test_the_clone_plays_and_greedy_labels():
    net = small_net()
    obs, masks, labels, played = dagger.labelled_games(net, 2, seed=11)
    assert obs.dtype == np.float16 and len(obs) == len(masks) == len(labels) == len(played) > 20
    assert masks[np.arange(len(played)), played].all() and masks[np.arange(len(labels)), labels].all()
    # the played actions are the net's argmax in those positions
    assert (dagger.clone_acts(net)(obs.astype(np.float32), masks) == played).all()
    # replaying the recorded actions in the clone's seats gives the same positions, and greedy's
    # label is greedy's choice in each
    greedy, row = make_agent("greedy"), 0
    for g in range(2):
        env = raw_env(num_players=2)
        env.reset(seed=11 + g)
        while not env.state.game_over:
            o = env.observe(env.agent_selection)
            view = env.table_view(env.agent_selection)
            if env.state.current_player == g % 2:
                assert np.array_equal(o["observation"].astype(np.float16), obs[row])
                assert greedy.act(o["observation"], o["action_mask"], view) == labels[row]
                action, row = played[row], row + 1
            else:
                action = greedy.act(o["observation"], o["action_mask"], view)
            env.step(int(action))
    assert row == len(played)
    assert labels.tolist() != played.tolist()  # an untrained net disagrees with greedy somewhere


def test_agreement_per_kind():
    from arboretum_env.actions import DISCARD, DRAW_DECK, PLAY_CARD, PLAY_CELL

    labels = np.array([DRAW_DECK, PLAY_CARD, PLAY_CELL, DISCARD, DISCARD + 1])
    played = np.array([DRAW_DECK, PLAY_CARD + 1, PLAY_CELL, DISCARD + 2, DISCARD + 1])
    assert dagger.agreement(labels, played) == {"all": 0.6, "draw": 1.0, "card": 0.0, "cell": 1.0,
                                                "discard": 0.5}


def test_worker_share_equals_in_process_games():
    net = small_net(1)
    settings = {"channels": 4, "hidden": 16, "card_hidden": 8, "card_gains": True}
    whole = dagger.labelled_games(net, 2, seed=5)
    parts = [dagger._part((settings, net.state_dict(), 1, 5, first)) for first in (0, 1)]
    for i in range(4):
        assert np.array_equal(whole[i], np.concatenate([p[i] for p in parts]))


def test_main_reports_every_round():
    out = dagger.main(["--games", "2", "--epochs", "1", "--rounds", "1", "--round-games", "1",
                       "--eval-games", "1", "--workers", "1", "--threads", "1", "--card-hidden", "8",
                       "--channels", "4", "--hidden", "16"])
    assert out["benchmark"] == "clone_dagger" and [r["round"] for r in out["rounds"]] == [0, 1]
    first, last = out["rounds"]
    assert last["samples"] == first["samples"] + last["new_samples"]
    assert set(last["on_policy_agreement"]) >= {"all"} and set(last["against_greedy"]) == {
        "win_rate", "draw_rate", "mean_margin"}


@pytest.mark.parametrize("argv", [["--rounds", "-1"], ["--card-hidden", "0"], ["--round-lr", "2"]])
def test_bad_arguments_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        dagger.main(argv)
    assert exited.value.code == 2 and "error:" in capsys.readouterr().err
