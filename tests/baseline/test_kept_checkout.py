"""``reuse_base_checkout``: base checkouts kept in the user's cache folder between runs, reset
before each use, never used for another commit, swept when the setting goes off."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import CALC, TESTS, ids, review

from pytest_boundedreview.change import git
from pytest_boundedreview.change.checkouts import kept

ON = "[tool.bounded-review]\nreuse_base_checkout = true\n"
OFF = "[tool.bounded-review]\nreuse_base_checkout = false\n"


@pytest.fixture
def user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache folder, outside the repository."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # so there is bytecode to keep
    return folder


@pytest.fixture
def broken(project: GitRepo, user_cache: Path) -> GitRepo:
    """``feature`` breaks ``add`` and turns the setting on; ``test_legacy`` fails at base."""
    project.commit({"calc.py": CALC, "test_calc.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"calc.py": CALC.replace("a + b", "a - b"), "pyproject.toml": ON}, "break")
    return project


def home(repo: GitRepo) -> Path:
    return kept.folder(git.open_repo(repo.path))


def checkouts(repo: GitRepo) -> list[Path]:
    """The kept checkouts, by name."""
    folder = home(repo)
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.exists() else []


def registered(repo: GitRepo) -> list[str]:
    """Every linked checkout ``git worktree list`` knows, the main one left out."""
    lines = repo.git("worktree", "list", "--porcelain").splitlines()
    paths = [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]
    return paths[1:]


def forget_base_results(repo: GitRepo) -> None:
    """Drop the cached base results, so the next run needs the base checkout again."""
    shutil.rmtree(repo.path / ".bounded-review" / "cache", ignore_errors=True)


def assert_classified(pytester: pytest.Pytester) -> None:
    result, report = review(pytester)
    assert result.ret == 1
    assert ids(report, "target_related") == ["test_calc.py::test_add"]
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert ids(report, "unknown") == []


@pytest.mark.slow
def test_a_kept_checkout_is_reset_and_cleaned_before_reuse(
    pytester: pytest.Pytester, broken: GitRepo
) -> None:
    base = broken.git("rev-parse", "main")
    with broken.untouched():
        assert_classified(pytester)
    [path] = checkouts(broken)
    assert path.name == base
    assert registered(broken) == [str(path)]
    assert list(path.rglob("__pycache__")), "the base re-run left its bytecode to reuse"
    # What a previous run (or anyone) left there must not reach the next run: a tracked file
    # changed so the pre-existing failure would pass, an untracked conftest that breaks the
    # run, a file the changed .gitignore ignores. A marker in __pycache__ shows that folder is kept.
    (path / "calc.py").write_text(CALC.replace("int(x)", "round(x)"))
    (path / "conftest.py").write_text("raise RuntimeError('left behind')\n")
    (path / ".gitignore").write_text("*.log\n")
    (path / "build.log").write_text("old\n")  # ignored
    (path / "__pycache__").mkdir(exist_ok=True)
    (path / "__pycache__" / "marker").write_text("kept\n")
    inode = path.stat().st_ino
    forget_base_results(broken)

    with broken.untouched():
        assert_classified(pytester)
    assert checkouts(broken) == [path]
    assert path.stat().st_ino == inode, "reused, not made anew"
    assert (path / "calc.py").read_text() == CALC
    assert not (path / "conftest.py").exists()
    assert (path / ".gitignore").read_text() == (broken.path / ".gitignore").read_text()
    assert not (path / "build.log").exists()
    assert (path / "__pycache__" / "marker").read_text() == "kept\n"
    assert registered(broken) == [str(path)]


def test_a_kept_checkout_serves_its_own_commit_only(broken: GitRepo) -> None:
    repo = git.open_repo(broken.path)
    first = broken.git("rev-parse", "main")
    with kept.checkout(repo, first) as path:
        assert path.name == first
        # Moved to another commit by someone: the next use brings it back.
        GitRepo(path).git("checkout", "--quiet", "--detach", "feature")
    with kept.checkout(repo, first) as again:
        assert again == path
        assert GitRepo(path).git("rev-parse", "HEAD") == first
        assert GitRepo(path).git("status", "--porcelain", "--untracked-files=all") == ""


def test_a_branch_switched_to_in_a_kept_checkout_is_never_moved(broken: GitRepo) -> None:
    repo = git.open_repo(broken.path)
    base = broken.git("rev-parse", "main")
    broken.git("branch", "mywork", "feature")
    work = broken.git("rev-parse", "mywork")
    with kept.checkout(repo, base) as path:
        GitRepo(path).git("switch", "--quiet", "mywork")  # someone works there
    with kept.checkout(repo, base):
        assert GitRepo(path).git("rev-parse", "HEAD") == base
        assert GitRepo(path).git("symbolic-ref", "--quiet", "HEAD", check=False) == ""
    assert broken.git("rev-parse", "mywork") == work


def test_a_folder_left_only_for_its_bytecode_goes(broken: GitRepo) -> None:
    """``__pycache__`` folders are kept for reuse, but not a folder the commit lacks that
    holds nothing else: it would import as a namespace package."""
    repo = git.open_repo(broken.path)
    base = broken.git("rev-parse", "main")
    with kept.checkout(repo, base) as path:
        (path / "generated" / "__pycache__").mkdir(parents=True)
        (path / "generated" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")
        (path / "__pycache__").mkdir(exist_ok=True)
        (path / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"y")
    with kept.checkout(repo, base):
        assert not (path / "generated").exists()
        assert (path / "__pycache__" / "calc.cpython-311.pyc").read_bytes() == b"y"


def test_without_a_home_folder_a_temporary_checkout_is_used(
    broken: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git.open_repo(broken.path)
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", no_home)
    assert kept.cache_root() is None
    assert kept.sweep(repo, keep=False) == []
    with kept.checkout(repo, broken.git("rev-parse", "main")) as path:
        assert (path / "calc.py").read_text() == CALC
        assert path.parent.name.startswith("bounded-review-base-")
    assert not path.exists()


def test_at_most_a_few_commits_are_kept_most_recent_first(broken: GitRepo) -> None:
    repo = git.open_repo(broken.path)
    commits = [broken.commit({f"f{i}.txt": f"{i}\n"}, f"commit {i}") for i in range(kept.KEEP + 1)]
    for commit in commits:
        with kept.checkout(repo, commit) as path:
            assert path.name == commit
    names = [p.name for p in checkouts(broken)]
    assert sorted(names) == sorted(commits[1:])
    assert len(registered(broken)) == kept.KEEP
    assert str(home(broken) / commits[0]) not in registered(broken)


@pytest.mark.slow
def test_a_run_finding_the_kept_checkouts_in_use_takes_a_temporary_one(
    pytester: pytest.Pytester, broken: GitRepo
) -> None:
    assert_classified(pytester)
    [path] = checkouts(broken)
    (path / "calc.py").write_text("changed by the run holding the lock\n")
    forget_base_results(broken)
    fd = os.open(home(broken) / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds them
        with broken.untouched():
            assert_classified(pytester)
    finally:
        os.close(fd)
    assert (path / "calc.py").read_text() == "changed by the run holding the lock\n"
    assert registered(broken) == [str(path)], "the temporary checkout was removed"


@pytest.mark.slow
def test_turning_the_setting_off_removes_the_kept_checkouts(
    pytester: pytest.Pytester, broken: GitRepo
) -> None:
    assert_classified(pytester)
    assert len(checkouts(broken)) == 1
    broken.commit({"pyproject.toml": OFF}, "setting off")
    forget_base_results(broken)
    with broken.untouched():
        assert_classified(pytester)
    assert checkouts(broken) == []
    assert registered(broken) == []


@pytest.mark.slow
def test_a_cleared_cache_leaves_no_registration_behind(
    pytester: pytest.Pytester, broken: GitRepo, user_cache: Path
) -> None:
    assert_classified(pytester)
    shutil.rmtree(user_cache / "bounded-review")
    forget_base_results(broken)
    assert_classified(pytester)
    [path] = checkouts(broken)
    assert registered(broken) == [str(path)]
    shutil.rmtree(user_cache / "bounded-review")
    broken.commit({"pyproject.toml": OFF}, "setting off")
    assert_classified(pytester)
    assert registered(broken) == []


@pytest.mark.slow
def test_a_check_failing_at_head_runs_at_the_base_in_the_kept_checkout(
    pytester: pytest.Pytester, project: GitRepo, user_cache: Path
) -> None:
    # a check that fails everywhere and leaves a stamp of the folder it ran in
    check = (
        "import os, pathlib, sys; "
        f"pathlib.Path({str(user_cache / 'ran-in')!r}).open('a').write(os.getcwd() + '\\n'); "
        "sys.exit(1)"
    )
    config = ON + (
        '[[tool.bounded-review.checks]]\nname = "always"\n'
        f'command = [{json.dumps(sys.executable)}, "-c", {json.dumps(check)}]\n'
    )
    passing = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    project.commit({"calc.py": CALC, "test_calc.py": passing}, "base")  # no base re-run
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"pyproject.toml": config, "README.md": "notes\n"}, "a harmless change")
    base = project.git("rev-parse", "main")
    with project.untouched():
        review(pytester)
    [path] = checkouts(project)
    assert path.name == base
    ran_in = (user_cache / "ran-in").read_text().splitlines()
    assert ran_in[1:] == [str(path)]  # head first, then the base in the kept checkout
    forget_base_results(project)
    inode = path.stat().st_ino
    with project.untouched():
        review(pytester)
    assert (user_cache / "ran-in").read_text().splitlines()[3:] == [str(path)]
    assert path.stat().st_ino == inode, "reused, not made anew"


@pytest.mark.slow
def test_a_check_runs_in_the_kept_checkout_the_base_re_run_used(
    pytester: pytest.Pytester, broken: GitRepo, user_cache: Path
) -> None:
    # The base re-run (started during the session) holds the kept checkout while the tests
    # are classified; the check's base run comes after, in that same checkout, cleaned.
    check = (
        "import os, pathlib, sys; "
        f"pathlib.Path({str(user_cache / 'ran-in')!r}).open('a').write(os.getcwd() + '\\n'); "
        "sys.exit(1)"
    )
    config = ON + (
        '[[tool.bounded-review.checks]]\nname = "always"\n'
        f'command = [{json.dumps(sys.executable)}, "-c", {json.dumps(check)}]\n'
    )
    broken.commit({"pyproject.toml": config}, "a check")
    with broken.untouched():
        assert_classified(pytester)
    [path] = checkouts(broken)
    ran_in = (user_cache / "ran-in").read_text().splitlines()
    assert ran_in[1:] == [str(path)], "the check ran at the base in the kept checkout"
    assert registered(broken) == [str(path)], "no temporary checkout was left behind"
