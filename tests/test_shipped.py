"""The shipped agent (models/shipped/): its policy file loads with this version of the env, names
the advisor whose hints it reads, stays under 10 MB and plays legal games. Its strength is
measured by benchmarks/agents.py, not here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arboretum_env.agents import make_agent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.policy import PolicyAgent

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "shipped"


def test_policy_file_loads_and_names_its_advisor():
    path = SHIPPED / "policy.pt"
    assert path.stat().st_size < 10 * 2**20
    agent = PolicyAgent(path)
    assert agent.metadata["versions"]["env"] == "arboretum_v0"
    assert agent.metadata["hints"] and agent.hints.advisor == agent.metadata["advisor"]
    metadata = json.loads((SHIPPED / "metadata.json").read_text())
    assert metadata["advisor"] == agent.metadata["advisor"] == metadata["config"]["teacher"]


@pytest.mark.slow
def test_plays_legal_games_in_either_seat():
    agent = PolicyAgent(SHIPPED / "policy.pt")
    for seat in (0, 1):
        agents = [make_agent("greedy"), make_agent("greedy")]
        agents[seat] = agent
        result = play_game(agents, 2, seed=40 + seat)  # an illegal action would raise
        assert len(result.players) == 2
