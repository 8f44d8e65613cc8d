"""A run of part of the suite is reported as ``partial`` and is never clean unless
``allow_partial = true``; paths that cover ``testpaths`` (or the rootdir) are the whole suite."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo


def setup(project: GitRepo, config: str = "") -> None:
    tests = "def test_one():\n    pass\n"
    project.commit(
        {
            "pyproject.toml": "[tool.bounded-review]\n" + config,
            "tests/test_a.py": tests,
            "tests/test_b.py": tests,
            "app.py": "x = 1\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n"}, "change")


def review(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main", *args)
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result.ret, report


def test_a_path_narrower_than_the_suite_is_partial_and_never_clean(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    code, report = review(pytester, "tests/test_a.py")
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"] == {
        "review_clean": "indeterminate",
        "reasons": [
            "a partial run: only the paths given ran (tests/test_a.py), not all of . "
            "(allow_partial = true accepts one)"
        ],
    }
    assert code == 1


def test_allow_partial_accepts_a_partial_run_and_still_says_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "allow_partial = true\n")
    code, report = review(pytester, "tests/test_a.py")
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


@pytest.mark.parametrize("given", ["tests", "."])
def test_paths_that_cover_testpaths_are_the_whole_suite(
    pytester: pytest.Pytester, project: GitRepo, given: str
) -> None:
    setup(project)
    ini = project.path / "pyproject.toml"
    project.commit(
        {"pyproject.toml": ini.read_text() + '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'}
    )
    code, report = review(pytester, given)
    assert report["statuses"]["local_verification"] == "passed"
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


def test_a_run_from_a_subfolder_is_partial(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(project)
    monkeypatch.chdir(project.path / "tests")
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "only the paths given ran" in report["gate"]["reasons"][0]
    assert result.ret == 1


def test_last_failed_only_is_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    project.commit({"tests/test_b.py": "def test_one():\n    assert 0\n"}, "break b")
    review(pytester)  # records the failure for --lf
    project.commit({"tests/test_b.py": "def test_one():\n    pass\n"}, "fix b")
    code, report = review(pytester, "--lf")
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "--lf ran only the tests that failed last time" in report["gate"]["reasons"][0]
    assert code == 1


def test_deselection_under_xdist_is_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    code, report = review(pytester, "-n", "2", "-k", "test_a")
    assert report["tests"]["passed"] == 1
    assert report["statuses"]["local_verification"] == "partial"
    assert "under xdist" in report["gate"]["reasons"][0]
    assert code == 1
