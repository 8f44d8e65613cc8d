"""``change/outputs.py``: which output paths the tool may write, case by case, on a real
repository (the end-to-end runs are in ``test_outputs_e2e.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.outputs import check_outputs, problem
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import Settings


@pytest.fixture
def handle(repo: GitRepo) -> git.Repo:
    (repo.path / "sub").mkdir()
    (repo.path / "empty.json").write_bytes(b"")
    (repo.path / "own.md").write_text("<!-- bounded-review -->\n## bounded review: yes\n")
    (repo.path / "folder").mkdir()
    os.mkfifo(repo.path / "pipe")
    (repo.path / "vendored" / ".git").mkdir(parents=True)
    (repo.path / "link.json").symlink_to(repo.path / "README.md")
    return git.open_repo(repo.path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("new.json", None),
        ("sub/../new.json", None),  # '..' that stays inside
        ("new/deeper/r.sarif", None),
        ("empty.json", None),  # nothing to lose
        ("own.md", None),  # the tool's own earlier output
        (".bounded-review/report.json", None),
        ("README.md", "is a file git tracks (README.md)"),
        ("readme.MD", "is a file git tracks (README.md)"),
        ("App.py", "is a file git tracks (app.py)"),
        ("../elsewhere.json", "is outside the repository's working tree"),
        (".", "is the repository root"),
        (".git/config", "is inside .git"),
        ("vendored/.git/hooks/pre-commit", "is inside a .git folder"),
        ("folder", "is an existing folder"),
        ("pipe", "is an existing device, pipe or socket"),
        ("link.json", "is a symbolic link"),
    ],
)
def test_which_paths_the_tool_may_write(
    handle: git.Repo, monkeypatch: pytest.MonkeyPatch, path: str, why: str | None
) -> None:
    monkeypatch.chdir(handle.root)
    found = problem(handle, Path(path), handle.root / ".bounded-review")
    assert (found or "").startswith(why or "") if why else found is None


def test_a_file_with_another_tools_content_is_not_replaced(handle: git.Repo) -> None:
    mine = handle.root / "notes.json"
    mine.write_text('{"schema": "someone-else"}\n')
    found = problem(handle, mine, handle.root / ".bounded-review")
    assert found is not None
    assert "is an existing file the tool did not write" in found


def test_git_is_asked_where_the_index_cannot_be_read_here(
    handle: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pytest_boundedreview.change.outputs.tracked", lambda index: None)
    state = handle.root / ".bounded-review"
    assert problem(handle, handle.root / "APP.PY", state) == (
        "is a file git tracks (app.py), which the tool never overwrites"
    )
    assert problem(handle, handle.root / "new.json", state) is None


def test_the_error_names_the_key_its_option_and_the_fix(handle: git.Repo) -> None:
    settings = Settings(markdown=str(handle.root / "app.py"))
    with pytest.raises(ConfigError) as info:
        check_outputs(handle, settings, handle.root / ".bounded-review")
    message = str(info.value)
    assert message.startswith(f"markdown (--bounded-review-markdown) '{handle.root / 'app.py'}'")
    assert "leave the key unset" in message
