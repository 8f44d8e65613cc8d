"""The review's own byproducts are no part of the tree, end to end: in a repository that ignores
nothing, with bytecode written as a user's shell writes it, a clean change reviewed is let go by
the agent's stop hook and its report names no bytecode; bytecode that can run code the reviewed
source does not hold stays in the tree, so a change cannot hide code there, serially and under
xdist."""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from agenthooks import BROKEN, FIXED, hook
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

WORKERS = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
TEST = "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def bytecode_env() -> dict[str, str]:
    """A user's shell: Python writes bytecode next to the sources."""
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@pytest.fixture
def bare(tmp_path: Path) -> GitRepo:
    return make_bare(tmp_path / "bare")


def make_bare(path: Path) -> GitRepo:
    """A project with no ``.gitignore`` at all, a feature branch checked out."""
    project = GitRepo.init(path)
    config = '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\n'
    project.commit({"pyproject.toml": config, "app.py": FIXED, "test_app.py": TEST}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


def pytest_run(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return warmstart.run(
        [sys.executable, "-m", "pytest", "-q", *args],
        cwd=repo.path,
        env=bytecode_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def review(repo: GitRepo, workers: list[str]) -> dict[str, Any]:
    """The review the stop hook asks for, as the agent's shell runs it; its report."""
    done = pytest_run(repo, "--bounded-review", *workers)
    path = repo.path / ".bounded-review" / "report.json"
    assert path.exists(), done.stdout + done.stderr
    report = json.loads(path.read_text())
    assert isinstance(report, dict)
    return report


def untracked(repo: GitRepo) -> list[str]:
    listed = repo.git("ls-files", "--others", "--exclude-standard", "-z")
    return sorted(name for name in listed.split("\0") if name)


def compiled(source: str, at: Path, mode: py_compile.PycInvalidationMode) -> bytes:
    """``source`` compiled as Python writes it for a file at ``at``."""
    at.parent.mkdir(parents=True, exist_ok=True)
    scratch = at.with_suffix(".src")
    scratch.write_text(source)
    try:
        target = at.with_suffix(".tmp")
        py_compile.compile(str(scratch), str(target), doraise=True, invalidation_mode=mode)
        return target.read_bytes()
    finally:
        scratch.unlink()
        target.unlink(missing_ok=True)


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("before", [True, False], ids=["tests-ran-before", "review-writes-it"])
def test_a_clean_change_in_a_project_that_ignores_nothing_is_let_go(
    bare: GitRepo, workers: list[str], before: bool
) -> None:
    hook(bare, "claude", kind="start")
    bare.write("app.py", FIXED + "# the sum of two numbers\n")
    if before:  # the agent ran the tests itself: bytecode is there before the review
        assert pytest_run(bare).returncode == 0
        assert any("__pycache__/" in name for name in untracked(bare))
    held = hook(bare, "claude")
    assert held.blocked  # a change no review has seen
    with bare.untouched():
        report = review(bare, workers)
    assert report["gate"]["review_clean"] == "yes", report["gate"]
    assert report["target"]["files"] == ["app.py"]
    assert any("__pycache__/" in name for name in untracked(bare))  # Python wrote bytecode
    assert ".pytest_cache/" not in " ".join(untracked(bare))  # pytest's cache ignores itself
    said = hook(bare, "claude")
    assert not said.blocked, said
    assert said.message == ""


@pytest.mark.parametrize("workers", WORKERS)
def test_a_review_leaves_in_the_tree_what_plain_pytest_leaves(
    tmp_path: Path, workers: list[str]
) -> None:
    """Outside its state folder, a review writes nothing plain pytest would not: the bytecode
    of the modules the tests import, and pytest's cache folder."""
    left = {}
    for flag in ([], ["--bounded-review"]):
        project = make_bare(tmp_path / ("review" if flag else "plain"))
        project.write("app.py", FIXED + "# the sum of two numbers\n")
        ran = pytest_run(project, *flag, *workers)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        files = project.git("ls-files", "--others", "-z").split("\0")  # ignored ones too
        left[bool(flag)] = {name for name in files if name and not name.startswith(".bounded")}
    assert left[True] == left[False]
    assert any(name.startswith("__pycache__/") for name in left[True])


@pytest.mark.parametrize("workers", WORKERS)
def test_bytecode_that_runs_unchecked_is_part_of_the_change(
    bare: GitRepo, workers: list[str]
) -> None:
    """A broken function hidden behind bytecode Python does not check against its source: the
    reviewed source is the fix, the tests pass, and the bytecode named in the reviewed files;
    dropped in after a clean review, it is another tree, and the hook holds the agent."""
    hook(bare, "claude", kind="start")
    bare.write("app.py", FIXED + "# the sum of two numbers\n")
    assert review(bare, workers)["gate"]["review_clean"] == "yes"
    assert not hook(bare, "claude").blocked
    # the next turn hides a regression in the module's bytecode
    hook(bare, "claude", session="s2", kind="start")
    pyc = bare.path / "__pycache__" / f"app.{sys.implementation.cache_tag}.pyc"
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    bare.write(f"__pycache__/{pyc.name}", compiled(BROKEN, pyc, unchecked))
    ran = pytest_run(bare)
    assert ran.returncode == 1, ran.stdout  # the tests run the hidden code, not app.py
    said = hook(bare, "claude", session="s2")
    assert said.blocked
    assert "the last report is of another tree" in said.instruction
    report = review(bare, workers)
    assert f"__pycache__/{pyc.name}" in report["target"]["files"]
    assert report["gate"]["review_clean"] != "yes"


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("helper.pyc", "a module without a source, imported as helper"),
        ("__pycache__/helper.pyc", "a module without a source, imported as __pycache__.helper"),
    ],
)
def test_bytecode_imported_without_a_source_stays_in_the_tree(
    bare: GitRepo, name: str, where: str
) -> None:
    """Bytecode a name can import holds code no source shows: it is reviewed, whatever its
    header says and wherever it lies."""
    module = name.removesuffix(".pyc").replace("/", ".")
    checked = py_compile.PycInvalidationMode.TIMESTAMP
    bare.write(name, compiled("def add(a, b):\n    return a - b\n", bare.path / name, checked))
    bare.write("app.py", f"from {module} import add  # {where}\n")
    hook(bare, "claude", kind="start")
    report = review(bare, [])
    assert name in report["target"]["files"]
    assert report["gate"]["review_clean"] != "yes"  # the test ran the hidden code


def test_a_turn_that_only_ran_the_tests_has_nothing_to_review(bare: GitRepo) -> None:
    """The bytecode the agent's test run writes is no change: nothing to review, no block."""
    hook(bare, "claude", kind="start")
    assert pytest_run(bare).returncode == 0
    assert any("__pycache__/" in name for name in untracked(bare))
    said = hook(bare, "claude")
    assert not said.blocked, said
    assert said.message == ""
