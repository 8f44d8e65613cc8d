"""A review whose git directory is read-only (Codex's ``workspace-write`` sandbox makes it so)
stops before its first write, naming the folder and the ``writable_roots`` entry that allows
it; the user's tree, index, stash, refs and checkouts stay as they were. ``.git`` is made really
read-only: inside the real Codex sandbox where ``codex`` is on PATH, else by a read-only bind
mount in a user namespace (``unshare -rm``); a run as root is not stopped by file modes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from agentclis.realclis import agent_cli
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change import git, gitwritable
from pytest_boundedreview.core.errors import UsageError

GOOD = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
REVIEW = ["-m", "pytest", "-q", "--bounded-review", "--bounded-review-no-lanes"]
REVIEW += ["-p", "no:randomly"]
# Bind .git read-only over itself, then run the command (the repository is "$1").
RO_MOUNT = (
    'mount --bind "$1/.git" "$1/.git" && mount -o remount,bind,ro "$1/.git" && shift && exec "$@"'
)


@pytest.fixture
def calc(tmp_path: Path) -> GitRepo:
    """A change on a feature branch."""
    repo = GitRepo.init(tmp_path / "calc")
    ignored = ".bounded-review/\n.pytest_cache/\n__pycache__/\n"
    repo.commit({"calc.py": GOOD, "test_calc.py": TEST, ".gitignore": ignored})
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("calc.py", GOOD + "\n\ndef sub(a, b):\n    return a - b\n")
    return repo


def _codex(repo: GitRepo, tmp_path: Path) -> list[str]:
    codex = agent_cli("codex")  # the Codex pinned in tests/agentclis
    assert codex is not None
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return [codex, "sandbox", "-P", ":workspace", "-C", str(repo.path), "--"]


def _unshare(repo: GitRepo, tmp_path: Path) -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare is not on PATH")
    return [unshare, "-rm", "sh", "-c", RO_MOUNT, "sh", str(repo.path)]


def _read_only(
    make: Callable[[GitRepo, Path], list[str]], repo: GitRepo, tmp_path: Path
) -> tuple[list[str], dict[str, str]]:
    """The argv prefix that runs a command with ``.git`` read-only, and its environment;
    skipped where neither can make it so here."""
    prefix = make(repo, tmp_path)
    home = tmp_path / "home"
    env = clean_env({"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the agents' shells write bytecode
    probe = [*prefix, "sh", "-c", f"touch '{repo.path}/.git/probe'"]
    done = subprocess.run(probe, cwd=repo.path, env=env, capture_output=True, check=False)
    if done.returncode == 0 or b"Read-only file system" not in done.stderr:
        (repo.path / ".git" / "probe").unlink(missing_ok=True)
        pytest.skip(f"cannot make .git read-only here: {done.stderr.decode()[-300:]!r}")
    return prefix, env


@pytest.mark.slow
@pytest.mark.parametrize("make", [_codex, _unshare], ids=["codex-sandbox", "unshare"])
def test_a_read_only_git_directory_stops_the_review_with_what_to_allow(
    calc: GitRepo, tmp_path: Path, make: Callable[[GitRepo, Path], list[str]]
) -> None:
    prefix, env = _read_only(make, calc, tmp_path)
    checkouts = calc.git("worktree", "list", "--porcelain")
    with calc.untouched():
        done = subprocess.run(
            [*prefix, sys.executable, *REVIEW],
            cwd=calc.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    shown = done.stdout + done.stderr
    assert done.returncode == 4, shown
    assert f"({calc.path.resolve()}/.git/objects is read-only)" in shown, shown
    assert 'writable_roots = ["../.git"]' in shown, shown
    assert f"{calc.path.resolve()}/.codex/config.toml" in shown, shown
    assert "Nothing was reviewed" in shown, shown
    assert not (calc.path / ".bounded-review" / "report.json").exists()
    assert calc.git("worktree", "list", "--porcelain") == checkouts


@pytest.mark.slow
def test_a_writable_git_directory_is_reviewed(calc: GitRepo) -> None:
    """The harmless control: the same change, the same review, ``.git`` writable."""
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with calc.untouched():
        done = subprocess.run(
            [sys.executable, *REVIEW], cwd=calc.path, env=env, capture_output=True, check=False
        )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    report = json.loads((calc.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes", report["gate"]


def test_the_check_names_the_first_unwritable_folder(
    calc: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An injected read-only folder, for machines that cannot make one: each folder the review
    writes into is asked, and the message names it."""
    repo = git.open_repo(calc.path)
    assert gitwritable.unwritable(repo) is None
    gitwritable.require_writable(repo)
    real = os.access
    for folder in (repo.common_dir / "objects", repo.common_dir):
        monkeypatch.setattr(os, "access", lambda p, m, f=folder: Path(p) != f and real(p, m))
        assert gitwritable.unwritable(repo) == folder
        with pytest.raises(UsageError, match=r'writable_roots = \["\.\./\.git"\]'):
            gitwritable.require_writable(repo)


def test_a_linked_checkout_names_the_shared_git_directory(calc: GitRepo, tmp_path: Path) -> None:
    """In a linked checkout ``.git`` is a file: the folder to allow is the shared one, by its
    absolute path."""
    calc.git("commit", "-qam", "sub")
    linked = tmp_path / "linked"
    calc.git("worktree", "add", "-q", str(linked), "main")
    repo = git.open_repo(linked)
    assert gitwritable.codex_roots(repo) == str((calc.path / ".git").resolve())
    assert gitwritable.codex_roots(git.open_repo(calc.path)) == "../.git"
