"""Docs that must not drift from their sources."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_RULES = REPO.parent / "shared" / "RULES.md"


@pytest.mark.skipif(not SHARED_RULES.exists(), reason="the team's shared/RULES.md is not beside this clone")
def test_rules_copy_matches_the_source_of_truth():
    assert (REPO / "docs" / "RULES.md").read_text() == SHARED_RULES.read_text()


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    assert "make quickstart" in readme and "make test" in readme
    assert "make test" in (REPO / ".ci" / "run").read_text()
