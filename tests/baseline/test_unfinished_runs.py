"""A session that ran no test, or did not run its tests to the end, is never clean: a
``pytest.exit()`` with any return code, collected tests that never reach their teardown, a suite
whose every test is skipped, ``--setup-only``. Each with and without xdist, and the same suite
run whole still comes out clean."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

XDIST = [pytest.param([], id="in-process"), pytest.param(["-n", "2"], id="xdist")]
PASSING = "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
SILENT_PROTOCOL = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
    "def pytest_runtest_protocol(item, nextitem):\n"
    "    return True  # runs nothing, reports nothing\n"
)


def setup(project: GitRepo, files: dict[str, str]) -> None:
    project.commit({"app.py": "x = 1\n", "test_app.py": PASSING}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n", **files}, "change")


def review(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, Any]]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--bounded-review", "--bounded-review-base=main", *args
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return int(result.ret), report


@pytest.mark.parametrize("xdist", XDIST)
def test_the_whole_suite_run_to_the_end_is_clean(
    pytester: pytest.Pytester, project: GitRepo, xdist: list[str]
) -> None:
    setup(project, {})
    code, report = review(pytester, *xdist)
    assert (code, report["gate"]["review_clean"]) == (0, "yes")
    assert report["statuses"]["local_verification"] == "passed"


@pytest.mark.parametrize("returncode", ["0", "1"])
def test_pytest_exit_with_a_completed_status_is_never_clean(
    pytester: pytest.Pytester, project: GitRepo, returncode: str
) -> None:
    exits = "import pytest\n\n\ndef test_first():\n"
    exits += f"    pytest.exit('done', returncode={returncode})\n"
    setup(project, {"test_app.py": exits + "\n\n" + PASSING})
    code, report = review(pytester)
    assert code == 1  # indeterminate, whatever status pytest.exit() asked for
    assert report["gate"]["review_clean"] == "indeterminate"
    (reason,) = report["gate"]["reasons"]
    assert f"pytest.exit() ended the session ('done', return code {returncode})" in reason
    assert "3 collected test(s) did not run to the end" in reason
    assert report["statuses"]["local_verification"] == "not-run"


def test_pytest_exit_without_a_status_keeps_pytest_s_own(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    exits = "import pytest\n\n\ndef test_first():\n    pytest.exit('done')\n"
    setup(project, {"test_app.py": PASSING + "\n\n" + exits})
    code, report = review(pytester, "-p", "no:randomly")
    assert code == 2  # pytest's "interrupted" stands
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "pytest.exit() ended the session" in report["gate"]["reasons"][0]
    # two tests passed before it: what ran is said, and it is not the whole run
    assert report["tests"]["passed"] == 2
    assert report["statuses"]["local_verification"] == "partial"


@pytest.mark.parametrize("xdist", XDIST)
def test_pytest_exit_under_xdist_or_not_is_never_clean(
    pytester: pytest.Pytester, project: GitRepo, xdist: list[str]
) -> None:
    exits = "import pytest\n\n\ndef test_first():\n    pytest.exit('done', returncode=0)\n"
    setup(project, {"test_exit.py": exits})
    code, report = review(pytester, *xdist)
    assert code != 0
    assert report["gate"]["review_clean"] == "indeterminate"


@pytest.mark.parametrize("xdist", XDIST)
def test_collected_tests_that_never_report_are_never_clean(
    pytester: pytest.Pytester, project: GitRepo, xdist: list[str]
) -> None:
    setup(project, {"conftest.py": SILENT_PROTOCOL})
    code, report = review(pytester, *xdist)
    assert code == 1
    # the change's own protocol hook is a report_hooks finding too
    assert report["gate"]["review_clean"] == "no"
    assert report["gate"]["reasons"][-1] == (
        "the session did not finish: 2 collected test(s) did not run to the end "
        "(test_app.py::test_one, test_app.py::test_two)"
    )
    assert report["statuses"]["local_verification"] == "not-run"


@pytest.mark.parametrize("xdist", XDIST)
def test_a_suite_whose_every_test_is_skipped_ran_nothing(
    pytester: pytest.Pytester, project: GitRepo, xdist: list[str]
) -> None:
    skipped = "import pytest\n\n\n@pytest.mark.skip\ndef test_one():\n    pass\n"
    setup(project, {"test_app.py": skipped})
    code, report = review(pytester, *xdist)
    assert code == 1
    assert report["gate"]["reasons"] == [
        "no test ran: 1 collected, every one skipped before its call"
    ]
    assert report["statuses"]["local_verification"] == "not-run"
    # one test that runs beside a skipped one is a run: clean
    project.commit({"test_app.py": skipped + "\n\ndef test_two():\n    pass\n"}, "one runs")
    code, report = review(pytester, *xdist)
    assert (code, report["gate"]["review_clean"]) == (0, "yes")


def test_setup_only_runs_no_test(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, {})
    code, report = review(pytester, "--setup-only")
    assert code == 1
    assert report["gate"]["reasons"] == ["--setup-only or --setup-plan: no test ran"]
    assert report["statuses"]["local_verification"] == "not-run"


def test_nothing_to_review_is_still_never_clean_without_a_run(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, {"conftest.py": SILENT_PROTOCOL})
    code, report = review(pytester, "--bounded-review-base=HEAD")  # an empty target
    assert report["target"]["empty"] is True
    assert code == 0  # nothing to review: pytest's own status
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "did not run to the end" in report["gate"]["reasons"][0]
