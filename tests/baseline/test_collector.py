"""The outcome collector keeps an object only for a failing test; the rest are node ids."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.outcomes import NodeOutcome, OutcomeCollector

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
    collector = OutcomeCollector(pytester.path)
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
