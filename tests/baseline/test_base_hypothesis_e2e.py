"""End to end: a property test whose failing example Hypothesis found earlier and keeps in its
example database (``.hypothesis/examples``, ignored by git). The base re-run is given the
database, so it replays the example as the working tree's run did instead of searching at
random; a new example re-asks the base."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

from pytest_boundedreview.baseline.checkout import artefacts
from pytest_boundedreview.baseline.checkout.basecontent import OWN_STORAGE
from pytest_boundedreview.change import git

PROPERTY = """\
import os

from hypothesis import given, settings, strategies as st

LOW = int(os.environ.get("LOW", "0"))
HIGH = int(os.environ.get("HIGH", str(2**40)))
EXAMPLES = int(os.environ.get("EXAMPLES", "5"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(LOW, HIGH))
def test_roundtrip(x):
    assert x != 123456789


def test_plain():
    assert True
"""
IGNORES = ".hypothesis/\n"


def find(project: GitRepo, database: Path | None = None) -> None:
    """Run the property test with a range where Hypothesis finds the bug, so the database
    (``.hypothesis``, else ``database``) keeps the failing example (as an earlier run of the
    suite would have)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.update(LOW="123456780", HIGH="123456790", EXAMPLES="200", PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_prop.py"]
    proc = subprocess.run(argv, cwd=project.path, env=env, capture_output=True, check=False)
    assert proc.returncode == 1, proc.stdout.decode()
    assert any(((database or project.path / ".hypothesis") / "examples").rglob("*"))


@pytest.fixture
def prop(project: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """``main`` holds a property test with an old bug; the database holds its example."""
    for name in ("CI", "GITHUB_ACTIONS", "HYPOTHESIS_STORAGE_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    ignores = (project.path / ".gitignore").read_text() + IGNORES
    project.commit({".gitignore": ignores, "test_prop.py": PROPERTY}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_a_failing_example_in_the_database_is_replayed_at_the_base(
    pytester: pytest.Pytester, prop: GitRepo, extra: list[str]
) -> None:
    find(prop)
    prop.commit({"README.md": "docs\n"}, "docs only")
    with prop.untouched():
        result, report = review(pytester, *extra)
    # Without the database the base drew five random integers and passed: "target-related".
    assert ids(report, "pre_existing") == ["test_prop.py::test_roundtrip"], report["tests"]
    assert ids(report, "target_related") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.slow
def test_a_property_test_without_a_database_stays_clean(
    pytester: pytest.Pytester, prop: GitRepo
) -> None:
    prop.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    assert report["tests"]["failed"] == 0
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.slow
def test_a_regression_the_database_shows_is_still_target_related(
    pytester: pytest.Pytester, prop: GitRepo
) -> None:
    """The change brings the bug in: the base, given the same example, passes it."""
    fixed = PROPERTY.replace("x != 123456789", "x != -1")
    prop.commit({"test_prop.py": fixed}, "base without the bug")
    prop.git("branch", "--force", "main", "HEAD")
    prop.commit({"test_prop.py": PROPERTY}, "the bug comes in")
    find(prop)
    result, report = review(pytester)
    assert ids(report, "target_related") == ["test_prop.py::test_roundtrip"], report["tests"]
    assert ids(report, "pre_existing") == []
    assert result.ret == 1


def test_a_new_example_changes_the_base_cache_key(prop: GitRepo) -> None:
    opened = git.open_repo(prop.path)
    base = prop.git("rev-parse", "main")
    examples = prop.path / ".hypothesis" / "examples" / "key"
    examples.mkdir(parents=True)
    (examples / "aaaa").write_bytes(b"1")

    def stamp() -> str:
        return artefacts.plan(opened, base, prop.path, None, {}).stamp

    first = stamp()
    assert first
    assert first == stamp()
    (examples / "bbbb").write_bytes(b"2")
    assert stamp() != first


def test_the_database_setting_of_the_environment_is_followed(prop: GitRepo, tmp_path: Path) -> None:
    opened = git.open_repo(prop.path)
    base = prop.git("rev-parse", "main")
    (prop.path / "db" / "examples").mkdir(parents=True)
    held = artefacts.plan(
        opened, base, prop.path, None, {"HYPOTHESIS_STORAGE_DIRECTORY": "db"}
    ).held
    assert held.trees == ((str(prop.path / "db" / "examples"), "db/examples"),)
    for outside in (str(tmp_path), "../elsewhere"):
        (prop.path / outside / "examples").mkdir(parents=True, exist_ok=True)
        setting = {"HYPOTHESIS_STORAGE_DIRECTORY": outside}
        held = artefacts.plan(opened, base, prop.path, None, setting).held
        assert held.trees == ((str(prop.path / outside / "examples"), f"{OWN_STORAGE}/examples"),)


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_a_database_outside_the_repository_is_replayed_and_left_as_it_was(
    pytester: pytest.Pytester,
    prop: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    """The base passes the example the change brought in: its Hypothesis would delete the
    example from the database it replays; the user's database keeps it."""
    database = tmp_path / "hypothesis-db"
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(database))
    fixed = PROPERTY.replace("x != 123456789", "x != -1")
    prop.commit({"test_prop.py": fixed}, "base without the bug")
    prop.git("branch", "--force", "main", "HEAD")
    prop.commit({"test_prop.py": PROPERTY}, "the bug comes in")
    find(prop, database)
    before = _listing(database)
    with prop.untouched():
        result, report = review(pytester, *extra)
    assert ids(report, "target_related") == ["test_prop.py::test_roundtrip"], report["tests"]
    assert result.ret == 1
    assert _listing(database) == before
