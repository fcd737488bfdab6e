"""Golden playthroughs: seeded games of ``raw_env`` with random legal play, written as text.

Each file under ``tests/golden/`` holds one game: every step's agent, action id, and a short
sha256 of that agent's observation (float32 bytes) and action mask (int8 bytes), then the final
scores, winners, a sha256 of the score breakdown (``ScoreResult.to_dict()``) and the rewards. ``tests/test_golden.py`` replays the games and compares.

A change of rules or of the observation/action layout shows up there as a failing test; when
the change is meant, rewrite the files on purpose and review the diff:

    python tests/golden/regenerate.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent

# (num_players, seed, reward_mode): two games per player count, one with score_margin rewards
GAMES = (
    (2, 1, "win_loss"),
    (2, 2, "score_margin"),
    (3, 3, "win_loss"),
    (3, 4, "win_loss"),
    (4, 5, "win_loss"),
    (4, 6, "win_loss"),
)


def file_name(num_players: int, seed: int, reward_mode: str) -> str:
    return f"{num_players}p_seed{seed}_{reward_mode}.txt"


def digest(array: np.ndarray, dtype) -> str:
    return hashlib.sha256(np.ascontiguousarray(array, dtype=dtype).tobytes()).hexdigest()[:16]


def playthrough(num_players: int, seed: int, reward_mode: str) -> list[str]:
    """The lines of one game: the env is reset with ``seed``; the moves are drawn uniformly from
    the legal ids by ``numpy.random.default_rng(seed)`` (a Generator of its own)."""
    from arboretum_env.engine import score
    from arboretum_env.env import raw_env

    env = raw_env(num_players=num_players, reward_mode=reward_mode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [f"game num_players={num_players} seed={seed} reward_mode={reward_mode}",
             "step agent action observation mask"]
    final_rewards = {}
    for step, agent in enumerate(env.agent_iter()):
        obs, reward, terminated, truncated, _ = env.last()
        mask = obs["action_mask"]
        if terminated or truncated:
            action = None
            final_rewards[agent] = reward
        else:
            legal = np.flatnonzero(mask)
            action = int(legal[rng.integers(len(legal))])
        lines.append(f"{step} {agent} {action} {digest(obs['observation'], np.float32)} "
                     f"{digest(mask, np.int8)}")
        env.step(action)
    assert not env.agents, "the game did not end"
    result = score(env.state)
    lines.append("scores " + " ".join(str(t) for t in result.totals))
    lines.append("winners " + " ".join(str(p) for p in result.winners))
    breakdown = json.dumps(result.to_dict(), sort_keys=True).encode()
    lines.append("breakdown " + hashlib.sha256(breakdown).hexdigest()[:16])
    lines.append("rewards " + " ".join(repr(float(final_rewards[a]))
                                       for a in env.possible_agents))
    return lines


def main() -> None:
    for old in GOLDEN_DIR.glob("*.txt"):
        old.unlink()
    for game in GAMES:
        path = GOLDEN_DIR / file_name(*game)
        path.write_text("\n".join(playthrough(*game)) + "\n")
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")


if __name__ == "__main__":
    sys.path.insert(0, str(GOLDEN_DIR.parents[1]))  # this checkout's package first
    main()
