from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import freeze as freezing
from pytest_boundedreview.change import git
from pytest_boundedreview.change.base import REQUESTED, merge_base_of, pr_base, resolve_base
from pytest_boundedreview.change.freeze import Target, freeze
from pytest_boundedreview.core.errors import BaseRefError, NotARepositoryError, UsageError


def frozen(repo: GitRepo, kind: str = "auto", base: str | None = None, **env: str) -> Target:
    """Freeze a target, asserting the user's tree, index, stash and refs stay as they were."""
    with repo.untouched():
        return freeze(git.open_repo(repo.path), kind, base, env)  # type: ignore[arg-type]


@pytest.fixture
def feature(repo: GitRepo) -> GitRepo:
    """``feature`` branched off ``main``; ``main`` moved on afterwards."""
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"app.py": "x = 1\ny = 3\nz = 4\n"}, "feature change")
    repo.git("checkout", "--quiet", "main")
    repo.commit({"README.md": "hello again\n"}, "main moves on")
    repo.git("checkout", "--quiet", "feature")
    return repo


def test_pr_reviews_the_range_from_the_merge_base(feature: GitRepo) -> None:
    target = frozen(feature, "pr", "main")
    assert target.kind == "pr"
    assert target.files == ["app.py"]  # main's later README change is not part of the PR
    assert target.base_commit == feature.git("merge-base", "main", "HEAD")
    assert target.revision == f"tree:{feature.tree()}"
    change = target.scope.files["app.py"]
    assert change.added == {2, 3}
    assert change.removed == {2}
    assert target.scope.is_added("app.py", 3)
    assert not target.scope.is_added("app.py", 1)
    assert target.scope.is_removed("app.py", 2)
    assert "+z = 4" in target.diff


def test_local_diff_covers_staged_unstaged_and_untracked_but_not_ignored(repo: GitRepo) -> None:
    repo.write("README.md", "stashed work\n")
    repo.git("stash", "push", "--quiet", "-m", "keep me")  # the stash must survive untouched
    repo.write(".gitignore", "*.log\n")
    repo.git("add", ".gitignore")
    repo.write("app.py", "x = 10\ny = 2\n")  # unstaged
    repo.write("staged.py", "s = 1\n")
    repo.git("add", "staged.py")
    repo.write("new dir/untracked é.py", "u = 1\n")
    repo.write("debug.log", "ignored\n")
    target = frozen(repo, "local-diff")
    assert target.kind == "local-diff"
    assert target.base == "HEAD"
    assert sorted(target.files) == [".gitignore", "app.py", "new dir/untracked é.py", "staged.py"]
    assert target.scope.files["new dir/untracked é.py"].status == "added"
    assert target.scope.is_added("app.py", 1)


def test_dirty_revision_equals_the_tree_after_committing_the_same_content(repo: GitRepo) -> None:
    repo.write("app.py", "x = 10\n")
    repo.write("new.py", "n = 1\n")
    repo.git("add", "new.py")
    repo.write("other.txt", "untracked\n")
    target = frozen(repo, "local-diff")
    repo.git("add", "-A")
    repo.git("commit", "--quiet", "-m", "same content")
    assert target.revision == f"tree:{repo.tree('HEAD')}"


def test_staged_reviews_the_index_only(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\ny = 2\nstaged = True\n")
    repo.git("add", "app.py")
    repo.write("README.md", "unstaged edit\n")
    repo.write("untracked.py", "u = 1\n")
    target = frozen(repo, "staged")
    assert target.kind == "staged"
    assert target.files == ["app.py"]
    assert target.scope.files["app.py"].added == {3}
    repo.git("commit", "--quiet", "-m", "commit the index")
    assert target.revision == f"tree:{repo.tree()}"


def test_auto_picks_local_diff_for_a_dirty_tree_and_pr_for_a_clean_one(feature: GitRepo) -> None:
    assert frozen(feature, "auto", "main").kind == "pr"
    feature.write("untracked.py", "u = 1\n")
    dirty = frozen(feature, "auto")
    assert dirty.kind == "local-diff"
    assert dirty.files == ["untracked.py"]


def test_empty_targets_are_reported_as_such(repo: GitRepo) -> None:
    local = frozen(repo, "local-diff")
    assert local.empty
    assert local.files == []
    assert local.revision == f"tree:{repo.tree()}"
    staged = frozen(repo, "staged")
    assert staged.empty
    assert frozen(repo, "pr", "main").empty


def test_renames_deletions_binaries_modes_and_odd_paths(repo: GitRepo) -> None:
    body = "".join(f"line {i}\n" for i in range(30))
    repo.commit(
        {
            "old name.py": body,
            "gone.txt": "bye\n",
            "blob.bin": b"\x00\x01\x02",
            "tool.sh": "echo hi\n",
        },
        "more files",
    )
    repo.git("mv", "old name.py", "new name.py")
    (repo.path / "gone.txt").unlink()
    repo.write("blob.bin", b"\x00\x01\x03")
    (repo.path / "tool.sh").chmod(0o755)
    repo.write('quo"te ü.txt', "q\n")
    repo.write("line\nbreak.txt", "n\n")
    (repo.path / "link").symlink_to("README.md")
    target = frozen(repo, "local-diff")
    files = target.scope.files
    assert files["new name.py"].status == "renamed"
    assert files["new name.py"].old_path == "old name.py"
    assert files["new name.py"].added == frozenset()
    assert files["gone.txt"].status == "deleted"
    assert files["gone.txt"].removed == {1}
    assert files["blob.bin"].binary
    assert files["tool.sh"].mode_only
    assert (files["tool.sh"].old_mode, files["tool.sh"].new_mode) == ("100644", "100755")
    assert files['quo"te ü.txt'].added == {1}
    assert files["line\nbreak.txt"].added == {1}
    assert files["link"].symlink


def test_a_repository_inside_a_git_hook_environment(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Inside a hook git exports GIT_INDEX_FILE/GIT_DIR; child commands must not follow them.
    decoy = tmp_path / "decoy-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(decoy))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    repo.write("app.py", "x = 99\n")
    repo.git("add", "app.py")
    target = frozen(repo, "staged")
    assert target.files == ["app.py"]
    assert not decoy.exists()


def test_detached_head_works(feature: GitRepo) -> None:
    feature.git("checkout", "--quiet", "--detach", "HEAD")
    target = frozen(feature, "pr", "main")
    assert target.files == ["app.py"]
    assert git.open_repo(feature.path).branch() is None


def test_unborn_branch(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "fresh")
    repo.write("first.py", "a = 1\n")
    target = frozen(repo, "auto")
    assert target.kind == "local-diff"
    assert target.head is None
    assert target.files == ["first.py"]
    with pytest.raises(UsageError, match="needs at least one commit"):
        frozen(repo, "pr", "main")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(NotARepositoryError, match="not inside a git work tree"):
        git.open_repo(tmp_path)


def test_unknown_base_ref_names_the_fix(feature: GitRepo) -> None:
    with pytest.raises(BaseRefError, match=r"base ref 'nope' .* is unknown.*--bounded-review-base"):
        frozen(feature, "pr", "nope")


def test_an_unknown_base_names_where_it_came_from(feature: GitRepo) -> None:
    repo = git.open_repo(feature.path)
    with pytest.raises(BaseRefError, match=r"base ref 'nope' \(from the shard reports\)"):
        freeze(repo, "pr", "nope", env={}, base_origin="the shard reports")


@pytest.fixture
def clone(feature: GitRepo, tmp_path: Path) -> GitRepo:
    """A clone of ``feature``'s repository with ``origin`` set up, on branch ``topic``."""
    feature.git("branch", "release", "main")
    feature.git("checkout", "--quiet", "main")
    path = tmp_path / "clone"
    GitRepo(tmp_path).git("clone", "--quiet", str(feature.path), str(path))
    clone = GitRepo(path)
    clone.git("config", "user.name", "Test")
    clone.git("config", "user.email", "test@example.invalid")
    clone.git("checkout", "--quiet", "--no-track", "-b", "topic", "origin/feature")
    clone.commit({"topic.py": "t = 1\n"}, "topic work")
    return clone


def test_base_resolution_order(clone: GitRepo) -> None:
    # no upstream on `topic` → origin/HEAD (main)
    assert frozen(clone, "pr").base == "origin/HEAD"
    clone.git("branch", "--set-upstream-to=origin/feature")
    upstream = frozen(clone, "pr")
    assert upstream.base == "origin/feature"
    assert upstream.files == ["topic.py"]
    assert frozen(clone, "pr", GITHUB_BASE_REF="release").base == "origin/release"
    gitlab = frozen(clone, "pr", CI_MERGE_REQUEST_TARGET_BRANCH_NAME="release")
    assert gitlab.base == "origin/release"
    buildkite = frozen(clone, "pr", BUILDKITE_PULL_REQUEST_BASE_BRANCH="release")
    assert buildkite.base == "origin/release"
    explicit = frozen(clone, "pr", "origin/feature", GITHUB_BASE_REF="release")
    assert explicit.base == "origin/feature"
    clone.git("remote", "set-head", "origin", "--delete")
    clone.git("branch", "--unset-upstream")
    with pytest.raises(BaseRefError, match="could not determine the review base"):
        frozen(clone, "pr")


def test_ci_base_branch_missing_is_an_error_not_a_fallback(clone: GitRepo) -> None:
    with pytest.raises(BaseRefError, match="GITHUB_BASE_REF=missing"):
        frozen(clone, "pr", None, GITHUB_BASE_REF="missing")


def test_shallow_clone_missing_the_base_names_the_fix(feature: GitRepo, tmp_path: Path) -> None:
    path = tmp_path / "shallow"
    GitRepo(tmp_path).git(
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--branch",
        "feature",
        f"file://{feature.path}",
        str(path),
    )
    shallow = GitRepo(path)
    with pytest.raises(BaseRefError, match=r"fetch-depth: 0") as info:
        frozen(shallow, "pr", None, GITHUB_BASE_REF="main")
    assert "git fetch --unshallow" in str(info.value)
    old = feature.git("rev-parse", "main~1")
    with pytest.raises(BaseRefError, match=r"shallow clone.*fetch-depth: 0"):
        frozen(shallow, "pr", old)


def test_type_changes_are_one_file(repo: GitRepo) -> None:
    repo.commit({"f": "hi\n", "g": "x\n"}, "files")
    (repo.path / "f").unlink()
    (repo.path / "f").symlink_to("README.md")
    (repo.path / "g").unlink()
    target = frozen(repo, "local-diff")
    f = target.scope.files["f"]
    assert (f.status, f.old_mode, f.new_mode) == ("type-changed", "100644", "120000")
    assert f.removed == {1}
    assert f.added == {1}
    assert f.symlink
    assert target.scope.files["g"].status == "deleted"


HOOK = """#!/bin/sh
exec {python} -c '
import sys
from pathlib import Path
from pytest_boundedreview.change import freeze, git
t = freeze.freeze(git.open_repo(Path(".")), "staged")
Path(sys.argv[1]).write_text(" ".join(t.files) + "|" + t.revision)
' {out}
"""


@pytest.mark.parametrize(
    ("command", "expected_files"),
    [
        (["commit", "--quiet", "-a", "-m", "all"], "app.py other.py"),
        (["commit", "--quiet", "-m", "partial", "app.py"], "app.py"),
        (["commit", "--quiet", "-m", "index"], "other.py"),
    ],
    ids=["commit -a", "commit paths", "commit index"],
)
def test_staged_inside_a_real_pre_commit_hook(
    repo: GitRepo, tmp_path: Path, command: list[str], expected_files: str
) -> None:
    out = tmp_path / "hook-output"
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK.format(python=sys.executable, out=out))
    hook.chmod(0o755)
    repo.write("app.py", "x = 2\n")  # modified, not staged
    repo.write("other.py", "y = 1\n")
    repo.git("add", "other.py")  # staged, but not part of `commit app.py`
    repo.git(*command)
    files, revision = out.read_text().split("|")
    assert revision == f"tree:{repo.tree()}"  # exactly what the commit recorded
    assert files == expected_files


def test_user_git_config_applies_as_it_would_to_a_commit(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[core]\n\tautocrlf = input\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    repo.write("crlf.txt", b"one\r\ntwo\r\n")
    target = frozen(repo, "local-diff")
    repo.git("add", "-A", env={"GIT_CONFIG_GLOBAL": str(config)})
    repo.git("commit", "--quiet", "-m", "crlf", env={"GIT_CONFIG_GLOBAL": str(config)})
    assert target.revision == f"tree:{repo.tree()}"


def test_a_gone_upstream_is_an_error_not_a_fallback(clone: GitRepo) -> None:
    clone.git("branch", "--set-upstream-to=origin/feature")
    clone.git("update-ref", "-d", "refs/remotes/origin/feature")
    with pytest.raises(BaseRefError, match=r"upstream of 'topic' \(origin/feature\) is gone"):
        frozen(clone, "pr")


@pytest.mark.slow
def test_a_same_size_edit_right_after_a_commit_is_seen(repo: GitRepo) -> None:
    # Racy git: an edit in the same second as the index write, keeping the size, is only
    # noticed if the snapshot's copy of the index keeps the original's timestamp.
    for i in range(20):
        repo.commit({"app.py": f"x = {i % 10}\n"}, f"c{i}")
        repo.write("app.py", f"x = {(i + 1) % 10}\n")
        assert frozen(repo, "local-diff").files == ["app.py"], i


def test_objects_are_read_in_a_batch_and_a_name_with_a_line_break_alone(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path)
    repo.commit({"a b.py": "spaces\n", "line\nbreak.py": "newline\n"}, "base")
    root = git.open_repo(tmp_path).root
    found = git.read_objects(root, ["HEAD:a b.py", "HEAD:line\nbreak.py", "HEAD:gone.py", "HEAD:"])
    assert found == {
        "HEAD:a b.py": b"spaces\n",
        "HEAD:line\nbreak.py": b"newline\n",
        "HEAD:gone.py": None,
        "HEAD:": None,  # a tree, not a blob
    }


def _two_steps(repo: git.Repo, ref: str, head: str) -> tuple[str, str] | str:
    """The base as it was found before it was one process: the ref resolved, then its merge
    base with ``head`` (or the error either step raises)."""
    try:
        name, commit = resolve_base(repo, ref, {})
        return name, merge_base_of(repo, commit, head, name)
    except BaseRefError as exc:
        return str(exc)


def _one_step(repo: git.Repo, ref: str, head: str) -> tuple[str, str] | str:
    try:
        return pr_base(repo, ref, {}, REQUESTED, head)
    except BaseRefError as exc:
        return str(exc)


def _named_bases(feature: GitRepo) -> git.Repo:
    """``feature`` with a light and an annotated tag of ``main``, and a branch of no common
    history (``unrelated``)."""
    feature.git("tag", "light", "main")
    feature.git("tag", "-a", "-m", "annotated", "annotated", "main")
    feature.git("checkout", "--quiet", "--orphan", "unrelated")
    feature.commit({"other.txt": "x\n"}, "no common history")
    feature.git("checkout", "--quiet", "feature")
    return git.open_repo(feature.path)


def test_a_pr_base_found_in_one_process_is_the_one_found_in_two(feature: GitRepo) -> None:
    repo = _named_bases(feature)
    head = feature.git("rev-parse", "HEAD")
    refs = ["main", "main~1", "light", "annotated", feature.git("rev-parse", "main")]
    refs += ["nope", "-x", "--all", "unrelated", "annotated^{tree}", "main:app.py"]
    answers = {ref: _one_step(repo, ref, head) for ref in refs}
    assert answers == {ref: _two_steps(repo, ref, head) for ref in refs}
    merge_base = feature.git("merge-base", "main", "HEAD")
    assert [answers[ref] for ref in refs[:4]] == [(ref, merge_base) for ref in refs[:4]]
    assert "no common ancestor" in str(answers["unrelated"])
    assert "is unknown" in str(answers["nope"])


def _children() -> set[str]:
    """This process's child processes, reaped or not (a zombie is still listed)."""
    tasks = Path("/proc/self/task")
    return {pid for task in tasks.iterdir() for pid in (task / "children").read_text().split()}


def _outcome(repo: git.Repo, kind: str, ref: str) -> Target | str:
    try:
        return freeze(repo, kind, ref, {})  # type: ignore[arg-type]
    except BaseRefError as exc:
        return str(exc)


@pytest.mark.slow
@pytest.mark.skipif(
    not Path("/proc/self/task", str(os.getpid()), "children").exists(),
    reason="lists children from /proc (a kernel with CONFIG_PROC_CHILDREN)",
)
def test_a_pr_asked_ahead_is_the_pr_asked_after_the_snapshot(
    feature: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a named base, the merge base and the diff run beside the snapshot's git processes,
    before the target's kind is known: the answer (or the error) is the one asked after it,
    and what was asked for nothing (a dirty tree is a local diff) is stopped and reaped."""
    repo = _named_bases(feature)
    refs = ["main", "main~1", "light", "annotated", feature.git("rev-parse", "main")]
    refs += ["nope", "-x", "unrelated", "annotated^{tree}"]
    app = feature.path / "app.py"
    committed = app.read_text()

    def outcomes() -> dict[tuple[str, str], Target | str]:
        found = {(kind, ref): _outcome(repo, kind, ref) for kind in ("pr", "auto") for ref in refs}
        app.write_text("dirty = True\n")  # auto: now a local diff
        found |= {("dirty", ref): _outcome(repo, "auto", ref) for ref in refs}
        app.write_text(committed)
        return found

    before = _children()
    with feature.untouched():
        ahead = outcomes()
        assert _children() <= before
        monkeypatch.setattr(freezing, "_ahead", lambda *args: None)
        assert ahead == outcomes()
    main = ahead[("pr", "main")]
    assert isinstance(main, Target)
    assert main.files == ["app.py"]
    assert main.base_commit == feature.git("merge-base", "main", "HEAD")
    dirty = ahead[("dirty", "main")]
    assert isinstance(dirty, Target)
    assert dirty.kind == "local-diff"
    assert "no common ancestor" in str(ahead[("pr", "unrelated")])


def test_the_callers_blobs_are_read_beside_the_diff_of_a_pr_asked_ahead(
    feature: GitRepo, calls: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blobs a caller names are read while the diff runs, and remembered: what it reads
    next is answered without a git process, and is what a read of its own finds. For a pull
    request asked ahead they are read beside its diff too, and stopped when it is not one."""
    feature.commit({"pyproject.toml": "[tool.other]\n"}, "configured")
    repo = git.open_repo(feature.path)
    asked: list[tuple[str, str]] = []

    def blobs(base_commit: str, tree: str) -> list[str]:
        asked.append((base_commit, tree))
        return [f"{base_commit}:README.md", f"{tree}:pyproject.toml", f"{tree}:absent.toml"]

    target = freeze(repo, "pr", "main", {}, blobs=blobs)
    assert asked == [(target.base_commit, target.tree)]
    names = blobs(target.base_commit, target.tree)  # type: ignore[arg-type]
    calls.clear()
    remembered = git.read_objects(repo.root, names)
    assert calls == []
    monkeypatch.setattr(git, "_KNOWN", {})
    assert remembered == git.read_objects(repo.root, names)
    assert remembered[names[1]] == b"[tool.other]\n"
    assert remembered[names[2]] is None

    # A local diff: against the same merge base (asked ahead, not again), not main's tip;
    # the blobs at its base and its own tree are read beside its diff.
    (feature.path / "app.py").write_text("dirty = True\n")
    monkeypatch.setattr(git, "_KNOWN", {})
    calls.clear()
    local = freeze(repo, "auto", "main", {}, blobs=blobs)
    assert local.kind == "local-diff"
    assert local.base_commit == target.base_commit
    assert sum(args[0] == "merge-base" for args in calls) == 1
    assert local.tree != target.tree
    named = blobs(local.base_commit, local.tree)  # type: ignore[arg-type]
    assert {(repo.root, name) for name in named} <= set(git._KNOWN)
    assert git.read_objects(repo.root, named)[named[0]] == b"hello\n"  # not main's later edit
