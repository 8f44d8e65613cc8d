"""The ``report_hooks`` scan: a change that adds or changes a hook able to alter outcomes or
reports (in a conftest or a local plugin) is a blocking finding, on a real session; a harmless
conftest change, or a hook moved unchanged, is not; a typed waiver lets a reviewed hook in."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo

from pytest_boundedreview.checks.hookscan import definitions

TURN_FAILURES_INTO_PASSES = """import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        report.outcome = "passed"
    return report
"""
FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef number():\n    return 2\n"


def setup(project: GitRepo, conftest: str = FIXTURE, config: str = "") -> None:
    project.commit(
        {
            "pyproject.toml": "[tool.bounded-review]\n" + config,
            "conftest.py": conftest,
            "app.py": "def double(x):\n    return 2 * x\n",
            "test_app.py": "from app import double\n\n\ndef test_double(number):\n"
            "    assert double(number) == 4\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")


def review(pytester: pytest.Pytester) -> tuple[int, dict[str, Any]]:
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main"
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result.ret, report


def notes(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    found = report["findings"]["blocking"] + report["findings"]["advisory"]
    return [(f["path"], f["severity"], f["note"]) for f in found]


@pytest.mark.slow
def test_a_hook_that_turns_failures_into_passes_blocks(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    project.commit(
        {
            "app.py": "def double(x):\n    return 3 * x\n",  # the regression it hides
            "conftest.py": FIXTURE + "\n\n" + TURN_FAILURES_INTO_PASSES,
        },
        "regression, hidden",
    )
    code, report = review(pytester)
    assert report["tests"]["failed"] == 0  # the hook did hide it from pytest
    # by its name, and by what it did (tests/baseline/test_observed_outcomes_e2e.py)
    assert notes(report) == [
        ("conftest.py", "blocking", "scan: outcome_observed"),
        ("conftest.py", "blocking", "scan: report_hooks"),
    ]
    finding = report["findings"]["blocking"][1]
    assert "adds pytest_runtest_makereport" in finding["failure_mode"]
    assert report["gate"]["review_clean"] == "no"
    assert code == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "plugin",
    [
        # a local plugin named in the ini, spelled through specname
        "import pytest\n\n\n@pytest.hookimpl(specname='pytest_report_teststatus')\n"
        "def quiet(report, config):\n    return None\n",
        # a session finish that sets the exit status
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
        # a collection hook that leaves a failing test file out
        "def pytest_ignore_collect(collection_path, config):\n"
        "    return collection_path.name == 'test_app.py'\n",
        # a method of a plugin class
        "class Plugin:\n    def pytest_collection_modifyitems(self, items):\n"
        "        items[:] = items[:1]\n",
    ],
)
def test_every_spelling_of_a_report_altering_hook_is_found(
    pytester: pytest.Pytester, project: GitRepo, plugin: str
) -> None:
    setup(project)
    project.commit({"tools/local_plugin.py": plugin}, "a local plugin")
    code, report = review(pytester)
    assert notes(report) == [("tools/local_plugin.py", "blocking", "scan: report_hooks")]
    assert code == 1


def test_a_harmless_conftest_change_and_a_moved_hook_are_clean(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, FIXTURE + "\n\n" + TURN_FAILURES_INTO_PASSES)
    # a fixture added above the hook: the hook moves down, its code unchanged
    extra = "import pytest\n\n\n@pytest.fixture\ndef name():\n    return 'x'\n\n\n"
    project.commit({"conftest.py": extra + FIXTURE + "\n\n" + TURN_FAILURES_INTO_PASSES}, "fixture")
    code, report = review(pytester)
    assert notes(report) == []
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


def test_a_session_finish_that_only_reports_is_not_a_finding() -> None:
    assert definitions("def pytest_sessionfinish(session):\n    print('done')\n") == {}
    assert list(definitions("def pytest_sessionfinish(session):\n    session.exitstatus = 0\n"))


@pytest.mark.slow
def test_a_typed_waiver_lets_a_reviewed_hook_in(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    project.commit({"conftest.py": FIXTURE + "\n\n" + TURN_FAILURES_INTO_PASSES}, "hook")
    _, report = review(pytester)
    (finding,) = report["findings"]["blocking"]
    waived = warmstart.run(
        [
            sys.executable,
            "-m",
            "pytest_boundedreview",
            "waive",
            finding["fingerprint"],
            "--reason",
            "reviewed: reports a known flaky device as passed",
            "--by",
            "lead@example.com",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert waived.returncode == 0, waived.stderr
    project.git("add", "bounded-review-waivers.toml")
    project.git("commit", "--quiet", "-m", "waive the reviewed hook")
    code, report = review(pytester)
    assert [f["note"] for f in report["findings"]["waived"]] == ["scan: report_hooks"]
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


@pytest.mark.slow
def test_the_scan_can_be_turned_off(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, config='[tool.bounded-review.scans]\nreport_hooks = "off"\n')
    project.commit({"conftest.py": FIXTURE + "\n\n" + TURN_FAILURES_INTO_PASSES}, "hook")
    _, report = review(pytester)
    assert notes(report) == []
