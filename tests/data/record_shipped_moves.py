"""Record the shipped agent's moves in real games, for tests/test_shipped.py.

    PYTHONPATH=. .venv/bin/python tests/data/record_shipped_moves.py AGENT_SPEC [--positions 1000]

Plays 2-player games (seeds 0, 1, ...; the agent in seat ``game % 2``; the other seat greedy,
tempo or random in turn) until the agent has decided ``--positions`` times, and writes every
action of every game to ``tests/data/shipped_moves.json``. The test replays those games move by
move and asks the shipped agent for its choice at each of its own decisions.

The file was recorded (2026-12-03) from the TorchScript ``models/shipped/policy.pt`` before it was
converted to ``policy.safetensors`` (the old file is in git history only); rerunning it with the
converted file rewrites the same moves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from arboretum_env.agents import make_agent  # noqa: E402
from arboretum_env.agents.arena import play_game  # noqa: E402
from arboretum_env.fileio import atomic_write_text  # noqa: E402

OUT = Path(__file__).with_name("shipped_moves.json")
OPPONENTS = ("greedy", "tempo", "random")


class Recorder:
    def __init__(self, agent, moves: list[int]):
        self.agent, self.moves = agent, moves

    def act(self, observation, action_mask, view=None) -> int:
        action = int(self.agent.act(observation, action_mask, view))
        self.moves.append(action)
        return action


def record(spec: str, positions: int) -> dict:
    agent = make_agent(spec, seed=0)
    games, decided = [], 0
    game = 0
    while decided < positions:
        seat, opponent = game % 2, OPPONENTS[(game // 2) % len(OPPONENTS)]
        moves: list[list[int]] = [[], []]
        players = [None, None]
        players[seat] = Recorder(agent, moves[seat])
        players[1 - seat] = Recorder(make_agent(opponent, seed=game), moves[1 - seat])
        play_game(players, 2, seed=game)
        games.append({"seed": game, "seat": seat, "opponent": opponent, "moves": moves})
        decided += len(moves[seat])
        game += 1
    return {"agent": spec, "positions": decided, "games": games}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent", help="agent spec, e.g. models/shipped/policy.safetensors")
    parser.add_argument("--positions", type=int, default=1000)
    args = parser.parse_args()
    data = record(args.agent, args.positions)
    atomic_write_text(OUT, json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}: {data['positions']} positions in {len(data['games'])} games")


if __name__ == "__main__":
    main()
