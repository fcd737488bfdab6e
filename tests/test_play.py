"""``arboretum play`` on scripted input: whole games, typos, shortcuts, quitting."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from training import play as P

ROOT = Path(__file__).resolve().parents[1]


class Script:
    """An ``input`` replacement: the given answers, then ``default`` forever (or EOF)."""

    def __init__(self, answers=(), default: str | None = "1"):
        self.answers = list(answers)
        self.default = default
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        if self.answers:
            return self.answers.pop(0)
        if self.default is None:
            raise EOFError
        return self.default


def play(script: Script, **kwargs) -> tuple[P.PlayOutcome, str]:
    out = io.StringIO()
    kwargs.setdefault("opponents", ["random"])
    kwargs.setdefault("seed", 7)
    outcome = P.play_command(input_fn=script, out=out, **kwargs)
    return outcome, out.getvalue()


def test_full_game_with_first_moves_finishes_with_scores() -> None:
    script = Script()
    outcome, text = play(script)
    assert not outcome.quit and outcome.result is not None and outcome.state.game_over
    assert "Final scores:" in text and "total" in text
    assert ("You win" in text) or ("You lose" in text) or ("You share" in text)
    assert "draw from the deck" in text and "P1 " in text  # moves listed, opponent moves told
    assert len(script.prompts) > 20


def test_same_seed_same_game() -> None:
    a, text_a = play(Script())
    b, text_b = play(Script())
    assert a.result == b.result and text_a == text_b


def test_typos_and_out_of_range_reprompt() -> None:
    script = Script(["", "   ", "xyz", "0", "999", "-3", "1.5", "b", "h", "t", "1"])
    outcome, text = play(script)
    assert outcome.result is not None
    assert "Please type a move number" in text
    assert "Not understood: 'xyz'" in text and "Not understood: '1.5'" in text
    assert "There is no move 0" in text and "There is no move 999" in text and "There is no move -3" in text
    assert "How to answer" in text  # h
    assert text.count("== P0 (you") >= 2  # t redraws the table


class TextPlayer:
    """Answers every prompt with the text form of the last listed move (never its number)."""

    def __init__(self, out: io.StringIO, seat: int):
        self.out, self.seat, self.answers = out, seat, []

    def __call__(self, prompt: str = "") -> str:
        from arboretum_env.engine.cards import SPECIES, SPECIES_LETTERS

        label = re.findall(r"^ +\d+: (.*)$", self.out.getvalue(), flags=re.M)[-1]
        if label.startswith("draw from the deck"):
            answer = "deck"
        elif label.startswith("take "):
            m = re.search(r"from (your|P(\d)'s) discard pile", label)
            answer = f"p{self.seat}" if m.group(1) == "your" else f"p{m.group(2)}"
        elif label.startswith(("play ", "discard ")):
            verb, name, rank = re.match(r"(play|discard) (\w+) (\d)", label).groups()
            answer = f"{name} {rank}" if verb == "play" else f"{SPECIES_LETTERS[SPECIES.index(name)]}{rank}"
        else:
            row, col = re.match(r"\((-?\d+), (-?\d+)\)", label).groups()
            answer = f"{row},{col}"
        self.answers.append(answer)
        return answer


def test_whole_game_by_text_answers() -> None:
    out = io.StringIO()
    player = TextPlayer(out, seat=1)
    outcome = P.play_command(["greedy"], seat=1, seed=12, input_fn=player, out=out)
    text = out.getvalue()
    assert outcome.result is not None, text[-2000:]
    assert "Not understood" not in text and "There is no move" not in text
    assert "deck" in player.answers and any("," in a for a in player.answers)  # draws, cells
    assert any(re.fullmatch(r"[a-z_]+ \d", a) for a in player.answers)  # plays by card name
    assert any(re.fullmatch(r"[A-Z]\d", a) for a in player.answers)  # discards by short name


def test_card_back_then_cell_by_coordinates() -> None:
    # draw twice, choose a card, go back, choose again, then place it by typing the cell
    outcome, text = play(Script(["deck", "deck", "1", "b", "1", "0,0"]), seed=4, seat=0)
    assert outcome.result is not None
    assert "(0, 0): start your arboretum" in text
    assert text.count("Play a card into your arboretum:") >= 2


def test_q_quits_cleanly() -> None:
    outcome, text = play(Script(["q"]))
    assert outcome.quit and outcome.result is None
    assert "You quit the game." in text and "Final scores" not in text


def test_end_of_input_quits_cleanly() -> None:
    outcome, text = play(Script(["1", "1"], default=None))
    assert outcome.quit and "You quit the game." in text


@pytest.mark.parametrize("players,seat", [(3, 2), (4, 1)])
def test_bigger_tables(players: int, seat: int) -> None:
    outcome, text = play(Script(), opponents=["random", "greedy"], players=players, seat=seat, seed=1)
    assert outcome.result is not None and outcome.state.num_players == players
    assert f"You are P{seat}" in text
    assert len(outcome.result.totals) == players


def test_default_opponent_falls_back_to_greedy(monkeypatch) -> None:
    monkeypatch.setattr(P, "SHIPPED_POLICY", Path("no") / "such" / "policy.safetensors")
    outcome, text = play(Script(["q"]), opponents=None)
    assert "playing against greedy" in text and outcome.quit


@pytest.mark.parametrize("kwargs,message", [
    ({"players": 5}, "--players"),
    ({"seat": 2}, "--seat"),
    ({"opponents": ["random", "random"], "players": 2}, "do not fit"),
    ({"opponents": ["no-such-agent"]}, "unknown agent"),
    ({"seed": -1}, "--seed"),
])
def test_bad_options_are_user_errors(kwargs, message) -> None:
    with pytest.raises(P.UserError, match=message):
        play(Script(["q"]), **kwargs)


def test_cli_play_on_piped_input() -> None:
    cmd = [sys.executable, "-m", "training.cli", "play", "--opponents", "random", "--seed", "2"]
    done = subprocess.run(cmd, cwd=ROOT, input="1\n" * 400, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Final scores:" in done.stdout
    quit_ = subprocess.run(cmd, cwd=ROOT, input="oops\nq\n", capture_output=True, text=True, timeout=60)
    assert quit_.returncode == 0 and "Not understood" in quit_.stdout and "You quit" in quit_.stdout
    bad = subprocess.run(cmd + ["--seat", "7"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("answer", ["9" * 5000, "[" * 5000, "-" + "1" * 5000])
def test_huge_answers_reprompt_without_echoing_them(answer: str) -> None:
    outcome, text = play(Script([answer, "q"]))
    assert outcome.quit
    reply = [line for line in text.splitlines() if "There is no move" in line or "Not understood" in line]
    assert len(reply) == 1 and len(reply[0]) < 200, reply


def test_cli_play_with_standard_input_closed_is_one_line() -> None:
    cmd = [sys.executable, "-m", "training.cli", "play", "--opponents", "random", "--seed", "2"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: os.close(0))  # as `arboretum play <&-`
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == ["arboretum: error: standard input is closed: play reads your "
                                        "moves from it (run it in a terminal or pipe the moves in)"]
