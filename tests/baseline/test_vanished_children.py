"""No silent wait: a re-run child that dies, or whose folders vanish under it (a cleaner of the
temporary folder), is noticed at once and the base re-run runs once more in a new checkout;
while the session waits on a child, a progress line every few seconds says what it waits for.

Every session here keeps ``base_timeout`` at its default (900 s) and is bounded by a
subprocess timeout far below it: before, each of these waited the whole 900 s in silence, or
answered from a tree that was no longer there."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo, interruptible
from test_base_isolation_e2e import _processes_in
from test_early_base import finish

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

BOUND = 240  # seconds: far below base_timeout (900), far above a session's own time

# test_a fails at the base too (pre-existing); test_b holds the session until GO exists.
TESTS = """\
import os, time

import slow


def test_a():
    time.sleep(slow.DELAY)
    assert 0


def test_b():
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["GO"]) and time.monotonic() < deadline:
        time.sleep(0.05)
"""
# A waiting re-run child notes its pid and folder as it starts to wait for its node ids.
CONFTEST = """\
import os
import sys

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    if os.environ.get("WAITING") and "--bounded-review-wait" in sys.argv:
        with open(os.environ["WAITING"], "a") as stamps:
            stamps.write(f"{os.getpid()} {os.getcwd()}\\n")
    return (yield)
"""
INTERVAL = "BOUNDED_REVIEW_PROGRESS_SECONDS"
WAITING = "bounded-review: waiting for "


def _change(project: GitRepo, tmp_path: Path, base_delay: int = 0) -> dict[str, str]:
    """A harmless change (``slow.py``'s delay) beside a pre-existing failure; the base's
    test_a sleeps ``base_delay`` seconds first. Temporary folders go to ``scratch``."""
    files = {"slow.py": f"DELAY = {base_delay}\n", "test_ab.py": TESTS, "conftest.py": CONFTEST}
    project.commit(files, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"slow.py": "DELAY = 0  # faster\n"}, "harmless")
    (tmp_path / "scratch").mkdir()
    return {
        **os.environ,
        "TMPDIR": str(tmp_path / "scratch"),
        "GO": str(tmp_path / "go"),
        "HEAD_DIR": str(project.path),
        "WAITING": str(tmp_path / "waiting"),
    }


def _start(repo: GitRepo, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", *extra]
    argv += ["--bounded-review", "--bounded-review-base=main"]
    log = Path(env["TMPDIR"]).parent / "run.log"
    with log.open("wb") as out:
        return subprocess.Popen(
            argv,
            cwd=repo.path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,  # default signal handling, as a user's shell gives
        )


def _end(run: subprocess.Popen[bytes], env: dict[str, str]) -> tuple[dict[str, Any], str]:
    """Let the session end (GO), within :data:`BOUND`; its report and its output."""
    Path(env["GO"]).touch()
    log = Path(env["TMPDIR"]).parent / "run.log"
    try:
        run.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        raise AssertionError(f"the session waited on:\n{log.read_text(errors='replace')}") from None
    return finish(run, env), log.read_text(errors="replace")


def _waiting(run: subprocess.Popen[bytes], env: dict[str, str], at_head: bool = False) -> int:
    """The pid of the early child at the base (or at head), once it waits for its node ids."""
    stamps, log = Path(env["WAITING"]), Path(env["TMPDIR"]).parent / "run.log"
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline and run.poll() is None:
        lines = stamps.read_text().splitlines() if stamps.exists() else []
        for pid, cwd in (line.split(" ", 1) for line in lines):
            if (cwd == env["HEAD_DIR"]) == at_head:
                return int(pid)
        time.sleep(0.05)
    run.kill()
    run.wait()
    raise AssertionError(f"no early child waits:\n{log.read_text(errors='replace')}")


def _ours(scratch: Path, kind: str) -> list[Path]:
    return sorted(scratch.glob(f"bounded-review-{kind}-*"))


def _remove(folders: list[Path]) -> None:
    assert folders, "nothing to remove: the early re-run made no folder"
    for folder in folders:
        shutil.rmtree(folder)


def _answered_at_base(report: dict[str, Any], run: subprocess.Popen[bytes], log: str) -> None:
    """The pre-existing failure filed as such: the base answered after all."""
    tests = report["tests"]
    assert [t["nodeid"] for t in tests["pre_existing"]] == ["test_ab.py::test_a"], log
    assert tests["target_related"] == [], log
    assert tests["unknown"] == [], log
    assert report["gate"]["review_clean"] == "yes", log
    assert run.returncode == 0, log


def _left_nothing(repo: GitRepo, scratch: Path) -> None:
    assert _processes_in(scratch) == []
    repo.git("worktree", "prune")  # a checkout removed under git leaves its record
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert list(scratch.iterdir()) == []


XDIST = pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])


@XDIST
@pytest.mark.parametrize("bytecode", ["1", None], ids=["nobytecode", "bytecode"])
@pytest.mark.parametrize("which", ["rerun", "base", "*"])
def test_the_early_base_childs_folders_vanish_while_it_waits(
    project: GitRepo, tmp_path: Path, extra: list[str], bytecode: str | None, which: str
) -> None:
    """Its record folder, its checkout, or both removed while it waits for its node ids:
    noticed at once (not at base_timeout), and the failure re-run in a new checkout."""
    env = _change(project, tmp_path)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if bytecode is not None:
        env["PYTHONDONTWRITEBYTECODE"] = bytecode
    scratch = Path(env["TMPDIR"])
    with project.untouched():
        run = _start(project, env, *extra)
        _waiting(run, env)
        _remove(_ours(scratch, which))
        report, log = _end(run, env)
    _answered_at_base(report, run, log)
    _left_nothing(project, scratch)


@XDIST
def test_the_early_base_child_killed_while_it_waits(
    project: GitRepo, tmp_path: Path, extra: list[str]
) -> None:
    env = _change(project, tmp_path)
    scratch = Path(env["TMPDIR"])
    with project.untouched():
        run = _start(project, env, *extra)
        os.kill(_waiting(run, env), signal.SIGKILL)
        report, log = _end(run, env)
    _answered_at_base(report, run, log)
    _left_nothing(project, scratch)


def _wait_for_line(run: subprocess.Popen[bytes], env: dict[str, str], text: str) -> None:
    log = Path(env["TMPDIR"]).parent / "run.log"
    deadline = time.monotonic() + BOUND
    while text not in log.read_text(errors="replace"):
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            run.wait()
            raise AssertionError(f"no {text!r} line:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)


@XDIST
def test_the_checkout_vanishes_while_the_base_rerun_runs(
    project: GitRepo, tmp_path: Path, extra: list[str]
) -> None:
    """The base re-run is under way (its test sleeps) when its checkout is removed: before,
    the test was then "missing at base" and the harmless change blocked; now the re-run runs
    once more in a new checkout."""
    env = _change(project, tmp_path, base_delay=4)
    env[INTERVAL] = "0.2"
    scratch = Path(env["TMPDIR"])
    Path(env["GO"]).touch()  # nothing holds: the session waits for the base at its end
    with project.untouched():
        run = _start(project, env, *extra)
        _wait_for_line(run, env, WAITING + "the base re-run of 1 test(s)")
        _remove(_ours(scratch, "base"))
        report, log = _end(run, env)
    _answered_at_base(report, run, log)
    _left_nothing(project, scratch)


@XDIST
@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["normal", "quiet"])
def test_a_slow_base_rerun_says_what_it_waits_for(
    project: GitRepo, tmp_path: Path, extra: list[str], quiet: list[str]
) -> None:
    env = _change(project, tmp_path, base_delay=3)
    env[INTERVAL] = "0.5"
    Path(env["GO"]).touch()
    with project.untouched():
        report, log = _end(_start(project, env, *extra, *quiet), env)
    base = project.git("rev-parse", "main")[:12]
    lines = [line for line in log.splitlines() if line.startswith(WAITING)]
    assert lines, log
    assert lines[0].startswith(f"{WAITING}the base re-run of 1 test(s) at {base} ("), log
    assert lines[0].endswith(" s)"), log
    assert report["gate"]["review_clean"] == "yes", log


def test_without_the_terminal_a_slow_base_rerun_waits_quietly(
    project: GitRepo, tmp_path: Path
) -> None:
    env = _change(project, tmp_path, base_delay=2)
    env[INTERVAL] = "0.2"
    Path(env["GO"]).touch()
    run = _start(project, env, "-p", "no:terminal")
    report, log = _end(run, env)
    assert WAITING not in log
    _answered_at_base(report, run, log)


@XDIST
def test_harmless_a_session_that_waits_on_nothing_says_nothing_of_waiting(
    project: GitRepo, tmp_path: Path, extra: list[str]
) -> None:
    """Nothing fails: no child is waited on, and no line says so, however short the
    interval."""
    passing = {"slow.py": "DELAY = 0\n", "test_ab.py": TESTS.replace("assert 0", "assert 1")}
    project.commit(passing, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"slow.py": "DELAY = 0  # harmless\n"}, "harmless")
    (tmp_path / "scratch").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "scratch"), "GO": str(tmp_path / "go")}
    env["HEAD_DIR"] = str(project.path)
    env[INTERVAL] = "0.001"
    Path(env["GO"]).touch()
    with project.untouched():
        run = _start(project, env, *extra)
        report, log = _end(run, env)
    assert WAITING not in log
    assert report["gate"]["review_clean"] == "yes", log
    assert run.returncode == 0


# test_a's subtests log reports of their own: its flaky check at head runs in a pytest
# child started at the first failure (earlyhead.py).
SUBTESTS = TESTS.replace(
    "def test_a():\n    time.sleep(slow.DELAY)\n    assert 0\n",
    "def test_a(subtests):\n    with subtests.test(i=1):\n        assert 0\n",
)


def _record_folder(pid: int) -> Path:
    """The folder the re-run child ``pid`` records into."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    (folder,) = [a.split("=", 1)[1] for a in args if a.startswith("--bounded-review-record=")]
    return Path(folder)


@XDIST
def test_the_early_head_childs_folder_vanishes_while_it_waits(
    project: GitRepo, tmp_path: Path, extra: list[str]
) -> None:
    env = _change(project, tmp_path)
    project.git("checkout", "--quiet", "main")
    project.commit({"test_ab.py": SUBTESTS}, "subtests")
    project.git("checkout", "--quiet", "feature")
    project.git("rebase", "--quiet", "main")
    scratch = Path(env["TMPDIR"])
    with project.untouched():
        run = _start(project, env, *extra)
        _remove([_record_folder(_waiting(run, env, at_head=True))])
        report, log = _end(run, env)
    _answered_at_base(report, run, log)
    _left_nothing(project, scratch)
