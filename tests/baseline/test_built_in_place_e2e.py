"""End to end: a package with a C extension built in place (git ignores the module), its tests
parametrized by whether the extension imports. The base runs as the working tree does: the
built module is copied into the base checkout while its sources are the base's, withheld when
the change touches them, and ``base_setup`` builds the base itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

from pytest_boundedreview.baseline.atbase.baserun import BaseUnavailable, base_verdicts
from pytest_boundedreview.baseline.reruns.runspec import BaselineRun
from pytest_boundedreview.change import git
from pytest_boundedreview.core.settings.config import load_settings

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

SOURCE = """\
#include <Python.h>

/* scale: x * 2 */
static PyObject *scale(PyObject *self, PyObject *arg) {
    long x = PyLong_AsLong(arg);
    if (x == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(x * 2);
}

static PyMethodDef methods[] = {{"scale", scale, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
"""
SETUP_PY = """\
from setuptools import Extension, setup

setup(name="pkg", packages=["pkg"], ext_modules=[Extension("pkg._speedups", ["pkg/_speedups.c"])])
"""
PACKAGE = """\
try:
    from pkg import _speedups
except ImportError:
    _speedups = None

IMPLS = ["py"] + (["c"] if _speedups is not None else [])


def scale(impl, x):
    if impl == "c":
        return _speedups.scale(x)
    return x * 2
"""
TESTS = """\
import pytest

import pkg


@pytest.mark.parametrize("impl", pkg.IMPLS)
def test_scale(impl):
    assert pkg.scale(impl, 3) == 6


@pytest.mark.parametrize("impl", pkg.IMPLS)
def test_legacy(impl):
    assert pkg.scale(impl, 2) == 5


def test_compiled_only():
    speedups = pytest.importorskip("pkg._speedups")
    assert speedups.scale(1) == 3
"""
PYTEST_INI = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
BUILD = [sys.executable, "setup.py", "-q", "build_ext", "--inplace"]
BUILD_SETTING = 'base_setup = ["python", "setup.py", "-q", "build_ext", "--inplace"]\n'
PRE_EXISTING = [
    "tests/test_scale.py::test_compiled_only",
    "tests/test_scale.py::test_legacy[c]",
    "tests/test_scale.py::test_legacy[py]",
]


def build(folder: Path) -> Path:
    """Build the extension in place in ``folder``; the module built."""
    subprocess.run(BUILD, cwd=folder, check=True, capture_output=True, timeout=300)
    [module] = (folder / "pkg").glob("_speedups*.so")
    return module


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's sources with the extension built in place: once for the module."""
    folder = tmp_path_factory.mktemp("compiled")
    (folder / "pkg").mkdir()
    (folder / "tests").mkdir()
    (folder / "pkg" / "_speedups.c").write_text(SOURCE)
    (folder / "pkg" / "__init__.py").write_text(PACKAGE)
    (folder / "setup.py").write_text(SETUP_PY)
    (folder / "tests" / "test_scale.py").write_text(TESTS)
    build(folder)
    return folder


def package(project: GitRepo, compiled: Path, settings: str = "") -> Path:
    """``main`` holds the package (``settings`` in its ``[tool.bounded-review]``), built in
    place and ignored; ``feature`` branches off it. The built module's path."""
    shutil.copytree(compiled, project.path, dirs_exist_ok=True)
    ignores = (project.path / ".gitignore").read_text() + "*.so\nbuild/\n*.egg-info/\n"
    config = PYTEST_INI + (f"[tool.bounded-review]\n{settings}" if settings else "")
    project.commit({".gitignore": ignores, "pyproject.toml": config}, "base")
    assert project.git("status", "--porcelain") == ""
    project.git("checkout", "--quiet", "-b", "feature")
    [module] = (project.path / "pkg").glob("_speedups*.so")
    return module


def reasons(report: dict[str, object], kind: str) -> dict[str, str]:
    tests = report["tests"]
    assert isinstance(tests, dict)
    return {t["nodeid"]: t["reason"] for t in tests[kind]}


@pytest.mark.parametrize("extra", XDIST)
def test_failures_of_the_compiled_cases_that_were_there_before_are_pre_existing(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path, extra: list[str]
) -> None:
    module = package(project, compiled)
    built = module.read_bytes()
    project.commit({"README.md": "docs\n"}, "docs only")
    with project.untouched():
        result, report = review(pytester, *extra)
    # Without the module at the base, test_legacy[c] would be "new" there and
    # test_compiled_only skipped; with it copied in, they fail there as they do here.
    assert sorted(ids(report, "pre_existing")) == PRE_EXISTING
    assert ids(report, "target_related") == []
    assert ids(report, "unknown") == []
    assert result.ret == 0
    assert module.read_bytes() == built


def test_a_regression_of_a_compiled_case_is_target_related(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    package(project, compiled)
    broken = PACKAGE.replace("return _speedups.scale(x)", "return _speedups.scale(x) + 1")
    project.commit({"pkg/__init__.py": broken}, "off by one in the compiled path")
    result, report = review(pytester)
    assert reasons(report, "target_related") == {
        "tests/test_scale.py::test_scale[c]": "passes at base"
    }
    assert ids(report, "unknown") == []
    assert result.ret == 1


def test_a_change_to_the_c_source_keeps_the_stale_module_from_the_base(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    package(project, compiled)
    project.commit({"pkg/_speedups.c": SOURCE.replace("x * 2 */", "twice x */")}, "c comment")
    result, report = review(pytester)
    unknown = reasons(report, "unknown")
    assert sorted(unknown) == PRE_EXISTING
    for reason in unknown.values():
        assert reason.startswith("the base run could not import pkg._speedups, built in the ")
        assert "the change touches what they are built from (pkg/_speedups.c)" in reason
    assert ids(report, "pre_existing") == []
    assert result.ret == 1


def test_base_setup_builds_the_base_the_change_edits_the_c_source_of(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    package(project, compiled, BUILD_SETTING)
    project.commit({"pkg/_speedups.c": SOURCE.replace("x * 2)", "x * 3)")}, "triple")
    module = build(project.path)  # the working tree's module is the change's
    built = module.read_bytes()
    with project.untouched():
        result, report = review(pytester)
    # The base's own build scales by 2: test_scale[c] passes there, so the change broke it.
    assert reasons(report, "target_related") == {
        "tests/test_scale.py::test_scale[c]": "passes at base"
    }
    assert sorted(ids(report, "pre_existing")) == [
        "tests/test_scale.py::test_legacy[c]",
        "tests/test_scale.py::test_legacy[py]",
    ]
    assert ids(report, "unknown") == []
    assert result.ret == 1
    assert module.read_bytes() == built, "the base's build never reaches the working tree"


FAILING_SETUP = (
    'base_setup = ["python", "-c", '
    "\"import sys; print('step 1'); print('no compiler here'); sys.exit(3)\"]\n"
)


def test_a_failing_base_setup_makes_every_base_answer_unknown(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    package(project, compiled, FAILING_SETUP)
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    expected = "the base could not be set up: base_setup python -c 'import sys; print('\"'\"'step 1"
    unknown = reasons(report, "unknown")
    assert sorted(unknown) == PRE_EXISTING
    for reason in unknown.values():
        assert reason.startswith(expected)
        assert reason.endswith("exited 3: step 1\nno compiler here")
    assert ids(report, "pre_existing") == []
    assert result.ret == 1

    # The same when the re-run is started the usual way, not early in the session.
    opened = git.open_repo(project.path)
    settings, _ = load_settings(project.path, opened.root)
    base = project.git("rev-parse", "main")
    state = project.path / ".bounded-review"
    run = BaselineRun.configured(opened, project.path, base, [], settings, state)
    with pytest.raises(BaseUnavailable, match="exited 3: step 1\nno compiler here"):
        base_verdicts(run, ["tests/test_scale.py::test_legacy[py]"])


# Makes the base's test fail as the regression below does, if it ran at the base.
AROUND = (
    'base_setup = ["python", "-c", "import pathlib; p = pathlib.Path(\'tests/test_scale.py\'); '
    "p.write_text(p.read_text().replace('== 6', '== 7'))\"]\n"
)


def test_a_change_to_base_setup_is_reviewed_with_the_bases(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    package(project, compiled)
    config = PYTEST_INI + "[tool.bounded-review]\n" + AROUND
    broken = PACKAGE.replace("return x * 2", "return x * 3")
    project.commit({"pkg/__init__.py": broken, "pyproject.toml": config}, "break, and hide it")
    result, report = review(pytester)
    assert reasons(report, "target_related") == {
        "tests/test_scale.py::test_scale[py]": "passes at base"
    }
    assert any(
        item.startswith("base_setup is changed by the change: the base's (none) is used")
        for item in report["limitations"]
    )
    assert result.ret == 1


def test_a_kept_base_checkout_is_set_up_afresh_each_time(
    pytester: pytest.Pytester,
    project: GitRepo,
    compiled: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = tmp_path / "setup-runs"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SETUP_RUNS", str(runs))  # the session's environment reaches it
    counting = (
        "import os, subprocess, sys\n"
        "with open(os.environ['SETUP_RUNS'], 'a') as runs:\n"
        "    runs.write(os.getcwd() + '\\n')\n"
        "subprocess.run([sys.executable, 'setup.py', '-q', 'build_ext', '--inplace'], check=True)\n"
    )
    (project.path / "build_base.py").write_text(counting)
    settings = 'reuse_base_checkout = true\nbase_setup = ["python", "build_base.py"]\n'
    package(project, compiled, settings)
    project.commit({"pkg/_speedups.c": SOURCE.replace("x * 2 */", "twice x */")}, "c comment")
    for _ in range(2):
        shutil.rmtree(project.path / ".bounded-review" / "cache", ignore_errors=True)
        result, report = review(pytester)
        assert sorted(ids(report, "pre_existing")) == PRE_EXISTING
        assert ids(report, "unknown") == []
        assert result.ret == 0
    ran_in = runs.read_text().splitlines()
    assert len(ran_in) == 2
    assert ran_in[0] == ran_in[1]  # the kept checkout, built anew after its clean-up
    assert not ran_in[0].startswith(str(project.path))


def test_a_base_setup_that_does_not_finish_is_named(
    pytester: pytest.Pytester, project: GitRepo, compiled: Path
) -> None:
    slow = 'base_timeout = 2\nbase_setup = ["python", "-c", "import time; time.sleep(60)"]\n'
    package(project, compiled, slow)
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    unknown = reasons(report, "unknown")
    assert sorted(unknown) == PRE_EXISTING
    for reason in unknown.values():
        assert reason == (
            "base run timed out: base_setup python -c 'import time; time.sleep(60)' "
            "did not finish within 2s"
        )
    assert result.ret == 1
