"""`bounded-review gate` and the `bounded-review-gate` hook: a clean report must exist for
exactly the tree being committed or pushed — with the real `pre-commit` package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.cli.gate import check
from pytest_boundedreview.target import git

ROOT = Path(__file__).resolve().parent.parent


def review(repo: GitRepo, *args: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--bounded-review", *args],
        cwd=repo.path,
        env=env,
        capture_output=True,
        check=False,
    )
    return ran.returncode


@pytest.fixture
def sample(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "sample")
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n__pycache__/\n",
            "test_a.py": "def test_a():\n    assert 1\n",
        },
        "base",
    )
    repo.commit({"app.py": "x = 1\n"}, "change")
    return repo


def test_the_gate_answers_for_exactly_one_snapshot(sample: GitRepo) -> None:
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    status, why = check(handle, report, "pre-push", {})
    assert (status, "no readable report" in why) == (2, True)
    assert review(sample, "--bounded-review-target=local-diff", "--bounded-review-base=HEAD~1") == 0
    assert check(handle, report, "pre-push", {})[0] == 0
    assert check(handle, report, "auto", {"PRE_COMMIT_TO_REF": "HEAD"})[0] == 0
    # a first push names the remote but no refs: still a push, still HEAD's tree
    assert check(handle, report, "auto", {"PRE_COMMIT_REMOTE_NAME": "origin"})[0] == 0
    # pushing another commit than HEAD: its tree, which this report did not review
    assert check(handle, report, "auto", {"PRE_COMMIT_TO_REF": "HEAD~1"})[0] == 2
    assert check(handle, report, "pre-commit", {})[0] == 0  # nothing staged: the same tree
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "not this pre-commit snapshot" in why
    assert review(sample, "--bounded-review-target=staged") == 0
    with sample.untouched():
        assert check(handle, report, "pre-commit", {})[0] == 0
    document = json.loads(report.read_text())
    document["gate"] = {"review_clean": "no", "reasons": ["x"]}
    report.write_text(json.dumps(document))
    assert check(handle, report, "pre-commit", {})[0] == 1


def test_the_pre_commit_hook_blocks_until_a_clean_review_of_the_pushed_tree(
    sample: GitRepo, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pre_commit",
                "try-repo",
                str(ROOT),
                "bounded-review-gate",
                "--hook-stage",
                "pre-push",
                "--all-files",
            ],
            cwd=sample.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    blocked = hook()
    assert blocked.returncode != 0, blocked.stdout
    assert "no readable report" in blocked.stdout
    assert review(sample, "--bounded-review-target=local-diff", "--bounded-review-base=HEAD~1") == 0
    passed = hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    sample.commit({"app.py": "x = 3\n"}, "edit")
    again = hook()
    assert again.returncode != 0
    assert "run pytest --bounded-review again" in again.stdout
