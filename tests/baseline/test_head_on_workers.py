"""Under xdist the flaky check's first re-run at head runs on the worker that ran the failing
test, as its tests end: no new pytest process, unless no worker can re-run it (a test that logs
reports of its own, a worker that died)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# Each run of a test appends its name, its folder (the base's runs are in another), the
# process it ran in, and the xdist worker that was, if one was.
LOGGED = """import json, os


def log(name):
    with open(os.environ["RUNS_LOG"], "a") as out:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        out.write(json.dumps([name, os.getcwd(), os.getpid(), worker]) + "\\n")
"""


def runs(path: Path, head: Path) -> dict[str, list[tuple[int, str | None]]]:
    """Each test's runs at ``head``, in order: (process id, xdist worker)."""
    by_name: dict[str, list[tuple[int, str | None]]] = {}
    for line in path.read_text().splitlines():
        name, where, pid, worker = json.loads(line)
        if Path(where) == head:
            by_name.setdefault(name, []).append((pid, worker))
    return by_name


def review(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main", *args)
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result, report


def ids(report: dict[str, Any], kind: str) -> list[str]:
    return sorted(t["nodeid"] for t in report["tests"][kind])


FAILING = "from logged import log\n\n\ndef test_a():\n    log('a')\n    assert 0\n"


def failing_everywhere(project: GitRepo, files: dict[str, str] | None = None) -> None:
    """``main`` has ``test_a``, failing (and ``files``); ``feature`` touches it."""
    project.commit({**(files or {}), "logged.py": LOGGED, "test_a.py": FAILING}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": FAILING + "# touched\n"}, "change")


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs.log"
    monkeypatch.setenv("RUNS_LOG", str(path))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # when this suite runs under xdist itself
    return path


def test_plain_and_unittest_failures_re_run_on_their_worker_a_subtests_one_in_a_child(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    """A unittest test's subTest() results come through its item, so its worker re-runs it
    as it re-runs a plain test; the subtests fixture logs reports of its own: a child."""
    plain = "from logged import log\n\n\ndef test_plain():\n    log('plain')\n    assert 0\n"
    unit = (
        "import unittest\nfrom logged import log\n\n\nclass T(unittest.TestCase):\n"
        "    def test_unit(self):\n        log('unit')\n        with self.subTest(i=1):\n"
        "            self.fail()\n"
    )
    sub = (
        "from logged import log\n\n\ndef test_sub(subtests):\n    log('sub')\n"
        "    with subtests.test(i=1):\n        assert 0\n"
    )
    files = {"logged.py": LOGGED, "test_plain.py": plain, "test_unit.py": unit}
    project.commit({**files, "test_sub.py": sub}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")
    with project.untouched():
        result, report = review(pytester, "-n", "2")
    assert ids(report, "pre_existing") == [
        "test_plain.py::test_plain",
        "test_sub.py::test_sub",
        "test_unit.py::T::test_unit",
    ]
    assert ids(report, "flaky") == []  # the subtest failed again in each re-run at head
    assert result.ret == 0, result.stdout.str()
    at_head = runs(log, pytester.path)
    for name in ("plain", "unit"):
        (ran, ran_on), (rerun, rerun_on) = at_head[name]  # the base's runs are elsewhere
        assert ran_on is not None
        assert (rerun, rerun_on) == (ran, ran_on), name  # on its worker, again
    (ran, ran_on), (rerun, rerun_on) = at_head["sub"]
    assert ran_on is not None
    assert rerun_on is None  # in a child, not a worker
    assert rerun != ran


def test_a_failure_whose_worker_died_is_re_run_in_a_child(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    """The worker marked the failure as its own to re-run, then died before its tests ended:
    the controller has no answer from it, and re-runs the test in a new process."""
    tests = (
        "import os, pathlib\nfrom logged import log\nfrom value import X\n\n\n"
        "def test_a():\n    log('a')\n    assert X == 1\n\n\n"
        "def test_b():\n    gone = pathlib.Path(os.environ['RUNS_LOG'] + '.died')\n"
        "    if os.environ.get('PYTEST_XDIST_WORKER') and not gone.exists():\n"
        "        gone.touch()\n        os._exit(1)\n"
    )
    project.commit({"logged.py": LOGGED, "test_ab.py": tests, "value.py": "X = 1\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"value.py": "X = 2\n"}, "break test_a")
    result, report = review(pytester, "-n", "1", "-p", "no:randomly")
    assert Path(f"{log}.died").exists(), result.stdout.str()  # the worker did die
    related = {t["nodeid"]: t["reason"] for t in report["tests"]["target_related"]}
    assert related.get("test_ab.py::test_a") == "passes at base", result.stdout.str()
    (ran, ran_on), (rerun, rerun_on) = runs(log, pytester.path)["a"][:2]
    assert ran_on is not None
    assert rerun_on is None
    assert rerun != ran


def test_a_failure_again_on_any_worker_is_not_a_pass(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    """Under ``--dist each`` every worker runs the test: it passed on one worker's re-run but
    failed on the other's, so it did not pass, and is not confirmed flaky in a new process
    (where it would pass)."""
    test = (
        "import os\nfrom logged import log\n\n_calls = []\n\n\ndef test_env():\n"
        "    log('env')\n    _calls.append(1)\n    worker = os.environ.get('PYTEST_XDIST_WORKER')\n"
        "    assert worker is None or (worker == 'gw1' and len(_calls) > 1)\n"
    )
    project.commit({"logged.py": LOGGED, "test_env.py": test}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_env.py": test + "# touched\n"}, "change")
    result, report = review(pytester, "-n", "2", "--dist", "each")
    assert ids(report, "flaky") == [], result.stdout.str()
    assert ids(report, "target_related") == ["test_env.py::test_env"]
    workers = sorted(worker or "" for _, worker in runs(log, pytester.path)["env"])
    assert workers == ["gw0", "gw0", "gw1", "gw1"]  # each worker's run and re-run, no child


def test_the_worker_re_runs_survive_the_users_strictness(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    ini = '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\nxfail_strict = true\n'
    failing_everywhere(project, {"pyproject.toml": ini})
    strict = ["--strict-config", "--strict-markers", "-W", "error", "-p", "no:cacheprovider"]
    result, report = review(pytester, *strict, "-n", "2")
    assert ids(report, "pre_existing") == ["test_a.py::test_a"], result.stdout.str()
    assert report["tests"]["unknown"] == []
    assert result.ret == 0
    (ran, ran_on), (rerun, rerun_on) = runs(log, pytester.path)["a"]
    assert ran_on is not None
    assert (rerun, rerun_on) == (ran, ran_on)


def test_no_re_run_at_head_is_asked_of_the_workers_when_reruns_is_0(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    failing_everywhere(project, {"pyproject.toml": "[tool.bounded-review]\nreruns = 0\n"})
    result, report = review(pytester, "-n", "2")
    assert ids(report, "pre_existing") == ["test_a.py::test_a"], result.stdout.str()
    assert len(runs(log, pytester.path)["a"]) == 1  # the session's run only


def test_a_session_stopped_at_its_first_failure_re_runs_nothing_on_the_workers(
    pytester: pytest.Pytester, project: GitRepo, log: Path
) -> None:
    """Under ``-x`` xdist interrupts the session: nothing is classified, so the worker does
    not spend a re-run on it."""
    failing_everywhere(project)
    result, _ = review(pytester, "-n", "2", "-x")
    assert len(runs(log, pytester.path)["a"]) == 1, result.stdout.str()  # the session's run


# A plugin that logs the folder of each failure signature taken, then takes it.
SIGNED = """import os

from pytest_boundedreview.baseline.failures import signature

_taken = signature.from_excinfo


def counted(excinfo, root, test=None, **options):
    with open(os.environ["SIGNED_LOG"], "a") as out:
        out.write(os.getcwd() + "\\n")
    return _taken(excinfo, root, test, **options)


signature.from_excinfo = counted
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_re_run_in_the_process_takes_no_signature(
    pytester: pytest.Pytester,
    project: GitRepo,
    log: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    xdist: list[str],
) -> None:
    """Only whether a test passes counts in the flaky check's re-run in the session's (or its
    worker's) process: each failure at head is signed once, as its session reports it."""
    plugins, signed = tmp_path / "plugins", tmp_path / "signed.log"
    plugins.mkdir()
    (plugins / "signed.py").write_text(SIGNED)
    monkeypatch.setenv("PYTHONPATH", str(plugins))
    monkeypatch.setenv("SIGNED_LOG", str(signed))
    failing_everywhere(project)
    with project.untouched():
        result, report = review(pytester, "-p", "signed", *xdist)
    assert ids(report, "pre_existing") == ["test_a.py::test_a"]
    assert len(runs(log, pytester.path)["a"]) == 2  # the session's run and the re-run
    at_head = [line for line in signed.read_text().splitlines() if Path(line) == pytester.path]
    assert len(at_head) == 1, result.stdout.str()
