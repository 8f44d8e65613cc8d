"""Runs that ran less than the project's suite while trying to look whole: a change that adds
its own narrowing, a configuration overridden or swapped at invocation, short options run
together, an option a conftest deselects on — each partial; and files that only look like
tests (no doctest example in them) leave nothing out."""

from __future__ import annotations

import json
import os
import sys

import pytest
from gitrepo import GitRepo
from test_partial_runs import TEST, assert_whole, review, setup

MARKED = "import pytest\n\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n"
SLOW_MARKER = 'markers = ["slow: long"]\n'


def partial(code: int, report: dict[str, object]) -> str:
    statuses = report["statuses"]
    assert isinstance(statuses, dict)
    assert statuses["local_verification"] == "partial", report["gate"]
    assert code == 1
    gate = report["gate"]
    assert isinstance(gate, dict)
    return " | ".join(map(str, gate["reasons"]))


def test_a_change_that_adds_its_own_deselection_is_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, ini=SLOW_MARKER, files={"tests/test_slow.py": MARKED})
    ini = project.path / "pyproject.toml"
    narrowed = ini.read_text() + 'addopts = ["-m", "not slow"]\n'
    project.commit({"pyproject.toml": narrowed}, "leave the slow test out")
    why = partial(*review(pytester))
    assert "1 test(s) deselected by this run (-m 'not slow', given at invocation)" in why


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "shown"),
    [
        (["-o", "addopts=-m 'not slow'"], {}, "command line: -o"),
        ([], {"PYTEST_ADDOPTS": "-o 'addopts=-m slow'"}, "PYTEST_ADDOPTS: -o"),
        (["--override-ini", "python_files=test_a.py"], {}, "command line: --override-ini"),
        (["-o", "testpaths=tests/test_a.py"], {}, "command line: -o"),
        (["-p", "no:doctest"], {}, "command line: -p no:doctest"),
        (["-c", "ci.ini"], {}, "command line: -c ci.ini"),
    ],
)
def test_a_configuration_changed_at_invocation_is_partial(
    pytester: pytest.Pytester,
    project: GitRepo,
    args: list[str],
    env: dict[str, str],
    shown: str,
) -> None:
    ci = '[pytest]\naddopts = -m "not slow"\nmarkers =\n    slow: long\n'
    setup(
        project,
        ini=SLOW_MARKER,
        files={"tests/test_slow.py": MARKED, "ci.ini": ci, "tests/test_doc.txt": ">>> 1\n1\n"},
    )
    why = partial(*review(pytester, *args, env=env))
    assert "the configuration was changed at invocation" in why
    assert shown in why


def test_short_options_run_together_are_still_this_runs(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, ini=SLOW_MARKER + 'addopts = ["-m", "not slow"]\n')
    project.commit({"tests/test_slow.py": MARKED}, "a slow test")
    code, report = review(pytester, "-vm", "not slow and not test_b")
    assert partial(code, report)
    assert_whole(*review(pytester, "-vm", "not slow"))


def test_a_conftest_deselecting_on_an_option_given_at_invocation_is_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    conftest = (
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--quick', action='store_true')\n\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    if not config.getoption('--quick'):\n"
        "        return\n"
        "    dropped = [i for i in items if 'test_b' in i.nodeid]\n"
        "    items[:] = [i for i in items if i not in dropped]\n"
        "    config.hook.pytest_deselected(items=dropped)\n"
    )
    setup(project, files={"conftest.py": conftest})
    why = partial(*review(pytester, "--quick"))
    assert "conftest conftest.py acting on --quick given at invocation" in why
    assert_whole(*review(pytester))


def test_a_conftest_the_change_touches_deselects_for_this_run_only(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    conftest = (
        "def pytest_collection_modifyitems(config, items):\n"
        "    dropped = [i for i in items if 'test_b' in i.nodeid]\n"
        "    items[:] = [i for i in items if i not in dropped]\n"
        "    config.hook.pytest_deselected(items=dropped)\n"
    )
    project.commit({"conftest.py": conftest}, "drop test_b")
    why = partial(*review(pytester))
    assert "conftest conftest.py, which the change touches" in why


def test_a_local_plugin_of_the_project_that_deselects_defines_the_suite(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    plugin = (
        "def pytest_collection_modifyitems(config, items):\n"
        "    dropped = [i for i in items if 'test_b' in i.nodeid]\n"
        "    items[:] = [i for i in items if i not in dropped]\n"
        "    config.hook.pytest_deselected(items=dropped)\n"
    )
    setup(
        project,
        files={"conftest.py": 'pytest_plugins = ["netplugin"]\n', "netplugin.py": plugin},
    )
    code, report = review(pytester)
    assert_whole(code, report)
    assert "local plugin netplugin.py (1 deselected)" in report["suite"]["defined_by"]


def test_a_session_in_a_folder_with_its_own_ini_is_judged_by_the_roots_suite(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(
        project,
        ini='testpaths = ["tests", "integration"]\n',
        files={"tests/pytest.ini": "[pytest]\n", "integration/test_i.py": TEST},
    )
    monkeypatch.chdir(project.path / "tests")
    code, report = review(pytester)
    assert "integration/test_i.py" in partial(code, report)


def test_rootdir_given_at_invocation_is_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, ini='testpaths = ["tests"]\n')
    why = partial(*review(pytester, "--rootdir=tests", "tests/test_b.py"))
    assert "tests/test_a.py" in why


def test_testpaths_globs_are_expanded(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(
        project,
        ini='testpaths = ["src/*/tests"]\n',
        files={"src/one/tests/test_one.py": TEST, "src/two/tests/test_two.py": TEST},
    )
    assert "src/two/tests/test_two.py" in partial(*review(pytester, "src/one/tests"))
    assert_whole(*review(pytester))


def test_a_linked_test_folder_counts(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, ini='testpaths = ["tests"]\n', files={"integration_tests/test_i.py": TEST})
    os.symlink("../integration_tests", project.path / "tests" / "integration")
    project.git("add", "tests/integration")
    project.git("commit", "--quiet", "-m", "run the integration tests from tests/")
    assert "tests/integration/test_i.py" in partial(*review(pytester, "tests/test_a.py"))


@pytest.mark.slow
def test_doctest_globs_of_any_suffix_count_and_files_without_examples_do_not(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    conf = 'copy_prompt = ">>> "  # a prompt for a copy button, not an example\n'
    setup(
        project,
        ini='addopts = ["--doctest-glob=*.rst", "--doctest-modules"]\n',
        files={
            "docs/index.rst": "Example::\n\n    >>> 1 + 1\n    2\n",
            "docs/conf.py": conf,
            "test-requirements.txt": "pytest\n",
        },
    )
    assert "docs/index.rst" in partial(*review(pytester, "tests", "app.py"))
    assert_whole(*review(pytester, "tests", "docs", "app.py"))


def test_a_file_name_that_is_not_utf8_is_reported(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    name = os.fsdecode(b"tests/test_\xff.py")
    (project.path / name).write_text(TEST)
    project.git("add", "--", name)
    project.git("commit", "--quiet", "-m", "a test with a Latin-1 name")
    code, report = review(pytester, "tests/test_a.py")
    assert "tests/test_\\xff.py" in report["suite"]["left_out"]
    assert code == 1


@pytest.mark.slow
def test_shards_split_by_a_marker_merge_whole(pytester: pytest.Pytester, project: GitRepo) -> None:
    """Shards may split the suite by deselection: what one leaves out the other runs."""
    setup(project, ini=SLOW_MARKER, files={"tests/test_slow.py": MARKED})
    out = pytester.path / ".bounded-review" / "shards"  # outputs stay inside the repository
    for name, expression in (("one.json", "slow"), ("two.json", "not slow")):
        pytester.runpytest_subprocess(
            "-p",
            "no:randomly",
            "--bounded-review",
            "--bounded-review-base=main",
            "--bounded-review-shard",
            f"--bounded-review-report={out / name}",
            "-m",
            expression,
        )
    shards = [str(out / "one.json"), str(out / "two.json")]
    final = out / "final.json"
    merged = pytester.run(
        sys.executable, "-m", "pytest_boundedreview", "merge", *shards, f"--report={final}"
    )
    report = json.loads(final.read_text())
    assert report["gate"]["review_clean"] == "yes", (report["gate"], merged.stdout.str())
