"""A re-run in a copy of the repository is given the working tree's rewritten test modules
where the copy's file has the same bytes, and only there (``baseline/pycache.py``)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.assertion import rewrite
from gitrepo import GitRepo
from test_baseline_e2e import CALC, TESTS, ids, review
from test_kept_checkout import ON, checkouts
from test_kept_checkout import user_cache as user_cache  # the fixture

from pytest_boundedreview.baseline import pycache

PASSES = "def test_one():\n    assert 1 + 1 == 2\n"
FAILS = "def test_one():\n    assert 1 + 1 == 3\n"


def pyc(file: Path) -> Path:
    return rewrite.get_cache_dir(file) / (file.name[:-3] + rewrite.PYC_TAIL)


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """A working tree whose test files pytest has run (their rewritten modules cached), and
    an empty copy beside it."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    live.mkdir()
    copy.mkdir()
    return live, copy


def ran(live: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (live / name).parent.mkdir(parents=True, exist_ok=True)
        (live / name).write_text(text)
    run_pytest(live)
    for name in files:
        assert pyc(live / name).is_file(), "pytest cached its rewrite"


def test_a_file_with_the_same_bytes_gets_the_pyc_pytest_then_uses_as_its_own(
    trees: tuple[Path, Path],
) -> None:
    live, copy = trees
    ran(live, {"test_a.py": FAILS})
    shutil.copyfile(live / "test_a.py", copy / "test_a.py")
    assert pycache.give(live, copy, [copy / "test_a.py"]) == [copy / "test_a.py"]
    given = pyc(copy / "test_a.py")
    assert given.read_bytes() == pyc(live / "test_a.py").read_bytes()
    before = given.stat()
    result = run_pytest(copy, "--tb=native")
    assert result.returncode == 1
    # The traceback names the copy's file, and pytest did not rewrite the module again.
    assert f'File "{copy / "test_a.py"}", line 2' in result.stdout
    assert str(live) not in result.stdout
    after = given.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_file_the_copy_holds_other_bytes_of_gets_nothing(trees: tuple[Path, Path]) -> None:
    """The change edited the test: the base must run its own test, not the change's."""
    live, copy = trees
    ran(live, {"test_a.py": FAILS})
    (copy / "test_a.py").write_text(PASSES)
    assert pycache.give(live, copy, [copy / "test_a.py"]) == []
    assert not pyc(copy / "test_a.py").exists()
    assert run_pytest(copy).returncode == 0


def test_a_pyc_the_copy_has_for_its_bytes_is_kept_and_a_stale_one_replaced(
    trees: tuple[Path, Path],
) -> None:
    live, copy = trees
    ran(live, {"test_a.py": FAILS})
    shutil.copyfile(live / "test_a.py", copy / "test_a.py")
    run_pytest(copy)  # the copy's own rewrite
    own = pyc(copy / "test_a.py").stat()
    assert pycache.give(live, copy, [copy / "test_a.py"]) == []
    assert pyc(copy / "test_a.py").stat().st_ino == own.st_ino
    stale = pyc(copy / "test_a.py")
    stale.write_bytes(stale.read_bytes()[:8] + b"\x00" * 8 + stale.read_bytes()[16:])
    assert pycache.give(live, copy, [copy / "test_a.py"]) == [copy / "test_a.py"]
    assert stale.read_bytes() == pyc(live / "test_a.py").read_bytes()


def test_a_pyc_of_another_form_is_not_given(trees: tuple[Path, Path]) -> None:
    """A pyc checked by time (earlier pytest versions) or of another interpreter."""
    live, copy = trees
    ran(live, {"test_a.py": FAILS, "test_b.py": FAILS})
    for name in ("test_a.py", "test_b.py"):
        shutil.copyfile(live / name, copy / name)
    cached = pyc(live / "test_a.py")
    cached.write_bytes(cached.read_bytes()[:4] + b"\x00" * 4 + cached.read_bytes()[8:])
    other = pyc(live / "test_b.py")
    other.write_bytes(b"\x00\x00\r\n" + other.read_bytes()[4:])
    assert pycache.give(live, copy, [copy / "test_a.py", copy / "test_b.py"]) == []


def test_nothing_is_written_out_of_the_copy(
    trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, copy = trees
    ran(live, {"sub/test_a.py": FAILS})
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copyfile(live / "sub" / "test_a.py", outside / "test_a.py")
    (copy / "sub").symlink_to(outside, target_is_directory=True)
    assert pycache.give(live, copy, [copy / "sub" / "test_a.py"]) == []
    assert not (outside / "__pycache__").exists()
    # With a bytecode prefix, pyc files live elsewhere: none is given.
    (copy / "test_c.py").write_text(FAILS)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    assert pycache.give(live, copy, [copy / "test_c.py"]) == []
    assert not (tmp_path / "prefix").exists()


def test_the_conftests_of_paths_are_those_pytest_loads(tmp_path: Path) -> None:
    for folder in ("", "tests", "tests/unit", "tests/unit/deep", "testing", "docs"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "conftest.py").write_text("")
    (tmp_path.parent / "conftest.py").write_text("")  # above the rootdir: not pytest's
    found = list(pycache.conftests(tmp_path, [tmp_path / "tests/unit/test_x.py"]))
    assert found == [tmp_path / f / "conftest.py" for f in ("tests/unit", "tests", "")]
    found = set(pycache.conftests(tmp_path, [tmp_path]))
    assert found == {tmp_path / f / "conftest.py" for f in ("", "tests", "testing")}


def test_a_kept_base_checkout_gets_the_unchanged_files_bytecode_and_classifies_the_same(
    pytester: pytest.Pytester, project: GitRepo, user_cache: Path
) -> None:
    """End to end: the base run's checkout holds the working tree's rewritten test file and
    compiled module the change left alone; a file the change edited is compiled there from its
    own bytes, and a test the change edited runs as the base has it."""
    edited = "from helper import four\n\n\ndef test_edited():\n    assert four() == 4\n"
    project.commit(
        {
            "calc.py": CALC,
            "helper.py": "def four():\n    return 2 * 2\n",
            "test_calc.py": "import helper\n" + TESTS,
            "test_edited.py": edited,
            "pyproject.toml": ON,
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    # The change breaks add, and edits test_edited so that it fails: the base's copy of it
    # passes, so it must come out as the change's, not as pre-existing.
    project.commit(
        {"calc.py": CALC.replace("a + b", "a - b"), "test_edited.py": edited.replace("4\n", "5\n")},
        "break",
    )
    run_pytest(pytester.path)  # the working tree's bytecode, as after a plain run
    with project.untouched():
        result, report = review(pytester)
    assert result.ret == 1
    assert ids(report, "target_related") == [
        "test_calc.py::test_add",
        "test_edited.py::test_edited",
    ]
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert ids(report, "unknown") == []
    [checkout] = checkouts(project)
    live = pyc(pytester.path / "test_calc.py").read_bytes()
    assert pyc(checkout / "test_calc.py").read_bytes() == live
    ours = pyc(checkout / "test_edited.py").read_bytes()
    assert ours != pyc(pytester.path / "test_edited.py").read_bytes()
    # helper.py is the same at the base: its compiled module is the working tree's, checked
    # by the hash of its bytes; calc.py is not: Python compiled the base's own.
    given = Path(importlib.util.cache_from_source(str(checkout / "helper.py"))).read_bytes()
    theirs = Path(importlib.util.cache_from_source(str(pytester.path / "helper.py"))).read_bytes()
    assert given[4:16] == b"\x03\x00\x00\x00" + importlib.util.source_hash(
        (checkout / "helper.py").read_bytes()
    )
    assert given[16:] == theirs[16:]
    compiled = Path(importlib.util.cache_from_source(str(checkout / "calc.py"))).read_bytes()
    assert compiled[4:8] == b"\x00\x00\x00\x00"


def test_a_module_with_the_same_bytes_gets_the_compiled_module_python_then_loads(
    trees: tuple[Path, Path],
) -> None:
    live, copy = trees
    for folder in (live, copy):
        (folder / "same.py").write_text("import sys\nHERE = sys._getframe().f_code.co_filename\n")
        (folder / "edited.py").write_text("VALUE = 1\n")
    (live / "edited.py").write_text("VALUE = 2\n")
    check = "import same, edited; print(same.HERE, edited.VALUE)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", check], cwd=live, env=env, check=True)
    assert pycache.give_compiled(str(live), str(copy), "same.py")
    assert not pycache.give_compiled(str(live), str(copy), "edited.py")  # other bytes
    assert not pycache.give_compiled(str(live), str(copy), "missing.py")
    assert not pycache.give_compiled(str(live), str(copy), "same.py")  # it has a current one
    given = Path(importlib.util.cache_from_source(str(copy / "same.py")))
    before = given.stat()
    shown = subprocess.run(
        [sys.executable, "-c", check], cwd=copy, env=env, capture_output=True, text=True
    ).stdout.split()
    assert shown == [str(copy / "same.py"), "1"]  # the copy's file, and the copy's value
    after = given.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # A working tree's pyc stale for its file (edited since it was compiled) is not given.
    (copy / "same.py").write_text("HERE = 'edited'\n")
    (live / "same.py").write_text("HERE = 'edited'\n")
    given.unlink()
    assert not pycache.give_compiled(str(live), str(copy), "same.py")
