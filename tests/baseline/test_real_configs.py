"""Real projects' pytest configurations and test layouts (``tests/data/projects``), each run as
its own CI runs it: a harmless change comes out ``yes``, narrowing given at invocation comes out
partial, and a regression reverted leaves only the failure that was already there."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

PROJECTS = Path(__file__).parents[1] / "data" / "projects"
NAMES = sorted(p.name for p in PROJECTS.iterdir() if (p / "layout.toml").exists())
# The failure that was already there, in the shapes real suites fail in: a plain assertion, a
# message holding a set (its order follows the process's hash seed), a long repr pytest cuts in
# the middle of an object's address.
KNOWN_BUGS = {
    "assertion": "\n\ndef test_known_bug():\n    assert 1 + 1 == 3\n",
    "set": "\n\ndef test_known_bug():\n"
    "    found = {'Mapping', 'MutableMapping', 'Sequence', 'Set', 'Sized'}\n"
    "    raise TypeError(f'Ambiguous dispatch for <class dict>: {found}')\n",
    "address": "\n\nclass Node:\n    pass\n\n\ndef test_known_bug():\n"
    "    assert [Node() for _ in range(12)] == []\n",
}
CONTENT = {
    "plain": "VALUE = 1\n",
    "test": "def test_ok():\n    pass\n",
    "network": "def test_fetch_network():\n    pass\n",
    "doctest": 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return 2 * x\n',
}


def _layout(name: str) -> dict[str, Any]:
    return tomllib.loads((PROJECTS / name / "layout.toml").read_text())


def _files(name: str) -> dict[str, str]:
    """The project's configuration files, verbatim, and its layout's files, generated."""
    files = {p.name: p.read_text() for p in (PROJECTS / name).iterdir() if p.name != "layout.toml"}
    for path, kind in _layout(name)["files"].items():
        if kind.startswith("marked:"):
            mark = kind.split(":", 1)[1]
            files[path] = f"import pytest\n\n\n@pytest.mark.{mark}\ndef test_marked():\n    pass\n"
        else:
            files[path] = CONTENT[kind]
    return files


def _first_test(name: str) -> str:
    return next(path for path, kind in _layout(name)["files"].items() if kind == "test")


def _review(pytester: pytest.Pytester, args: list[str]) -> tuple[int, dict[str, Any]]:
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main", *args
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result.ret, report


def _harmless(project: GitRepo, name: str, extra: dict[str, str] | None = None) -> None:
    project.commit({**_files(name), **(extra or {})}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    first = _first_test(name)
    project.commit({first: (project.path / first).read_text() + "# a comment\n"}, "harmless")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_harmless_change_is_clean_as_the_project_runs_its_tests(
    pytester: pytest.Pytester, project: GitRepo, name: str
) -> None:
    _harmless(project, name)
    for args in _layout(name)["whole"]:
        with project.untouched():
            code, report = _review(pytester, args)
        assert report["gate"] == {"review_clean": "yes", "reasons": []}, (name, args, report)
        assert report["statuses"]["local_verification"] == "passed", (name, args)
        assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_narrowing_at_invocation_is_partial(
    pytester: pytest.Pytester, project: GitRepo, name: str
) -> None:
    _harmless(project, name)
    for args in _layout(name)["partial"]:
        code, report = _review(pytester, args)
        assert report["statuses"]["local_verification"] == "partial", (name, args)
        assert report["gate"]["review_clean"] == "indeterminate", (name, args)
        assert report["gate"]["reasons"][0].startswith("a partial run: "), (name, args)
        assert report["suite"]["left_out_total"] > 0, (name, args)
        assert code == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_reverted_regression_leaves_only_what_failed_before(
    pytester: pytest.Pytester, project: GitRepo, name: str
) -> None:
    first = _first_test(name)
    bug = KNOWN_BUGS[_layout(name).get("known_bug", "assertion")]
    _harmless(project, name, {first: CONTENT["test"] + bug})
    good = (project.path / first).read_text()
    project.commit({first: good.replace("pass", "assert False", 1)}, "regression")
    project.commit({first: good}, "revert the regression")
    code, report = _review(pytester, _layout(name)["whole"][0])
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == [f"{first}::test_known_bug"], (
        name,
        report["tests"],
    )
    assert report["tests"]["target_related"] == []
    assert report["gate"]["review_clean"] == "yes", (name, report["gate"])
    assert code == 0


def test_the_fixtures_cover_the_configurations_that_matter() -> None:
    """Each kind of configuration the rule must get right has a project here."""
    configs = {name: "".join(_files(name).values()) for name in NAMES}
    assert any('"-m",' in text or '-m "not' in text for text in configs.values())  # addopts -m
    assert any("testpaths" not in text for text in configs.values())  # no testpaths
    assert any("--doctest-modules" in text for text in configs.values())
    assert any("pytest_collection_modifyitems" in text for text in configs.values())
    assert any('testpaths = ["src", "tests"]' in text for text in configs.values())
    assert any("--ignore=" in text for text in configs.values())  # ignores in addopts
    shapes = {_layout(name).get("known_bug", "assertion") for name in NAMES}
    assert shapes == set(KNOWN_BUGS)
