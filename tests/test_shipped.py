"""The shipped agent (models/shipped/): a data-only policy file that loads with this version of
the env, names the advisor whose hints it reads, stays under 10 MB, plays legal games, and plays
the moves the TorchScript file it was converted from played (tests/data/shipped_moves.json:
1,075 decisions of 16 real games, recorded from the old file before the conversion)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arboretum_env.agents import make_agent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.hints import hint_spec
from arboretum_env.agents.policy import PolicyAgent

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "shipped"
MOVES = Path(__file__).resolve().parent / "data" / "shipped_moves.json"


def test_policy_file_loads_and_names_its_advisor():
    path = SHIPPED / "policy.safetensors"
    assert path.stat().st_size < 10 * 2**20
    assert not (SHIPPED / "policy.pt").exists()  # the TorchScript file is in git history only
    agent = PolicyAgent(path)
    assert agent.metadata["versions"]["env"] == "arboretum_v0"
    assert agent.metadata["hints"] == hint_spec("tempo") and agent.hints.advisor == "tempo"
    metadata = json.loads((SHIPPED / "metadata.json").read_text())
    assert metadata["hints"] == agent.metadata["hints"] and metadata["config"]["teacher"] == "tempo"


@pytest.mark.slow
def test_plays_legal_games_in_either_seat():
    agent = PolicyAgent(SHIPPED / "policy.safetensors")
    for seat in (0, 1):
        agents = [make_agent("greedy"), make_agent("greedy")]
        agents[seat] = agent
        result = play_game(agents, 2, seed=40 + seat)  # an illegal action would raise
        assert len(result.players) == 2


class _Replay:
    """Plays the recorded moves of one seat; for the shipped agent's seat it first asks the
    agent and counts the decisions where it chose the recorded move."""

    def __init__(self, moves, agent=None):
        self.moves, self.agent = iter(moves), agent
        self.asked = self.same = 0

    def act(self, observation, action_mask, view=None) -> int:
        recorded = next(self.moves)
        if self.agent is not None:
            self.asked += 1
            self.same += int(self.agent.act(observation, action_mask, view)) == recorded
        return recorded


def test_plays_the_moves_of_the_torchscript_file_it_was_converted_from():
    data = json.loads(MOVES.read_text())
    agent = PolicyAgent(SHIPPED / "policy.safetensors")
    asked = same = 0
    for game in data["games"]:
        seat = game["seat"]
        players = [_Replay(game["moves"][s], agent if s == seat else None) for s in (0, 1)]
        play_game(players, 2, seed=game["seed"])
        asked, same = asked + players[seat].asked, same + players[seat].same
    assert asked == data["positions"] >= 1000
    assert same == asked, f"{same} of {asked} moves agree"
