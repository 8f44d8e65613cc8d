"""Hostile diffs and git states under a real `pytest --bounded-review` session: huge, binary,
CRLF, unterminated, renamed, mode-only, oddly named, submodule and symlink changes; detached
HEAD, a merge in progress, an unborn branch, a linked worktree, a hook's environment, a shallow
clone and a post-checkout hook. Each gives a report (or a clear error) and leaves the user's
tree, index, stash and refs as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TEST = "def test_ok():\n    assert True\n"


def _review(
    repo: GitRepo, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Any]:
    where = cwd or repo.path
    report = where / "review.json"
    with repo.untouched():
        ran = warmstart.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--bounded-review",
                "--bounded-review-no-lanes",
                f"--bounded-review-report={report}",
                *args,
            ],
            cwd=where,
            capture_output=True,
            text=True,
            env=clean_env(env),
            timeout=300,
            check=False,
        )
    loaded = json.loads(report.read_text()) if report.exists() else None
    if report.exists():
        report.unlink()
    return ran, loaded


def _repo(tmp_path: Path, files: Mapping[str, str | bytes] | None = None) -> GitRepo:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit(
        {".gitignore": "__pycache__/\nreview.json\n", "test_ok.py": TEST, **(files or {})}, "base"
    )
    repo.git("branch", "base")
    return repo


def _files(report: Any) -> list[str]:
    return list(report["target"]["files"])


def test_a_100000_line_diff(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.commit({"big.txt": "".join(f"line {n}\n" for n in range(100_000))}, "big")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert _files(report) == ["big.txt"]
    assert report["gate"]["review_clean"] == "yes"


def test_binary_crlf_unterminated_renamed_and_mode_only_changes(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {"blob.bin": b"\x00\x01" * 100, "old_name.py": "a = 1\n" * 20, "tool.sh": "echo\n"},
    )
    repo.write("blob.bin", b"\x00\x02" * 100)
    repo.write("crlf.py", "x = 1\r\ny = 2\r\n")
    repo.write("open.py", "z = 3")  # no newline at the end
    repo.git("mv", "old_name.py", "new_name.py")
    repo.write("new_name.py", "a = 1\n" * 19 + "a = 2\n")
    os.chmod(repo.path / "tool.sh", 0o755)
    repo.commit(message="odd changes")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert sorted(_files(report)) == ["blob.bin", "crlf.py", "new_name.py", "open.py", "tool.sh"]


def test_paths_with_newlines_quotes_and_spaces(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    names = ['we"ird.py', "new\nline.py", "sp ace's.py", "tab\there.py", "ünï.py"]
    repo.commit({name: "v = 1\n" for name in names}, "odd names")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert sorted(_files(report)) == sorted(names)


def test_submodule_and_symlink_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = repo.git("rev-parse", "HEAD")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},vendored")
    os.symlink("test_ok.py", repo.path / "link")
    repo.git("add", "link")
    repo.git("commit", "--quiet", "-m", "gitlink and link")
    repo.git("branch", "-f", "base")
    second = repo.commit({"other.txt": "x\n"}, "move")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{second},vendored")
    (repo.path / "link").unlink()
    os.symlink("other.txt", repo.path / "link")
    repo.git("add", "link")
    repo.git("commit", "--quiet", "-m", "bump both")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert sorted(_files(report)) == ["link", "other.txt", "vendored"]


def test_detached_head(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.commit({"a.py": "a = 1\n"}, "change")
    repo.git("checkout", "--quiet", "--detach")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert _files(report) == ["a.py"]


def test_a_merge_in_progress_is_reviewed_as_the_tree_it_has(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"a.py": "a = 0\n"})
    repo.git("checkout", "--quiet", "-b", "left")
    repo.commit({"a.py": "a = 1\n"}, "left")
    repo.git("checkout", "--quiet", "main")
    repo.commit({"a.py": "a = 2\n"}, "right")
    repo.git("merge", "left", check=False)  # conflicts: MERGE_HEAD, markers in a.py
    assert (repo.path / ".git" / "MERGE_HEAD").exists()
    ran, report = _review(repo, "--bounded-review-base=base")
    assert report is not None, ran.stdout[-2000:]
    # The conflict markers the tree holds are found and block: never "clean".
    assert report["gate"]["review_clean"] == "no"
    assert "conflict" in json.dumps(report["findings"]["blocking"])
    assert (repo.path / ".git" / "MERGE_HEAD").exists()  # the merge is still the user's


def test_an_unborn_branch(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("test_ok.py", TEST)
    repo.write(".gitignore", "__pycache__/\nreview.json\n")
    ran, report = _review(repo)
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert report["target"]["kind"] == "local-diff"
    assert "test_ok.py" in _files(report)


def test_a_linked_worktree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "--quiet", "-b", "side", str(linked))
    (linked / "b.py").write_text("b = 1\n")
    ran, report = _review(repo, "--bounded-review-base=base", cwd=linked)
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert _files(report) == ["b.py"]
    assert report["target"]["kind"] == "local-diff"
    assert (repo.path / "b.py").exists() is False


def test_inside_a_hook_environment(tmp_path: Path) -> None:
    """As in `git commit -a`'s hook: GIT_DIR set, and GIT_INDEX_FILE naming a temporary index
    that differs from .git/index. What that index stages is what is reviewed."""
    repo = _repo(tmp_path)
    repo.write("c.py", "c = 1\n")
    repo.git("add", "c.py")  # the user's own index stages c.py
    hook_index = repo.path / ".git" / "next-index"
    repo.write("d.py", "d = 1\n")
    repo.git("read-tree", "HEAD", env={"GIT_INDEX_FILE": str(hook_index)})
    repo.git("add", "d.py", env={"GIT_INDEX_FILE": str(hook_index)})
    hook_env = {"GIT_DIR": str(repo.path / ".git"), "GIT_INDEX_FILE": ".git/next-index"}
    hook_bytes = hook_index.read_bytes()
    # c.py is in the working tree, not in the hook's snapshot: the tree tested is not it
    ran, report = _review(repo, "--bounded-review-target=staged", env=hook_env)
    assert ran.returncode == 1, ran.stdout[-2000:]
    assert report is not None
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "c.py (not in the snapshot)" in ran.stdout
    # with the working tree equal to the hook's snapshot, that snapshot is what is reviewed
    (repo.path / "c.py").unlink()
    ran, report = _review(repo, "--bounded-review-target=staged", env=hook_env)
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert _files(report) == ["d.py"]
    assert hook_index.read_bytes() == hook_bytes


def test_a_shallow_clone_without_the_base_is_a_clear_error(tmp_path: Path) -> None:
    origin = _repo(tmp_path)
    origin.commit({"a.py": "a = 1\n"}, "one")
    origin.commit({"a.py": "a = 2\n"}, "two")
    clone = GitRepo(tmp_path / "clone")
    subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", f"file://{origin.path}", str(clone.path)],
        check=True,
        env=clean_env(),
    )
    ran, report = _review(clone, "--bounded-review-base=origin/base")
    assert ran.returncode == 4
    assert report is None
    assert "fetch-depth: 0" in ran.stdout + ran.stderr


def test_a_post_checkout_hook_never_runs(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"app.py": "def f():\n    return 1\n"})
    marker = tmp_path / "hook-ran"
    hook = repo.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    repo.commit(
        {
            "app.py": "def f():\n    return 2\n",
            "test_f.py": "from app import f\n\ndef test_f():\n    assert f() == 1\n",
        },
        "regression with a new test",
    )
    repo.commit({"test_f.py": "from app import f\n\ndef test_f():\n    assert f() == 1\n"}, "x")
    ran, report = _review(repo, "--bounded-review-base=base")
    assert ran.returncode == 1, ran.stdout[-2000:]
    assert report["tests"]["target_related"]  # the base was checked out and re-run
    assert not marker.exists(), "a hook of the user's ran during the review"
