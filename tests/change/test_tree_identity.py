"""The tree the session tested is the tree the report names: a staged or committed snapshot
that differs from the working tree the tests ran on is never passed, whatever hides the
difference (unstaged edits, untracked files, assume-unchanged or skip-worktree bits)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.change.trees import livetree

GOOD = "def f():\n    return 1\n"
BROKEN = "def f():\n    return 2\n"


@pytest.fixture
def sample(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "sample")
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n.pytest_cache/\n",
            "mod.py": GOOD,
            "test_mod.py": "from mod import f\n\n\ndef test_f():\n    assert f() == 1\n",
            "pyproject.toml": '[tool.bounded-review]\nbase = "main"\n',
        },
        "base",
    )
    repo.git("checkout", "-q", "-b", "feature")  # reviews and pushes are against main
    return repo


def review(repo: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    """A real session with the flag (no lanes), and the report it wrote."""
    options = ["--bounded-review", "--bounded-review-no-lanes", "-p", "no:randomly", *args]
    ran = warmstart.run(
        [sys.executable, "-m", "pytest", "-q", *options],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        check=False,
    )
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    return ran.returncode, report


def gate(repo: GitRepo, stage: str) -> int:
    command = [sys.executable, "-m", "pytest_boundedreview", "gate", "--stage", stage]
    return subprocess.run(command, cwd=repo.path, env=clean_env(), check=False).returncode


def held_by_tree(report: dict[str, Any], *paths: str) -> bool:
    reasons = " ".join(report["gate"]["reasons"])
    return report["gate"]["review_clean"] == "indeterminate" and all(
        "the tree tested is not the tree reviewed" in reasons and p in reasons for p in paths
    )


@pytest.mark.slow
def test_a_staged_regression_with_an_unstaged_fix_is_not_passed(sample: GitRepo) -> None:
    sample.write("mod.py", BROKEN)
    sample.git("add", "mod.py")
    sample.write("mod.py", GOOD)  # the tests see this; the commit would record BROKEN
    with sample.untouched():
        status, report = review(sample, "--bounded-review-target=staged")
    assert status == 1
    assert held_by_tree(report, "mod.py (changed on disk)")
    assert report["target"]["revision"] == f"tree:{sample.git('write-tree')}"
    assert report["statuses"]["committed"] == "no"
    assert gate(sample, "pre-commit") == 2


@pytest.mark.slow
def test_an_untracked_conftest_that_hides_a_failure_is_named(sample: GitRepo) -> None:
    """An untracked file the commit will not record changes what the tests see."""
    sample.write("mod.py", BROKEN)
    sample.git("add", "mod.py")
    hide = "import mod\nmod.f = lambda: 1\n"
    sample.write("conftest.py", hide)
    status, report = review(sample, "--bounded-review-target=staged")
    assert report["tests"]["failed"] == 0  # the conftest did its work
    assert status == 1
    assert held_by_tree(report, "conftest.py (not in the snapshot)")


@pytest.mark.slow
def test_a_pr_review_with_an_uncommitted_fix_does_not_pass_the_push(sample: GitRepo) -> None:
    sample.commit({"mod.py": BROKEN}, "regression")
    sample.write("mod.py", GOOD)
    status, report = review(sample, "--bounded-review-target=pr")
    assert status == 1
    assert held_by_tree(report, "mod.py")
    assert report["target"]["revision"] == f"tree:{sample.tree()}"
    assert report["statuses"]["committed"] == "no"
    assert gate(sample, "pre-push") == 2


@pytest.mark.slow
@pytest.mark.parametrize("index", ["as git writes it", "split"])
@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_index_bits_do_not_hide_an_uncommitted_fix(sample: GitRepo, bit: str, index: str) -> None:
    """auto reads the working tree by content: the hidden fix makes it a local diff, and
    HEAD's broken tree is never called committed or clean; also when the bit is kept in a
    split index's shared file."""
    sample.commit({"mod.py": BROKEN}, "regression")
    if index == "split":
        sample.age()  # the entry stays in the shared file, not written again in the main one
    sample.git("update-index", bit, "mod.py")
    if index == "split":
        sample.git("update-index", "--split-index")
        assert (sample.path / ".git" / "index").read_bytes()[8:12] == bytes(4)
    sample.write("mod.py", GOOD)
    assert sample.git("status", "--porcelain") == ""  # git itself no longer sees the fix
    with sample.untouched():
        status, report = review(sample)
    assert report["target"]["kind"] == "local-diff"
    assert report["target"]["revision"] != f"tree:{sample.tree()}"
    assert report["statuses"]["committed"] == "no"
    assert status == 0  # the working tree the tests ran on is what was reviewed, and it is fine
    assert gate(sample, "pre-push") == 2  # HEAD's tree was never reviewed
    flags = sample.git("ls-files", "-v", "mod.py")
    assert flags[0] in ("h", "S")  # the user's bit is still set


@pytest.mark.parametrize("sparse", [True, False])
def test_an_absent_skip_worktree_file_is_a_deletion_unless_sparse(
    sample: GitRepo, sparse: bool
) -> None:
    """A sparse checkout leaves files out on purpose; without one, a skip-worktree bit on a
    deleted file only hides that the tests did not run it."""
    sample.commit({"tests/test_more.py": "def test_more():\n    assert False\n"}, "more")
    if sparse:
        sample.git("config", "core.sparseCheckout", "true")
    sample.git("update-index", "--skip-worktree", "tests/test_more.py")
    (sample.path / "tests" / "test_more.py").unlink()
    assert sample.git("status", "--porcelain") == ""
    target = freeze(git.open_repo(sample.path), "pr", "HEAD~1")
    if sparse:
        assert (target.untested, target.committed) == ((), True)
    else:
        assert target.untested == ("tests/test_more.py (deleted on disk)",)
        assert not target.committed


def test_uncommitted_files_in_a_submodule_are_a_difference(sample: GitRepo, tmp_path: Path) -> None:
    library = GitRepo.init(tmp_path / "library")
    library.commit({"lib.py": "def one():\n    return 2\n"}, "broken")
    sample.git(
        "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "sub"
    )
    sample.git("commit", "-q", "-m", "submodule")
    handle = git.open_repo(sample.path)
    assert freeze(handle, "pr", "HEAD~1").untested == ()
    (sample.path / "sub" / "lib.py").write_text("def one():\n    return 1\n")
    assert sample.git("status", "--porcelain").endswith(" sub")
    target = freeze(handle, "pr", "HEAD~1")
    assert target.untested == ("sub (submodule with uncommitted files)",)
    assert not target.committed


def _pyc(flags: int) -> bytes:
    return importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + bytes(8)


@pytest.mark.parametrize(
    ("path", "flags", "differs"),
    [
        ("__pycache__/mod.cpython-311.pyc", 0, False),  # checked against its source
        ("__pycache__/mod.cpython-311.pyc", 0b11, False),  # checked hash
        ("__pycache__/mod.cpython-311.pyc", 0b01, True),  # unchecked hash: runs as it is
        ("helper.pyc", 0, True),  # imported without a source
        ("__pycache__/helper.pyc", 0, True),  # imported as __pycache__.helper
        ("__pycache__/deeper/mod.cpython-311.pyc", 0, True),  # not where Python writes
    ],
)
def test_only_bytecode_python_checks_is_not_a_difference(
    sample: GitRepo, path: str, flags: int, differs: bool
) -> None:
    sample.write(path, _pyc(flags))
    target = freeze(git.open_repo(sample.path), "pr", "HEAD")
    assert bool(target.untested) is differs


@pytest.mark.slow
def test_a_path_that_is_not_utf8_is_named_and_the_report_written(sample: GitRepo) -> None:
    sample.commit({"mod.py": GOOD + "# a comment\n"}, "harmless")
    (sample.path / os.fsdecode(b"\xff\xfe notes.txt")).write_text("x\n")
    status, report = review(sample, "--bounded-review-target=pr")
    assert status == 1
    assert held_by_tree(report, "\\xff\\xfe notes.txt (not in the snapshot)")


@pytest.mark.slow
def test_run_accepts_bytecode_a_project_does_not_ignore(sample: GitRepo) -> None:
    """The tests write bytecode during the run; it is no change to the reviewed tree."""
    sample.write("mod.py", GOOD + "# a comment\n")
    command = [sys.executable, "-m", "pytest_boundedreview", "run", "--no-lanes"]
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ran = subprocess.run(command, cwd=sample.path, env=env, capture_output=True)
    assert ran.returncode == 0, ran.stdout.decode() + ran.stderr.decode()
    assert list(sample.path.glob("__pycache__/*.pyc"))  # written during the run, not ignored


@pytest.mark.slow
def test_a_harmless_staged_change_with_a_matching_tree_is_clean(sample: GitRepo) -> None:
    sample.write("mod.py", GOOD + "# a comment\n")
    sample.git("add", "mod.py")
    # bytecode Python writes next to sources when a project does not ignore it is no code
    sample.write("__pycache__/mod.cpython-311.pyc", _pyc(0))
    with sample.untouched():
        status, report = review(sample, "--bounded-review-target=staged")
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert gate(sample, "pre-commit") == 0


@pytest.mark.slow
def test_committed_is_yes_only_for_the_tested_head_tree(sample: GitRepo) -> None:
    sample.commit({"mod.py": GOOD + "# a comment\n"}, "harmless")
    status, report = review(sample, "--bounded-review-target=pr")
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert report["statuses"]["committed"] == "yes"
    assert gate(sample, "pre-push") == 0


def test_differences_name_each_path_and_what_happened(sample: GitRepo) -> None:
    handle = git.open_repo(sample.path)
    reviewed = sample.tree()
    sample.write("mod.py", BROKEN)
    sample.write("new.py", "x = 1\n")
    sample.write("pkg/__pycache__/m.cpython-311.pyc", b"\0")
    (sample.path / "test_mod.py").unlink()
    live = freeze(handle, "local-diff").tree
    assert livetree.differences(handle, reviewed, live) == (
        "mod.py (changed on disk)",
        "new.py (not in the snapshot)",
        "test_mod.py (deleted on disk)",
    )
    assert livetree.differences(handle, reviewed, reviewed) == ()


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_modules_imported_from_ignored_files_are_named(sample: GitRepo, workers: list[str]) -> None:
    """Generated code is legitimate, and not in the reviewed tree: the report says so, with
    and without xdist (workers import the tests, not the controller)."""
    sample.commit(
        {
            ".gitignore": ".bounded-review/\n.pytest_cache/\n_generated.py\n",
            "test_gen.py": "import _generated\n\n\ndef test_gen():\n    assert _generated.X\n",
        },
        "generated",
    )
    sample.write("_generated.py", "X = 1\n")
    sample.write("mod.py", GOOD + "# a comment\n")
    status, report = review(sample, *workers)
    notes = [n for n in report["limitations"] if "files git ignores" in n]
    assert status == 0
    assert len(notes) == 1
    assert "_generated.py" in notes[0]
    assert "mod.py" not in notes[0]  # tracked code is reviewed code
