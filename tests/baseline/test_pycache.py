"""A re-run in a copy of the repository is given the working tree's bytecode (rewritten test
modules, compiled modules) where the copy's file has the same bytes, and only there
(``baseline/checkout/pycache.py``)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _pytest.assertion import rewrite
from gitrepo import GitRepo
from test_baseline_e2e import CALC, TESTS, ids, review
from test_kept_checkout import ON, checkouts
from test_kept_checkout import user_cache as user_cache  # the fixture

from pytest_boundedreview.baseline.checkout import basefirst, pycache, redirect

PASSES = "def test_one():\n    assert 1 + 1 == 2\n"
FAILS = "def test_one():\n    assert 1 + 1 == 3\n"


def pyc(file: Path) -> Path:
    return rewrite.get_cache_dir(file) / (file.name[:-3] + rewrite.PYC_TAIL)


def python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This Python run in ``folder``, writing bytecode as it does by default."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, *args]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return python(folder, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args)


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


def ran_and_copied(trees: tuple[Path, Path], text: str) -> tuple[Path, Path, Path]:
    """``test_a.py`` run in the working tree and copied, the same bytes, into the copy."""
    live, copy = trees
    ran(live, {"test_a.py": text})
    shutil.copyfile(live / "test_a.py", copy / "test_a.py")
    return live, copy, copy / "test_a.py"


@pytest.mark.slow
def test_a_file_with_the_same_bytes_gets_the_pyc_pytest_then_uses_as_its_own(
    trees: tuple[Path, Path],
) -> None:
    live, copy, test = ran_and_copied(trees, FAILS)
    assert pycache.give(live, copy, [test]) == [test]
    given = pyc(test)
    assert given.read_bytes() == pyc(live / "test_a.py").read_bytes()
    before = given.stat()
    result = run_pytest(copy, "--tb=native")
    assert result.returncode == 1
    # The traceback names the copy's file, and pytest did not rewrite the module again.
    assert f'File "{copy / "test_a.py"}", line 2' in result.stdout
    assert str(live) not in result.stdout
    after = given.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.slow
def test_a_file_the_copy_holds_other_bytes_of_gets_nothing(trees: tuple[Path, Path]) -> None:
    """The change edited the test: the base must run its own test, not the change's."""
    live, copy = trees
    ran(live, {"test_a.py": FAILS})
    (copy / "test_a.py").write_text(PASSES)
    assert pycache.give(live, copy, [copy / "test_a.py"]) == []
    assert not pyc(copy / "test_a.py").exists()
    assert run_pytest(copy).returncode == 0


@pytest.mark.slow
def test_a_pyc_the_copy_has_for_its_bytes_is_kept_and_a_stale_one_replaced(
    trees: tuple[Path, Path],
) -> None:
    live, copy, test = ran_and_copied(trees, FAILS)
    run_pytest(copy)  # the copy's own rewrite
    own = pyc(test).stat()
    assert pycache.give(live, copy, [test]) == []
    assert pyc(test).stat().st_ino == own.st_ino
    stale = pyc(test)
    stale.write_bytes(stale.read_bytes()[:8] + b"\x00" * 8 + stale.read_bytes()[16:])
    assert pycache.give(live, copy, [test]) == [test]
    assert stale.read_bytes() == pyc(live / "test_a.py").read_bytes()


@pytest.mark.slow
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


@pytest.mark.slow
def test_nothing_is_written_out_of_the_copy(
    trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, copy = trees
    ran(live, {"sub/test_a.py": FAILS, "test_c.py": FAILS})
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copyfile(live / "sub" / "test_a.py", outside / "test_a.py")
    (copy / "sub").symlink_to(outside, target_is_directory=True)
    assert pycache.give(live, copy, [copy / "sub" / "test_a.py"]) == []
    assert not pycache.give_compiled(str(live), str(copy), "sub/test_a.py")
    assert not (outside / "__pycache__").exists()
    # With a bytecode prefix, pyc files live elsewhere: none is given (test_c would be).
    shutil.copyfile(live / "test_c.py", copy / "test_c.py")
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    assert pycache.give(live, copy, [copy / "test_c.py"]) == []
    assert not pycache.give_compiled(str(live), str(copy), "test_c.py")
    assert not (tmp_path / "prefix").exists()
    monkeypatch.setattr(sys, "pycache_prefix", None)
    assert pycache.give(live, copy, [copy / "test_c.py"]) == [copy / "test_c.py"]


def test_the_rewrite_is_given_only_under_the_working_trees_configuration(
    trees: tuple[Path, Path],
) -> None:
    """pytest's rewrite depends on its configuration too (``enable_assertion_pass_hook``)."""
    live, copy = trees
    assert pycache.same_configuration(live, copy, copy, None)  # none in either
    (live / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    assert not pycache.same_configuration(live, copy, copy, None)  # the change added one
    (copy / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    assert pycache.same_configuration(live, copy, copy, copy / "pyproject.toml")
    (copy / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    (live / "pytest.ini").write_text("[pytest]\n")
    assert not pycache.same_configuration(live, copy, copy, copy / "pytest.ini")
    # The copy named through a link, its files by their real path: still compared.
    link = live.parent / "link"
    link.symlink_to(copy, target_is_directory=True)
    assert not pycache.same_configuration(live, link, copy, copy / "pytest.ini")
    # A configuration file outside the repository is the same file for both.
    elsewhere = live.parent / "shared.ini"
    elsewhere.write_text("[pytest]\n")
    (live / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    assert pycache.same_configuration(live, copy, copy, elsewhere)


def test_the_conftests_of_paths_are_those_pytest_loads(tmp_path: Path) -> None:
    for folder in ("", "tests", "tests/unit", "tests/unit/deep", "testing", "docs"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "conftest.py").write_text("")
    (tmp_path.parent / "conftest.py").write_text("")  # above the rootdir: not pytest's
    found = list(pycache.conftests(tmp_path, [tmp_path / "tests/unit/test_x.py"]))
    assert found == [tmp_path / f / "conftest.py" for f in ("tests/unit", "tests", "")]
    found = set(pycache.conftests(tmp_path, [tmp_path]))
    assert found == {tmp_path / f / "conftest.py" for f in ("", "tests", "testing")}


@pytest.mark.slow
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
            "conftest.py": "import helper\n",
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
    for name in ("helper.py", "calc.py"):  # sources older than their bytecode, as usual
        settle(pytester.path / name, 0)
    run_pytest(pytester.path)  # the working tree's bytecode, as after a plain run
    # helper.py's compiled module checked by its source's hash: proof of the bytes it is of
    compileall(pytester.path, "helper.py")
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
    for name in ("test_calc.py", "conftest.py"):
        assert pyc(checkout / name).read_bytes() == pyc(pytester.path / name).read_bytes()
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


def settle(file: Path, seconds: float) -> None:
    """Set ``file``'s time ``seconds`` after now's whole second minus 100 s."""
    base = (int(time.time()) - 100) * 1_000_000_000
    stamp = base + int(seconds * 1_000_000_000)
    os.utime(file, ns=(stamp, stamp))


def compile_in(folder: Path, module: str) -> Path:
    """``module``'s compiled module, as Python's import writes it (checked by time)."""
    assert python(folder, "-c", f"import {module}").returncode == 0
    return Path(importlib.util.cache_from_source(str(folder / f"{module}.py")))


def compileall(folder: Path, name: str) -> Path:
    """``name``'s compiled module checked by its source's hash (``compileall``)."""
    argv = ["-m", "compileall", "-q", "-f", "--invalidation-mode", "checked-hash", name]
    assert python(folder, *argv).returncode == 0
    return Path(importlib.util.cache_from_source(str(folder / name)))


@pytest.mark.slow
def test_a_module_with_the_same_bytes_gets_the_compiled_module_python_then_loads(
    trees: tuple[Path, Path],
) -> None:
    live, copy = trees
    for folder in (live, copy):
        (folder / "same.py").write_text("import sys\nHERE = sys._getframe().f_code.co_filename\n")
        (folder / "edited.py").write_text("VALUE = 1\n")
    (live / "edited.py").write_text("VALUE = 2\n")
    for module in ("same", "edited"):
        compileall(live, f"{module}.py")
    assert pycache.give_compiled(str(live), str(copy), "same.py")
    assert not pycache.give_compiled(str(live), str(copy), "edited.py")  # other bytes
    assert not pycache.give_compiled(str(live), str(copy), "missing.py")
    assert not pycache.give_compiled(str(live), str(copy), "same.py")  # it has a current one
    given = Path(importlib.util.cache_from_source(str(copy / "same.py")))
    before = given.stat()
    shown = python(copy, "-c", "import same, edited; print(same.HERE, edited.VALUE)").stdout.split()
    assert shown == [str(copy / "same.py"), "1"]  # the copy's file, and the copy's value
    after = given.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.slow
def test_a_compiled_module_checked_by_time_is_never_given(trees: tuple[Path, Path]) -> None:
    """A pyc checked by its file's time and size says nothing of the bytes it was compiled
    from: compiled from other bytes, its file given back the copy's bytes with the same size
    and time, it still matches. Only one whose header holds the hash of the copy's bytes is
    given."""
    live, copy = trees
    (live / "value.py").write_text("VALUE = 2\n")
    settle(live / "value.py", 0)
    pyc = compile_in(live, "value")
    for folder in (live, copy):
        (folder / "value.py").write_text("VALUE = 1\n")  # the same size
    settle(live / "value.py", 0)  # and the same time: the stale pyc matches its file
    settle(pyc, 5)  # written well after the second its file's time names
    assert not pycache.give_compiled(str(live), str(copy), "value.py")
    assert not Path(importlib.util.cache_from_source(str(copy / "value.py"))).exists()
    shown = python(copy, "-c", "import value; print(value.VALUE)").stdout.split()
    assert shown == ["1"]
    Path(importlib.util.cache_from_source(str(copy / "value.py"))).unlink()
    # A current one, of the very bytes: not given either (nothing proves it).
    pyc.unlink()
    assert compile_in(live, "value").read_bytes()[4:8] == b"\x00\x00\x00\x00"
    assert not pycache.give_compiled(str(live), str(copy), "value.py")
    # One checked by the hash of these bytes: given.
    pyc = compileall(live, "value.py")
    assert pycache.give_compiled(str(live), str(copy), "value.py")
    # One checked by the hash of other bytes, and a torn one: not given, and nothing raised.
    Path(importlib.util.cache_from_source(str(copy / "value.py"))).unlink()
    (live / "value.py").write_text("VALUE = 3\n")
    compileall(live, "value.py")
    assert not pycache.give_compiled(str(live), str(copy), "value.py")
    pyc.write_bytes(importlib.util.MAGIC_NUMBER)
    assert not pycache.give_compiled(str(live), str(copy), "value.py")


@pytest.mark.slow
def test_the_tools_own_files_are_not_the_working_trees_code_in_a_re_run(tmp_path: Path) -> None:
    """The tool reviewing itself from an editable install: its redirect and the bytecode
    helper it loads are the tool's, not code the re-run ran from the working tree."""
    live = Path(redirect.__file__).resolve().parents[3]  # the repository
    copy, folder = tmp_path / "copy", tmp_path / "record"
    copy.mkdir()
    folder.mkdir()
    env = basefirst.prepare(folder, live, copy, {**os.environ})
    names = f"'{basefirst.MODULE}', '_bounded_review_pycache'"
    code = f"import sys; print(*(name in sys.modules for name in ({names})))"
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == ["True", "True"]
    reports = sorted(folder.glob("provenance*.json"))
    assert [json.loads(r.read_text())["live"] for r in reports] in ([], [[]])
