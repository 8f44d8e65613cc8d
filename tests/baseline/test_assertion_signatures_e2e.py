"""Signatures tell assertions apart: a test that failed at the base on one assertion and fails
after the change on another is a changed failure, not a pre-existing one; the same assertion
failing again, moved or in another process, keeps its signature."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

CODE = (
    "def area(w, h):\n    return w * h + 1  # the old bug\n\n\n"
    "def perimeter(w, h):\n    return 2 * (w + h)\n"
)
TEST = (
    "from shapes import area, perimeter\n\n\n"
    "def test_shapes():\n"
    "    assert perimeter(2, 3) == 10\n"
    "    assert area(2, 3) == 6\n"
)
# The change: area's old bug fixed, perimeter broken; the same failing test fails elsewhere.
FIXED_AND_BROKEN = CODE.replace("w * h + 1  # the old bug", "w * h").replace(
    "2 * (w + h)", "2 * (w + h) + 1"
)
XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


def review(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main", *args)
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result.ret, report


def at_base(project: GitRepo, test: str) -> GitRepo:
    """``project`` with the shapes and ``test`` on ``main``, on a new branch ``feature``."""
    project.commit({"shapes.py": CODE, "test_shapes.py": test}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.fixture
def shapes(project: GitRepo) -> GitRepo:
    """At the base, ``test_shapes`` fails on its second assertion (area's old bug)."""
    return at_base(project, TEST)


@pytest.mark.parametrize("xdist", XDIST)
def test_fixing_one_function_and_breaking_another_is_a_changed_failure(
    pytester: pytest.Pytester, shapes: GitRepo, xdist: list[str]
) -> None:
    shapes.commit({"shapes.py": FIXED_AND_BROKEN}, "fix area, break perimeter")
    code, report = review(pytester, *xdist)
    (failure,) = report["tests"]["target_related"]
    assert failure["nodeid"] == "test_shapes.py::test_shapes"
    assert failure["reason"].startswith("failure changed: was ")
    assert "perimeter" in failure["signature"]
    assert "area" in failure["base_signature"]
    assert code == 1


@pytest.mark.parametrize("xdist", XDIST)
def test_the_same_assertion_failing_again_moved_is_pre_existing(
    pytester: pytest.Pytester, shapes: GitRepo, xdist: list[str]
) -> None:
    moved = TEST.replace("def test_shapes():\n", "def test_shapes():\n    width = 2\n\n")
    shapes.commit({"test_shapes.py": "# the shapes\n\n" + moved}, "move the assertions down")
    code, report = review(pytester, *xdist)
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_shapes.py::test_shapes"]
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


# The same two assertions as unittest's: every failed ``assertTrue`` raises from one line inside
# unittest, so the failing frame is found where the test calls it, as pytest shows it.
UNITTEST = (
    "import unittest\n\n"
    "from shapes import area, perimeter\n\n\n"
    "class ShapesTest(unittest.TestCase):\n"
    "    def test_shapes(self):\n"
    "        self.assertTrue(perimeter(2, 3) == 10)\n"
    "        self.assertTrue(area(2, 3) == 6)\n"
)


@pytest.fixture
def unittest_shapes(project: GitRepo) -> GitRepo:
    """At the base, ``ShapesTest.test_shapes`` fails on its second ``assertTrue``."""
    return at_base(project, UNITTEST)


@pytest.mark.parametrize("xdist", XDIST)
def test_another_failed_unittest_assertion_is_a_changed_failure(
    pytester: pytest.Pytester, unittest_shapes: GitRepo, xdist: list[str]
) -> None:
    unittest_shapes.commit({"shapes.py": FIXED_AND_BROKEN}, "fix area, break perimeter")
    code, report = review(pytester, *xdist)
    (failure,) = report["tests"]["target_related"]
    assert failure["nodeid"] == "test_shapes.py::ShapesTest::test_shapes"
    assert failure["reason"].startswith("failure changed: was ")
    assert (
        "test_shapes.py::test_shapes :: self.assertTrue(perimeter(2, 3) == 10)"
        in (failure["signature"])
    )
    assert "self.assertTrue(area(2, 3) == 6)" in failure["base_signature"]
    assert code == 1


@pytest.mark.parametrize("xdist", XDIST)
def test_the_same_unittest_assertion_failing_again_moved_is_pre_existing(
    pytester: pytest.Pytester, unittest_shapes: GitRepo, xdist: list[str]
) -> None:
    moved = UNITTEST.replace(
        "    def test_shapes(self):\n", "    def test_shapes(self):\n        width = 2\n\n"
    )
    unittest_shapes.commit({"test_shapes.py": "# the shapes\n\n" + moved}, "move them down")
    code, report = review(pytester, *xdist)
    pre_existing = report["tests"]["pre_existing"]
    assert [t["nodeid"] for t in pre_existing] == ["test_shapes.py::ShapesTest::test_shapes"]
    assert "self.assertTrue(area(2, 3) == 6)" in pre_existing[0]["signature"]
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


# The same two checks through a helper: its one assertion fails for both, with the same folded
# message; where the test called it tells them apart.
HELPER = (
    "from shapes import area, perimeter\n\n\n"
    "def check(got, want):\n"
    "    assert got == want\n\n\n"
    "def test_shapes():\n"
    "    check(perimeter(2, 3), 10)\n"
    "    check(area(2, 3), 6)\n"
)


@pytest.fixture
def helper_shapes(project: GitRepo) -> GitRepo:
    """At the base, ``test_shapes`` fails in its second ``check``."""
    return at_base(project, HELPER)


@pytest.mark.parametrize("xdist", XDIST)
def test_a_helper_failing_at_another_call_is_a_changed_failure(
    pytester: pytest.Pytester, helper_shapes: GitRepo, xdist: list[str]
) -> None:
    helper_shapes.commit({"shapes.py": FIXED_AND_BROKEN}, "fix area, break perimeter")
    code, report = review(pytester, *xdist)
    (failure,) = report["tests"]["target_related"]
    assert failure["reason"].startswith("failure changed: was ")
    assert failure["signature"].endswith(
        "test_shapes.py::check :: assert got == want"
        " <- test_shapes.py::test_shapes :: check(perimeter(2, 3), 10)"
    )
    assert failure["base_signature"].endswith(":: check(area(2, 3), 6)")
    assert code == 1


@pytest.mark.parametrize("xdist", XDIST)
def test_a_helper_failing_again_at_the_same_call_moved_is_pre_existing(
    pytester: pytest.Pytester, helper_shapes: GitRepo, xdist: list[str]
) -> None:
    moved = HELPER.replace("def test_shapes():\n", "def test_shapes():\n    width = 2\n\n")
    helper_shapes.commit({"test_shapes.py": "# the shapes\n\n" + moved}, "move the checks down")
    code, report = review(pytester, *xdist)
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_shapes.py::test_shapes"]
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0
