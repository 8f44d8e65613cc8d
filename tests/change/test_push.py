"""What a push carries: git's pre-push lines parsed strictly, and each pushed ref's tree and
range base worked out in a real repository with a real remote."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.push import PushedRef, from_pre_commit, parse, ranges
from pytest_boundedreview.core.errors import GitError, UsageError

A, B = "a" * 40, "b" * 40
ZERO = "0" * 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        (
            f"refs/heads/main {A} refs/heads/main {B}\n",
            [PushedRef("refs/heads/main", A, "refs/heads/main", B)],
        ),
        (
            f"refs/heads/new {A} refs/heads/new {ZERO}\n\n",
            [PushedRef("refs/heads/new", A, "refs/heads/new", None)],
        ),
        (  # a deletion: git sends "(delete)" and zeros
            f"(delete) {ZERO} refs/heads/old {B}\n",
            [PushedRef("(delete)", ZERO, "refs/heads/old", B)],
        ),
        (  # SHA-256 repositories
            f"HEAD {'c' * 64} refs/heads/x {'0' * 64}",
            [PushedRef("HEAD", "c" * 64, "refs/heads/x", None)],
        ),
    ],
)
def test_git_pre_push_lines(text: str, expected: list[PushedRef]) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "line",
    [
        f"refs/heads/main {A} refs/heads/main",  # a field missing
        f"refs/heads/main {A} refs/heads/main HEAD",  # a name where a commit id belongs
        f"refs/heads/main {A.upper()} refs/heads/main {B}",
        f"refs/heads/main {A}0 refs/heads/main {B}",
    ],
)
def test_anything_else_is_refused_with_the_line(line: str) -> None:
    with pytest.raises(UsageError, match="is not a git pre-push line"):
        parse(line)


@pytest.fixture
def pushed(tmp_path: Path) -> tuple[GitRepo, git.Repo]:
    """A repository whose ``main`` is on its remote ``origin``, plus one local commit."""
    remote = GitRepo.init(tmp_path / "remote.git")
    remote.git("config", "receive.denyCurrentBranch", "ignore")
    repo = GitRepo.init(tmp_path / "work")
    repo.commit({"a.txt": "1\n"}, "base")
    repo.git("remote", "add", "origin", str(remote.path))
    repo.git("push", "--quiet", "origin", "main")
    repo.commit({"a.txt": "2\n"}, "local")
    return repo, git.open_repo(repo.path)


def _never() -> tuple[str, str]:
    raise AssertionError("the configured base was asked for a ref the remote has")


def test_an_existing_remote_ref_is_based_where_the_remote_is(
    pushed: tuple[GitRepo, git.Repo],
) -> None:
    repo, handle = pushed
    head, remote_main = repo.git("rev-parse", "HEAD"), repo.git("rev-parse", "origin/main")
    line = PushedRef("refs/heads/main", head, "refs/heads/main", remote_main)
    (found,) = ranges(handle, [line], "origin", _never)
    assert (found.tree, found.base, found.base_name) == (repo.tree(), remote_main, "origin/main")
    # to a URL (no remote-tracking ref): the commit names the base
    (found,) = ranges(handle, [line], str(repo.path), _never)
    assert found.base_name == remote_main
    # the remote already holds it, or the push deletes: nothing to review
    already = PushedRef("refs/heads/main", remote_main, "refs/heads/main", head)
    deleted = PushedRef("(delete)", ZERO, "refs/heads/main", remote_main)
    assert ranges(handle, [already, deleted], "origin", _never) == []


def test_a_new_ref_is_based_on_the_configured_base(pushed: tuple[GitRepo, git.Repo]) -> None:
    repo, handle = pushed
    head, remote_main = repo.git("rev-parse", "HEAD"), repo.git("rev-parse", "origin/main")
    asked = []

    def configured() -> tuple[str, str]:
        asked.append(True)
        return "origin/main", remote_main

    line = PushedRef("refs/heads/feature", head, "refs/heads/feature", None)
    (found,) = ranges(handle, [line], "origin", configured)
    assert (found.base, found.base_name, asked) == (remote_main, "origin/main", [True])
    # a new ref to a commit the remote has (a tag, a copy of a branch): nothing new
    tag = PushedRef("refs/tags/v1", remote_main, "refs/tags/v1", None)
    assert ranges(handle, [tag], "origin", _never) == []


def test_a_remote_commit_this_repository_lacks_asks_for_a_fetch(
    pushed: tuple[GitRepo, git.Repo],
) -> None:
    repo, handle = pushed
    line = PushedRef("refs/heads/main", repo.git("rev-parse", "HEAD"), "refs/heads/main", "1" * 40)
    with pytest.raises(GitError, match=r"fetch it first \(git fetch origin\)"):
        ranges(handle, [line], "origin", _never)


def test_the_pre_commit_framework_s_variables(pushed: tuple[GitRepo, git.Repo]) -> None:
    repo, handle = pushed
    head, remote_main = repo.git("rev-parse", "HEAD"), repo.git("rev-parse", "origin/main")
    assert from_pre_commit(handle, {}) is None
    env = {
        "PRE_COMMIT_FROM_REF": remote_main,
        "PRE_COMMIT_TO_REF": head,
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
        "PRE_COMMIT_REMOTE_NAME": "origin",
    }
    # the from-ref is the remote-tracking ref's commit: the remote's ref
    assert from_pre_commit(handle, env) == [
        PushedRef("refs/heads/main", head, "refs/heads/main", remote_main)
    ]
    # a new branch: pre-commit's from-ref is where the new commits start, not the remote's
    new = {**env, "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/feature"}
    assert from_pre_commit(handle, new) == [
        PushedRef("refs/heads/main", head, "refs/heads/feature", None)
    ]
    # a push of the whole history names no refs, only the branches
    whole = {k: v for k, v in env.items() if "_REF" not in k}
    assert from_pre_commit(handle, whole) == [
        PushedRef("refs/heads/main", head, "refs/heads/main", None)
    ]
