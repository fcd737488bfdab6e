"""benchmarks/delegation.py: greedy replaces exactly the policy's decisions of one kind, the
settings share their deals, and the JSON fields are as documented. The strengths it reports are
measured by running the script, not here."""

from __future__ import annotations

import torch

from arboretum_env.actions import DISCARD, DRAW_DECK, PLAY_CARD, PLAY_CELL
from arboretum_env.agents.networks import build_network
from arboretum_env.agents.policy import PolicyAgent
from arboretum_env.agents.policy_file import save_policy_file

from tests.scripts import load_script

delegation = load_script("benchmarks/delegation.py")


def small_policy(tmp_path):
    torch.manual_seed(0)
    kwargs = {"channels": 4, "hidden": 16}
    return save_policy_file(tmp_path / "p.safetensors", "plane_net", kwargs,
                            build_network("plane_net", kwargs).state_dict(), {"hints": False, "timesteps": 1})


def test_kinds_follow_the_action_ranges():
    names = [delegation.kind_name(a) for a in (DRAW_DECK, PLAY_CARD - 1, PLAY_CARD, PLAY_CELL, DISCARD - 1, DISCARD)]
    assert names == ["draw", "draw", "card", "cell", "cell", "discard"]


def test_greedy_decides_only_the_named_kind(tmp_path, monkeypatch):
    policy = PolicyAgent(small_policy(tmp_path))
    asked = []
    original = delegation.kind_name
    monkeypatch.setattr(delegation, "kind_name", lambda a: asked.append(original(a)) or original(a))
    alone = delegation.play(policy, "none", 2, seed=3)
    assert alone["games"] == 2 and alone["wins"] + alone["draws"] <= 2
    assert set(asked) == {"draw", "card", "cell", "discard"}  # every policy decision is classified
    again = delegation.play(policy, "none", 2, seed=3)
    assert again == alone  # the same deals, the same play
    card = delegation.play(policy, "card", 2, seed=3)
    assert card != alone  # an untrained policy's cards differ from greedy's, so the games change


def test_main_reports_every_setting(tmp_path):
    out = delegation.main(["--policy", str(small_policy(tmp_path)), "--games", "1", "--kinds", "discard"])
    assert out["benchmark"] == "delegation" and list(out["settings"]) == ["none", "discard"]
    assert set(out["settings"]["none"]) == {"games", "wins", "draws", "win_rate", "mean_margin"}
