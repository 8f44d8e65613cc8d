"""The checkout of the snapshot is given what the working tree's run relies on and git does not
track, as a base checkout is, end to end: submodules at the snapshot's commits (from local
objects: the submodule's own checkout, index and HEAD stay as they are), compiled modules built
in place while the working tree's sources are the snapshot's, the Hypothesis example database.
What it cannot be given keeps the gate from `yes`: a submodule commit missing locally, a
compiled module whose sources in the working tree are not the snapshot's that a test imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo, clean_env

COMMAND = (sys.executable, "-m", "pytest_boundedreview", "run", "--target", "staged")
ALLOW = ("-c", "protocol.file.allow=always")
WORKERS = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
BYTECODE = [pytest.param(True, id="no-bytecode"), pytest.param(False, id="bytecode")]
LIB = "def mul(a, b):\n    return a * b\n"
CONFTEST = (
    "import os\nimport sys\n\n"
    "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'vendor', 'lib'))\n"
)
TEST_MUL = "import lib\n\n\ndef test_mul():\n    assert lib.mul(2, 3) == 6\n"
APP = "def f():\n    return 1\n"
TEST_APP = "from app import f\n\n\ndef test_f():\n    assert f() == 1\n"


def run(repo: GitRepo, *argv: str, no_bytecode: bool = True) -> subprocess.CompletedProcess[str]:
    """``bounded-review run --target staged --no-lanes ARGV`` in ``repo``, as a user's shell
    runs it (with or without ``PYTHONDONTWRITEBYTECODE``)."""
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [*COMMAND, "--no-lanes", "--", "-p", "no:randomly", *argv],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def report(repo: GitRepo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    return data


def ids(data: dict[str, Any], kind: str) -> list[str]:
    return sorted(t["nodeid"] for t in data["tests"][kind])


def submodule_state(repo: GitRepo) -> tuple[str, str, bytes]:
    """The submodule's HEAD, status and index bytes: none of them is the tool's to change."""
    sub = GitRepo(repo.path / "vendor" / "lib")
    index = Path(sub.git("rev-parse", "--path-format=absolute", "--git-path", "index"))
    return sub.git("rev-parse", "HEAD"), sub.git("status", "--porcelain"), index.read_bytes()


@pytest.fixture
def library(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    lib = GitRepo.init(tmp_path_factory.mktemp("lib") / "lib")
    lib.commit({"lib.py": LIB, ".gitignore": "__pycache__/\n"}, "lib")
    return lib


@pytest.fixture
def vendored(tmp_path: Path, library: GitRepo) -> GitRepo:
    """A project whose conftest puts its submodule ``vendor/lib`` on ``sys.path``."""
    repo = GitRepo.init(tmp_path / "project")
    repo.git(*ALLOW, "submodule", "--quiet", "add", str(library.path), "vendor/lib")
    ignores = ".bounded-review/\n__pycache__/\n.hypothesis/\n"
    files = {".gitignore": ignores, "conftest.py": CONFTEST, "app.py": APP}
    repo.commit({**files, "tests/test_mul.py": TEST_MUL, "tests/test_app.py": TEST_APP}, "base")
    return repo


@pytest.mark.slow
@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("no_bytecode", BYTECODE)
def test_a_harmless_change_passes_with_the_submodule_in_the_tested_checkout(
    vendored: GitRepo, workers: list[str], no_bytecode: bool
) -> None:
    vendored.write("app.py", APP + "\n\ndef g():\n    return 2\n")
    vendored.git("add", "app.py")
    vendored.write("notes.txt", "scratch\n")  # untracked: the session runs in a checkout
    sub = submodule_state(vendored)
    with vendored.untouched():
        done = run(vendored, *workers, no_bytecode=no_bytecode)
    assert "testing the snapshot in a checkout of its own" in done.stderr
    data = report(vendored)
    # Without the submodule there, test_mul failed at the snapshot: "imports at base".
    assert data["gate"]["review_clean"] == "yes", data["gate"]
    assert ids(data, "target_related") == []
    assert ids(data, "unknown") == []
    assert done.returncode == 0, done.stdout + done.stderr
    assert submodule_state(vendored) == sub


def bump(repo: GitRepo, library: GitRepo, text: str) -> str:
    """Commit ``text`` as the library, check it out in the project's submodule and stage it."""
    new = library.commit({"lib.py": text}, "library change")
    sub = GitRepo(repo.path / "vendor" / "lib")
    sub.git("fetch", "--quiet", "origin")
    sub.git("checkout", "--quiet", new)
    repo.git("add", "vendor/lib")
    return new


@pytest.mark.slow
def test_a_staged_bump_to_a_broken_commit_is_refused_though_the_tree_is_back_on_a_good_one(
    vendored: GitRepo, library: GitRepo
) -> None:
    good = vendored.git("rev-parse", "HEAD:vendor/lib")
    bump(vendored, library, LIB.replace("a * b", "a + b"))
    GitRepo(vendored.path / "vendor" / "lib").git("checkout", "--quiet", good)  # unstaged
    sub = submodule_state(vendored)
    with vendored.untouched():
        done = run(vendored)
    data = report(vendored)
    # The staged commit is what is tested, not the one the working tree has checked out.
    assert ids(data, "target_related") == ["tests/test_mul.py::test_mul"], data["tests"]
    assert data["gate"]["review_clean"] == "no"
    assert done.returncode == 1
    assert submodule_state(vendored) == sub


@pytest.mark.slow
def test_a_staged_submodule_commit_missing_locally_keeps_the_gate_from_yes(
    vendored: GitRepo,
) -> None:
    lost = "0123456789abcdef0123456789abcdef01234567"
    vendored.git("update-index", "--cacheinfo", f"160000,{lost},vendor/lib")
    vendored.write("notes.txt", "scratch\n")
    with vendored.untouched():
        done = run(vendored)
    data = report(vendored)
    assert data["gate"]["review_clean"] != "yes"
    reasons = " ".join(data["gate"]["reasons"])
    assert "submodule vendor/lib: the staged snapshot's commit 0123456789ab" in reasons
    assert done.returncode != 0


@pytest.mark.slow
def test_the_hypothesis_database_is_in_the_tested_checkout(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "project")
    repo.write(".hypothesis/examples/k/v", "example\n")
    probe = "import os\n\n\ndef test_db():\n    assert os.path.isfile('.hypothesis/examples/k/v')\n"
    ignores = ".bounded-review/\n__pycache__/\n.hypothesis/\n"
    repo.commit({".gitignore": ignores, "app.py": APP, "tests/test_db.py": probe}, "base")
    repo.write("app.py", APP + "\n# staged\n")
    repo.git("add", "app.py")
    repo.write("notes.txt", "scratch\n")
    with repo.untouched():
        done = run(repo)
    data = report(repo)
    # Without it there, test_db failed at the snapshot and at its base alike: pre-existing.
    assert ids(data, "pre_existing") == []
    assert data["gate"]["review_clean"] == "yes", data["tests"]
    assert done.returncode == 0


SOURCE = """\
#include <Python.h>

static PyObject *twice(PyObject *self, PyObject *arg) {
    long x = PyLong_AsLong(arg);
    if (x == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(x * 2);
}

static PyMethodDef methods[] = {{"twice", twice, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
"""
SETUP_PY = """\
from setuptools import Extension, setup

setup(name="pkg", packages=["pkg"], ext_modules=[Extension("pkg._fast", ["pkg/_fast.c"])])
"""
TEST_FAST = "from pkg import _fast\n\n\ndef test_twice():\n    assert _fast.twice(3) == 6\n"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package with its extension built in place: once for the module."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("compiled")
    (folder / "pkg").mkdir()
    (folder / "pkg" / "_fast.c").write_text(SOURCE)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "setup.py").write_text(SETUP_PY)
    build = [sys.executable, "setup.py", "-q", "build_ext", "--inplace"]
    subprocess.run(build, cwd=folder, check=True, capture_output=True, timeout=300)
    shutil.rmtree(folder / "build", ignore_errors=True)
    return folder


@pytest.fixture
def built(tmp_path: Path, compiled: Path) -> GitRepo:
    """A project holding the package, its module built in place and ignored."""
    repo = GitRepo.init(tmp_path / "project")
    shutil.copytree(compiled, repo.path, dirs_exist_ok=True)
    ignores = ".bounded-review/\n__pycache__/\n*.so\nbuild/\n*.egg-info/\n"
    config = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
    files = {".gitignore": ignores, "pyproject.toml": config, "app.py": APP}
    repo.commit({**files, "tests/test_fast.py": TEST_FAST}, "base")
    assert repo.git("status", "--porcelain") == ""
    return repo


@pytest.mark.slow
@pytest.mark.parametrize("no_bytecode", BYTECODE)
def test_a_compiled_module_of_unchanged_sources_is_in_the_tested_checkout(
    built: GitRepo, no_bytecode: bool
) -> None:
    [module] = (built.path / "pkg").glob("_fast*.so")
    before = module.read_bytes()
    built.write("app.py", APP + "\n# staged\n")
    built.git("add", "app.py")
    built.write("notes.txt", "scratch\n")
    with built.untouched():
        done = run(built, no_bytecode=no_bytecode)
    data = report(built)
    # Without it there, test_twice failed at the snapshot and (its base made from that
    # checkout) at the base too: a failure called pre-existing that the working tree lacks.
    assert ids(data, "pre_existing") == []
    assert ids(data, "target_related") == []
    assert data["gate"]["review_clean"] == "yes", data["gate"]
    assert done.returncode == 0
    assert module.read_bytes() == before


@pytest.mark.slow
def test_a_compiled_module_whose_sources_differ_from_the_snapshot_is_not_passed_off(
    built: GitRepo,
) -> None:
    built.write("app.py", APP + "\n# staged\n")
    built.git("add", "app.py")
    built.write("pkg/_fast.c", SOURCE.replace("x * 2", "x * 3"))  # unstaged: not the snapshot's
    with built.untouched():
        done = run(built)
    data = report(built)
    assert data["gate"]["review_clean"] != "yes"
    reasons = " ".join(data["gate"]["reasons"])
    assert "imported compiled modules it was not given" in reasons
    assert "pkg._fast" in reasons
    assert done.returncode != 0
