"""End to end: real repositories, real pytest sessions, real re-runs at the base."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

CALC = "def add(a, b):\n    return a + b\n\n\ndef legacy(x):\n    return int(x)\n"
TESTS = (
    "from calc import add, legacy\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_legacy():\n    assert legacy(2.7) == 3\n\n\n"
    "def test_other():\n    assert True\n"
)
XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


@pytest.fixture
def calc(project: GitRepo) -> GitRepo:
    """``main`` has one pre-existing failure (test_legacy); ``feature`` branches off it."""
    project.commit({"calc.py": CALC, "test_calc.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


def review(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main", *args)
    report_path = pytester.path / ".bounded-review" / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return result, report


def ids(report: dict[str, Any], kind: str) -> list[str]:
    return [t["nodeid"] for t in report["tests"][kind]]


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_only_pre_existing_failures_pass_the_gate(
    pytester: pytest.Pytester, calc: GitRepo, extra: list[str]
) -> None:
    calc.commit({"README.md": "docs\n"}, "docs only")
    with calc.untouched():
        result, report = review(pytester, *extra)
    assert result.ret == 0
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert ids(report, "target_related") == []
    assert report["gate"]["review_clean"] == "yes"
    assert report["statuses"]["local_verification"] == "partial"
    assert report["statuses"]["committed"] == "yes"
    assert report["risk"] == {
        "tier": "economy",
        "reasons": [{"path": None, "rule": "economy: documentation only"}],
    }
    assert report["budget"] == {"max_lanes": 1, "max_concurrent": 1, "max_repair_loops": 0}
    assert any("no reviewer lanes ran" in item for item in report["limitations"])
    result.stdout.fnmatch_lines(
        [
            "*= bounded review =*",
            "pre-existing failures*",
            "  test_calc.py::test_legacy - fails the same at base",
        ]
    )


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_a_regression_fails_the_session_naming_it(
    pytester: pytest.Pytester, calc: GitRepo, extra: list[str]
) -> None:
    calc.commit({"calc.py": CALC.replace("a + b", "a - b")}, "break add")
    result, report = review(pytester, *extra)
    assert result.ret == 1
    assert ids(report, "target_related") == ["test_calc.py::test_add"]
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert report["gate"]["review_clean"] == "no"
    assert report["statuses"]["local_verification"] == "failed"
    result.stdout.fnmatch_lines(
        ["target-related failures (block) (1):", "  test_calc.py::test_add - passes at base"]
    )


@pytest.mark.slow
def test_new_failing_test_and_changed_failure(pytester: pytest.Pytester, calc: GitRepo) -> None:
    changed = TESTS.replace("int(x)", "int(x)") + (
        "\n\ndef test_new():\n    assert add(1, 1) == 3\n"
    )
    calc.commit(
        {"test_calc.py": changed, "calc.py": CALC.replace("return int(x)", "raise ValueError(x)")},
        "new test, legacy fails differently",
    )
    result, report = review(pytester)
    assert result.ret == 1
    related = {t["nodeid"]: t for t in report["tests"]["target_related"]}
    assert related["test_calc.py::test_new"]["reason"] == "new test: not at base"
    legacy = related["test_calc.py::test_legacy"]
    assert legacy["signature"].startswith("ValueError: N @ calc.py::legacy")
    assert legacy["base_signature"].startswith("AssertionError: assert N == N")
    assert legacy["reason"].startswith("failure changed: was AssertionError")


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)  # re-run in this process, or in a new one under xdist
def test_flaky_test_is_advisory(
    pytester: pytest.Pytester, calc: GitRepo, tmp_path: Path, extra: list[str]
) -> None:
    marker = tmp_path / "seen"
    flaky = (
        "import os, pathlib\n\n\ndef test_flaky():\n"
        f"    marker = pathlib.Path({str(marker)!r})\n"
        "    first = not marker.exists()\n    marker.touch()\n    assert not first\n"
    )
    calc.commit({"test_flaky.py": flaky}, "flaky test")
    result, report = review(pytester, *extra)
    assert ids(report, "flaky") == ["test_flaky.py::test_flaky"]
    assert report["tests"]["flaky"][0]["reason"] == (
        "passes on a re-run at head, in a fresh process"
    )
    assert result.ret == 0


FIRST_CALL_BUG = """\
_calls = []


def connect():
    _calls.append(1)
    return len(_calls) > 1  # the bug: the first call in a process fails


def test_connect():
    assert connect()
"""


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_a_failure_on_the_first_call_in_every_process_is_not_flaky(
    pytester: pytest.Pytester, calc: GitRepo, extra: list[str]
) -> None:
    """Its in-process re-run passes (the state is warm); a fresh process fails as the session
    did, so it is what it is: new, and blocking."""
    calc.commit({"test_connect.py": FIRST_CALL_BUG}, "a first-call bug")
    result, report = review(pytester, *extra)
    assert ids(report, "flaky") == []
    assert ids(report, "target_related") == ["test_connect.py::test_connect"]
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1


@pytest.mark.slow
def test_base_unreachable_is_unknown_and_fails_closed(
    pytester: pytest.Pytester, calc: GitRepo
) -> None:
    calc.commit({"calc.py": CALC.replace("a + b", "a - b")}, "break add")
    (calc.path / ".git" / "worktrees").write_text("not a folder")  # no checkout can be made
    result, report = review(pytester)
    assert result.ret == 1
    assert sorted(ids(report, "unknown")) == ["test_calc.py::test_add", "test_calc.py::test_legacy"]
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any("unreachable" in item for item in report["limitations"])


@pytest.mark.slow
def test_more_failures_than_the_cap_is_a_systemic_break(
    pytester: pytest.Pytester, calc: GitRepo
) -> None:
    pytester.makepyprojecttoml("[tool.bounded-review]\nmax_base_reruns = 1\n")
    calc.commit({"calc.py": CALC.replace("a + b", "a - b")}, "break add, cap re-runs")
    result, report = review(pytester)
    assert result.ret == 1
    assert len(report["tests"]["unknown"]) == 2
    assert "systemic" in report["tests"]["unknown"][0]["reason"]
    assert any("max_base_reruns = 1" in item for item in report["limitations"])


@pytest.mark.slow
def test_conflict_marker_blocks(pytester: pytest.Pytester, calc: GitRepo) -> None:
    calc.commit({"notes.txt": "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\n"}, "oops")
    result, report = review(pytester)
    assert result.ret == 1
    blocking = report["findings"]["blocking"]
    assert [(f["path"], f["line"]) for f in blocking] == [
        ("notes.txt", 2),
        ("notes.txt", 4),
        ("notes.txt", 6),
    ]
    assert report["gate"]["review_clean"] == "no"


@pytest.mark.slow
def test_second_run_reuses_the_base_cache(pytester: pytest.Pytester, calc: GitRepo) -> None:
    calc.commit({"calc.py": CALC.replace("a + b", "a - b")}, "break add")
    first, report1 = review(pytester)
    first.stdout.fnmatch_lines(["bounded-review: re-running 2 failing test(s) at base *"])
    second, report2 = review(pytester)
    assert "failing test(s) at base" not in second.stdout.str()
    assert report1["tests"] == report2["tests"]
    assert list((pytester.path / ".bounded-review" / "cache").glob("base-*.json"))


@pytest.mark.slow
def test_a_reporting_option_alone_keeps_the_cache_warm(
    pytester: pytest.Pytester, calc: GitRepo
) -> None:
    calc.commit({"calc.py": CALC.replace("a + b", "a - b")}, "break add")
    first, report1 = review(pytester)
    assert "failing test(s) at base" in first.stdout.str()
    reporting = ["-q", "-rA", "--tb=short", "--color=no", "--durations=3", "--junitxml=out.xml"]
    second, report2 = review(pytester, *reporting)
    assert "failing test(s) at base" not in second.stdout.str()  # warm: the same answers
    assert report1["tests"] == report2["tests"]
    # an option that can change an outcome asks the base again
    third, report3 = review(pytester, "-W", "error::DeprecationWarning")
    assert "failing test(s) at base" in third.stdout.str()
    assert report3["tests"]["target_related"] == report1["tests"]["target_related"]
    assert len(list((pytester.path / ".bounded-review" / "cache").glob("base-*.json"))) == 2


@pytest.mark.slow
def test_empty_target_keeps_pytests_status(pytester: pytest.Pytester, calc: GitRepo) -> None:
    result, report = review(pytester)
    assert result.ret == 1  # test_legacy fails; nothing to review, so plain pytest decides
    assert report["target"]["empty"] is True
    assert report["tests"]["pre_existing"] == []


CHECKS = """
[tool.bounded-review]
[[tool.bounded-review.checks]]
name = "lint"
command = ["ruff", "check", "--no-cache", "--output-format=sarif", "--select=F401", "."]
format = "sarif"
[[tool.bounded-review.checks]]
name = "optional"
command = ["no-such-linter"]
required = {required}
"""


@pytest.mark.slow
@pytest.mark.parametrize("required", ["false", "true"])
def test_checks_in_the_gate(pytester: pytest.Pytester, project: GitRepo, required: str) -> None:
    project.commit(
        {
            "pyproject.toml": CHECKS.format(required=required),
            "mod.py": "import os\n",
            "test_ok.py": "def test_ok():\n    pass\n",
        },
        "base: one lint finding already",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"mod.py": "\n\nimport os\n"}, "move the finding")
    result, report = review(pytester)
    lint, optional = report["checks"]
    assert (lint["status"], len(lint["pre_existing"]), lint["target_related"]) == ("fail", 1, [])
    assert optional["status"] == "not-run"
    if required == "false":
        assert report["gate"]["review_clean"] == "yes"
        assert result.ret == 0
    else:
        assert report["gate"]["review_clean"] == "indeterminate"
        assert "required check 'optional' did not run" in report["gate"]["reasons"][0]
        assert result.ret == 1
    assert any("check 'optional' did not run" in item for item in report["limitations"])


@pytest.mark.slow
def test_deselected_tests_make_the_review_partial(pytester: pytest.Pytester, calc: GitRepo) -> None:
    calc.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester, "-k", "not other")
    assert report["statuses"]["local_verification"] == "partial"
    assert any("1 test(s) deselected" in item for item in report["limitations"])
    assert report["gate"] == {
        "review_clean": "indeterminate",
        "reasons": [
            "a partial run: 1 test(s) deselected by this run (command line: -k 'not other') "
            "(allow_partial = true accepts one)"
        ],
    }
    assert result.ret == 1


@pytest.mark.slow
def test_collect_only_is_never_clean(pytester: pytest.Pytester, calc: GitRepo) -> None:
    calc.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester, "--collect-only")
    assert report["gate"] == {
        "review_clean": "indeterminate",
        "reasons": ["--collect-only: no test ran"],
    }
    assert result.ret == 1


@pytest.mark.slow
def test_stopping_early_is_never_clean(pytester: pytest.Pytester, calc: GitRepo) -> None:
    # test_legacy (pre-existing) fails first; -x stops before test_other ever runs.
    calc.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester, "-x")
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "the session stopped early" in report["gate"]["reasons"][-1]
    assert "1 collected test(s) did not run to the end" in report["gate"]["reasons"][-1]
    assert result.ret == 1


CONFTEST = """
import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--runslow"):
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(pytest.mark.skip(reason="needs --runslow"))
"""
SLOW = "import pytest\n\n\n@pytest.mark.slow\ndef test_slow():\n    assert False\n"


@pytest.mark.slow
def test_conftest_options_are_repeated_at_the_base(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    project.commit(
        {"conftest.py": CONFTEST, "test_s.py": SLOW, "pytest.ini": "[pytest]\nmarkers = slow\n"},
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")
    result, report = review(pytester, "--runslow")
    assert ids(report, "pre_existing") == ["test_s.py::test_slow"]
    assert result.ret == 0


@pytest.mark.slow
def test_rootdir_below_the_repository_root(pytester: pytest.Pytester, project: GitRepo) -> None:
    code = "def legacy(x):\n    raise ValueError('bad')\n"
    test = "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n"
    test += "from lib.calc import legacy\n\n\ndef test_legacy():\n    legacy(1)\n"
    project.commit(
        {
            "lib/__init__.py": "",
            "lib/calc.py": code,
            "proj/test_c.py": test,
            "proj/pytest.ini": "[pytest]\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")
    result = pytester.runpytest_subprocess(
        "--bounded-review", "--bounded-review-base=main", "--rootdir=proj", "-c", "proj/pytest.ini"
    )
    report = json.loads((project.path / ".bounded-review" / "report.json").read_text())
    (failure,) = report["tests"]["pre_existing"]
    assert failure["signature"] == (
        "ValueError: bad @ lib/calc.py::legacy :: raise ValueError('bad')"
        " <- proj/test_c.py::test_legacy :: legacy(1)"
    )
    assert result.ret == 0


DOCTEST = '''def add(a, b):
    """
    >>> add(1, 1)
    {first}
    >>> add(2, 2)
    {second}
    """
    return a + b
'''


@pytest.mark.slow
def test_a_doctest_failing_at_another_example_is_target_related(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    project.commit({"calc.py": DOCTEST.format(first=3, second=4)}, "base: first example wrong")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"calc.py": DOCTEST.format(first=2, second=5)}, "now the second is wrong")
    result, report = review(pytester, "--doctest-modules")
    (failure,) = report["tests"]["target_related"]
    assert failure["signature"] == "DocTestFailure: add(2, 2) -> N @ calc.add"
    assert failure["base_signature"] == "DocTestFailure: add(1, 1) -> N @ calc.add"
    assert failure["reason"].startswith("failure changed")
    assert result.ret == 1


FIXTURED = """\
def test_a(thing):
    assert thing == 2
"""


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_a_listed_path_keeps_its_conftest_fixtures_for_the_base_rerun(
    pytester: pytest.Pytester, project: GitRepo, extra: list[str]
) -> None:
    """The change touches a test file, so the base lists what it collects there before it
    re-runs the failure: the re-run still sees the folder's conftest fixture, and the failure
    there is the same one (pytest 9.1 gives a conftest's fixtures to the first folder node
    that collects it)."""
    fixture = "import pytest\n\n\n@pytest.fixture\ndef thing():\n    return 1\n"
    project.commit({"tests/conftest.py": fixture, "tests/test_a.py": FIXTURED}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"tests/test_a.py": FIXTURED + "# a comment\n"}, "a comment")
    result, report = review(pytester, *extra)
    assert "the collection of 1 path(s)" in result.stdout.str()
    assert ids(report, "pre_existing") == ["tests/test_a.py::test_a"], report["tests"]
    assert ids(report, "target_related") == []
    assert result.ret == 0
