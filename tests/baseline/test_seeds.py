"""Re-runs get the session's pytest-randomly seed in place of any seed option given."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.reruns.seeds import with_seed


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-v"], ["-v", "--randomly-seed=1234"]),
        (["--randomly-seed=last", "-v"], ["-v", "--randomly-seed=1234"]),
        (["--randomly-seed", "last", "-v"], ["-v", "--randomly-seed=1234"]),
        (["-p", "randomly", "--randomly-seed", "99"], ["-p", "randomly", "--randomly-seed=1234"]),
    ],
)
def test_the_sessions_seed_replaces_any_given(args: list[str], expected: list[str]) -> None:
    assert with_seed(args, 1234) == expected


@pytest.mark.parametrize("seed", [None, "default", "last", True])
def test_without_the_plugin_the_options_stay(seed: object) -> None:
    assert with_seed(["-p", "no:randomly", "-v"], seed) == ["-p", "no:randomly", "-v"]
