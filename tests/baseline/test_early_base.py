"""The base re-run starts at the session's first failure the base cache does not know, runs
its pytest start while the session goes on, and is cleaned up on every exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, interruptible
from test_base_isolation_e2e import PYTEST, _processes_in

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# The root conftest notes every process that imports it in the base checkout, and every
# re-run (a recorder) that imports it at head.
CONFTEST = """\
import os
import sys

if os.environ.get("BASE_STAMPS") and not os.getcwd().startswith(os.environ["HEAD_DIR"]):
    with open(os.environ["BASE_STAMPS"], "a") as stamps:
        stamps.write(f"{os.getpid()}\\n")
recording = any(arg.startswith("--bounded-review-record") for arg in sys.argv)
if os.environ.get("HEAD_STAMPS") and os.getcwd() == os.environ["HEAD_DIR"] and recording:
    with open(os.environ["HEAD_STAMPS"], "a") as stamps:
        stamps.write(f"{os.getpid()}\\n")
"""
# test_a fails first; test_b then holds the session until the file GO exists.
TESTS = """\
import os, time


def test_a():
    assert {value}


def test_b():
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["GO"]) and time.monotonic() < deadline:
        time.sleep(0.05)
"""


@pytest.fixture
def change(project: GitRepo, tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """``test_a`` passes at base and fails at head; temporary folders go to ``scratch``."""
    project.commit({"conftest.py": CONFTEST, "test_ab.py": TESTS.format(value=1)}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_ab.py": TESTS.format(value=0)}, "regression")
    (tmp_path / "scratch").mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path / "scratch"),
        "GO": str(tmp_path / "go"),
        "BASE_STAMPS": str(tmp_path / "stamps"),
        "HEAD_DIR": str(project.path),
    }
    return project, env


def start(repo: GitRepo, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
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
            preexec_fn=interruptible,
        )


def wait_for_base_child(run: subprocess.Popen[bytes], scratch: Path) -> list[int]:
    """The base re-run's pytest, waiting in its checkout while the session still runs."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        found = _processes_in(scratch, PYTEST)  # in the checkout: it is made
        if found:
            return found
        time.sleep(0.05)
    run.kill()
    run.wait()
    log = (scratch.parent / "run.log").read_text(errors="replace")
    raise AssertionError(f"no base re-run started during the session:\n{log}")


def finish(run: subprocess.Popen[bytes], env: dict[str, str]) -> dict[str, Any]:
    Path(env["GO"]).touch()
    run.wait(timeout=300)
    report = Path(env["HEAD_DIR"]) / ".bounded-review" / "report.json"
    log = (Path(env["TMPDIR"]).parent / "run.log").read_text(errors="replace")
    assert report.exists(), log
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def run_review(
    repo: GitRepo, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """A whole session to its end, temporary folders in ``tmp_path``; and its report."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", *args, "--bounded-review"]
    done = warmstart.run(
        [*argv, "--bounded-review-base=main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    report: dict[str, Any] = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    return done, report


def stamps(env: dict[str, str], which: str = "BASE_STAMPS") -> list[str]:
    path = Path(env[which])
    return path.read_text().split() if path.exists() else []


# test_a fails first (its subtests log reports of their own: re-run at head in a new process,
# not in the session's); test_b then holds the session until the file GO exists.
SUBTESTS = """\
import os, time


def test_a(subtests):
    with subtests.test(i=1):
        assert {value}


def test_b():
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["GO"]) and time.monotonic() < deadline:
        time.sleep(0.05)
"""


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_head_rerun_in_a_new_process_starts_while_the_session_still_runs(
    change: tuple[GitRepo, dict[str, str]], tmp_path: Path, extra: list[str]
) -> None:
    """A test whose subtests log their own reports is re-run at head in a new process, not
    in the session's or on an xdist worker: it starts at the first failure, and is the one
    that re-runs the failure at the end."""
    repo, env = change
    repo.git("checkout", "--quiet", "main")  # the same change, in a subtests test
    repo.commit({"test_ab.py": SUBTESTS.format(value=1)}, "base, subtests")
    repo.git("checkout", "--quiet", "-B", "feature")
    repo.commit({"test_ab.py": SUBTESTS.format(value=0)}, "regression")
    failing = "test_ab.py::test_a"
    env["HEAD_STAMPS"] = str(tmp_path / "head-stamps")
    scratch = Path(env["TMPDIR"])
    with repo.untouched():
        run = start(repo, env, *extra)
        deadline = time.monotonic() + 120
        while not stamps(env, "HEAD_STAMPS") and time.monotonic() < deadline:
            assert run.poll() is None, (scratch.parent / "run.log").read_text(errors="replace")
            time.sleep(0.05)
        assert stamps(env, "HEAD_STAMPS"), "no re-run at head started during the session"
        assert run.poll() is None, "the session is still holding in test_b"
        report = finish(run, env)
    assert run.returncode == 1
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == [failing]
    assert len(stamps(env, "HEAD_STAMPS")) == 1, "one head child: the early one re-ran test_a"
    assert _processes_in(scratch) == []


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_base_rerun_starts_while_the_session_still_runs(
    change: tuple[GitRepo, dict[str, str]], extra: list[str]
) -> None:
    repo, env = change
    scratch = Path(env["TMPDIR"])
    with repo.untouched():
        run = start(repo, env, *extra)
        wait_for_base_child(run, scratch)
        assert run.poll() is None, "the session is still holding in test_b"
        report = finish(run, env)
    assert run.returncode == 1
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_ab.py::test_a"]
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert len(stamps(env)) == 1, "one base child: the early one did the re-run"
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert _processes_in(scratch) == []
    assert list(scratch.iterdir()) == []


def test_a_failure_the_base_cache_knows_starts_nothing(
    change: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, env = change
    Path(env["GO"]).touch()
    first = start(repo, env)
    related = finish(first, env)["tests"]["target_related"]  # the session outran the add
    assert related[0]["reason"] == "passes at base"
    assert len(stamps(env)) == 1
    Path(env["GO"]).unlink()

    second = start(repo, env)
    window = time.monotonic() + 5  # the early child imports the base conftest within this
    while time.monotonic() < window and not stamps(env)[1:] and second.poll() is None:
        time.sleep(0.05)
    report = finish(second, env)
    assert len(stamps(env)) == 1, "the cached failure started no base child"
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"


def test_an_early_child_that_broke_is_replaced(change: tuple[GitRepo, dict[str, str]]) -> None:
    """The early child fails (here its base conftest refuses a waiting child): a re-run
    started the usual way in the same checkout replaces it, and the verdict stands."""
    repo, env = change
    refuse = "import sys\n\nif '--bounded-review-wait' in sys.argv:\n    raise RuntimeError('no')\n"
    repo.git("checkout", "--quiet", "main")
    repo.commit({"conftest.py": CONFTEST + refuse}, "refuse waiting")
    repo.git("checkout", "--quiet", "feature")
    repo.git("rebase", "--quiet", "main")
    Path(env["GO"]).touch()
    report = finish(start(repo, env), env)
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_ab.py::test_a"]
    assert report["tests"]["unknown"] == []
    assert len(set(stamps(env))) == 2, "the early child and the one that replaced it"
    assert list(Path(env["TMPDIR"]).iterdir()) == []


def test_the_early_child_loads_the_conftest_files_of_the_sessions_paths(
    project: GitRepo, tmp_path: Path
) -> None:
    """A conftest of a folder the session was given is one pytest loads at the start (where
    it may name plugins): the early child, given the same paths, loads it the same way."""
    conftest = 'pytest_plugins = ["pytester"]\n'
    project.commit(
        {"unit/conftest.py": conftest, "unit/test_u.py": "def test_u():\n    assert 0\n"}
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"unit/other.py": "x = 1\n"}, "change")
    done, report = run_review(project, tmp_path, "unit")
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["unit/test_u.py::test_u"]
    assert report["tests"]["unknown"] == [], done.stdout


def test_the_early_child_runs_in_the_sessions_environment_not_a_failing_tests(
    project: GitRepo, tmp_path: Path
) -> None:
    """The first failure's report arrives while its monkeypatching is in place: the base
    re-run must not inherit it (here it would make test_b fail at base too)."""
    tests = """\
import os

import app


def test_a(monkeypatch):
    monkeypatch.setenv("INJECTED", "1")
    assert False


def test_b():
    assert app.f() + int(os.environ.get("INJECTED", "0")) == 1
"""
    project.commit({"app.py": "def f():\n    return 1\n", "test_ab.py": tests}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "def f():\n    return 2\n"}, "regression")
    done, report = run_review(project, tmp_path)
    related = {t["nodeid"]: t["reason"] for t in report["tests"]["target_related"]}
    assert related == {"test_ab.py::test_b": "passes at base"}, done.stdout
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_ab.py::test_a"]
    assert done.returncode == 1


def held_with_its_base_child(
    change: tuple[GitRepo, dict[str, str]],
) -> tuple[GitRepo, dict[str, str], Path, subprocess.Popen[bytes]]:
    """A session held in its last test, its early base child waiting."""
    repo, env = change
    scratch = Path(env["TMPDIR"])
    run = start(repo, env)
    wait_for_base_child(run, scratch)
    return repo, env, scratch, run


def test_ctrl_c_after_the_early_start_leaves_nothing(
    change: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, _, scratch, run = held_with_its_base_child(change)
    run.send_signal(signal.SIGINT)
    run.wait(timeout=120)
    assert run.returncode == 2
    assert _processes_in(scratch) == []
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert list(scratch.iterdir()) == []


def test_a_killed_session_takes_its_early_child_along_and_the_next_run_sweeps(
    change: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, env, scratch, run = held_with_its_base_child(change)
    run.kill()
    run.wait()
    # The child sees it is orphaned at its next poll; a loaded machine may hold it a while
    # before it polls (still starting up), so the deadline only bounds a child that never ends.
    deadline = time.monotonic() + 60
    while _processes_in(scratch) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_in(scratch) == []
    assert len(repo.git("worktree", "list").splitlines()) == 2  # the leftover

    report = finish(start(repo, env), env)
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert list(scratch.iterdir()) == []


# Notes the folder of every pytest process that imports it in a checkout of the base (its
# test_ab.py still holds the passing assertion).
CWD_CONFTEST = """\
import os

if os.environ.get("BASE_CWDS") and "assert 1" in open("test_ab.py").read():
    with open(os.environ["BASE_CWDS"], "a") as cwds:
        cwds.write(os.getcwd() + "\\n")
"""
REPRODUCING_LANE = """\
import json
finding = {"path": "test_ab.py", "line": 5, "severity": "blocking", "category": "correctness",
           "failure_mode": "test_a no longer passes", "evidence": "assert 0",
           "remediation": "restore it", "reproduce": {"pytest": "test_ab.py::test_a"}}
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "revise",
                  "rationale": "see the finding", "findings": [finding]}))
"""


def test_a_reproduction_at_the_base_runs_in_the_early_childs_checkout(
    project: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without checks to run at the base, the early child's checkout outlives the
    # classification: the lane's reproduction at the base runs there, no second checkout.
    lane = tmp_path / "lane.py"
    lane.write_text(REPRODUCING_LANE)
    config = (
        '[[tool.bounded-review.lanes]]\nname = "repro"\nlens = "correctness"\n'
        f"command = {json.dumps([sys.executable, str(lane)])}\n"
    )
    files = {"conftest.py": CWD_CONFTEST, "test_ab.py": TESTS.format(value=1)}
    project.commit({**files, "pyproject.toml": config}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_ab.py": TESTS.format(value=0)}, "regression")
    (tmp_path / "go").touch()
    monkeypatch.setenv("GO", str(tmp_path / "go"))
    monkeypatch.setenv("BASE_CWDS", str(tmp_path / "cwds"))
    done, report = run_review(project, tmp_path)
    blockers = report["findings"]["blocking"]
    assert [f["verification"] for f in blockers] == ["reproduced"], done.stdout + done.stderr
    at_base = (tmp_path / "cwds").read_text().splitlines()
    assert len(at_base) == 2, at_base  # the classification's child, then the reproduction
    assert len(set(at_base)) == 1, "the reproduction made a checkout of its own"
