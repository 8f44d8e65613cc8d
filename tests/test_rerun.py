from __future__ import annotations

import pytest

from pytest_boundedreview.rerun import RerunResult, merged, replayable


@pytest.mark.parametrize(
    ("args", "positional", "expected"),
    [
        (["--runslow", "--env", "prod", "tests/"], ["tests/"], ["--runslow", "--env", "prod"]),
        (["-k", "slow", "-m", "db", "-kfoo", "-n", "2", "-n4"], [], []),
        (["-xvs", "--maxfail=3", "-x", "--lf"], [], ["-vs"]),
        (
            ["--doctest-modules", "-p", "myplugin", "-o", "a=b", "-W", "error"],
            [],
            ["--doctest-modules", "-p", "myplugin", "-o", "a=b", "-W", "error"],
        ),
        (["-p", "no:boundedreview", "-pxdist"], [], ["-pxdist"]),
        (["--bounded-review", "--bounded-review-base", "main", "--bounded-review-full"], [], []),
        (
            ["--bounded-review-base=main", "--import-mode=importlib"],
            [],
            ["--import-mode=importlib"],
        ),
        (["--cov", "src", "tests"], ["tests"], []),
        (["--cov", "tests"], ["tests"], []),
        (["--junitxml", "out.xml", "--basetemp=/tmp/x", "a.py::t"], ["a.py::t"], []),
    ],
)
def test_replayable(args: list[str], positional: list[str], expected: list[str]) -> None:
    assert replayable(args, positional) == expected


def test_merged_results() -> None:
    one = RerunResult(status="ok", found=frozenset({"a"}), passed=frozenset({"a"}))
    two = RerunResult(status="ok", found=frozenset({"b"}), failed={"b": "sig"})
    both = merged(one, two)
    assert (both.found, both.passed, dict(both.failed)) == ({"a", "b"}, {"a"}, {"b": "sig"})
    broken = RerunResult(status="timeout", detail="slow")
    assert merged(one, broken) is broken
