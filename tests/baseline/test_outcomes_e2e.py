"""Every kind of failing outcome is collected and classified: subtests, doctests, setup and
teardown errors, collection errors."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

SUBTESTS = """\
import unittest


def test_builtin_subtests(subtests):
    for i in range(3):
        with subtests.test(msg="case", i=i):
            assert i != {bad}


class TestUnit(unittest.TestCase):
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, {bad})
"""
DOCTEST = '''\
def double(x):
    """
    >>> double(2)
    {expected}
    """
    return x * 2
'''
FIXTURES = """\
import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup {setup}")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown always")


def test_setup(broken_setup):
    pass


def test_teardown(broken_teardown):
    pass
"""


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_subtest_failures_are_failures_of_their_test(
    pytester: pytest.Pytester, project: GitRepo, extra: list[str]
) -> None:
    project.commit({"test_sub.py": SUBTESTS.format(bad=1)}, "base: subtest 1 fails")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_sub.py": SUBTESTS.format(bad=1).replace("i != 1", "i != 2")}, "change")
    result, report = review(pytester, *extra)
    related = {t["nodeid"]: t for t in report["tests"]["target_related"]}
    assert list(related) == ["test_sub.py::test_builtin_subtests"]
    assert "[case i=2]" in related["test_sub.py::test_builtin_subtests"]["signature"]
    assert ids(report, "pre_existing") == ["test_sub.py::TestUnit::test_sub"]
    assert result.ret == 1


def test_doctests_setup_and_teardown_errors(pytester: pytest.Pytester, project: GitRepo) -> None:
    project.commit(
        {
            "mod.py": DOCTEST.format(expected=5),
            "test_fix.py": FIXTURES.format(setup="old"),
        },
        "base: doctest and teardown already fail; setup fails with another message",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_fix.py": FIXTURES.format(setup="new")}, "setup changes")
    result, report = review(pytester, "--doctest-modules")
    pre = ids(report, "pre_existing")
    assert "mod.py::mod.double" in pre
    assert "test_fix.py::test_teardown" in pre
    related = {t["nodeid"]: t for t in report["tests"]["target_related"]}
    assert list(related) == ["test_fix.py::test_setup"]
    assert related["test_fix.py::test_setup"]["signature"].startswith("setup: RuntimeError")
    assert result.ret == 1


def test_collection_errors_are_classified(pytester: pytest.Pytester, project: GitRepo) -> None:
    project.commit(
        {
            "test_old_broken.py": "import not_installed_anywhere\n",
            "test_fine.py": "def test_fine():\n    pass\n",
        },
        "base: one module never imported",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit(
        {"test_fine.py": "import also_missing\n\n\ndef test_fine():\n    pass\n"}, "break an import"
    )
    result, report = review(pytester)
    assert ids(report, "pre_existing") == ["test_old_broken.py"]
    related = {t["nodeid"]: t for t in report["tests"]["target_related"]}
    assert related["test_fine.py"]["reason"] == "imports at base"
    assert related["test_fine.py"]["signature"].startswith("collect: ModuleNotFoundError")
    assert result.ret == 1
