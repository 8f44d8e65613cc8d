"""The stop hook and the review on a repository with a submodule or an embedded repository
whose own rules do not ignore ``__pycache__``: the bytecode the review's tests leave in it is
no uncommitted file there (``change/trees/byproducts.py``, the rule every snapshot applies), while a
real edit, a sourceless ``.pyc`` and an unchecked one still are. Run with bytecode written (as
agents' shells do) and not."""

from __future__ import annotations

from pathlib import Path

import pytest
from agenthooks import FIXED, hook, make_repo, review
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TEST = "from lib.app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
# PEP 552 header of a hash-based pyc that Python runs without checking its source.
UNCHECKED = b"\x00" * 4 + b"\x01\x00\x00\x00" + b"\x00" * 8


def library(path: Path) -> GitRepo:
    """A repository of its own whose rules ignore nothing (no ``.gitignore``)."""
    lib = GitRepo.init(path)
    lib.commit({"__init__.py": "", "app.py": FIXED}, "lib")
    return lib


def with_submodule(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "repo")
    lib = library(tmp_path / "lib")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.path), "lib")
    repo.commit({"test_lib.py": TEST}, "a submodule and its test")
    return repo


def with_embedded(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "repo")
    library(repo.path / "lib")  # untracked, with its own .git: no tree records it
    repo.commit({"test_lib.py": TEST}, "a test of the embedded repository")
    return repo


NESTED = {"submodule": with_submodule, "embedded": with_embedded}


@pytest.mark.parametrize("kind", NESTED)
def test_the_reviews_bytecode_in_a_nested_repository_is_no_edit_there(
    tmp_path: Path, kind: str, bytecode: bool
) -> None:
    repo = NESTED[kind](tmp_path)
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# a harmless comment\n")
    assert hook(repo, "claude").blocked  # not reviewed yet
    before = repo.user_state()
    report = review(repo)
    after = repo.user_state()
    assert after[1:] == before[1:]  # index, stash, refs
    # the status differs only by the bytecode plain pytest leaves in lib as well
    assert after[0].replace(" M lib", "").strip() == before[0].replace(" M lib", "").strip()
    assert report["gate"]["review_clean"] == "yes", report["gate"]
    left = list((repo.path / "lib" / "__pycache__").glob("app.*.pyc"))
    assert bool(left) == bytecode  # the review's tests left bytecode in lib (or not)
    said = hook(repo, "claude")
    assert not said.blocked, said.instruction
    assert said.message == ""


@pytest.mark.parametrize("kind", NESTED)
@pytest.mark.parametrize(
    "left",
    [
        pytest.param(("app.py", b"def add(a, b):\n    return a - b\n"), id="an edit"),
        pytest.param(("__pycache__/app.pyc", b"\x00" * 16), id="sourceless bytecode"),
        pytest.param(("__pycache__/app.cpython-311.pyc", UNCHECKED), id="unchecked bytecode"),
        pytest.param(("notes.txt", b"x\n"), id="an untracked file"),
    ],
)
def test_what_else_a_nested_repository_holds_is_still_uncommitted(
    tmp_path: Path, kind: str, left: tuple[str, bytes], bytecode: bool
) -> None:
    repo = NESTED[kind](tmp_path)
    repo.write("app.py", FIXED + "# a harmless comment\n")
    report = review(repo)
    assert report["gate"]["review_clean"] == "yes", report["gate"]
    name, content = left
    (repo.path / "lib" / name).parent.mkdir(exist_ok=True)
    (repo.path / "lib" / name).write_bytes(content)
    said = hook(repo, "claude")
    assert said.blocked
    assert "lib (" in said.instruction
    assert "with uncommitted files" in said.instruction
    if kind == "submodule":  # the review itself names it, and is not clean
        report = review(repo)
        assert report["gate"]["review_clean"] != "yes"
        assert any("lib (submodule" in reason for reason in report["gate"]["reasons"])
