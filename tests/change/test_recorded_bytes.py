"""The bytes tested are the bytes recorded: a file git converts as it records it (a clean
filter, ``ident``, ``working-tree-encoding``) so that the snapshot holds other code than the
tests ran is named, and the gate is never ``yes``; line endings alone, and a Git LFS pointer
naming exactly the file, are no difference."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.change.trees import recorded

GOOD = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
# A clean filter that records a regression the tests on disk never see.
BREAK = "import sys; sys.stdout.write(sys.stdin.read().replace('a + b', 'a - b'))"
# A filter that records the file as it is.
KEEP = "import sys; sys.stdout.write(sys.stdin.read())"
# A Git LFS clean filter: the pointer names the content by SHA-256 and size.
POINTER = (
    "import hashlib, sys; d = sys.stdin.buffer.read(); sys.stdout.write("
    "'version https://git-lfs.github.com/spec/v1\\noid sha256:%s\\nsize %d\\n' "
    "% (hashlib.sha256(d).hexdigest(), len(d)))"
)


@pytest.fixture
def calc(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "calc")
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n.pytest_cache/\n__pycache__/\n",
            "calc.py": GOOD,
            "test_calc.py": TEST,
            "pyproject.toml": '[tool.bounded-review]\nbase = "main"\n',
        },
        "base",
    )
    repo.git("checkout", "-q", "-b", "feature")
    return repo


def filtered(repo: GitRepo, script: str, where: str = ".git/info/attributes") -> None:
    """``calc.py`` recorded through the clean filter ``script``; the attribute set in
    ``where`` (outside the tree, or a ``.gitattributes`` git ignores)."""
    repo.git("config", "filter.x.clean", f"{sys.executable} -c {_quoted(script)}")
    repo.git("config", "filter.x.smudge", "cat")
    repo.write(where, "calc.py filter=x\n")


def _quoted(script: str) -> str:
    return '"' + script.replace("\\", "\\\\").replace('"', '\\"') + '"'


def review(repo: GitRepo, *args: str, bytecode: bool = False) -> tuple[int, dict[str, Any]]:
    """A real session with the flag (no lanes), and the report it wrote; the user's tree,
    index, stash and refs untouched."""
    options = ["--bounded-review", "--bounded-review-no-lanes", "-p", "no:randomly", *args]
    env = clean_env()
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    with repo.untouched():
        ran = warmstart.run(
            [sys.executable, "-m", "pytest", "-q", *options],
            cwd=repo.path,
            env=env,
            capture_output=True,
            check=False,
        )
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert report["tests"]["passed"] >= 1, ran.stdout.decode()
    return ran.returncode, report


def held(report: dict[str, Any], path: str) -> bool:
    reasons = " ".join(report["gate"]["reasons"])
    return (
        report["gate"]["review_clean"] == "indeterminate"
        and f"{path} (recorded with other bytes than on disk)" in reasons
        and "git check-attr" in reasons
    )


def regression_recorded(repo: GitRepo, target: str) -> None:
    """calc.py correct on disk (the tests pass) and broken in what the target records."""
    filtered(repo, BREAK)
    repo.write("calc.py", GOOD + "# tidy\n")
    if target == "staged":
        repo.git("add", "calc.py")
    if target == "pr":
        repo.commit(message="tidy")
    if target != "local-diff":
        assert "a - b" in repo.git("show", f"{'HEAD' if target == 'pr' else ''}:calc.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "workers", "bytecode"),
    [
        ("local-diff", [], False),
        ("local-diff", ["-n", "2"], True),
        ("staged", [], False),
        ("pr", [], True),
        ("pr", ["-n", "2"], False),
    ],
)
def test_a_clean_filter_that_records_a_regression_is_never_passed(
    calc: GitRepo, target: str, workers: list[str], bytecode: bool
) -> None:
    regression_recorded(calc, target)
    status, report = review(calc, f"--bounded-review-target={target}", *workers, bytecode=bytecode)
    assert report["tests"]["failed"] == 0  # the tests ran the file on disk
    assert status == 1
    assert held(report, "calc.py")
    assert report["statuses"]["committed"] == "no"


def test_a_filter_that_hides_an_edit_names_the_unchanged_file(calc: GitRepo) -> None:
    """The filter records the base's text for an edited file: the snapshot shows it
    unchanged, while the change (another file) was tested with the edit."""
    filtered(calc, "import sys; sys.stdout.write(sys.stdin.read().replace('a * 1 + b', 'a + b'))")
    calc.write("calc.py", "def add(a, b):\n    return a * 1 + b\n")
    calc.write("other.py", "x = 1\n")
    target = freeze(git.open_repo(calc.path), "local-diff")
    assert target.files == ["other.py"]
    assert target.untested == ("calc.py (recorded with other bytes than on disk)",)


@pytest.mark.parametrize(
    ("attribute", "on_disk"),
    [
        # $Id: ...$ collapses to $Id$: x is 5 on disk, the string in the snapshot
        ("ident", 'X = "$Id: " if 0 else 5  # $"\n'),
        # UTF-7 writes "+" as "+-": a - b on disk, a + b in the snapshot
        ("working-tree-encoding=UTF-7", "def add(a, b):\n    return a +- b\n"),
    ],
)
def test_builtin_conversions_that_change_the_code_are_named(
    calc: GitRepo, attribute: str, on_disk: str
) -> None:
    calc.write("src/.gitattributes", f"conv.py {attribute}\n")
    calc.write(".git/info/exclude", "src/.gitattributes\n")  # git ignores it, and reads it
    calc.write("src/conv.py", on_disk)
    handle = git.open_repo(calc.path)
    target = freeze(handle, "local-diff")
    assert target.files == ["src/conv.py"]
    assert target.untested == ("src/conv.py (recorded with other bytes than on disk)",)


@pytest.mark.slow
def test_a_forged_lfs_pointer_is_named(calc: GitRepo) -> None:
    forged = (
        "version https://git-lfs.github.com/spec/v1\n"
        f"oid sha256:{hashlib.sha256(b'other').hexdigest()}\nsize {len(GOOD) + 7}\n"
    )
    filtered(calc, f"import sys; sys.stdout.write({forged!r})")
    calc.write("calc.py", GOOD + "# tidy\n")
    status, report = review(calc, "--bounded-review-target=local-diff")
    assert status == 1
    assert held(report, "calc.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "workers"), [("local-diff", []), ("staged", []), ("pr", ["-n", "2"])]
)
@pytest.mark.parametrize(
    "setup",
    ["text eol=crlf", "text=auto", "autocrlf", "filter that keeps", "lfs pointer"],
)
def test_conversions_that_keep_the_code_stay_clean(
    calc: GitRepo, setup: str, target: str, workers: list[str]
) -> None:
    lines = GOOD + "# tidy\n"
    if setup == "text eol=crlf":  # what a checkout writes: CRLF on disk, LF recorded
        calc.write(".gitattributes", "*.py text eol=crlf\n")
        lines = lines.replace("\n", "\r\n")
    elif setup == "text=auto":
        calc.write(".gitattributes", "* text=auto\n")
    elif setup == "autocrlf":
        calc.git("config", "core.autocrlf", "true")
        lines = lines.replace("\n", "\r\n")
    elif setup == "filter that keeps":
        filtered(calc, KEEP, ".gitattributes")
    else:
        filtered(calc, POINTER, ".gitattributes")
    calc.write("calc.py", lines)
    if target == "staged":
        calc.git("add", "--all")
    if target == "pr":
        calc.commit(message="tidy")
    status, report = review(calc, f"--bounded-review-target={target}", *workers)
    assert (status, report["gate"]["review_clean"]) == (0, "yes"), report["gate"]
    if setup == "lfs pointer" and target != "local-diff":
        spec = "version https://git-lfs.github.com/spec/v1"
        assert calc.git("show", f"{'HEAD' if target == 'pr' else ''}:calc.py").startswith(spec)


@pytest.mark.parametrize(
    ("blob", "on_disk", "same"),
    [
        (b"a\n", b"a\n", True),
        (b"a\nb\n", b"a\r\nb\r\n", True),
        (b"a\nb\n", b"a\r\nb\n", True),  # mixed endings, as text conversion records them
        (b"a\r\nb\n", b"a\nb\n", False),  # a CR recorded that is not on disk
        (b"a + b\n", b"a - b\n", False),
        (b"a\rb\n", b"a\r\rb\n", False),
    ],
)
def test_stands_for_accepts_line_endings_only(
    tmp_path: Path, blob: bytes, on_disk: bytes, same: bool
) -> None:
    path = tmp_path / "f"
    path.write_bytes(on_disk)
    assert recorded.stands_for(blob, path) is same


def test_stands_for_reads_lfs_pointers_and_leaves_absent_files(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"data")
    digest = hashlib.sha256(b"data").hexdigest()
    spec = b"version https://git-lfs.github.com/spec/v1\n"
    pointer = spec + f"oid sha256:{digest}\nsize 4\n".encode()
    assert recorded.stands_for(pointer, path)
    assert not recorded.stands_for(pointer.replace(b"size 4", b"size 5"), path)
    path.write_bytes(b"dat4")
    assert not recorded.stands_for(pointer, path)  # same size, other bytes
    path.write_bytes(pointer)  # git-lfs not installed: the pointer itself is on disk
    assert recorded.stands_for(pointer, path)
    assert recorded.stands_for(b"x", tmp_path / "absent")  # a sparse checkout's file
    (tmp_path / "link").symlink_to(path)
    assert not recorded.stands_for(pointer, tmp_path / "link")
