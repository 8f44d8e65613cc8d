"""A unittest test's failure re-runs at head in the session's own process: its subTest()
results are made into reports as pytest makes them and kept for the verdict, never logged a
second time, and a subtest that fails again is a failure again."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_head_on_workers import LOGGED, ids, review, runs
from test_head_on_workers import log as log  # the fixture

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# test_sub fails in its second subTest block while FAIL_AGAIN exists (or on its first run);
# test_plain fails outright, always.
UNIT = """\
import os, pathlib, unittest

from logged import log


class T(unittest.TestCase):
    def test_sub(self):
        log("sub")
        marker = pathlib.Path(os.environ["RUNS_LOG"] + ".seen")
        first = not marker.exists()
        marker.touch()
        for i in range(3):
            with self.subTest(i=i):
                self.assertFalse(i == 1 and (first or os.path.exists(os.environ["FAIL_AGAIN"])))

    def test_plain(self):
        log("plain")
        self.fail("always")
"""


@pytest.fixture
def fail_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "fail-again"
    monkeypatch.setenv("FAIL_AGAIN", str(path))
    return path


def _change(project: GitRepo, files: dict[str, str]) -> None:
    """``main`` holds ``files``; ``feature`` adds a README only."""
    project.commit(files, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")


def test_a_subtest_failing_again_in_the_session_process_is_a_failure(
    pytester: pytest.Pytester, project: GitRepo, log: Path, fail_again: Path
) -> None:
    """The re-run's subtest fails again: not flaky, and no pytest child was needed for it. A
    re-run that dropped its subtests' results would have passed (the test's own call does)."""
    fail_again.touch()
    _change(project, {"logged.py": LOGGED, "test_unit.py": UNIT})
    with project.untouched():
        result, report = review(pytester, "-p", "no:randomly")
    assert ids(report, "flaky") == []
    assert ids(report, "pre_existing") == [
        "test_unit.py::T::test_plain",
        "test_unit.py::T::test_sub",
    ]
    assert result.ret == 0, result.stdout.str()
    at_head = runs(log, pytester.path)
    for name in ("sub", "plain"):
        (ran, _), (rerun, _) = at_head[name]  # the base's runs are elsewhere
        assert rerun == ran, f"{name}: re-run at head in the session's process"
    # the re-run's reports are its own: the session's output names each failure once
    output = result.stdout.str()
    assert output.count("FAILED test_unit.py::T::test_plain") == 1
    assert output.count("SUBFAILED") == 1, output
    # pytest's own count is its last line, before the review's closing verdict
    assert "2 failed, 1 passed in" in output.splitlines()[-2]
    assert output.splitlines()[-1].startswith("bounded-review: review_clean: yes (exit 0)")


def test_a_subtest_that_passes_on_its_re_run_is_flaky_in_a_fresh_process_too(
    pytester: pytest.Pytester, project: GitRepo, log: Path, fail_again: Path
) -> None:
    """Only the first run fails: the in-process re-run passes, and the fresh process that
    confirms a pass there passes as well."""
    _change(project, {"logged.py": LOGGED, "test_unit.py": UNIT})
    result, report = review(pytester, "-p", "no:randomly")
    assert ids(report, "flaky") == ["test_unit.py::T::test_sub"]
    assert ids(report, "pre_existing") == ["test_unit.py::T::test_plain"]
    assert result.ret == 0, result.stdout.str()
    (ran, _), (rerun, _), (fresh, _) = runs(log, pytester.path)["sub"]
    assert rerun == ran
    assert fresh != ran


# Fails the first time it ever runs, and then its tearDown and a cleanup raise too: three
# errors, one more than its phases' reports take.
NOISY_FIRST_RUN = """\
import os, pathlib, unittest

MARK = pathlib.Path(os.environ["RUNS_LOG"] + ".first")


class T(unittest.TestCase):
    def setUp(self):
        self.first = not MARK.exists()
        MARK.touch()

    def test_flaky(self):
        if self.first:
            self.addCleanup(self._boom)
        self.assertFalse(self.first)

    def _boom(self):
        raise RuntimeError("cleanup")

    def tearDown(self):
        if self.first:
            raise RuntimeError("teardown")
"""


def test_an_error_the_first_run_left_on_the_item_is_not_the_re_runs(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    _change(project, {"test_u.py": NOISY_FIRST_RUN})
    result, report = review(pytester, "-p", "no:randomly")
    assert ids(report, "flaky") == ["test_u.py::T::test_flaky"]
    assert ids(report, "target_related") == []
    assert result.ret == 0, result.stdout.str()


# The first run fails at once; any later one polls forever, a subTest block an attempt.
POLLS = """\
import itertools, os, pathlib, time, unittest

MARK = pathlib.Path(os.environ["RUNS_LOG"] + ".first")


class T(unittest.TestCase):
    def test_polls(self):
        again = MARK.exists()
        MARK.touch()
        for attempt in itertools.count() if again else range(1):
            with self.subTest(attempt=attempt):
                self.assertTrue(again, "not ready")
                time.sleep(60)
"""


def test_a_re_run_hanging_in_subtests_ends_at_its_deadline(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    """unittest catches whatever a subTest block raises: the re-run's deadline is raised
    again, not kept as one more failed block while the test goes on."""
    files = {"test_u.py": POLLS, "pyproject.toml": "[tool.bounded-review]\nbase_timeout = 3\n"}
    _change(project, files)
    result = pytester.runpytest_subprocess(
        "--bounded-review", "--bounded-review-base=main", "-p", "no:randomly", timeout=60
    )
    assert "re-run timed out after 3s" in result.stdout.str(), result.stdout.str()
