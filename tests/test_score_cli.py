"""``arboretum score FILE [--text]``: the documented JSON, the table, and one-line errors
(exit status 2) for every kind of bad input."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arboretum_env.engine import (
    SPECIES,
    GameConfig,
    new_game,
    random_playout,
    score,
    state_to_position,
)
from arboretum_env.engine.position import PositionError, score_command

ROOT = Path(__file__).resolve().parents[1]
EMMA = ROOT / "examples" / "emma.json"


def run_score(path: Path | str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "training.cli", "score", str(path), *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def emma() -> dict:
    return json.loads(EMMA.read_text())


def write(tmp_path: Path, doc, name: str = "position.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def assert_error(tmp_path: Path, doc, *fragments: str) -> str:
    """Exit status 2, nothing on stdout, exactly one line on stderr naming the file and the
    problem, no traceback."""
    path = write(tmp_path, doc)
    result = run_score(path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stderr.endswith("\n"), result.stderr
    line = lines[0]
    assert line.startswith("arboretum: error: ")
    assert str(path) in line
    for fragment in fragments:
        assert fragment in line, line
    return line


# ---------------------------------------------------------------- good input

def test_emma_json_output() -> None:
    result = run_score(EMMA)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = json.loads(result.stdout)
    assert set(out) == {"players", "winners"}
    in_play = emma()["species"]
    assert len(out["players"]) == 2
    for player in out["players"]:
        assert set(player) == {"total", "species"}
        assert sorted(player["species"]) == sorted(in_play)  # every species, every player
        for entry in player["species"].values():
            assert set(entry) == {"right", "points", "path"}
            assert isinstance(entry["right"], bool) and isinstance(entry["points"], int)
            assert entry["right"] or entry["points"] == 0
            assert (entry["points"] > 0) == bool(entry["path"])
        assert player["total"] == sum(e["points"] for e in player["species"].values())
    p0, p1 = out["players"]
    assert p0["total"] == 20
    assert p0["species"]["maple"] == {"right": True, "points": 13,
                                      "path": [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]]}
    assert p0["species"]["olive"] == {"right": True, "points": 3,
                                      "path": [[1, 0], [2, 0], [3, 0]]}
    assert p0["species"]["cassia"] == {"right": True, "points": 4, "path": [[1, 4], [2, 4]]}
    assert p0["species"]["lilac"] == {"right": True, "points": 0, "path": []}  # 0-0 tie
    assert p0["species"]["dogwood"]["right"] is False
    assert p1["species"]["dogwood"] == {"right": True, "points": 3,
                                        "path": [[5, 5], [5, 6], [4, 6]]}
    assert p1["total"] == 3
    assert out["winners"] == [0]


def test_emma_text_table() -> None:
    result = run_score(EMMA, "--text")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["species", "player", "0", "player", "1"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["maple"] == ["13", "(5)", "-"]
    assert rows["cassia"] == ["4", "(2)", "-"]
    assert rows["olive"] == ["3", "(3)", "-"]
    assert rows["dogwood"] == ["-", "3", "(3)"]
    assert rows["lilac"] == ["0", "0"]
    assert rows["total"] == ["20", "3"]
    assert "winner: player 0" in lines
    assert all(name in rows for name in emma()["species"])


def test_paths_are_in_the_documents_coordinates(tmp_path: Path) -> None:
    doc = emma()
    for player in doc["players"]:
        for card in player["arboretum"]:
            card["row"] -= 50
            card["col"] += 1000
    out = json.loads(run_score(write(tmp_path, doc)).stdout)
    assert out["players"][0]["species"]["cassia"]["path"] == [[-49, 1004], [-48, 1004]]
    assert out["players"][0]["total"] == 20


def test_shared_win_in_the_table(tmp_path: Path) -> None:
    doc = {"species": ["oak", "willow", "maple", "olive", "lilac", "cassia"],
           "players": [{"hand": [], "arboretum": [{"row": 0, "col": 0, "species": "oak", "rank": 2},
                                                  {"row": 0, "col": 1, "species": "oak", "rank": 3}]},
                       {"hand": [], "arboretum": [{"row": 0, "col": 0, "species": "maple", "rank": 4},
                                                  {"row": 1, "col": 0, "species": "maple", "rank": 5}]}]}
    out = json.loads(run_score(write(tmp_path, doc)).stdout)
    assert [p["total"] for p in out["players"]] == [2, 2] and out["winners"] == [0, 1]
    text = run_score(write(tmp_path, doc), "--text").stdout
    assert "shared win: player 0, player 1" in text


@pytest.mark.parametrize("n, seed", [(2, 1), (3, 2), (4, 3)])
def test_finished_random_game_scored_by_the_cli_equals_engine_score(
        tmp_path: Path, n: int, seed: int) -> None:
    state = random_playout(new_game(GameConfig(n), seed), np.random.default_rng(seed))
    path = write(tmp_path, state_to_position(state))
    result = run_score(path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == score(state).to_dict()


# ---------------------------------------------------------------- bad input

def test_error_unreadable_json(tmp_path: Path) -> None:
    assert_error(tmp_path, '{"species": ["oak",', "not valid JSON")


def test_error_missing_file(tmp_path: Path) -> None:
    result = run_score(tmp_path / "nowhere.json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "cannot read" in result.stderr


def test_error_not_an_object(tmp_path: Path) -> None:
    assert_error(tmp_path, "[1, 2]", "must be a JSON object")


def test_error_missing_top_level_key(tmp_path: Path) -> None:
    doc = emma()
    del doc["players"]
    assert_error(tmp_path, doc, "missing key 'players'")


def test_error_missing_player_key(tmp_path: Path) -> None:
    doc = emma()
    del doc["players"][1]["hand"]
    assert_error(tmp_path, doc, "players[1]", "missing key 'hand'")


def test_error_missing_card_key(tmp_path: Path) -> None:
    doc = emma()
    del doc["players"][0]["hand"][2]["rank"]
    assert_error(tmp_path, doc, "players[0].hand[2]", "missing key 'rank'")


def test_error_missing_cell_key(tmp_path: Path) -> None:
    doc = emma()
    del doc["players"][0]["arboretum"][3]["col"]
    assert_error(tmp_path, doc, "players[0].arboretum[3]", "missing key 'col'")


def test_error_unknown_species_on_a_card(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["arboretum"][1]["species"] = "birch"
    assert_error(tmp_path, doc, "players[1].arboretum[1]", "unknown species 'birch'")


def test_error_unknown_species_in_the_species_list(tmp_path: Path) -> None:
    doc = emma()
    doc["species"][2] = "baobab"
    assert_error(tmp_path, doc, "species[2]", "unknown species 'baobab'")


def test_error_species_not_in_play(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][0]["hand"][0]["species"] = "oak"
    assert_error(tmp_path, doc, "players[0].hand[0]", "'oak' is not in play")


@pytest.mark.parametrize("rank", [0, 9, -1])
def test_error_rank_outside_1_to_8(tmp_path: Path, rank) -> None:
    doc = emma()
    doc["players"][0]["arboretum"][5]["rank"] = rank
    assert_error(tmp_path, doc, "players[0].arboretum[5]", f"rank {rank!r} is outside 1..8")


@pytest.mark.parametrize("rank", ["3", 2.5, 7.0, True])
def test_error_rank_not_an_integer(tmp_path: Path, rank) -> None:
    doc = emma()
    doc["players"][0]["arboretum"][5]["rank"] = rank
    assert_error(tmp_path, doc, "players[0].arboretum[5]", f"rank must be an integer 1..8, got {rank!r}")


def test_a_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    plain.write_text(json.dumps(emma()), encoding="utf-8")
    marked.write_text(json.dumps(emma()), encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    result = run_score(marked)
    assert result.returncode == 0, result.stderr
    assert result.stdout == run_score(plain).stdout


def test_error_same_card_twice_in_hand_and_arboretum(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["arboretum"][0] = {"row": 5, "col": 5, "species": "maple", "rank": 7}
    assert_error(tmp_path, doc, "players[1].arboretum[0]", "maple 7 appears twice",
                 "players[0].hand[0]")


def test_error_same_card_twice_in_one_hand(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["hand"].append({"species": "dogwood", "rank": 4})
    assert_error(tmp_path, doc, "players[1].hand[2]", "dogwood 4 appears twice")


def test_error_same_card_twice_in_two_arboretums(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["arboretum"].append({"row": 6, "col": 5, "species": "maple", "rank": 1})
    assert_error(tmp_path, doc, "players[1].arboretum[3]", "maple 1 appears twice",
                 "players[0].arboretum[0]")


def test_error_two_cards_on_one_cell(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][0]["arboretum"].append({"row": 0, "col": 2, "species": "lilac", "rank": 1})
    assert_error(tmp_path, doc, "players[0].arboretum[10]", "two cards on cell [0, 2]")


def test_error_arboretum_not_connected(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["arboretum"][2]["row"] = 9  # dogwood 6 away from the others
    assert_error(tmp_path, doc, "players[1].arboretum", "not orthogonally connected")


def test_error_diagonal_only_is_not_connected(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1]["arboretum"] = [{"row": 0, "col": 0, "species": "dogwood", "rank": 2},
                                      {"row": 1, "col": 1, "species": "dogwood", "rank": 6}]
    assert_error(tmp_path, doc, "players[1].arboretum", "not orthogonally connected")


def test_error_non_integer_cell(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][0]["arboretum"][0]["row"] = "0"
    assert_error(tmp_path, doc, "players[0].arboretum[0]", "row must be an integer")


def test_error_fewer_than_two_players(tmp_path: Path) -> None:
    doc = emma()
    doc["players"] = doc["players"][:1]
    assert_error(tmp_path, doc, "'players'", "2 to 4 players, got 1")


def test_error_no_players(tmp_path: Path) -> None:
    doc = emma()
    doc["players"] = []
    assert_error(tmp_path, doc, "2 to 4 players, got 0")


def test_error_more_than_four_players(tmp_path: Path) -> None:
    doc = emma()
    doc["species"] = list(SPECIES)
    doc["players"] += [copy.deepcopy({"hand": [], "arboretum": []}) for _ in range(3)]
    assert_error(tmp_path, doc, "'players'", "2 to 4 players, got 5")


def test_error_player_not_an_object(tmp_path: Path) -> None:
    doc = emma()
    doc["players"][1] = ["dogwood", 4]
    assert_error(tmp_path, doc, "players[1]", "must be an object")


def test_error_players_not_a_list(tmp_path: Path) -> None:
    doc = emma()
    doc["players"] = {"0": doc["players"][0]}
    assert_error(tmp_path, doc, "'players' must list 2 to 4 players, got a dict, not a list")


# ---------------------------------------------------------------- positions no game reaches
# (issue 13 point 7; the limits are RULES.md's: species per player count, the hand at scoring,
# the most cards an arboretum can hold)

def _cards(species: list[str], count: int, skip: int = 0) -> list[dict]:
    every = [{"species": s, "rank": r} for s in species for r in range(1, 9)]
    return every[skip:skip + count]


def _impossible(case: str) -> dict:
    doc = {"species": emma()["species"], "players": [{"hand": [], "arboretum": []} for _ in range(2)]}
    if case == "30-card hand":
        doc["players"][0]["hand"] = _cards(doc["species"], 30)
    elif case == "8-card hand":
        doc["players"][1]["hand"] = _cards(doc["species"], 8)
    elif case.endswith("-card arboretum, 2 players"):
        n = int(case.split("-")[0])
        doc["players"][0]["arboretum"] = [{"row": 0, "col": i, **card}
                                          for i, card in enumerate(_cards(doc["species"], n))]
    elif case == "14-card arboretum, 4 players":
        doc["species"] = list(SPECIES)
        doc["players"] = [{"hand": [], "arboretum": []} for _ in range(4)]
        doc["players"][3]["arboretum"] = [{"row": i, "col": 0, **card}
                                          for i, card in enumerate(_cards(list(SPECIES), 14))]
    elif case == "10 species, 2 players":
        doc["species"] = list(SPECIES)
    elif case == "1 species, 2 players":
        doc["species"] = ["oak"]
    elif case == "6 species, 3 players":
        doc["players"].append({"hand": [], "arboretum": []})
    return doc


@pytest.mark.parametrize("case, fragment", [
    ("30-card hand", "players[0].hand: 30 cards; a hand holds at most 7"),
    ("8-card hand", "players[1].hand: 8 cards; a hand holds at most 7"),
    ("40-card arboretum, 2 players", "players[0].arboretum: 40 cards; with 2 players an arboretum holds at most 17"),
    ("18-card arboretum, 2 players", "players[0].arboretum: 18 cards; with 2 players an arboretum holds at most 17"),
    ("14-card arboretum, 4 players", "players[3].arboretum: 14 cards; with 4 players an arboretum holds at most 13"),
    ("10 species, 2 players", "'species' lists 10 species; 2 players play with 6"),
    ("1 species, 2 players", "'species' lists 1 species; 2 players play with 6"),
    ("6 species, 3 players", "'species' lists 6 species; 3 players play with 8"),
])
def test_error_position_no_game_reaches(tmp_path: Path, case: str, fragment: str) -> None:
    path = write(tmp_path, _impossible(case))
    with pytest.raises(PositionError) as info:
        score_command(str(path))
    message = str(info.value)
    assert message.startswith(str(path)) and fragment in message and "\n" not in message


def test_the_largest_reachable_position_is_scored(tmp_path: Path) -> None:
    doc = _impossible("17-card arboretum, 2 players")
    doc["players"][1]["hand"] = _cards(doc["species"], 7, skip=40)
    assert json.loads(score_command(str(write(tmp_path, doc))))["players"][0]["total"] >= 0


@pytest.mark.parametrize("text, fragment", [
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ('{"species": ["oak"], "players": ' + "9" * 5000 + "}", "an integer with too many digits"),
])
def test_error_json_too_deep_or_too_long(tmp_path: Path, text: str, fragment: str) -> None:
    assert_error(tmp_path, text, fragment)
