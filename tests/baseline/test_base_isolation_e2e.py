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
from gitrepo import PYTESTER_IGNORES, GitRepo, interruptible

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

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


def check():
    time.sleep(float(os.environ.get("BASE_SLEEP", "0")))
"""
# The change breaks the code, not the test: a change to a test file would have the base list
# its collection while the session runs, and these tests stop the run during the re-run.
SLOW_TEST = "import slow\n\n\ndef test_slow():\n    slow.check()\n"


# A pytest process's own command line (its arguments NUL-separated): not the shell that makes
# the checkout first and names pytest in its one script argument.
PYTEST = "-m\0pytest\0"


def _processes_in(folder: Path, running: str = "") -> list[int]:
    """Processes whose working directory is inside ``folder`` (and whose command line holds
    ``running``)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(os.readlink(proc / "cwd")).is_relative_to(folder) and (
                    running.encode() in (proc / "cmdline").read_bytes()
                ):
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _start_and_wait_for_base(
    argv: list[str], cwd: Path, env: dict[str, str], scratch: Path
) -> subprocess.Popen[bytes]:
    log = scratch.parent / "run.log"  # a file, not a pipe nobody reads while we wait
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,
        )
    deadline = time.monotonic() + 120
    # Wait until the base re-run's pytest works inside its checkout (not merely the git that
    # `worktree add` starts there).
    while (
        time.monotonic() < deadline and proc.poll() is None and not _processes_in(scratch, PYTEST)
    ):
        time.sleep(0.1)
    if not _processes_in(scratch, PYTEST):
        proc.kill()
        proc.wait()
        raise AssertionError(f"the base re-run never started:\n{log.read_text(errors='replace')}")
    return proc


@pytest.fixture
def slow_base(project: GitRepo, tmp_path: Path) -> tuple[GitRepo, Path, list[str], dict[str, str]]:
    """A test that fails fast at head and sleeps at the base, so a run can be stopped while
    it re-runs at the base. Temporary folders go to a scratch folder of the test's own."""
    project.commit({"slow.py": SLOW_AT_BASE, "test_slow.py": SLOW_TEST}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"slow.py": "def check():\n    assert False\n"}, "regression")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "BASE_SLEEP": "120"}
    env.pop("PYTHONUNBUFFERED", None)  # the log is a file, buffered as a CI log is
    argv = [sys.executable, "-m", "pytest", "--bounded-review", "--bounded-review-base=main"]
    return project, scratch, argv, env


def test_a_killed_run_leaves_nothing_once_the_next_run_sweeps(
    slow_base: tuple[GitRepo, Path, list[str], dict[str, str]],
) -> None:
    project, scratch, argv, env = slow_base
    victim = _start_and_wait_for_base(argv, project.path, env, scratch)
    victim.kill()  # SIGKILL to the run itself only: its re-run must not live on
    victim.communicate()
    deadline = time.monotonic() + 10
    while _processes_in(scratch) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_in(scratch) == []
    assert len(project.git("worktree", "list").splitlines()) == 2  # the leftover

    # The next run needs no base at all (the test is fixed) and still sweeps.
    project.commit({"slow.py": "def check():\n    pass\n"}, "fix")
    done = subprocess.run(
        argv, cwd=project.path, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stdout
    assert len(project.git("worktree", "list").splitlines()) == 1
    assert list(scratch.iterdir()) == []


def test_ctrl_c_during_the_base_run(
    slow_base: tuple[GitRepo, Path, list[str], dict[str, str]],
) -> None:
    project, scratch, argv, env = slow_base
    run = _start_and_wait_for_base(argv, project.path, env, scratch)
    # The base child starts at the first failure, while the session still runs, and is handed
    # its tests as the session's end begins, before pytest's own plugins end it: wait until
    # the review itself has begun (its flaky check comes after those), so Ctrl-C lands there
    # and not in pytest's own session end.
    log = scratch.parent / "run.log"
    deadline = time.monotonic() + 120
    while "(flaky check 1)" not in log.read_text(errors="replace") and time.monotonic() < deadline:
        time.sleep(0.1)
    # The progress lines are in the log while the work runs, not only when the run ends (CI
    # logs are pipes).
    shown = log.read_text(errors="replace")
    assert "failing test(s) at base" in shown, "no progress line while waiting"
    assert "(flaky check 1)" in shown, "no progress line while waiting"
    run.send_signal(signal.SIGINT)
    try:
        run.wait(timeout=120)  # generous: a loaded 2-core machine
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        stuck = log.read_text(errors="replace")
        raise AssertionError(f"the run did not stop on Ctrl-C within 120 s:\n{stuck}") from None
    out = log.read_text(errors="replace")
    assert run.returncode == 2, out
    assert "Traceback" not in out
    report = json.loads((project.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "indeterminate"
    assert report["gate"]["reasons"] == ["the review was interrupted before it finished"]
    assert len(project.git("worktree", "list").splitlines()) == 1
    assert list(scratch.iterdir()) == []
