"""Whether a test file defines the test a node id names, read from its source alone."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.suite.testdefs import (
    Absent,
    Defined,
    Unread,
    defined,
    names,
    parametrized,
)

SOURCE = """\
import unittest

import pytest
from helpers import test_imported

try:
    import speedups
except ImportError:
    speedups = None

IMPLS = ["py"] + (["c"] if speedups else [])


@pytest.mark.parametrize("impl", IMPLS)
def test_scale(impl):
    pass


if speedups is not None:
    def test_only_with_speedups():
        pass

test_made = pytest.mark.slow(lambda: None)


class Mixin:
    def test_inherited(self):
        pass


@pytest.mark.parametrize("n", [1, 2])
class TestThing(Mixin):
    def test_method(self, n):
        pass

    class TestInner:
        def test_deep(self):
            pass


class TestCaseLike(unittest.TestCase):
    def test_case(self):
        pass


class TestElsewhere(SomeImportedBase):
    pass
"""


@pytest.mark.parametrize(
    "nodeid",
    [
        "t.py::test_scale[c]",  # an id the environment makes: its function is there
        "t.py::test_scale",
        "t.py::test_only_with_speedups",  # defined under an `if`
        "t.py::test_made",  # bound by an assignment
        "t.py::test_imported",  # imported: pytest collects it too
        "t.py::TestThing::test_method[2]",
        "t.py::TestThing::test_inherited[1]",  # from a class the file defines
        "t.py::TestThing::TestInner::test_deep",
        "t.py::TestCaseLike::test_case",
    ],
)
def test_what_the_file_defines_is_found(nodeid: str) -> None:
    assert isinstance(defined(SOURCE, nodeid), Defined)


@pytest.mark.parametrize(
    "nodeid",
    [
        "t.py::test_new[c]",
        "t.py::test_new",
        "t.py::TestNew::test_method",
        "t.py::TestThing::test_new[1]",  # a method neither the class nor its bases have
        "t.py::TestCaseLike::test_new",  # unittest.TestCase adds no test
        "t.py::pkg.mod.func",  # a doctest's name is no function of the file
    ],
)
def test_what_the_file_lacks_is_absent(nodeid: str) -> None:
    assert defined(SOURCE, nodeid) == Absent()


def test_a_base_class_the_file_does_not_hold_is_unread() -> None:
    answer = defined(SOURCE, "t.py::TestElsewhere::test_from_there")
    assert answer == Unread(
        "class TestElsewhere inherits from SomeImportedBase, which the file does not hold"
    )


def test_a_file_that_does_not_parse_is_unread() -> None:
    answer = defined("def test_x(:\n", "t.py::test_x")
    assert isinstance(answer, Unread)
    assert answer.why.startswith("the file does not parse")


def test_a_function_is_not_a_class() -> None:
    assert isinstance(defined(SOURCE, "t.py::test_scale::test_x"), Unread)


def test_the_decorators_tell_how_a_test_is_parametrized() -> None:
    base = defined(SOURCE, "t.py::TestThing::test_method[1]")
    more_cases = SOURCE.replace('"n", [1, 2]', '"n", [1, 2, 3]')
    moved = "# a comment moves every line\n\n" + SOURCE
    assert isinstance(base, Defined)
    assert defined(more_cases, "t.py::TestThing::test_method[3]") != base
    assert defined(moved, "t.py::TestThing::test_method[1]") == base


def test_names_and_parameters() -> None:
    assert names("a/t.py::TestX::test_y[p::q-1]") == ["TestX", "test_y"]
    assert names("a/t.py") == []
    assert parametrized("t.py::test_y[1]")
    assert not parametrized("t.py::test_y")
