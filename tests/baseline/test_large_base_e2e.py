"""A base checkout of a large repository: every test at the base sees the base's files (data
files in any folder, touched or not, a package's data read through ``importlib.resources``, a
conftest in a far folder; a file the change deleted is there, one it added is not), and the
checkout leaves nothing registered in the repository once the session has ended (its files go
after the session, see ``change/checkouts/discard.py``). Real sessions, serial and under
``-n 2``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change.checkouts import discard

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

INERT = discard.DETACH_ENTRIES + 100  # enough tracked files for a large checkout

PACKAGE = """\
from importlib.resources import files

NAME = (files(__name__) / "name.txt").read_text()
"""
CONFTEST = """\
from pathlib import Path

import pytest


@pytest.fixture
def far_value():
    return (Path(__file__).parent / "value.txt").read_text()
"""
TESTS = """\
from pathlib import Path

import pkg

ROOT = Path(__file__).parent


def test_modified_data():
    assert (ROOT / "data" / "values.txt").read_text() == "base\\n"


def test_deleted_data():
    assert (ROOT / "far" / "deleted.txt").exists()


def test_added_data():
    assert not (ROOT / "far" / "added.txt").exists()


def test_package_data():
    assert pkg.NAME == "base\\n"


def test_untouched_deep_data():
    assert (ROOT / "assets" / "d03" / "f001742.txt").read_text() == "something else\\n"
"""
FAR_TEST = """\
def test_far_conftest(far_value):
    assert far_value == "base\\n"
"""
# At head each of these fails; at the base each passes, but only where the base's files are.
TARGET_RELATED = {
    "test_data.py::test_modified_data",
    "test_data.py::test_deleted_data",
    "test_data.py::test_added_data",
    "test_data.py::test_package_data",
    "far/sub/test_far.py::test_far_conftest",
}
# Fails the same way at the base and at head, only if the base holds that untouched file.
PRE_EXISTING = {"test_data.py::test_untouched_deep_data"}


@pytest.fixture(scope="module")
def large_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The large repository, made once for the module: its thousands of files are written and
    committed once, not once per test (each test reviews a copy of its own)."""
    repo = GitRepo.init(tmp_path_factory.mktemp("large") / "repo")
    files: dict[str, str | bytes] = {
        ".gitignore": "__pycache__/\n.pytest_cache/\n",
        "pkg/__init__.py": PACKAGE,
        "pkg/name.txt": "base\n",
        "data/values.txt": "base\n",
        "far/deleted.txt": "here\n",
        "far/sub/conftest.py": CONFTEST,
        "far/sub/value.txt": "base\n",
        "far/sub/test_far.py": FAR_TEST,
        "test_data.py": TESTS,
    }
    files |= {f"assets/d{n // 500:02d}/f{n:06d}.txt": f"inert {n}\n" for n in range(INERT)}
    repo.commit(files, "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    (repo.path / "far" / "deleted.txt").unlink()
    repo.commit(
        {
            "pkg/name.txt": "head\n",
            "data/values.txt": "head\n",
            "far/added.txt": "new\n",
            "far/sub/value.txt": "head\n",
        },
        "change",
    )
    return repo.path


@pytest.fixture
def large(large_template: Path, tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """A copy of the large repository on ``feature``, with a temporary folder of its own."""
    copy = partial(_link_inert, large_template)
    repo = GitRepo(shutil.copytree(large_template, tmp_path / "repo", copy_function=copy))
    repo.age()  # the copy's stat data is new: the index told so, before any review reads it
    assert repo.git("status", "--porcelain") == ""
    assert repo.git("rev-list", "--count", "main..feature") == "1"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return repo, clean_env({"TMPDIR": str(scratch)})


def _link_inert(template: Path, source: str, destination: str) -> None:
    """Copy a file of the template, but hard-link what nothing ever writes (the thousands of
    inert files and git's objects, which git replaces rather than rewrites): writing them is
    most of what making a large repository costs."""
    top = Path(source).relative_to(template).parts[:2]
    if top[:1] == ("assets",) or top == (".git", "objects"):
        os.link(source, destination)
    else:
        shutil.copy2(source, destination)


def review(repo: GitRepo, env: dict[str, str], *extra: str) -> dict[str, object]:
    argv = [sys.executable, "-m", "pytest", "-q", *extra]
    argv += ["--bounded-review", "--bounded-review-base=main"]
    subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, check=False)
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert isinstance(report, dict)
    return report


def nodeids(report: dict[str, object], kind: str) -> set[str]:
    tests = report["tests"]
    assert isinstance(tests, dict)
    return {t["nodeid"] for t in tests[kind]}


def gone_soon(folder: Path) -> bool:
    """Whether nothing of ours is left in ``folder`` within a minute (the detached remover)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not [p for p in folder.iterdir() if p.name.startswith("bounded-review-")]:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_base_sees_its_own_files_in_a_large_checkout(
    large: tuple[GitRepo, dict[str, str]], workers: list[str]
) -> None:
    repo, env = large
    with repo.untouched():
        report = review(repo, env, *workers)
    assert nodeids(report, "target_related") == TARGET_RELATED
    assert nodeids(report, "pre_existing") == PRE_EXISTING
    assert nodeids(report, "unknown") == set()
    assert report["gate"]["review_clean"] == "no"  # type: ignore[index]
    # The checkout is registered no more once the session has ended; its files go after.
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert not list((repo.path / ".git" / "worktrees").glob("*"))
    assert gone_soon(Path(env["TMPDIR"]))


def test_a_harmless_change_to_a_large_repository_is_clean(
    large: tuple[GitRepo, dict[str, str]],
) -> None:
    """The control: a README line on the base, whose one failure is pre-existing."""
    repo, env = large
    repo.git("checkout", "--quiet", "-b", "harmless", "main")
    repo.commit({"README.md": "docs\n"}, "docs")
    with repo.untouched():
        report = review(repo, env)
    assert nodeids(report, "pre_existing") == PRE_EXISTING
    assert nodeids(report, "target_related") == set()
    assert report["gate"]["review_clean"] == "yes"  # type: ignore[index]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert gone_soon(Path(env["TMPDIR"]))


def test_bytecode_written_too(large: tuple[GitRepo, dict[str, str]]) -> None:
    """As users run it: Python writes bytecode, at head and in the base checkout."""
    repo, env = large
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with repo.untouched():
        report = review(repo, env)
    assert nodeids(report, "target_related") == TARGET_RELATED
    assert nodeids(report, "pre_existing") == PRE_EXISTING
    assert gone_soon(Path(env["TMPDIR"]))
