"""A recorded loop is consulted even when no lane can run now: without lanes, a run that skips
the lanes machinery must not skip a ledger that may hold blockers or a stop."""

from __future__ import annotations

import json

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)


def _change(project: GitRepo) -> None:
    project.commit({"test_a.py": "def test_a():\n    pass\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": "def test_a():\n    pass\n# touched\n"}, "change")


def test_without_lanes_or_loops_the_gate_is_deterministic(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    _change(project)
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes", result.stdout.str()
    assert any("no reviewer lanes ran" in line for line in report["limitations"])
    assert not (pytester.path / ".bounded-review" / "loops").exists()


def test_an_unusable_ledger_keeps_the_gate_open_without_lanes(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    _change(project)
    folder = pytester.path / ".bounded-review" / "loops" / "pr-main-feature"
    folder.mkdir(parents=True)
    (pytester.path / ".bounded-review" / ".gitignore").write_text("*\n")  # as the tool writes it
    (folder / "state.json").write_text("{not json")
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] != "yes", result.stdout.str()
    assert any("loop state cannot be used" in r for r in report["gate"]["reasons"]), report["gate"]
    assert (folder / "state.json").read_text() == "{not json"  # never overwritten
