"""The loop simulation: a scripted agent of each kind, held by the stop hook over a real
repository, real review sessions and a real reviewer lane (``agentloop``). Every path ends;
no path takes more blocks than the repair-loop ceiling + 1; "clean" only for a tree whose
report says so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from agenthooks import AGENTS
from agentloop import PATHS, Outcome, project
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

CEILING = 2  # the standard tier's repair loops


def working_tree(repo: GitRepo) -> str:
    """The working tree's id, computed here apart from the tool (a scratch index)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo.path / ".git" / "scratch-index")}
    subprocess.run(["git", "add", "-A"], cwd=repo.path, env=env, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo.path, env=env, check=True, text=True, capture_output=True
    ).stdout.strip()
    (repo.path / ".git" / "scratch-index").unlink()
    return tree


EXPECTED = {
    "clean after one fix": (1, "clean"),
    "deadlock at the ceiling, blockers left": (
        2,
        "review not clean (no): loop open, 2 of 2 repair loop(s) used",
    ),
    "a fix that makes no progress": (2, "stop allowed: no progress since the last block"),
    "the hook crashes (torn state)": (1, "bounded-review stop hook could not decide"),
    "a report made stale by an edit after the review": (1, "clean"),
}


@pytest.mark.parametrize("path", PATHS)
def test_every_path_ends_within_the_ceiling_for_every_agent(tmp_path: Path, path: str) -> None:
    repo = project(tmp_path / "repo")
    outcome: Outcome = PATHS[path](repo, AGENTS)
    blocks, final = EXPECTED[path]
    assert outcome.blocks <= CEILING + 1
    assert (outcome.blocks, outcome.final[: len(final)]) == (blocks, final), outcome
    written = repo.path / ".bounded-review" / "report.json"
    report = json.loads(written.read_text()) if written.exists() else None
    passed = report is not None and (report["gate"]["review_clean"], report["target"]["revision"])
    # "clean" exactly when the gate passed this very tree
    assert (outcome.final == "clean") == (passed == ("yes", f"tree:{working_tree(repo)}"))
    if path == "deadlock at the ceiling, blockers left":
        assert "unresolved: app.py:1 a known bug is still there" in outcome.final
    if path == "a report made stale by an edit after the review":
        assert "the last report is of another tree" in outcome.instructions[0]
