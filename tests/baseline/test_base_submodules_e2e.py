"""End to end: a project whose tests import code from a git submodule. The base re-run runs
with the submodule checked out at the commit the base records, from the objects the
repository already has; where that commit is not there, its answers are unknown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

HELPERS = "def double(x):\n    return x * 2\n\n\ndef legacy():\n    return 4\n"
TESTS = """\
import helpers


def test_double():
    assert helpers.double(3) == 6


def test_legacy():
    assert helpers.legacy() == 5
"""
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["vendor/lib"]\ntestpaths = ["tests"]\n'
ALLOW = ("-c", "protocol.file.allow=always")


@pytest.fixture
def library(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A repository of its own holding ``helpers.py`` (``legacy`` has an old bug)."""
    lib = GitRepo.init(tmp_path_factory.mktemp("lib") / "lib")
    lib.commit({"helpers.py": HELPERS, ".gitignore": "__pycache__/\n"}, "helpers")
    return lib


@pytest.fixture
def vendored(project: GitRepo, library: GitRepo) -> GitRepo:
    """``main`` holds the tests and ``vendor/lib`` as a submodule; ``feature`` branches off."""
    project.git(*ALLOW, "submodule", "--quiet", "add", str(library.path), "vendor/lib")
    project.commit({"pyproject.toml": PYPROJECT, "tests/test_helpers.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.mark.parametrize("extra", XDIST)
def test_an_old_failure_in_submodule_code_stays_pre_existing_on_a_docs_change(
    pytester: pytest.Pytester, vendored: GitRepo, extra: list[str]
) -> None:
    vendored.commit({"README.md": "docs\n"}, "docs only")
    with vendored.untouched():
        result, report = review(pytester, *extra)
    # Without the submodule at the base, helpers did not import there: "target-related".
    assert ids(report, "pre_existing") == ["tests/test_helpers.py::test_legacy"], report["tests"]
    assert ids(report, "target_related") == []
    assert ids(report, "unknown") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


def bump(project: GitRepo, library: GitRepo, helpers: str) -> str:
    """Commit ``helpers`` in the library, move the project's submodule to it and commit."""
    new = library.commit({"helpers.py": helpers}, "library change")
    sub = GitRepo(project.path / "vendor" / "lib")
    sub.git("fetch", "--quiet", "origin")
    sub.git("checkout", "--quiet", new)
    project.commit(None, "bump the library")
    return new


def test_a_bump_to_a_broken_library_commit_is_target_related(
    pytester: pytest.Pytester, vendored: GitRepo, library: GitRepo
) -> None:
    bump(vendored, library, HELPERS.replace("x * 2", "x * 3"))
    with vendored.untouched():
        result, report = review(pytester)
    # The base's submodule commit doubles: the change broke test_double; legacy stays old.
    assert ids(report, "target_related") == ["tests/test_helpers.py::test_double"]
    assert ids(report, "pre_existing") == ["tests/test_helpers.py::test_legacy"]
    assert result.ret == 1


def test_a_bump_that_fixes_nothing_keeps_the_old_failure_pre_existing(
    pytester: pytest.Pytester, vendored: GitRepo, library: GitRepo
) -> None:
    bump(vendored, library, HELPERS + "\n\ndef extra():\n    return 1\n")
    result, report = review(pytester)
    assert ids(report, "pre_existing") == ["tests/test_helpers.py::test_legacy"]
    assert ids(report, "target_related") == []
    assert result.ret == 0


def test_a_base_commit_the_repository_lacks_makes_the_answers_unknown(
    pytester: pytest.Pytester, project: GitRepo, library: GitRepo
) -> None:
    """The base records a submodule commit no local repository has (a shallow submodule, a
    rewritten history): the base ran without it, so its failures say nothing."""
    project.git(*ALLOW, "submodule", "--quiet", "add", str(library.path), "vendor/lib")
    project.commit({"pyproject.toml": PYPROJECT, "tests/test_helpers.py": TESTS}, "base")
    head = project.git("rev-parse", "HEAD:vendor/lib")
    lost = "0123456789abcdef0123456789abcdef01234567"
    project.git("update-index", "--cacheinfo", f"160000,{lost},vendor/lib")
    project.git("commit", "--quiet", "-m", "points at a commit nobody has")
    project.git("checkout", "--quiet", "-b", "feature")
    project.git("update-index", "--cacheinfo", f"160000,{head},vendor/lib")
    project.git("commit", "--quiet", "-m", "back to the real one")
    with project.untouched():
        result, report = review(pytester)
    unknown = {t["nodeid"]: t["reason"] for t in report["tests"]["unknown"]}
    assert list(unknown) == ["tests/test_helpers.py::test_legacy"], report["tests"]
    assert (
        f"the base's commit {lost[:12]} is not in the local repository"
        in unknown["tests/test_helpers.py::test_legacy"]
    )
    assert ids(report, "pre_existing") == []
    assert result.ret == 1


def test_a_submodule_not_checked_out_here_is_not_needed_at_the_base(
    pytester: pytest.Pytester, project: GitRepo, library: GitRepo
) -> None:
    """A repository whose submodule was never initialised: its tests run without it, and so
    does the base; the old failure stays pre-existing."""
    tests = "import os\n\n\ndef test_old():\n    assert os.sep == '?'\n"
    project.git(*ALLOW, "submodule", "--quiet", "add", str(library.path), "vendor/lib")
    project.commit({"tests/test_old.py": tests, "pyproject.toml": PYPROJECT}, "base")
    project.git("submodule", "--quiet", "deinit", "--force", "vendor/lib")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    assert ids(report, "pre_existing") == ["tests/test_old.py::test_old"]
    assert result.ret == 0


@pytest.mark.parametrize("bytecode", ["written", "not written"])
def test_a_kept_base_checkout_gets_its_submodule_afresh_each_run(
    pytester: pytest.Pytester,
    project: GitRepo,
    library: GitRepo,
    monkeypatch: pytest.MonkeyPatch,
    bytecode: str,
    tmp_path: Path,
) -> None:
    """``reuse_base_checkout``: the second run finds the kept checkout, whose submodule an
    earlier run's tests may have changed; it is written again at the base's commit."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    if bytecode == "written":
        monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    else:
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    config = PYPROJECT + "[tool.bounded-review]\nreuse_base_checkout = true\n"
    project.git(*ALLOW, "submodule", "--quiet", "add", str(library.path), "vendor/lib")
    project.commit({"pyproject.toml": config, "tests/test_helpers.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs only")
    with project.untouched():
        first = review(pytester)[1]
    assert ids(first, "pre_existing") == ["tests/test_helpers.py::test_legacy"]
    [kept] = (tmp_path / "cache").glob("**/checkouts/*/*/vendor/lib/helpers.py")
    kept.write_text(HELPERS.replace("return 4", "return 5"))  # left by an earlier run
    shutil.rmtree(project.path / ".bounded-review" / "cache")  # the base is asked again
    project.commit({"README.md": "more docs\n"}, "docs again")
    with project.untouched():
        result, report = review(pytester)
    assert ids(report, "pre_existing") == ["tests/test_helpers.py::test_legacy"], report["tests"]
    assert result.ret == 0
