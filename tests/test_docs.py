"""Docs that must not drift from their sources: the rules copy, the action table, the slow-test
marker the README promises, the setup commands."""

import ast
from pathlib import Path

import pytest

from arboretum_env.actions import ACTION_RANGES, NUM_ACTIONS, action_table, describe

REPO = Path(__file__).resolve().parents[1]


def shared_rules() -> Path | None:
    """The team's ``shared/RULES.md`` (the source of truth): beside the clone or above it (a
    git worktree sits deeper than the main checkout)."""
    for folder in (REPO, *REPO.parents):
        candidate = folder / "shared" / "RULES.md"
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.skipif(shared_rules() is None, reason="no shared/RULES.md beside or above this clone")
def test_rules_copy_matches_the_source_of_truth():
    assert (REPO / "docs" / "RULES.md").read_text() == shared_rules().read_text(), (
        f"docs/RULES.md differs from {shared_rules()}: copy it over")


def test_action_ranges_cover_every_id_once_in_order():
    ids = [i for first, count, _ in ACTION_RANGES for i in range(first, first + count)]
    assert ids == list(range(NUM_ACTIONS))
    for first, count, meaning in ACTION_RANGES:  # each range's first and last id share a kind
        head, last = describe(first).split()[0], describe(first + count - 1).split()[0]
        assert head == last, (first, count, meaning, describe(first), describe(first + count - 1))


def test_env_guide_contains_the_action_table():
    assert action_table() in (REPO / "docs" / "env.md").read_text(), (
        "docs/env.md must contain arboretum_env.actions.action_table() verbatim")


def test_env_docstring_contains_the_action_table():
    from arboretum_env.env import raw_env

    assert action_table() in raw_env.__doc__


def test_env_docstring_and_guide_name_the_end_of_game_infos():
    """The spec names every key of a finished game's infos, and its version history is the guide's."""
    import re

    import numpy as np

    from arboretum_env.env import raw_env

    env = raw_env(num_players=3)
    env.reset(seed=5)
    for agent in env.agent_iter():
        _, _, done, _, info = env.last()
        env.step(None if done else int(np.flatnonzero(env.action_masks())[0]))
    assert info and set(info) == {"score", "won", "scores", "winners"}
    guide = (REPO / "docs" / "env.md").read_text()
    for key in info:
        assert f'``"{key}"``' in raw_env.__doc__ and f'`"{key}"`' in guide
    flat = lambda text: " ".join(text.replace("``", "`").split())  # noqa: E731
    history = flat(guide.split("## Version history")[1])
    assert flat(raw_env.__doc__.split("**Version history**")[1].strip().strip('"')) in history


FRAGMENT = "<!-- a fragment"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown text, but those marked as fragments just above."""
    blocks, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "```python" and not (i and lines[i - 1].startswith(FRAGMENT)):
            end = lines.index("```", i + 1)
            blocks.append("\n".join(lines[i + 1:end]))
    return blocks


@pytest.mark.parametrize("doc", ["README.md", "docs/env.md"])
def test_the_python_blocks_of_the_guides_run(doc, capsys):
    """Every block runs as written, in order, in one namespace per page (a later block may use
    an earlier one's names)."""
    blocks = python_blocks((REPO / doc).read_text())
    assert len(blocks) >= {"README.md": 1, "docs/env.md": 5}[doc]
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, doc, "exec"), namespace)
    if doc == "docs/env.md":  # the single-agent example prints what its comment says
        assert capsys.readouterr().out.strip().splitlines()[-1] == "-1.0 False [6, 0]"


def test_slow_marker_exists_and_is_used():
    """README and pyproject say that tests marked ``slow`` can be skipped: some must be."""
    assert "slow" in (REPO / "pyproject.toml").read_text()
    marked = []
    for path in sorted((REPO / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr == "slow"
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"):
                marked.append(path.name)
    assert len(marked) >= 3, f"tests marked slow: {marked}"


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    assert "make quickstart" in readme and "make test" in readme
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_selfplay_network_sizes_match_the_code():
    """docs/selfplay.md's table of ``PlaneNet`` settings: parameters and multiply-adds per
    decision as ``size_report`` gives them, and the row marked default is the config's default."""
    import re

    from arboretum_env.agents.selfplay_net import PlaneNet
    from training.selfplay_config import SelfPlayConfig

    row = (r"^\| (default )?`(channels: \d+, hidden: \d+(?:, card_hidden: \d+)?(?:, card_gains: true)?(?:, depth: \d+)?)`[^|]* "
           r"\| ([\d,]+) \| ([\d,]+) \|$")
    rows = re.findall(row, (REPO / "docs" / "selfplay.md").read_text(), re.M)
    assert len(rows) >= 4
    defaults = [settings for default, settings, _, _ in rows if default]
    assert defaults == [f"channels: {SelfPlayConfig.channels}, hidden: {SelfPlayConfig.hidden}"]
    for _, settings, params, macs in rows:
        arguments = {k: True if v == "true" else int(v) for k, v in (part.split(": ") for part in settings.split(", "))}
        size = PlaneNet(**arguments).size_report()
        documented = (int(params.replace(",", "")), int(macs.replace(",", "")))
        assert (size["parameters"], size["multiply_adds"]) == documented, settings
