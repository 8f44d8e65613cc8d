"""Blobs read by an object id and a path are read from git once per process; anything named
through a ref is read each time."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.target import git


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The git commands run from here on; the process's memory of blobs starts empty."""
    monkeypatch.setattr(git, "_KNOWN", {})
    seen: list[list[str]] = []
    real = git.run

    def counted(args: list[str], *rest: object, **kwargs: object) -> object:
        seen.append(list(args))
        return real(args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git, "run", counted)
    return seen


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
