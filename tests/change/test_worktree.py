"""Base checkouts: always removed, leftovers of dead runs swept, live ones and others kept."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.checkouts import worktree


@pytest.fixture
def two_commits(repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    tempfile.tempdir = None  # let tempfile see the new TMPDIR
    repo.commit({"app.py": "x = 'head'\n"}, "head")
    return repo


@pytest.fixture(autouse=True)
def _reset_tempdir() -> object:
    yield
    tempfile.tempdir = None


def listed(repo: GitRepo) -> list[str]:
    return [
        ln
        for ln in repo.git("worktree", "list", "--porcelain").splitlines()
        if ln.startswith("worktree ")
    ]


def test_checkout_holds_the_base_and_is_removed(two_commits: GitRepo) -> None:
    handle = git.open_repo(two_commits.path)
    with two_commits.untouched():
        with worktree.checkout(handle, two_commits.git("rev-parse", "HEAD~1")) as path:
            assert (path / "app.py").read_text() == "x = 1\ny = 2\n"
            assert not path.is_relative_to(two_commits.path)
            assert len(listed(two_commits)) == 2
        assert not path.exists()
        assert not path.parent.exists()
    assert len(listed(two_commits)) == 1


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_removed_on_exception_and_interrupt(
    two_commits: GitRepo, error: type[BaseException]
) -> None:
    handle = git.open_repo(two_commits.path)
    with pytest.raises(error), worktree.checkout(handle, "HEAD~1") as path:
        raise error
    assert not path.exists()
    assert len(listed(two_commits)) == 1


def test_concurrent_checkouts_do_not_collide(two_commits: GitRepo) -> None:
    handle = git.open_repo(two_commits.path)
    with worktree.checkout(handle, "HEAD~1") as one, worktree.checkout(handle, "HEAD") as two:
        assert one != two
        assert (one / "app.py").read_text() != (two / "app.py").read_text()
    assert len(listed(two_commits)) == 1


LEAVE = """
import os, sys, time
from pathlib import Path
from pytest_boundedreview.change import git
from pytest_boundedreview.change.checkouts import worktree
with worktree.checkout(git.open_repo(Path(sys.argv[1])), "HEAD~1") as path:
    print(path, flush=True)
    if sys.argv[2] == "die":
        os._exit(0)  # like SIGKILL: no cleanup runs
    time.sleep(60)
"""


def test_sweep_removes_only_dead_runs_leftovers(two_commits: GitRepo, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    live = subprocess.Popen(
        [sys.executable, "-c", LEAVE, str(two_commits.path), "live"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert live.stdout is not None
        live_path = Path(live.stdout.readline().strip())
        dead = subprocess.run(
            [sys.executable, "-c", LEAVE, str(two_commits.path), "die"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        dead_path = Path(dead.stdout.strip())
        mine = tmp_path / "user-worktree"
        two_commits.git("worktree", "add", "--quiet", "--detach", str(mine), "HEAD")
        assert dead_path.exists()
        assert len(listed(two_commits)) == 4
        removed = worktree.sweep(git.open_repo(two_commits.path))
        assert removed == [dead_path]
        assert not dead_path.parent.exists()
        assert live_path.exists()
        assert mine.exists()
        assert len(listed(two_commits)) == 3  # main, the live run's, the user's
    finally:
        live.kill()
        live.communicate()


def test_a_large_checkout_is_unregistered_at_once_and_removed_after(
    two_commits: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_boundedreview.change.checkouts import discard

    monkeypatch.setattr(discard, "DETACH_ENTRIES", 1)  # this one counts as large
    go = two_commits.path.parent / "go"  # the remover starts deleting once this exists
    waits = f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
    monkeypatch.setattr(discard, "_REMOVER", waits + discard._REMOVER)
    handle = git.open_repo(two_commits.path)
    with two_commits.untouched():
        with worktree.checkout(handle, "HEAD~1") as path:
            assert discard.entries(worktree.admin_dir(path) or path) == 2
            admin = worktree.admin_dir(path)
        assert (path / "app.py").exists()  # not removed in place: left to the remover
        assert len(listed(two_commits)) == 1  # but git forgot it before the session went on
        assert admin is not None
        assert not admin.exists()
        assert two_commits.git("worktree", "prune", "--dry-run", "--verbose") == ""
        go.touch()
        deadline = time.monotonic() + 60
        while path.parent.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not path.parent.exists()  # the detached remover took the folder


def test_a_small_checkout_is_removed_in_place(two_commits: GitRepo) -> None:
    from pytest_boundedreview.change.checkouts import discard

    handle = git.open_repo(two_commits.path)
    with worktree.checkout(handle, "HEAD~1") as path:
        assert not discard.later(path.parent, worktree.admin_dir(path))  # 2 files: small
    assert not path.parent.exists()  # gone when the block ended, not later
