"""Blobs read by an object id and a path are read from git once per process; anything named
through a ref is read each time."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import PYTESTER_IGNORES, GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.core.errors import NotARepositoryError


def test_a_blob_at_a_commit_is_read_once_and_a_ref_every_time(
    tmp_path: Path, calls: list[list[str]]
) -> None:
    project = GitRepo.init(tmp_path / "r")
    first = project.commit({"pyproject.toml": "one\n"}, "one")
    repo = git.open_repo(project.path)
    calls.clear()
    name = f"{first}:pyproject.toml"
    assert git.read_objects(repo.root, [name, f"{first}:absent"]) == {
        name: b"one\n",
        f"{first}:absent": None,
    }
    assert repo.show(first, "pyproject.toml") == "one\n"
    assert repo.show(first, "absent") is None
    assert git.read_objects(repo.root, [name]) == {name: b"one\n"}
    assert len(calls) == 1  # the first batch alone

    project.commit({"pyproject.toml": "two\n"}, "two")
    assert repo.show("HEAD", "pyproject.toml") == "two\n"  # a ref: read again
    assert repo.show(first, "pyproject.toml") == "one\n"
    assert len(calls) == 2


def test_the_repository_and_its_head_are_asked_in_one_process(
    tmp_path: Path, calls: list[list[str]]
) -> None:
    project = GitRepo.init(tmp_path / "r")
    commit = project.commit({"a.txt": "a\n"}, "one")
    (project.path / "sub").mkdir()
    calls.clear()
    repo, head = git.open_at_head(project.path / "sub")
    assert len(calls) == 1
    assert head == (commit, project.tree())
    assert repo == git.open_repo(project.path)


def test_an_unborn_branch_opens_with_no_head_and_a_folder_outside_refuses(
    tmp_path: Path, calls: list[list[str]]
) -> None:
    project = GitRepo.init(tmp_path / "r")
    repo, head = git.open_at_head(project.path)
    assert head is None
    assert repo == git.open_repo(project.path)
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(NotARepositoryError, match="not inside a git work tree"):
        git.open_at_head(outside)


def test_a_session_reads_the_base_configuration_and_the_waivers_files_in_one_batch(
    pytester: pytest.Pytester, calls: list[list[str]]
) -> None:
    project = GitRepo.init(pytester.path)
    project.write(".gitignore", PYTESTER_IGNORES + ".bounded-review/\n")
    project.commit(
        {
            "pyproject.toml": '[tool.bounded-review]\nrisk = "standard"\n',
            "bounded-review-waivers.toml": "",
            "test_one.py": "def test_one():\n    pass\n",
        },
        "base",
    )
    project.git("checkout", "-q", "-b", "feature")
    project.commit({"test_one.py": "def test_one():\n    assert True\n"}, "change")
    calls.clear()

    result = pytester.inline_run("--bounded-review", "--bounded-review-base=main")

    assert result.ret == 0
    reads = [args[args.index("cat-file") :] for args in calls if "cat-file" in args]
    assert reads, "the session read no blob"
    assert all(read[1] == "--batch" for read in reads), reads  # no blob read on its own
    # the first batch: the base's configuration, and the waivers file in the snapshot and
    # at the base; then what the scans read
    assert len(reads) == 2


def test_names_the_batch_cannot_carry_as_they_are_are_read_on_their_own(
    tmp_path: Path, calls: list[list[str]]
) -> None:
    project = GitRepo.init(tmp_path / "r")
    commit = project.commit({"w.toml": "w = 1\n"}, "one")
    repo = git.open_repo(project.path)
    calls.clear()
    names = [f"{commit}:w.toml", f"{commit}:w.toml\r", f"{commit}:x blob", f"{commit}:x 1 2"]
    assert git.read_objects(repo.root, names) == {
        f"{commit}:w.toml": b"w = 1\n",
        f"{commit}:w.toml\r": None,  # no such file: the batch would read w.toml
        f"{commit}:x blob": None,  # "<name> missing", not a blob's size
        f"{commit}:x 1 2": None,
    }
    assert [args[-1] for args in calls if "blob" in args] == [f"{commit}:w.toml\r"]


@pytest.mark.slow
@pytest.mark.parametrize("files", [60, 800], ids=["request in the pipe", "request streamed"])
def test_a_batch_read_later_holds_every_blob_whatever_its_size(
    tmp_path: Path, calls: list[list[str]], files: int
) -> None:
    """A batch's request is handed to git when it starts if the pipe holds it whole, else as
    its answer is read; either way an answer far larger than a pipe comes back whole."""
    project = GitRepo.init(tmp_path / "r")
    body = {f"file{i:04d}.txt": f"{i}\n" * 3000 for i in range(files)}
    commit = project.commit(body, "many")
    names = [f"{commit}:{name}" for name in body]
    request = sum(len(name) + 1 for name in names)
    assert (request <= git._PIPE_BUF) == (files == 60)
    calls.clear()
    batch = git.Batch(project.path, names)
    project.commit({"file0000.txt": "changed\n"}, "later")  # the names hold the first commit
    found = batch.result()
    assert len(calls) == 1
    assert found == {f"{commit}:{name}": text.encode() for name, text in body.items()}
