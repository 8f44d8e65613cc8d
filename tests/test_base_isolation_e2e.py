"""The base re-run sees base code even with the project installed in editable mode, and a
killed run's checkout is swept by the next run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from gitrepo import PYTESTER_IGNORES, GitRepo

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "calcpkg"
version = "0.0.1"
{packages}
"""
CODE = "def add(a, b):\n    return a + b\n"
TEST = "from calcpkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize("layout", ["src", "flat"])
def test_editable_install_does_not_shadow_the_base(tmp_path: Path, layout: str) -> None:
    repo = GitRepo.init(tmp_path / "proj")
    package = "src/calcpkg" if layout == "src" else "calcpkg"
    packages = (
        "[tool.setuptools.packages.find]\nwhere = ['src']"
        if layout == "src"
        else "[tool.setuptools]\npackages = ['calcpkg']"
    )
    repo.commit(
        {
            ".gitignore": PYTESTER_IGNORES + "*.egg-info/\nbuild/\n",
            "pyproject.toml": PYPROJECT.format(packages=packages),
            f"{package}/__init__.py": CODE,
            "tests/test_calc.py": TEST,
        },
        "base",
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({f"{package}/__init__.py": CODE.replace("a + b", "a * b")}, "regression")
    # A virtualenv that sees this environment's packages, with the project installed editable.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # addsitedir, not a bare path: the outer .pth files (this package's own editable
    # install among them) must be processed too.
    outer = sysconfig.get_paths()["purelib"]
    Path(site, "outer.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "-e",
            str(repo.path),
        ],
        check=True,
        capture_output=True,
    )
    with repo.untouched():
        proc = subprocess.run(
            [
                str(python),
                "-m",
                "pytest",
                "--bounded-review",
                "--bounded-review-base=main",
                "-p",
                "no:cacheprovider",
            ],
            cwd=repo.path,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    report_file = repo.path / ".bounded-review" / "report.json"
    assert report_file.exists(), proc.stdout + proc.stderr
    report = json.loads(report_file.read_text())
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == [
        "tests/test_calc.py::test_add"
    ], proc.stdout
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert proc.returncode == 1


SLOW_AT_BASE = """\
import os, time


def test_slow():
    time.sleep(float(os.environ.get("BASE_SLEEP", "0")))
"""


def test_a_killed_run_leaves_nothing_once_the_next_run_sweeps(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    project.commit({"test_slow.py": SLOW_AT_BASE}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_slow.py": "def test_slow():\n    assert False\n"}, "regression")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "BASE_SLEEP": "0"}
    argv = [sys.executable, "-m", "pytest", "--bounded-review", "--bounded-review-base=main"]
    # The test fails fast at head; at the base it sleeps, so the run is killed mid base re-run.
    victim = subprocess.Popen(
        argv,
        cwd=project.path,
        env={**env, "BASE_SLEEP": "120"},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(scratch.glob("bounded-review-base-*/tree")):
        time.sleep(0.1)
    assert list(scratch.glob("bounded-review-base-*/tree")), "the base checkout never appeared"
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    assert len(project.git("worktree", "list").splitlines()) == 2  # the leftover

    done = subprocess.run(
        argv, cwd=project.path, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 1, done.stdout
    assert len(project.git("worktree", "list").splitlines()) == 1
    assert not list(scratch.glob("bounded-review-base-*"))
