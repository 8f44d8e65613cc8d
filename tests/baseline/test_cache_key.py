"""What the base cache is keyed by: every option that can change an outcome, and none of those
that only change what is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.baseline.reruns.cache import cache_path, outcome_args


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["-q"], []),
        (["-vv", "--verbose", "--quiet", "-l", "--showlocals"], []),
        (["-rA", "-r", "fE", "--tb=short", "--tb", "line"], []),
        (["--color=no", "--code-highlight", "no", "--durations", "5", "--durations-min=1"], []),
        (["--junitxml=out.xml", "--junit-xml", "x.xml", "--no-header", "--no-summary"], []),
        (["-vs"], ["-s"]),
        (["-vrfE"], []),
        (["-vr", "fE", "-x"], ["-x"]),
        (["-klove"], ["-klove"]),  # a value's letters are not options
        (["-k", "love", "-m", "slow"], ["-k", "love", "-m", "slow"]),
        (["-W", "error", "-Werror::UserWarning"], ["-W", "error", "-Werror::UserWarning"]),
        (
            ["-p", "no:cacheprovider", "--strict-markers", "-s"],
            ["-p", "no:cacheprovider", "--strict-markers", "-s"],
        ),
        (["-o", "xfail_strict=true", "--runxfail"], ["-o", "xfail_strict=true", "--runxfail"]),
    ],
)
def test_only_reporting_options_leave_the_key(args: list[str], kept: list[str]) -> None:
    assert outcome_args(args) == kept


def test_a_reporting_option_keeps_the_cache_file_and_an_outcome_option_does_not(
    tmp_path: Path,
) -> None:
    plain = cache_path(tmp_path, "c" * 40, ["-p", "no:randomly"])
    assert cache_path(tmp_path, "c" * 40, ["-p", "no:randomly", "-q", "-rA", "--tb=no"]) == plain
    assert cache_path(tmp_path, "c" * 40, ["-p", "no:randomly", "-W", "error"]) != plain
    assert cache_path(tmp_path, "c" * 40, ["-p", "no:randomly", "-x"]) != plain


def test_the_key_is_the_environment_the_base_run_is_given(tmp_path: Path) -> None:
    """Another value of a variable is another base run; the shell's notes of the last command
    and folder, and git's variables (never passed on), are not."""
    environ = {"PATH": "/usr/bin", "APP_MODE": "strict", "_": "/usr/bin/pytest", "OLDPWD": "/a"}
    plain = cache_path(tmp_path, "c" * 40, [], "", environ)
    assert cache_path(tmp_path, "c" * 40, [], "", {**environ, "APP_MODE": "lenient"}) != plain
    assert cache_path(tmp_path, "c" * 40, [], "", {**environ, "NEW": "1"}) != plain
    assert cache_path(tmp_path, "c" * 40, [], "", {**environ, "GIT_CONFIG_COUNT": "1"}) != plain
    others = {**environ, "_": "/usr/bin/env", "OLDPWD": "/b", "GIT_DIR": "/x/.git"}
    assert cache_path(tmp_path, "c" * 40, [], "", others) == plain
