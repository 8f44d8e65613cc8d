"""A re-run inside a pytest process has a time limit, as one in a child has (deadline.py)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.baseline.athead.deadline import OutOfTime, limited


def spin() -> None:
    while True:
        time.sleep(0.01)


def test_what_outlives_the_limit_is_interrupted() -> None:
    with limited(0.2), pytest.raises(OutOfTime):
        spin()
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # disarmed on the way out
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


def test_a_timer_of_someone_else_is_left_alone() -> None:
    """A test suite's own SIGALRM handler stays in charge: the re-run runs unlimited."""
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        with limited(0.05):
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
            time.sleep(0.2)
        assert fired == []
    finally:
        signal.signal(signal.SIGALRM, previous)


# Fails on its first call in a process, and hangs on any later one: an in-process re-run
# would hang the session without a limit.
HANGS_AGAIN = """import time

_calls = []


def test_hang():
    _calls.append(1)
    if len(_calls) > 1:
        time.sleep(3600)
    assert 0
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_re_run_that_hangs_ends_at_base_timeout(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    config = "[tool.bounded-review]\nbase_timeout = 3\n"
    project.commit({"pyproject.toml": config, "test_hang.py": HANGS_AGAIN}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_hang.py": HANGS_AGAIN + "# touched\n"}, "change")
    # without the limit the session would hang for an hour: pytester fails it at 300 s
    result = pytester.runpytest_subprocess(
        *workers, "--bounded-review", "--bounded-review-base=main", timeout=300
    )
    report = json.loads((Path(pytester.path) / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_hang.py::test_hang"]
    assert report["tests"]["flaky"] == [], result.stdout.str()
