"""The re-runs (at head and at the base) add nothing the user's own strictness could reject:
a pre-existing failure is classified as such under --strict-config, --strict-markers,
filterwarnings = error and -W error, each with the cache, randomly or xdist plugin disabled."""

from __future__ import annotations

import json

import pytest
from gitrepo import GitRepo

STRICTNESS = {
    "strict-config": ("", ["--strict-config"]),
    "strict-markers": ("", ["--strict-markers"]),
    "filterwarnings": ('filterwarnings = ["error"]\n', []),
    "W-error": ("", ["-W", "error"]),
}
# Each strictness, each with one plugin disabled, so every strictness and every disabled
# plugin is tried (the options act apart: none of them changes what another one checks).
PAIRS = [
    ("strict-config", "cacheprovider"),
    ("strict-markers", "randomly"),
    ("filterwarnings", "xdist"),
    ("W-error", "cacheprovider"),
    ("W-error", "xdist"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("strictness", "plugin"), PAIRS)
def test_a_pre_existing_failure_stays_pre_existing_under_the_users_strictness(
    pytester: pytest.Pytester, project: GitRepo, strictness: str, plugin: str
) -> None:
    ini, options = STRICTNESS[strictness]
    project.commit(
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n" + ini,
            "test_a.py": "def test_a():\n    assert 0\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": "def test_a():\n    assert 0\n# touched\n"}, "change")
    result = pytester.runpytest_subprocess(
        *options, "-p", f"no:{plugin}", "--bounded-review", "--bounded-review-base=main"
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_a.py::test_a"], (
        result.stdout.str()
    )
    assert report["tests"]["unknown"] == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.slow
@pytest.mark.parametrize("where", ["ini", "PYTEST_ADDOPTS"])
def test_xdist_turned_off_by_the_project_is_off_in_the_reruns(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    ini = 'addopts = "-p no:xdist"\n' if where == "ini" else ""
    project.commit(
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n" + ini,
            "test_a.py": "def test_a():\n    assert 0\n",
            "test_b.py": "def test_b():\n    assert 1\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_b.py": "def test_b():\n    assert 0\n"}, "regression")
    if where == "PYTEST_ADDOPTS":
        monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:randomly -p no:xdist")
    pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_a.py::test_a"]
    related = [(t["nodeid"], t["reason"]) for t in report["tests"]["target_related"]]
    assert related == [("test_b.py::test_b", "passes at base")]
    assert report["tests"]["unknown"] == []
