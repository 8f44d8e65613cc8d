"""An index's assume-unchanged and skip-worktree bits read from its bytes agree with what
``git ls-files -v`` lists, in every index git writes; whatever cannot be read that way is
left to git, never answered wrong."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change import git, imported
from pytest_boundedreview.change.trees.indexfile import MAX_ENTRIES, flagged, tracked

EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def listed(repo: GitRepo) -> frozenset[str]:
    return frozenset(name for name in repo.git("ls-files", "-z").split("\0") if name)


def listed_as_flagged(repo: GitRepo) -> bool:
    """git's own answer: a lower-case tag (assume-unchanged) or an S (skip-worktree)."""
    tags = [entry[:1] for entry in repo.git("ls-files", "-v", "-z").split("\0") if entry]
    return any(tag.islower() or tag in ("S", "s") for tag in tags)


def files(count: int) -> dict[str, str]:
    """Names of every length the entries' padding meets (1 to 8 NULs), in folders."""
    return {f"d{i % 7}/{'n' * (i % 17)}f{i}.py": f"x = {i}\n" for i in range(count)}


@pytest.mark.parametrize("version", ["2", "3"])
@pytest.mark.parametrize(
    "marks",
    [
        [],
        [("--assume-unchanged", "d1/nf1.py")],
        [("--skip-worktree", "d1/nf1.py")],
        [("--skip-worktree", "d6/" + "n" * 13 + "f13.py")],  # the last file
        [("--assume-unchanged", "d0/f0.py"), ("--skip-worktree", "d2/nnf2.py")],
    ],
)
def test_each_bit_in_each_version(
    tmp_path: Path, version: str, marks: list[tuple[str, str]]
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(files(35), "base")
    repo.write("new_file.py", "y = 1\n")
    repo.git("add", "--intent-to-add", "new_file.py")  # an extended bit that hides nothing
    for bit, name in marks:
        repo.git("update-index", bit, name)
    repo.git("update-index", "--index-version", version)
    found = flagged(repo.path / ".git" / "index")
    assert found is listed_as_flagged(repo) is bool(marks)
    assert tracked(repo.path / ".git" / "index") == listed(repo)


@pytest.mark.parametrize("seed", range(12))
def test_the_bits_read_agree_with_git(tmp_path: Path, seed: int) -> None:
    draw = random.Random(seed)
    repo = GitRepo.init(tmp_path / "repo")
    names = list(files(draw.randint(1, 60)))
    repo.commit(dict.fromkeys(names, "x\n"), "base")
    marked = draw.sample(names, draw.choice([0, 0, 1, 2]))
    for name in marked:
        repo.git("update-index", draw.choice(["--assume-unchanged", "--skip-worktree"]), name)
    if draw.random() < 0.5:  # intent-to-add sets an extended bit that hides nothing
        repo.write("new_file.py", "y = 1\n")
        repo.git("add", "--intent-to-add", "new_file.py")
    version = draw.choice(["2", "3", "4"])
    repo.git("update-index", "--index-version", version)
    index = repo.path / ".git" / "index"
    found = flagged(index)
    if version == "4":
        assert found is None  # paths spelled relative to the one before: git is asked
        assert tracked(index) is None
    else:
        assert found is listed_as_flagged(repo) is bool(marked)
        assert tracked(index) == listed(repo)


def test_a_name_longer_than_the_length_field_is_walked_to_its_nul(tmp_path: Path) -> None:
    """A path of 4,095 bytes or more has no length in the entry's flags."""
    repo = GitRepo.init(tmp_path / "repo")
    long = "/".join(["p" * 200] * 25) + "/long.py"  # 5,033 bytes
    for name in ("a.py", long, "z.py"):
        repo.git("update-index", "--add", "--cacheinfo", f"100644,{EMPTY_BLOB},{name}")
    index = repo.path / ".git" / "index"
    assert flagged(index) is False
    assert tracked(index) == {"a.py", long, "z.py"}
    repo.git("update-index", "--assume-unchanged", "z.py")  # after the long one
    assert flagged(index) is True


def test_what_cannot_be_read_is_left_to_git(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(files(5), "base")
    index = repo.path / ".git" / "index"
    data = index.read_bytes()
    assert flagged(index) is False
    for broken in (
        data[:-1],  # torn
        data[:40] + bytes([data[40] ^ 1]) + data[41:],  # a bit flipped: the checksum says so
        data[:-20] + bytes(20),  # index.skipHash: no checksum to hold it to
        b"DIRC",
        b"",
    ):
        index.write_bytes(broken)
        assert flagged(index) is None
    index.unlink()
    assert flagged(index) is False  # no index: nothing is marked


@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_a_split_index_is_left_to_git(tmp_path: Path, bit: str) -> None:
    """A split index keeps its entries, bits and all, in a shared file its ``link``
    extension names: the main file alone marks nothing."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(files(6), "base")
    repo.age()
    repo.git("update-index", bit, "d1/nf1.py")
    repo.git("update-index", "--split-index")
    main = (repo.path / ".git" / "index").read_bytes()
    assert main[8:12] == bytes(4)  # no entry of its own: all are in the shared file
    assert listed_as_flagged(repo)
    assert flagged(repo.path / ".git" / "index") is None


def test_a_sha256_repository_is_left_to_git(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.path.mkdir()
    repo.git("init", "--quiet", "--object-format=sha256")
    repo.write("a.py", "x\n")
    repo.git("add", "a.py")
    repo.git("update-index", "--assume-unchanged", "a.py")
    assert flagged(repo.path / ".git" / "index") is None


@pytest.mark.parametrize("count", [MAX_ENTRIES, MAX_ENTRIES + 1])
def test_a_large_index_is_left_to_git(tmp_path: Path, count: int) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    entries = "".join(f"100644 {EMPTY_BLOB}\tf{i}.py\n" for i in range(count))
    subprocess.run(
        ["git", "update-index", "--index-info"],
        cwd=repo.path,
        input=entries.encode(),
        env=clean_env(),
        check=True,
    )
    found = flagged(repo.path / ".git" / "index")
    assert found is (False if count <= MAX_ENTRIES else None)


def test_imported_files_git_ignores_are_the_ones_git_names(tmp_path: Path) -> None:
    """Files the index tracks are not asked of git, whatever the ignore rules say; the others
    are: the answer is git's own ``check-ignore`` over all of them."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({".gitignore": "gen/\n*_version.py\n", "pkg/mod.py": "", "pkg/util.py": ""})
    repo.write("gen/forced.py", "")
    repo.git("add", "-f", "gen/forced.py")  # tracked, though ignored
    repo.write("gen/made.py", "")  # ignored, untracked
    repo.write("pkg/_version.py", "")  # ignored, untracked
    repo.write("pkg/new.py", "")  # untracked, not ignored
    repo.write("pkg/planned_version.py", "")
    repo.git("add", "-f", "--intent-to-add", "pkg/planned_version.py")
    files = ["gen/forced.py", "gen/made.py", "pkg/_version.py", "pkg/mod.py", "pkg/new.py"]
    files += ["pkg/planned_version.py", "pkg/util.py"]
    opened = git.open_repo(repo.path)
    asked = git.run(
        ["check-ignore", "-z", "--stdin"], opened.root, input="\0".join(files).encode(), check=False
    )
    by_git = sorted(name for name in git.decode(asked.stdout).split("\0") if name)
    assert imported.ignored(opened, files) == by_git == ["gen/made.py", "pkg/_version.py"]
    repo.git("update-index", "--index-version", "4")  # not read here: all asked of git
    assert imported.ignored(opened, files) == by_git


def test_a_name_git_would_read_as_pathspec_magic_is_judged_as_a_file(tmp_path: Path) -> None:
    """A file whose name starts with ":" is that file, tracked or not, in any index."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({".gitignore": "*x.py\n", "a.py": ""})
    repo.write(":x.py", "")
    repo.git("--literal-pathspecs", "add", "-f", ":x.py")  # tracked, though ignored
    repo.write(":zx.py", "")  # ignored, untracked
    opened = git.open_repo(repo.path)
    for version in ("2", "4"):  # read from the index, then all asked of git
        repo.git("update-index", "--index-version", version)
        assert imported.ignored(opened, [":x.py", ":zx.py", "a.py"]) == [":zx.py"]
