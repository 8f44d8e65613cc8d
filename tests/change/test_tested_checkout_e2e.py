"""The tested tree is the reviewed tree, end to end: `bounded-review run --target staged` (the
pre-commit entry) and `--target pr` test the snapshot in a checkout of their own when the working
tree differs from it (unstaged edits, untracked files), so a harmless commit is let through with
scratch files about and a staged regression is refused whatever the working tree holds; the
user's tree, index and stash stay as they were; `pytest --bounded-review` in such a tree decides
before running any test and names the command that works. Serially and under xdist, with
bytecode written and not."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

ROOT = Path(__file__).resolve().parents[2]
GOOD = "def f():\n    return 1\n"
BAD = "def f():\n    return 2\n"
TEST = "from app import f\n\n\ndef test_f():\n    assert f() == 1\n"
WORKERS = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
BYTECODE = [pytest.param(True, id="no-bytecode"), pytest.param(False, id="bytecode")]
# A conftest that would make every test pass: where it is not staged, it is not tested.
PASS_ALL = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
    "def pytest_runtest_call(item):\n    item.runtest = lambda: None\n"
)


def env_for(no_bytecode: bool = True, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = clean_env(extra)
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    repo.commit(
        {".gitignore": ".bounded-review/\n__pycache__/\n", "app.py": GOOD, "test_app.py": TEST},
        "base",
    )
    return repo


def run(repo: GitRepo, *argv: str, no_bytecode: bool = True) -> subprocess.CompletedProcess[str]:
    """``bounded-review ARGV`` in ``repo``, as a user's shell runs it."""
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", *argv],
        cwd=repo.path,
        env=env_for(no_bytecode),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def report(repo: GitRepo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    return data


def target_related(data: dict[str, Any]) -> list[str]:
    return [t["nodeid"] for t in data["tests"]["target_related"]]


def no_checkouts_left(repo: GitRepo) -> None:
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("no_bytecode", BYTECODE)
def test_a_harmless_staged_change_passes_with_scratch_files_and_unstaged_edits(
    project: GitRepo, workers: list[str], no_bytecode: bool
) -> None:
    project.write("app.py", GOOD + "\n\ndef g():\n    return 2\n")
    project.git("add", "app.py")
    project.write("notes.txt", "scratch\n")  # untracked, not ignored
    project.write("test_app.py", TEST + "\n# work in progress\n")  # unstaged
    with project.untouched():
        done = run(
            project,
            "run",
            "--target",
            "staged",
            "--no-lanes",
            "--",
            *workers,
            no_bytecode=no_bytecode,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "testing the snapshot in a checkout of its own" in done.stderr
    data = report(project)
    assert data["target"]["kind"] == "staged"
    assert data["gate"]["review_clean"] == "yes"
    staged = project.git("write-tree")
    assert data["target"]["revision"] == f"tree:{staged}"
    assert data["target"]["files"] == ["app.py"]  # repository-relative, as in the user's tree
    assert not list((project.path / ".bounded-review").glob("../.pytest_cache"))
    no_checkouts_left(project)


@pytest.mark.parametrize("workers", WORKERS)
def test_a_staged_regression_is_refused_though_the_working_tree_holds_the_fix(
    project: GitRepo, workers: list[str]
) -> None:
    project.write("app.py", BAD)
    project.git("add", "app.py")
    project.write("app.py", GOOD)  # the fix, unstaged: not what the commit records
    with project.untouched():
        done = run(project, "run", "--target", "staged", "--no-lanes", "--", *workers)
    assert done.returncode == 1, done.stdout + done.stderr
    data = report(project)
    assert data["gate"]["review_clean"] == "no"
    assert target_related(data) == ["test_app.py::test_f"]
    no_checkouts_left(project)


def test_an_untracked_conftest_is_not_in_the_tested_tree(project: GitRepo) -> None:
    project.write("app.py", BAD)
    project.git("add", "app.py")
    project.write("conftest.py", PASS_ALL)  # untracked: would pass every test
    with project.untouched():
        done = run(project, "run", "--target", "staged", "--no-lanes")
    assert done.returncode == 1, done.stdout + done.stderr
    assert target_related(report(project)) == ["test_app.py::test_f"]


def test_a_staged_import_of_an_untracked_file_fails_at_the_staged_tree(project: GitRepo) -> None:
    project.write("app.py", "from helper import ONE\n\n\ndef f():\n    return ONE\n")
    project.git("add", "app.py")
    project.write("helper.py", "ONE = 1\n")  # never staged: the commit would lack it
    with project.untouched():
        done = run(project, "run", "--target", "staged", "--no-lanes")
    assert done.returncode == 1, done.stdout + done.stderr
    data = report(project)
    assert data["gate"]["review_clean"] == "no"
    assert target_related(data) == ["test_app.py"]  # fails to collect: helper is missing


def test_the_working_tree_on_pythonpath_is_the_checkout_s(project: GitRepo) -> None:
    """An environment that imports the project from the working tree (PYTHONPATH, as an
    editable install's path entry does) imports the checkout's code instead."""
    (project.path / "src").mkdir()
    project.git("mv", "app.py", "src/app.py")
    project.commit(message="src layout")
    project.write("src/app.py", BAD)
    project.git("add", "src/app.py")
    project.write("src/app.py", GOOD)  # the working tree's own, unstaged
    env = env_for(extra={"PYTHONPATH": str(project.path / "src")})
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "run", "--target", "staged", "--no-lanes"],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert target_related(report(project)) == ["test_app.py::test_f"]


def test_a_test_running_the_working_tree_s_file_by_path_is_not_clean(project: GitRepo) -> None:
    """What bypasses imports (runpy of an absolute path) and runs the working tree's code is
    noticed: the session did not test the snapshot alone."""
    live = project.path / "app.py"
    test = (
        f"import runpy\n\n\ndef test_f():\n    assert runpy.run_path({str(live)!r})['f']() == 1\n"
    )
    project.write("test_app.py", test)
    project.git("add", "test_app.py")
    project.write("notes.txt", "scratch\n")
    done = run(project, "run", "--target", "staged", "--no-lanes")
    assert done.returncode == 2, done.stdout + done.stderr
    data = report(project)
    assert data["gate"]["review_clean"] == "indeterminate"
    assert any("ran code from the working tree" in r for r in data["gate"]["reasons"])


def test_a_pr_review_with_a_dirty_tree_tests_head(project: GitRepo) -> None:
    project.commit({"app.py": BAD}, "regression")
    project.write("app.py", GOOD)  # the fix, uncommitted
    project.write("notes.txt", "scratch\n")
    with project.untouched():
        done = run(project, "run", "--target", "pr", "--base", "HEAD~1", "--no-lanes")
    assert done.returncode == 1, done.stdout + done.stderr
    data = report(project)
    assert data["target"]["revision"] == f"tree:{project.tree()}"
    assert target_related(data) == ["test_app.py::test_f"]
    project.commit({"app.py": GOOD}, "fixed")
    project.write("app.py", BAD)  # a regression, uncommitted: not in HEAD
    with project.untouched():
        done = run(project, "run", "--target", "pr", "--base", "HEAD~2", "--no-lanes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report(project)["gate"]["review_clean"] == "yes"


ARGV = ["--bounded-review", "--bounded-review-target=staged", "--bounded-review-no-lanes"]
MARKS_ITS_RUN = "from pathlib import Path\n\n\ndef test_marks():\n    Path({!r}).touch()\n"


@pytest.mark.parametrize("workers", WORKERS)
def test_pytest_in_a_differing_tree_decides_before_any_test_and_names_the_command(
    project: GitRepo, workers: list[str], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    project.write("test_marks.py", MARKS_ITS_RUN.format(str(marker)))
    project.git("add", "test_marks.py")
    project.write("notes.txt", "scratch\n")
    with project.untouched():
        done = warmstart.run(
            [sys.executable, "-m", "pytest", "-q", *ARGV, *workers],
            cwd=project.path,
            env=env_for(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert not marker.exists()  # no test ran
    data = report(project)
    assert data["gate"]["review_clean"] == "indeterminate"
    reason = data["gate"]["reasons"][0]
    assert "notes.txt (not in the snapshot)" in reason
    command = reason.split("run `", 1)[1].split("`", 1)[0]
    expected = ["bounded-review", "run", "--target", "staged", "--no-lanes", "--", "-q", *workers]
    assert shlex.split(command) == expected
    assert data["next_action"].endswith(f"; then re-run {command}")
    with project.untouched():  # the command named works
        done = run(project, *shlex.split(command)[1:])
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.exists()


def test_pytest_in_a_clean_tree_runs_as_before(project: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    project.write("test_marks.py", MARKS_ITS_RUN.format(str(marker)))
    project.git("add", "test_marks.py")
    done = warmstart.run(
        [sys.executable, "-m", "pytest", "-q", *ARGV],
        cwd=project.path,
        env=env_for(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.exists()
    assert "checkout" not in done.stdout


@pytest.fixture
def with_shim(project: GitRepo) -> GitRepo:
    hook = project.path / ".git" / "hooks" / "pre-commit"
    hook.write_bytes((ROOT / "hooks" / "pre-commit").read_bytes())
    os.chmod(hook, 0o755)
    return project


def commit(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_for(extra={"BOUNDED_REVIEW_PYTHON": sys.executable})
    return subprocess.run(
        ["git", "commit", "-m", "change", *args],
        cwd=repo.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("how", [["-a"], ["app.py"]], ids=["commit-a", "commit-paths"])
def test_a_commit_from_a_hook_reviews_what_it_records(with_shim: GitRepo, how: list[str]) -> None:
    head = with_shim.git("rev-parse", "HEAD")
    with_shim.write("notes.txt", "scratch\n")
    with_shim.write("app.py", BAD)  # not staged: `commit -a` / `commit app.py` records it
    refused = commit(with_shim, *how)
    assert refused.returncode != 0, refused.stdout
    assert with_shim.git("rev-parse", "HEAD") == head
    assert target_related(report(with_shim)) == ["test_app.py::test_f"]
    with_shim.write("app.py", GOOD + "\n\ndef g():\n    return 2\n")
    done = commit(with_shim, *how)
    assert done.returncode == 0, done.stdout
    assert with_shim.git("rev-parse", "HEAD~1") == head
    assert report(with_shim)["target"]["revision"] == f"tree:{with_shim.tree()}"
    assert with_shim.git("status", "--porcelain") == "?? notes.txt"
    no_checkouts_left(with_shim)
