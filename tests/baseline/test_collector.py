"""The outcome collector keeps an object only for a failing test; the rest are node ids."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.failures.outcomes import NodeOutcome, OutcomeCollector
from pytest_boundedreview.core.redaction import Redactor

TESTS = """\
import pytest


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


def test_pass():
    pass


def test_fail():
    assert 1 == 2


def test_teardown(broken_teardown):
    pass


@pytest.mark.skip(reason="off")
def test_skipped():
    pass


def test_subtest(subtests):
    with subtests.test(msg="one"):
        assert False
"""


def test_only_failing_tests_get_an_object(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mod=TESTS)
    collector = OutcomeCollector(pytester.path, Redactor({}))
    pytester.inline_run("-p", "no:cacheprovider", plugins=[collector])

    assert sorted(collector.failing) == [
        "test_mod.py::test_fail",
        "test_mod.py::test_subtest",
        "test_mod.py::test_teardown",
    ]
    assert all(isinstance(node, NodeOutcome) for node in collector.failing.values())
    assert collector.passed == {"test_mod.py::test_pass"}  # not the teardown or subtest one
    assert collector.seen == {
        f"test_mod.py::{name}"
        for name in ("test_pass", "test_fail", "test_teardown", "test_skipped", "test_subtest")
    }
    assert [n.nodeid for n in collector.failed] == [
        "test_mod.py::test_fail",
        "test_mod.py::test_teardown",
        "test_mod.py::test_subtest",
    ]
    teardown = collector.failing["test_mod.py::test_teardown"]
    assert teardown.signature.startswith("teardown: ")


def test_every_report_that_did_not_pass_is_told_first(pytester: pytest.Pytester) -> None:
    """The re-runs learn of each failed or skipped report (a test's or a file's collection)
    before the collector notes it, and of no report that passed; the sets a passing test's
    reports fill are the same whichever path a report takes."""
    pytester.makepyfile(test_mod=TESTS, test_broken="import nowhere_to_be_found\n")
    collector = OutcomeCollector(pytester.path, Redactor({}))
    told: list[tuple[str, str, str, bool]] = []

    def listener(report: pytest.TestReport | pytest.CollectReport) -> None:
        noted = report.nodeid in collector.failing or report.nodeid in collector.skipped
        told.append((report.nodeid, getattr(report, "when", "collect"), report.outcome, noted))

    collector.on_unpassed = listener
    options = ("-p", "no:cacheprovider", "--continue-on-collection-errors")
    pytester.inline_run(*options, plugins=[collector])

    assert sorted({entry[:3] for entry in told}) == [
        ("test_broken.py", "collect", "failed"),
        ("test_mod.py::test_fail", "call", "failed"),
        ("test_mod.py::test_skipped", "setup", "skipped"),
        ("test_mod.py::test_subtest", "call", "failed"),  # the subtest's, then the test's
        ("test_mod.py::test_teardown", "teardown", "failed"),
    ]
    first = {nodeid: noted for nodeid, _, _, noted in reversed(told)}
    assert not any(first.values())  # each told before the collector noted it
    ran = {f"test_mod.py::{name}" for name in ("test_pass", "test_fail", "test_teardown")}
    assert collector.ran == ran | {"test_mod.py::test_subtest"}
    assert collector.finished == collector.seen - {"test_broken.py"}
    assert collector.skipped == {"test_mod.py::test_skipped"}
    assert collector.passed_calls == {"test_mod.py::test_pass", "test_mod.py::test_teardown"}
