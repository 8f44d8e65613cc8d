"""The suite is what ``pytest`` with no arguments runs under the project's own configuration. A
run is partial only when it ran less than that — test files its paths or ignores left out, or
tests deselected by what was given for this run — and a partial run is never clean unless
``allow_partial = true``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TEST = "def test_one():\n    pass\n"


def setup(
    project: GitRepo, config: str = "", ini: str = "", files: dict[str, str] | None = None
) -> None:
    """A project with two test files under ``tests/`` (plus ``files``), and a harmless change
    under review."""
    pyproject = "[tool.bounded-review]\n" + config
    if ini:
        pyproject += "[tool.pytest.ini_options]\n" + ini
    project.commit(
        {
            "pyproject.toml": pyproject,
            "tests/test_a.py": TEST,
            "tests/test_b.py": TEST,
            "app.py": "x = 1\n",
            **(files or {}),
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2  # harmless\n"}, "change")


def review(
    pytester: pytest.Pytester, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        result = pytester.runpytest_subprocess(
            "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main", *args
        )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    report["stdout"] = result.stdout.str()
    return result.ret, report


def assert_whole(code: int, report: dict[str, Any]) -> None:
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert report["statuses"]["local_verification"] == "passed"
    assert report["suite"]["left_out_total"] == 0
    assert code == 0


def assert_partial(code: int, report: dict[str, Any], why: str) -> None:
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert report["gate"]["reasons"] == [f"a partial run: {why} (allow_partial = true accepts one)"]
    assert code == 1


def test_a_path_narrower_than_the_suite_is_partial_and_names_what_it_left_out(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    code, report = review(pytester, "tests/test_a.py")
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run "
        "(tests/test_a.py): tests/test_b.py"
    )
    assert_partial(code, report, why)
    assert report["suite"] == {
        "defined_by": ["the rootdir, no testpaths (pyproject.toml)"],
        "left_out": ["tests/test_b.py"],
        "left_out_total": 1,
    }
    assert (
        "suite: defined by the rootdir, no testpaths (pyproject.toml); left out: tests/test_b.py"
        in (report["stdout"])
    )


def test_allow_partial_accepts_a_partial_run_and_still_says_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "allow_partial = true\n")
    code, report = review(pytester, "tests/test_a.py")
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "yes"
    assert code == 0


@pytest.mark.parametrize("given", [["tests"], ["."]])
def test_paths_that_cover_testpaths_are_the_whole_suite(
    pytester: pytest.Pytester, project: GitRepo, given: list[str]
) -> None:
    setup(project, ini='testpaths = ["tests"]\n', files={"elsewhere/test_x.py": TEST})
    code, report = review(pytester, *given)
    assert_whole(code, report)
    assert report["suite"]["defined_by"] == ["testpaths: tests (pyproject.toml)"]


@pytest.mark.parametrize(
    "given",
    [["tests"], ["tests", "docs"], ["pkg", "tests"], ["tests/test_a.py", "tests/test_b.py"]],
)
def test_paths_that_hold_every_test_file_are_the_whole_suite_without_testpaths(
    pytester: pytest.Pytester, project: GitRepo, given: list[str]
) -> None:
    setup(project, files={"docs/index.rst": "Docs\n", "pkg/core.py": "x = 1\n"})
    assert_whole(*review(pytester, *given))


def test_a_test_file_outside_the_paths_given_makes_the_run_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, files={"test_top.py": TEST})
    code, report = review(pytester, "tests")
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run (tests): "
        "test_top.py"
    )
    assert_partial(code, report, why)


def test_a_run_from_a_subfolder_is_whole_when_it_holds_every_test_file(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(project)
    monkeypatch.chdir(project.path / "tests")
    assert_whole(*review(pytester))


def test_a_run_from_a_subfolder_is_partial_when_tests_lie_elsewhere(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(project, files={"test_top.py": TEST})
    monkeypatch.chdir(project.path / "tests")
    code, report = review(pytester)
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run "
        "(the folder it started in): test_top.py"
    )
    assert_partial(code, report, why)


@pytest.mark.parametrize("ignore", [["--ignore", "benchmark.py"], ["--ignore-glob=bench*.py"]])
def test_ignoring_a_file_that_holds_no_test_leaves_nothing_out(
    pytester: pytest.Pytester, project: GitRepo, ignore: list[str]
) -> None:
    setup(project, files={"benchmark.py": "print('timing')\n"})
    assert_whole(*review(pytester, *ignore))


@pytest.mark.parametrize("ignore", [["--ignore=tests/test_b.py"], ["--ignore-glob", "*/test_b*"]])
def test_ignoring_a_test_file_at_invocation_is_partial(
    pytester: pytest.Pytester, project: GitRepo, ignore: list[str]
) -> None:
    setup(project)
    code, report = review(pytester, *ignore)
    assert report["statuses"]["local_verification"] == "partial"
    assert report["suite"]["left_out"] == ["tests/test_b.py"]
    assert code == 1


def test_the_projects_own_ignores_define_the_suite(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(
        project,
        ini='addopts = ["--ignore=tests/test_b.py"]\n',
        files={"tests/conftest.py": 'collect_ignore = ["test_c.py"]\n', "tests/test_c.py": TEST},
    )
    code, report = review(pytester, "tests")
    assert report["tests"]["passed"] == 1
    assert_whole(code, report)


def test_doctest_modules_count_when_the_project_turns_them_on(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    doc = 'def f():\n    """\n    >>> f()\n    1\n    """\n    return 1\n'
    setup(project, ini='addopts = ["--doctest-modules"]\n', files={"pkg/mod.py": doc})
    code, report = review(pytester, "tests")
    assert report["suite"]["left_out"] == ["pkg/mod.py"]
    assert code == 1
    assert_whole(*review(pytester, "tests", "pkg"))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_deselection_by_the_projects_addopts_defines_the_suite(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    stress = "import pytest\n\n\n@pytest.mark.stress\ndef test_heavy():\n    pass\n"
    setup(
        project,
        ini='addopts = ["-m", "not stress"]\nmarkers = ["stress: opt-in"]\n',
        files={"tests/test_stress.py": stress},
    )
    code, report = review(pytester, *workers)
    assert_whole(code, report)
    assert report["tests"]["passed"] == 2
    note = (
        "1 test(s) deselected by the project's configuration (addopts: -m 'not stress'); "
        "not reviewed"
    )
    assert note in report["limitations"]
    assert report["suite"]["defined_by"] == [
        "the rootdir, no testpaths (pyproject.toml)",
        "addopts: -m 'not stress' (1 deselected)",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_deselection_given_at_invocation_is_partial(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    setup(project)
    code, report = review(pytester, *workers, "-k", "test_a")
    assert report["tests"]["passed"] == 1
    assert_partial(code, report, "1 test(s) deselected by this run (command line: -k test_a)")
    assert report["suite"]["left_out"] == ["tests/test_b.py::test_one"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_deselection_from_pytest_addopts_is_partial(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    setup(project)
    code, report = review(pytester, *workers, env={"PYTEST_ADDOPTS": "--deselect tests/test_b.py"})
    why = "1 test(s) deselected by this run (PYTEST_ADDOPTS: --deselect tests/test_b.py)"
    assert_partial(code, report, why)


def test_the_projects_own_expression_given_again_is_still_the_suite(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, ini='addopts = ["-k", "not test_b"]\n', files={"tests/test_c.py": TEST})
    assert_whole(*review(pytester, "-k", "not test_b"))
    code, report = review(pytester, "-k", "not test_b and not test_a")
    assert report["statuses"]["local_verification"] == "partial"
    assert code == 1


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_conftest_of_the_project_that_deselects_defines_the_suite(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    conftest = (
        "def pytest_collection_modifyitems(config, items):\n"
        "    dropped = [i for i in items if 'test_b' in i.nodeid]\n"
        "    items[:] = [i for i in items if i not in dropped]\n"
        "    config.hook.pytest_deselected(items=dropped)\n"
    )
    setup(project, files={"conftest.py": conftest})
    code, report = review(pytester, *workers)
    assert_whole(code, report)
    note = (
        "1 test(s) deselected by the project's configuration (conftest conftest.py); not reviewed"
    )
    assert note in report["limitations"]


def test_a_declared_suite_makes_exactly_that_narrowing_whole(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    slow = "import pytest\n\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n"
    setup(
        project,
        config='suite = ["-m", "not slow"]\n',
        ini='markers = ["slow: long", "gpu: needs one"]\n',
        files={"tests/test_slow.py": slow},
    )
    code, report = review(pytester, "-m", "not slow")
    assert_whole(code, report)
    assert "declared suite: -m 'not slow' (1 deselected)" in report["suite"]["defined_by"]
    # anything narrower than the declared suite is partial
    code, report = review(pytester, "-m", "not slow and not gpu", "tests/test_a.py")
    assert report["statuses"]["local_verification"] == "partial"
    assert code == 1


def test_a_declared_suite_holds_paths_and_selecting_options_only(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, config='suite = ["-x", "tests"]\n')
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*suite*-x cannot define a suite*"])


def test_named_tests_only_are_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    code, report = review(pytester, "tests/test_a.py::test_one")
    assert_partial(code, report, "only the tests named ran: tests/test_a.py::test_one")


def test_last_failed_only_is_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    project.commit({"tests/test_b.py": "def test_one():\n    assert 0\n"}, "break b")
    review(pytester)  # records the failure for --lf
    project.commit({"tests/test_b.py": TEST}, "fix b")
    code, report = review(pytester, "--lf")
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "--lf ran only the tests that failed last time" in report["gate"]["reasons"][0]
    assert code == 1


def test_declared_paths_take_the_place_of_testpaths(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, config='suite = ["tests"]\n', files={"tools/test_release.py": TEST})
    code, report = review(pytester, "tests")
    assert_whole(code, report)
    assert report["suite"]["defined_by"] == ["declared suite: tests (pyproject.toml)"]
    code, report = review(pytester, "tests/test_a.py")
    assert report["suite"]["left_out"] == ["tests/test_b.py"]
    assert code == 1


def _with_submodule(
    project: GitRepo,
    tmp_path_factory: pytest.TempPathFactory,
    folder: str = "vendor/suite",
    files: dict[str, str] | None = None,
) -> GitRepo:
    """A project whose ``folder`` is a submodule holding its own test file (beside the
    project's ``files``, by default its own tests under ``tests/``), on a feature branch with
    a harmless change; returns the submodule's origin."""
    origin = GitRepo.init(tmp_path_factory.mktemp("suite-origin"))
    origin.commit({f"test_{folder.rsplit('/', 1)[-1]}.py": TEST, "data.json": "{}\n"}, "suite")
    project.commit({"app.py": "x = 1\n", **(files or {"tests/test_a.py": TEST})}, "base")
    add = ["-c", "protocol.file.allow=always", "submodule", "add", "--quiet"]
    project.git(*add, str(origin.path), folder)
    project.git("commit", "--quiet", "-m", "the shared suite")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2  # harmless\n"}, "change")
    return origin


def test_a_submodules_own_tests_left_out_are_its_own_unless_the_change_touches_it(
    pytester: pytest.Pytester, project: GitRepo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A project whose CI runs its own folder only (`pytest tests`) leaves a submodule's tests
    to that repository: the run is whole. Once the change moves the submodule's commit, its
    tests are this change's, and a run leaving them out is partial."""
    origin = _with_submodule(project, tmp_path_factory)
    code, report = review(pytester, "tests")
    assert_whole(code, report)
    assert report["suite"]["defined_by"][-1] == (
        "test files of submodules the change does not touch are theirs, not this project's: "
        "vendor/suite/test_suite.py"
    )

    origin.commit({"test_suite.py": TEST + "\n\ndef test_two():\n    pass\n"}, "more")
    suite = GitRepo(project.path / "vendor" / "suite")
    suite.git("-c", "protocol.file.allow=always", "pull", "--quiet", "origin", "main")
    project.git("commit", "--quiet", "-am", "bump the suite")
    code, report = review(pytester, "tests")
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run (tests): "
        "vendor/suite/test_suite.py"
    )
    assert_partial(code, report, why)


def test_a_folder_git_does_not_record_as_a_submodule_is_the_projects(
    pytester: pytest.Pytester, project: GitRepo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Only a submodule the base records counts as another repository: a ``.git`` file or
    folder dropped into one of the project's test folders (invisible to ``git status``) does
    not make the tests there someone else's."""
    project.commit(
        {"tests/test_a.py": TEST, "legacy/test_old.py": TEST, "app.py": "x = 1\n"}, "base"
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2  # harmless\n"}, "change")
    project.write("legacy/.git", "gitdir: /nonexistent\n")
    code, report = review(pytester, "tests")
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run (tests): "
        "legacy/test_old.py"
    )
    assert_partial(code, report, why)


def test_a_submodule_inside_the_configured_testpaths_is_the_projects_suite(
    pytester: pytest.Pytester, project: GitRepo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Where ``testpaths`` names the folder a submodule lies in, the project says its tests are
    part of its suite: a run leaving them out is partial."""
    files = {
        "tests/unit/test_a.py": TEST,
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    }
    _with_submodule(project, tmp_path_factory, "tests/conformance", files)
    code, report = review(pytester, "tests/unit")
    why = (
        "1 test file(s) of the suite left out by the paths and ignores of this run "
        "(tests/unit): tests/conformance/test_conformance.py"
    )
    assert_partial(code, report, why)
