"""Golden playthroughs (OpenSpiel style): seeded 2-, 3- and 4-player games of ``raw_env`` with
random legal play must give, step by step, the same actions, observations and masks (as short
sha256 digests), and the same scores and rewards as the files under ``tests/golden/``.

A failure here means that the rules, the observation or the action layout changed. When the
change is meant, rewrite the files on purpose and review their diff in the commit:

    python tests/golden/regenerate.py
"""

from __future__ import annotations

import pytest

from tests.scripts import load_script

golden = load_script("tests/golden/regenerate.py")


def test_golden_files_are_the_listed_games():
    on_disk = sorted(p.name for p in golden.GOLDEN_DIR.glob("*.txt"))
    assert on_disk == sorted(golden.file_name(*g) for g in golden.GAMES), (
        "tests/golden/ and GAMES differ: run python tests/golden/regenerate.py")
    counts = {g[0] for g in golden.GAMES}
    assert counts == {2, 3, 4} and any(g[2] == "score_margin" for g in golden.GAMES)


@pytest.mark.parametrize("game", golden.GAMES, ids=lambda g: golden.file_name(*g)[:-4])
def test_golden_playthrough(game):
    expected = (golden.GOLDEN_DIR / golden.file_name(*game)).read_text().splitlines()
    actual = golden.playthrough(*game)
    for number, (want, got) in enumerate(zip(expected, actual), start=1):
        assert got == want, (f"{golden.file_name(*game)} line {number}: expected {want!r}, "
                             f"got {got!r} (rewrite on purpose: python tests/golden/regenerate.py)")
    assert len(actual) == len(expected), (
        f"{golden.file_name(*game)}: {len(expected)} lines stored, {len(actual)} played")
    assert actual[-1].startswith("rewards ") and len(actual) > 100
