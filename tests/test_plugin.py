from __future__ import annotations

import json

import pytest
from gitrepo import PYTESTER_IGNORES, GitRepo

TESTS = "def test_ok():\n    assert True\n"


@pytest.fixture
def project(project: GitRepo) -> GitRepo:
    project.write(".gitignore", PYTESTER_IGNORES + "role-*\n")
    project.commit({"test_one.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_two.py": TESTS}, "feature")
    return project


def test_options_are_registered_in_one_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["bounded review (a finite evidence gate):", "*--bounded-review *"])
    for option in (
        "base=REF",
        "target={auto,pr,local-diff,staged}",
        "mode={review-only,review-and-fix}",
        "risk={auto,economy,standard,strict}",
        "report=PATH",
        "markdown=PATH",
        "sarif=PATH",
        "no-lanes",
        "full",
        "reset",
        "shard",
    ):
        result.stdout.fnmatch_lines([f"*--bounded-review-{option}*"])


def test_header_names_target_base_and_revision(pytester: pytest.Pytester, project: GitRepo) -> None:
    with project.untouched():
        result = pytester.runpytest("--bounded-review", "--bounded-review-base=main")
    base = project.git("rev-parse", "main")[:12]
    result.stdout.fnmatch_lines(
        [f"bounded-review: target pr (base main @ {base}), tree:{project.tree()}, 1 file changed"]
    )
    result.assert_outcomes(passed=2)


def test_config_base_and_option_precedence(pytester: pytest.Pytester, project: GitRepo) -> None:
    project.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "nope"\n'}, "config")
    result = pytester.runpytest("--bounded-review", "--bounded-review-base=main")
    result.stdout.fnmatch_lines(
        ["bounded-review: target pr (base main @ *), tree:*, 2 files changed"]
    )
    result = pytester.runpytest("--bounded-review")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: bounded-review: base ref 'nope' *is unknown*"])


def test_dirty_tree_is_a_local_diff(pytester: pytest.Pytester, project: GitRepo) -> None:
    project.write("test_three.py", TESTS)
    result = pytester.runpytest("--bounded-review")
    result.stdout.fnmatch_lines(
        ["bounded-review: target local-diff (base HEAD @ *), tree:*, 1 file changed"]
    )


def test_empty_target_says_nothing_to_review(pytester: pytest.Pytester, project: GitRepo) -> None:
    result = pytester.runpytest("--bounded-review", "--bounded-review-base=feature")
    result.stdout.fnmatch_lines(
        ["bounded-review: target pr (base feature @ *), tree:*, nothing to review"]
    )


def test_off_without_the_flag(pytester: pytest.Pytester, project: GitRepo) -> None:
    result = pytester.runpytest()
    assert "bounded-review:" not in result.stdout.str()
    result.assert_outcomes(passed=2)


def test_disabled_with_no_boundedreview(pytester: pytest.Pytester, project: GitRepo) -> None:
    result = pytester.runpytest("-p", "no:boundedreview", "--bounded-review")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the option does not exist then


def test_bad_config_is_a_usage_error(pytester: pytest.Pytester, project: GitRepo) -> None:
    pytester.makepyprojecttoml('[tool.bounded-review]\nrisk = "yolo"\n')
    result = pytester.runpytest("--bounded-review")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*risk: invalid value; allowed values: 'auto', 'economy'*"])


def test_not_a_git_repository_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x=TESTS)
    result = pytester.runpytest("--bounded-review")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is not inside a git work tree*"])


@pytest.mark.slow
def test_only_the_controller_registers_under_xdist(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    pytester.makeconftest(
        """
        def pytest_sessionfinish(session):
            config = session.config
            role = "worker" if hasattr(config, "workerinput") else "controller"
            registered = config.pluginmanager.has_plugin("bounded-review-session")
            with open(f"role-{role}-{getattr(config, 'workerinput', {}).get('workerid', 'c')}",
                      "w") as fh:
                fh.write(str(registered))
        """
    )
    project.git("add", "conftest.py")
    project.git("commit", "--quiet", "-m", "conftest")
    result = pytester.runpytest_subprocess(
        "--bounded-review", "--bounded-review-base=main", "-n", "2"
    )
    result.assert_outcomes(passed=2)
    markers = {p.name: p.read_text() for p in pytester.path.glob("role-*")}
    assert markers == {
        "role-controller-c": "True",
        "role-worker-gw0": "False",
        "role-worker-gw1": "False",
    }
    assert result.stdout.str().count("bounded-review: target pr") == 1


# Notes which of the report's output formats the session imported.
RENDERERS = """\
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    names = sorted(n for n in sys.modules if n.startswith("pytest_boundedreview.render."))
    with open("role-renderers.txt", "w") as out:
        out.write(" ".join(n.rsplit(".", 1)[1] for n in names))
"""


@pytest.mark.slow
def test_a_session_imports_only_the_outputs_it_writes(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    project.commit({"conftest.py": RENDERERS}, "notes the renderers")
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    result.assert_outcomes(passed=2)
    loaded = (project.path / "role-renderers.txt").read_text().split()
    assert {"formats", "terminal", "escape"} <= set(loaded)
    assert not {"sarif", "markdown", "codeclimate", "rdjson", "github"} & set(loaded)

    asked = ["--bounded-review-sarif=role-out.sarif", "--bounded-review-markdown=role-out.md"]
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main", *asked)
    result.assert_outcomes(passed=2)
    loaded = (project.path / "role-renderers.txt").read_text().split()
    assert {"sarif", "markdown"} <= set(loaded)
    assert json.loads((project.path / "role-out.sarif").read_text())["version"] == "2.1.0"
    assert "## bounded review: " in (project.path / "role-out.md").read_text()
