"""Who deselected a test is the first caller outside the baseline and pluggy: frames of any
part of the baseline (the re-run recorder's deselection too) are passed over."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.suite.deselection import caller


def _defined(module: str, source: str, **names: object) -> Callable[..., str]:
    """The function ``source`` defines, as if in ``module``."""
    namespace: dict[str, object] = {"__name__": module, **names}
    exec(source, namespace)
    function = namespace[source.split("(")[0].removeprefix("def ")]
    assert callable(function)
    return function  # type: ignore[return-value]


@pytest.mark.parametrize(
    "ours",
    [
        "pytest_boundedreview.baseline.reruns.recorder",
        "pytest_boundedreview.baseline.suite.deselection",
        "pytest_boundedreview.baseline.sessionreruns",
    ],
)
def test_frames_of_the_baseline_are_passed_over(tmp_path: Path, ours: str) -> None:
    hook = _defined(ours, "def hook():\n    return caller(root)\n", caller=caller, root=tmp_path)
    by_mark = _defined("_pytest.mark", "def deselect_by_mark(call):\n    return call()\n")
    assert by_mark(hook) == "-m"


def test_a_plugin_of_another_package_is_named(tmp_path: Path) -> None:
    hook = _defined(
        "someplugin", "def hook():\n    return caller(root)\n", caller=caller, root=tmp_path
    )
    by_mark = _defined("_pytest.mark", "def deselect_by_mark(call):\n    return call()\n")
    assert by_mark(hook) == "plugin someplugin"
