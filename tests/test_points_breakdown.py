"""benchmarks/points_breakdown.py: each part is read off the engine's final score of the right
seat, seats alternate over the same deals, and the JSON fields are as documented. The figures
it reports are measured by running the script, not here."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.agents import make_agent
from arboretum_env.agents.arena import play_game

from tests.scripts import load_script

breakdown = load_script("benchmarks/points_breakdown.py")


def test_parts_are_the_engine_score_of_that_seat():
    result = play_game([make_agent("greedy"), make_agent("greedy")], 2, seed=11)
    for seat in range(2):
        player = result.players[seat]
        points, rights, scored, longest, won = breakdown.parts_of(result, seat)
        assert points == player.total == result.totals[seat]
        assert rights == sum(s.right for s in player.species.values()) <= len(player.species)
        paths = [len(s.path) for s in player.species.values() if s.points > 0]
        assert scored == len(paths) and longest == max(paths, default=0)
        assert won == (seat in result.winners)


def test_seats_alternate_and_each_side_gets_its_own_games():
    greedy = make_agent("greedy")
    sides = breakdown.breakdown(make_agent("random", seed=0), greedy, 2, seed=5)
    # game 0: the policy in seat 0; game 1: in seat 1 (a fresh random agent with the same seed
    # plays the same moves again)
    random = make_agent("random", seed=0)
    first = play_game([random, greedy], 2, seed=5)
    second = play_game([greedy, random], 2, seed=6)
    mean = {"policy": np.mean([first.totals[0], second.totals[1]]),
            "opponent": np.mean([first.totals[1], second.totals[0]])}
    assert sides["policy"]["points"] == pytest.approx(mean["policy"])
    assert sides["opponent"]["points"] == pytest.approx(mean["opponent"])
    assert sides["opponent"]["wins"] > sides["policy"]["wins"]  # greedy beats random on these deals


def test_main_reports_both_sides_and_refuses_an_unknown_agent_in_one_line(capsys):
    out = breakdown.main(["--policy", "random", "--games", "2"])
    assert out["benchmark"] == "points_breakdown" and out["games"] == 2
    assert set(out["policy"]) == set(out["opponent"]) == set(breakdown.PARTS)
    with pytest.raises(SystemExit) as stop:
        breakdown.main(["--policy", "nosuch", "--games", "1"])
    assert stop.value.code == 2 and "unknown agent 'nosuch'" in capsys.readouterr().err
