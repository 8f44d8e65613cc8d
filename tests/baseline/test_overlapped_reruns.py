"""The flaky check at head and the base re-run overlap: the base re-run starts first and runs
while the failures are re-run at head in this process; under xdist each worker re-runs its
failures as its tests end, without waiting for the base re-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# Each run of the test appends where it ran, in which process, and when it started and ended.
TEST = """import json, os, time


def test_slow():
    start = time.time()
    time.sleep(1.5)
    with open(os.environ["RUNS_LOG"], "a") as log:
        log.write(json.dumps([os.getcwd(), os.getpid(), start, time.time()]) + "\\n")
    assert 0
"""


SERIAL_AND_XDIST = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])


@SERIAL_AND_XDIST
def test_the_head_and_base_reruns_run_at_the_same_time(
    pytester: pytest.Pytester,
    project: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    project.commit({"test_slow.py": TEST}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_slow.py": TEST + "# touched\n"}, "change")
    log = tmp_path / "runs.log"
    monkeypatch.setenv("RUNS_LOG", str(log))
    result = pytester.runpytest_subprocess(
        *workers, "--bounded-review", "--bounded-review-base=main"
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_slow.py::test_slow"]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    at_head = sorted((s, e, pid) for where, pid, s, e in runs if Path(where) == pytester.path)
    at_base = [(s, e) for where, _, s, e in runs if Path(where) != pytester.path]
    assert len(at_head) == 2, (runs, result.stdout.str())  # the session's run and the re-run
    assert len(at_base) == 1, (runs, result.stdout.str())
    (base_start, base_end), (_, _, ran_in), (rerun_start, rerun_end, rerun_in) = (
        at_base[0],
        *at_head,
    )
    assert rerun_in == ran_in, "the re-run at head was not in the process that ran the test"
    assert rerun_start < base_end, "the re-run at head began after the base re-run ended"
    if not workers:  # a worker's re-run may be over before the base's checkout is ready
        assert base_start < rerun_end, "the base re-run began after the re-run at head ended"


# The project's own last words at the session's end wait (up to a minute) for the base's run
# of the failing test, and note whether it came; at the base, and in re-runs, they do nothing.
SLOW_FINISH = """import os, sys, time


def pytest_sessionfinish(session):
    if os.getcwd() != os.environ["HEAD_DIR"] or hasattr(session.config, "workerinput"):
        return
    if any(arg.startswith("--bounded-review-record") for arg in sys.argv):
        return
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["BASE_RAN"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(os.environ["SEEN"], "w") as seen:
        seen.write(str(os.path.exists(os.environ["BASE_RAN"])))
"""
FAILING = """import os


def test_a():
    if os.getcwd() != os.environ["HEAD_DIR"]:
        open(os.environ["BASE_RAN"], "a").close()
    assert 0
"""


@SERIAL_AND_XDIST
def test_the_base_re_run_runs_while_the_other_plugins_end_the_session(
    pytester: pytest.Pytester,
    project: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    """Once every report is in, the base re-run is handed its node ids, before the other
    plugins' ``pytest_sessionfinish`` (under xdist, the workers' shutdown) runs."""
    project.commit({"conftest.py": SLOW_FINISH, "test_a.py": FAILING}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": FAILING + "# touched\n"}, "change")
    monkeypatch.setenv("HEAD_DIR", str(pytester.path))
    monkeypatch.setenv("BASE_RAN", str(tmp_path / "base-ran"))
    monkeypatch.setenv("SEEN", str(tmp_path / "seen"))
    result = pytester.runpytest_subprocess(
        *workers, "--bounded-review", "--bounded-review-base=main"
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_a.py::test_a"]
    assert (tmp_path / "seen").read_text() == "True", result.stdout.str()
