from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.baseline.rerun import RerunResult, merged, moved, replayable


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


def test_config_files_are_made_absolute_and_moved_to_the_checkout(tmp_path: Path) -> None:
    args = replayable(["-c", "ci/pytest.ini", "--config-file=other.ini", "-v"], [], tmp_path)
    assert args == [
        f"--config-file={tmp_path}/ci/pytest.ini",
        f"--config-file={tmp_path}/other.ini",
        "-v",
    ]
    base = Path("/elsewhere/checkout")
    assert moved([*args, "/outside/x", "-o", "a=b"], tmp_path, base) == [
        "--config-file=/elsewhere/checkout/ci/pytest.ini",
        "--config-file=/elsewhere/checkout/other.ini",
        "-v",
        "/outside/x",
        "-o",
        "a=b",
    ]


def test_merged_results() -> None:
    one = RerunResult(status="ok", found=frozenset({"a"}), passed=frozenset({"a"}))
    two = RerunResult(status="ok", found=frozenset({"b"}), failed={"b": "sig"})
    both = merged(one, two)
    assert (both.found, both.passed, dict(both.failed)) == ({"a", "b"}, {"a"}, {"b": "sig"})
    broken = RerunResult(status="timeout", detail="slow")
    assert merged(one, broken) is broken
