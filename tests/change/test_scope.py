from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import DIFF_OPTIONS, diff_of
from pytest_boundedreview.change.scope import FileChange, Scope, parse_scope
from pytest_boundedreview.core.errors import DiffParseError

PATCH = """\
diff --git a/a.py b/a.py
index 1111111..2222222 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,4 @@
 one
-two
+TWO
+three
 four
"""
RAW = ":100644 100644 1111111 2222222 M\0a.py\0"


def test_added_and_removed_lines_are_numbered_on_their_own_side() -> None:
    scope = parse_scope(RAW, PATCH)
    change = scope.files["a.py"]
    assert change.added == {2, 3}
    assert change.removed == {2}
    assert "a.py" in scope
    assert len(scope) == 1
    assert [c.path for c in scope] == ["a.py"]
    assert scope.is_added("a.py", 3)
    assert not scope.is_added("a.py", 4)
    assert not scope.is_added("other.py", 1)
    assert not scope.is_removed("other.py", 2)


def test_rename_entries_carry_both_paths() -> None:
    raw = ":100644 100644 1111111 1111111 R100\0old.py\0new.py\0"
    patch = (
        "diff --git a/old.py b/new.py\nsimilarity index 100%\n"
        "rename from old.py\nrename to new.py\n"
    )
    change = parse_scope(raw, patch).files["new.py"]
    assert (change.status, change.old_path) == ("renamed", "old.py")


def test_a_patch_that_disagrees_with_the_file_list_is_an_internal_error() -> None:
    with pytest.raises(DiffParseError, match="git listed 2 files but the patch holds 1") as info:
        parse_scope(RAW + ":100644 100644 1 2 M\0b.py\0", PATCH)
    assert info.value.exit_code == 3


@pytest.mark.parametrize(
    ("change", "mode_only", "submodule", "symlink"),
    [
        (FileChange("a", "modified", old_mode="100644", new_mode="100755"), True, False, False),
        (
            FileChange("a", "modified", old_mode="100644", new_mode="100644", added=frozenset({1})),
            False,
            False,
            False,
        ),
        (FileChange("s", "modified", old_mode="160000", new_mode="160000"), False, True, False),
        (FileChange("l", "added", new_mode="120000", added=frozenset({1})), False, False, True),
        (
            FileChange("b", "modified", old_mode="100644", new_mode="100755", binary=True),
            False,
            False,
            False,
        ),
    ],
)
def test_file_change_kinds(
    change: FileChange, mode_only: bool, submodule: bool, symlink: bool
) -> None:
    assert (change.mode_only, change.submodule, change.symlink) == (mode_only, submodule, symlink)


def test_empty_scope() -> None:
    scope = Scope()
    assert scope.paths == ()
    assert not scope.is_added("x", 1)


def test_one_git_process_gives_the_raw_records_and_the_patch_as_two_would(tmp_path: Path) -> None:
    """``diff_of`` reads both forms from one ``git diff --raw -z --patch``: the same bytes as
    two separate calls, for renames, binary files, mode changes, odd names and deletions."""
    repo = GitRepo.init(tmp_path / "r")
    base = repo.commit(
        {
            "a.txt": "one\ntwo\nthree\nfour\nfive\n",
            "gone.py": "x = 1\n",
            "tab\tand space.py": "y = 1\n",
            "run.sh": "echo\n",
        },
        "base",
    )
    repo.git("mv", "a.txt", "moved.txt")
    repo.write("moved.txt", "one\ntwo\nthree\nfour\nFIVE\n")
    repo.write("blob.bin", b"\0\1\2binary\0")
    repo.write("tab\tand space.py", "y = 2\n")
    (repo.path / "gone.py").unlink()
    (repo.path / "run.sh").chmod(0o755)
    changed = repo.commit(message="change")
    handle = git.open_repo(repo.path)
    for old, new in [(base, changed), (changed, changed), (handle.empty_tree(), changed)]:
        raw = git.run(["diff", "--raw", "-z", *DIFF_OPTIONS, old, new], repo.path).stdout
        patch = git.run(["diff", *DIFF_OPTIONS, old, new], repo.path).stdout
        assert diff_of(handle, old, new) == (git.decode(raw), git.decode(patch))
    scope = parse_scope(*diff_of(handle, base, changed))
    assert {c.path for c in scope} == {
        "moved.txt",
        "blob.bin",
        "gone.py",
        "tab\tand space.py",
        "run.sh",
    }
