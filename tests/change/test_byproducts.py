"""Which files running the tests leaves are no part of a working-tree snapshot: untracked
bytecode Python writes for a source and checks against it, and nothing else."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import tree_via_temp_index
from pytest_boundedreview.change.trees.byproducts import bytecode

TAG = "cpython-311"


def pyc(flags: int) -> bytes:
    return importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + bytes(8)


@pytest.mark.parametrize(
    ("path", "content", "left_out"),
    [
        (f"__pycache__/mod.{TAG}.pyc", pyc(0), True),  # checked by its source's time and size
        (f"pkg/__pycache__/mod.{TAG}.opt-1.pyc", pyc(0b11), True),  # checked hash
        (f"__pycache__/test_mod.{TAG}-pytest-9.2.0.pyc", pyc(0), True),  # pytest's rewrite
        (f"__pycache__/mod.{TAG}.pyc", b"\0", True),  # torn: Python compiles the source again
        (f"__pycache__/mod.{TAG}.pyc", pyc(0b01), False),  # unchecked hash: runs as it is
        (f"__pycache__/mod.{TAG}.pyc", pyc(0b101), False),  # flags Python refuses: kept
        ("helper.pyc", pyc(0), False),  # imported as `helper`, without a source
        ("__pycache__/helper.pyc", pyc(0), False),  # imported as `__pycache__.helper`
        (f"__pycache__/deeper/mod.{TAG}.pyc", pyc(0), False),  # Python writes no such folder
        (f"__pycache__/mod.{TAG}.py", b"x = 1\n", False),  # source, not bytecode
        (f"not__pycache__/mod.{TAG}.pyc", pyc(0), False),
    ],
)
def test_bytecode_python_checks_against_its_source(
    tmp_path: Path, path: str, content: bytes, left_out: bool
) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(content)
    assert bytecode(tmp_path, path) is left_out


def test_bytecode_gone_runs_nothing(tmp_path: Path) -> None:
    assert bytecode(tmp_path, f"__pycache__/mod.{TAG}.pyc")


@pytest.mark.parametrize("kind", ["link", "fifo", "folder"])
def test_what_python_did_not_write_is_kept_and_never_waited_on(tmp_path: Path, kind: str) -> None:
    """A link (to a pipe, say), a pipe or a folder by a bytecode file's name is kept, and its
    header is read without waiting for a writer."""
    folder = tmp_path / "__pycache__"
    folder.mkdir()
    path = folder / f"mod.{TAG}.pyc"
    if kind == "link":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    assert not bytecode(tmp_path, f"__pycache__/{path.name}")


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    repo.commit({"mod.py": "x = 1\n", f"old/__pycache__/kept.{TAG}.pyc": pyc(0)}, "base")
    return repo


def snapshot(repo: GitRepo) -> set[str]:
    tree = tree_via_temp_index(git.open_repo(repo.path), add_all=True)
    return set(repo.git("ls-tree", "-r", "--name-only", "-z", tree).split("\0")) - {""}


def test_the_snapshot_leaves_out_untracked_bytecode_only(project: GitRepo) -> None:
    project.write(f"__pycache__/mod.{TAG}.pyc", pyc(0))
    project.write(f"pkg/__pycache__/mod.{TAG}.pyc", pyc(0b11))
    project.write(f"pkg/__pycache__/hidden.{TAG}.pyc", pyc(0b01))
    project.write("__pycache__/helper.pyc", pyc(0))
    project.write("helper.pyc", pyc(0))
    project.write(f"old/__pycache__/kept.{TAG}.pyc", pyc(0b11))  # tracked, and changed
    with project.untouched():
        files = snapshot(project)
    assert files == {
        "mod.py",
        f"old/__pycache__/kept.{TAG}.pyc",
        f"pkg/__pycache__/hidden.{TAG}.pyc",
        "__pycache__/helper.pyc",
        "helper.pyc",
    }
    tracked = project.git("rev-parse", f"{project.tree()}:old/__pycache__/kept.{TAG}.pyc")
    tree = tree_via_temp_index(git.open_repo(project.path), add_all=True)
    assert project.git("rev-parse", f"{tree}:old/__pycache__/kept.{TAG}.pyc") != tracked


def test_bytecode_staged_by_hand_is_the_change(project: GitRepo) -> None:
    project.write(f"__pycache__/mod.{TAG}.pyc", pyc(0))
    project.git("add", "--force", f"__pycache__/mod.{TAG}.pyc")
    assert f"__pycache__/mod.{TAG}.pyc" in snapshot(project)


def test_a_deleted_tracked_bytecode_file_is_a_deletion(project: GitRepo) -> None:
    (project.path / "old" / "__pycache__" / f"kept.{TAG}.pyc").unlink()
    assert snapshot(project) == {"mod.py"}


@pytest.mark.parametrize("index", ["split", "none"])
def test_an_index_read_only_by_git_is_asked(project: GitRepo, index: str) -> None:
    """A split index is not read from its bytes (indexfile.py): git says what it tracks; a
    repository with no index yet tracks nothing."""
    if index == "split":
        project.git("update-index", "--split-index")
    else:
        (project.path / ".git" / "index").unlink()
    project.write(f"__pycache__/mod.{TAG}.pyc", pyc(0))
    project.write(f"old/__pycache__/kept.{TAG}.pyc", pyc(0b11))
    expected = {"mod.py"} if index == "none" else {"mod.py", f"old/__pycache__/kept.{TAG}.pyc"}
    assert snapshot(project) == expected
