"""End to end: a failing test the base did not collect is "new" only when its function (or
class) is not in the base's file; a parametrized id the environment makes at head alone is
``unknown``, and a case the change adds by editing the parametrization is the change's."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import review

pytestmark = pytest.mark.slow  # every test here runs whole review sessions

# A module the tests generate into the working tree, which git ignores: the base has none, so
# the "generated" case exists at head only.
CASES = """\
try:
    from _generated import TABLE
except ImportError:
    TABLE = None

IMPLS = ["plain"] + (["generated"] if TABLE is not None else [])


def lookup(impl):
    return 1
"""
TESTS = """\
import pytest

from cases import IMPLS, lookup


@pytest.mark.parametrize("impl", IMPLS)
def test_lookup(impl):
    assert lookup(impl) == 2


@pytest.mark.parametrize("n", [1, 2])
def test_numbers(n):
    assert n < 3


class TestGroup:
    def test_member(self):
        assert True
"""
PYTEST_INI = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


@pytest.fixture
def cases(project: GitRepo) -> GitRepo:
    """``main`` has the tests; the working tree has the generated module; ``feature``."""
    ignores = (project.path / ".gitignore").read_text() + "_generated.py\n"
    project.commit(
        {
            ".gitignore": ignores,
            "pyproject.toml": PYTEST_INI,
            "cases.py": CASES,
            "test_cases.py": TESTS,
        },
        "base",
    )
    project.write("_generated.py", "TABLE = {}\n")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


def classified(report: dict[str, object]) -> dict[str, tuple[str, str]]:
    tests = report["tests"]
    assert isinstance(tests, dict)
    return {
        t["nodeid"]: (kind, t["reason"])
        for kind in ("target_related", "pre_existing", "unknown", "flaky")
        for t in tests[kind]
    }


def test_an_id_the_environment_makes_at_head_alone_is_unknown_not_new(
    pytester: pytest.Pytester, cases: GitRepo
) -> None:
    cases.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    assert classified(report) == {
        "test_cases.py::test_lookup[plain]": ("pre_existing", "fails the same at base"),
        "test_cases.py::test_lookup[generated]": (
            "unknown",
            "parametrized id not at base; its function is: the environment makes the ids differ",
        ),
    }
    assert result.ret == 1  # unknown fails closed


def test_a_case_the_change_adds_to_the_parametrization_is_new(
    pytester: pytest.Pytester, cases: GitRepo
) -> None:
    cases.commit({"test_cases.py": TESTS.replace("[1, 2]", "[1, 2, 3]")}, "one more number")
    result, report = review(pytester)
    assert classified(report)["test_cases.py::test_numbers[3]"] == (
        "target_related",
        "new test case: not at base, and the change edits how it is parametrized",
    )
    assert result.ret == 1


def test_a_new_function_or_method_is_new(pytester: pytest.Pytester, cases: GitRepo) -> None:
    added = TESTS + (
        "\n\ndef test_added():\n    assert False\n"
        "\n\nclass TestAdded:\n    def test_it(self):\n        assert False\n"
    )
    added = added.replace(
        "    def test_member(self):\n",
        "    def test_new(self):\n        assert False\n\n    def test_member(self):\n",
    )
    cases.commit({"test_cases.py": added}, "new tests")
    result, report = review(pytester)
    found = classified(report)
    for nodeid in ("test_added", "TestAdded::test_it", "TestGroup::test_new"):
        assert found[f"test_cases.py::{nodeid}"] == ("target_related", "new test: not at base")
    assert result.ret == 1


def test_a_method_that_may_be_inherited_from_elsewhere_is_unknown(
    pytester: pytest.Pytester, cases: GitRepo
) -> None:
    mixins = "class Checks:\n    pass\n"
    group = "from mixins import Checks\n\n\nclass TestChecked(Checks):\n    pass\n"
    cases.commit({"mixins.py": mixins, "test_checked.py": group}, "a group with mixed-in tests")
    cases.git("branch", "--force", "main", "HEAD")
    cases.commit({"mixins.py": "class Checks:\n    def test_x(self):\n        assert False\n"})
    result, report = review(pytester)
    assert classified(report)["test_checked.py::TestChecked::test_x"] == (
        "unknown",
        "not collected at base, and whether its function is there cannot be read: "
        "class TestChecked inherits from Checks, which the file does not hold",
    )
    assert result.ret == 1
