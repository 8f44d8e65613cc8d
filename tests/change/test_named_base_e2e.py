"""A named base is its merge base with HEAD for every target kind, on real sessions: a failure
``main`` fixed after the feature branched off stays pre-existing whether the branch is reviewed
as a local diff (an uncommitted edit), a staged tree or a pull request; a regression in the
uncommitted edit still blocks; and the header says which kind was chosen and why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

ADD = "def add(a, b):\n    return a + b\n"
BROKEN_ADD = "def add(a, b):\n    return a - b\n"
LEGACY = "def legacy():\n    return 2\n"  # wrong at the branch point
FIXED_LEGACY = "def legacy():\n    return 1\n"
TESTS = {
    "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "test_legacy.py": "from legacy import legacy\n\n\ndef test_legacy():\n"
    "    assert legacy() == 1\n",
}
CONFIG = "[tool.bounded-review]\nno_lanes = true\n"
OLD = "test_legacy.py::test_legacy"
NEW = "test_app.py::test_add"


@pytest.fixture
def branch(project: GitRepo) -> GitRepo:
    """``feature`` branched off ``main`` while ``test_legacy`` failed; ``main`` fixed it
    afterwards; the branch made a harmless commit."""
    files = {"pyproject.toml": CONFIG, "app.py": ADD, "legacy.py": LEGACY, **TESTS}
    project.commit(files, "base, with an old failure")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"notes.md": "a harmless commit\n"}, "feature work")
    project.git("checkout", "--quiet", "main")
    project.commit({"legacy.py": FIXED_LEGACY}, "main fixes the old failure")
    project.git("checkout", "--quiet", "feature")
    return project


def review(pytester: pytest.Pytester, repo: GitRepo, *args: str) -> tuple[int, dict[str, Any], str]:
    """A session; its exit status, its report and its terminal output. The user's tree,
    index, stash and refs are untouched."""
    with repo.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", *args)
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return int(result.ret), report, result.stdout.str()


def ids(report: dict[str, Any], key: str) -> list[str]:
    return [t["nodeid"] for t in report["tests"][key]]


def harmless_edit(repo: GitRepo, stage: bool) -> None:
    repo.write("app.py", ADD + "# a harmless uncommitted line\n")
    if stage:
        repo.git("add", "app.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "stage", "kind", "why"),
    [
        ([], False, "local-diff", "uncommitted changes: reviewing the working tree against"),
        (["--bounded-review-target=local-diff"], False, "local-diff", "local-diff as asked"),
        (["--bounded-review-target=staged"], True, "staged", "staged as asked: reviewing the "),
    ],
)
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_an_uncommitted_edit_does_not_move_a_named_base_to_its_tip(
    pytester: pytest.Pytester,
    branch: GitRepo,
    args: list[str],
    stage: bool,
    kind: str,
    why: str,
    xdist: list[str],
) -> None:
    """Before: the edit made the review a local diff against ``main``'s tip, where the old
    failure passes, so it was blamed on the change (a staged review ignored ``main``)."""
    harmless_edit(branch, stage)
    fork = branch.git("merge-base", "main", "HEAD")
    status, report, out = review(pytester, branch, "--bounded-review-base=main", *args, *xdist)
    assert (report["target"]["kind"], report["target"]["base"]) == (kind, "main")
    assert report["target"]["base_commit"] == fork  # the branch point, not main's tip
    assert ids(report, "pre_existing") == [OLD]
    assert ids(report, "target_related") == []
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert report["target"]["reason"].startswith(why)
    assert f"merge-base(main, HEAD) = {fork[:12]}" in report["target"]["reason"]
    assert f"target {kind} (base main)" in out
    assert report["target"]["reason"] in out


@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["--bounded-review-target=pr"]])
def test_a_committed_branch_is_reviewed_against_the_same_merge_base(
    pytester: pytest.Pytester, branch: GitRepo, args: list[str]
) -> None:
    """The control the local diff now agrees with: a clean tree is a pull request."""
    status, report, out = review(pytester, branch, "--bounded-review-base=main", *args)
    assert report["target"]["kind"] == "pr"
    assert report["target"]["base_commit"] == branch.git("merge-base", "main", "HEAD")
    assert ids(report, "pre_existing") == [OLD]
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    said = "pr as asked" if args else "no uncommitted changes"
    assert report["target"]["reason"].startswith(f"{said}: reviewing the commits since ")
    assert report["target"]["reason"] in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "stage"),
    [
        ([], False),
        (["--bounded-review-target=local-diff"], False),
        (["--bounded-review-target=staged"], True),
    ],
)
def test_a_regression_in_the_uncommitted_edit_still_blocks(
    pytester: pytest.Pytester, branch: GitRepo, args: list[str], stage: bool
) -> None:
    branch.write("app.py", BROKEN_ADD)
    if stage:
        branch.git("add", "app.py")
    status, report, _ = review(pytester, branch, "--bounded-review-base=main", *args)
    assert ids(report, "target_related") == [NEW]
    assert ids(report, "pre_existing") == [OLD]
    assert (status, report["gate"]["review_clean"]) == (1, "no")


@pytest.mark.slow
def test_a_regression_committed_on_the_branch_blocks_a_staged_review_against_main(
    pytester: pytest.Pytester, branch: GitRepo
) -> None:
    """A staged review with a named base reviews the branch's commits too, as a local diff
    does (before: it was reviewed against HEAD, the committed regression pre-existing)."""
    branch.commit({"app.py": BROKEN_ADD}, "a regression on the branch")
    branch.write("notes.md", "a harmless staged edit\n")
    branch.git("add", "notes.md")
    status, report, _ = review(
        pytester, branch, "--bounded-review-base=main", "--bounded-review-target=staged"
    )
    assert ids(report, "target_related") == [NEW]
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    # with no base named, a staged review is of what the commit adds: against HEAD
    status, report, _ = review(pytester, branch, "--bounded-review-target=staged")
    assert report["target"]["base_commit"] == branch.git("rev-parse", "HEAD")
    assert sorted(ids(report, "pre_existing")) == [NEW, OLD]
    assert report["target"]["reason"] == "staged as asked: reviewing the staged tree against HEAD"
    assert (status, report["gate"]["review_clean"]) == (0, "yes")


@pytest.mark.slow
def test_with_no_base_named_an_uncommitted_edit_is_reviewed_against_head(
    pytester: pytest.Pytester, branch: GitRepo
) -> None:
    harmless_edit(branch, stage=False)
    status, report, out = review(pytester, branch)
    assert report["target"]["base"] == "HEAD"
    assert report["target"]["reason"] == (
        "uncommitted changes: reviewing the working tree against HEAD"
    )
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert report["target"]["reason"] in out


def test_a_base_with_no_history_in_common_is_an_error_naming_the_fix(
    pytester: pytest.Pytester, branch: GitRepo
) -> None:
    """Never the base's tip instead: unrelated histories have no merge base."""
    branch.git("checkout", "--quiet", "--orphan", "other")
    branch.git("commit", "--quiet", "-m", "unrelated")
    branch.git("checkout", "--quiet", "feature")
    harmless_edit(branch, stage=False)
    with branch.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=other")
    assert result.ret == 4
    err = result.stderr.str()
    assert "'other'" in err
    assert "no common ancestor" in err
    assert "name a base this branch grew from" in err


def test_a_shallow_clone_without_the_branch_point_names_the_fix(
    pytester: pytest.Pytester, branch: GitRepo, tmp_path: Path
) -> None:
    clone = tmp_path / "shallow"
    url = f"file://{branch.path}"
    GitRepo(tmp_path).git("clone", "--quiet", "--depth=1", "--no-single-branch", url, str(clone))
    shallow = GitRepo(clone)
    shallow.git("checkout", "--quiet", "feature")
    shallow.write("app.py", ADD + "# edit\n")
    with shallow.untouched():
        result = warmstart.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--bounded-review",
                "--bounded-review-base=origin/main",
            ],
            cwd=clone,
            env=clean_env(),
            capture_output=True,
            text=True,
            check=False,
        )
    assert result.returncode == 4
    err = result.stderr
    for fix in ("shallow clone", "git fetch --deepen", "git fetch --unshallow"):
        assert fix in err
