"""What is reviewed is never chosen by the change, on real sessions: a change that sets
``base``, ``target``, ``shard``, ``state_dir`` or where the reports go in its own
``[tool.bounded-review]`` is reviewed as the base's configuration says, and its values are
reported as applying after merge; the same values kept from the base, or given as options,
apply."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gitrepo import PYTESTER_IGNORES, GitRepo

ADD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
XDIST = [[], ["-n", "2"]]


def table(**values: object) -> str:
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())
    return "[tool.bounded-review]\nno_lanes = true\n" + lines


@pytest.fixture
def ci(project: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A pull request's checkout in CI: ``main`` with a passing test, fetched as
    ``origin/main`` and named by ``GITHUB_BASE_REF``; the work goes on ``feature``."""
    project.commit({"pyproject.toml": table(), "app.py": ADD, "test_app.py": TEST}, "base")
    project.git("update-ref", "refs/remotes/origin/main", "main")
    project.git("checkout", "--quiet", "-b", "feature")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    return project


def review(pytester: pytest.Pytester, project: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    """A session as CI runs it; its exit status and the report where the base's
    configuration puts it."""
    with project.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", *args)
    path = pytester.path / ".bounded-review" / "report.json"
    return int(result.ret), json.loads(path.read_text())


def proposed(report: dict[str, Any]) -> list[str]:
    """The keys of the change's "applies after merge" findings."""
    return sorted(
        re.findall(r"`([^`]+)` is", f["evidence"])[0]
        for f in report["findings"]["advisory"]
        if f["note"] == "config: applies after merge"
    )


def regression_reviewed(status: int, report: dict[str, Any]) -> None:
    """The pull request against the CI base was reviewed, and its regression blocks."""
    assert (report["target"]["kind"], report["target"]["base"]) == ("pr", "origin/main")
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_app.py::test_add"]
    assert (status, report["gate"]["review_clean"]) == (1, "no")


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_a_base_the_change_names_does_not_make_its_regression_pre_existing(
    pytester: pytest.Pytester, ci: GitRepo, xdist: list[str]
) -> None:
    ci.commit({"app.py": BROKEN}, "the regression")
    ci.commit({"pyproject.toml": table(base="HEAD~1"), "notes.txt": "n\n"}, "harmless")
    status, report = review(pytester, ci, *xdist)
    assert report["target"]["base"] == "origin/main"
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_app.py::test_add"]
    assert report["tests"]["pre_existing"] == []
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    assert proposed(report) == ["base"]


@pytest.mark.slow
@pytest.mark.parametrize("values", [{"base": "HEAD"}, {"target": "staged"}, {"shard": True}])
def test_a_change_that_would_review_nothing_or_exit_0_is_reviewed(
    pytester: pytest.Pytester, ci: GitRepo, values: dict[str, object]
) -> None:
    ci.commit({"pyproject.toml": table(**values), "app.py": BROKEN}, "change")
    status, report = review(pytester, ci)
    assert report["target"]["kind"] == "pr"
    assert report["target"]["files"] == ["app.py", "pyproject.toml"]
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_app.py::test_add"]
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    assert proposed(report) == sorted(values)


def addopts(*options: str, **values: object) -> str:
    """A configuration whose pytest ``addopts`` gives ``options``."""
    return (
        table(**values)
        + f"\n[tool.pytest.ini_options]\naddopts = {json.dumps(' '.join(options))}\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "option",
    ["--bounded-review-base=HEAD~1", "--bounded-review-shard", "--bounded-review-target=staged"],
)
@pytest.mark.parametrize("xdist", XDIST)
def test_review_options_the_change_adds_to_its_addopts_are_its_own_configuration(
    pytester: pytest.Pytester, ci: GitRepo, option: str, xdist: list[str]
) -> None:
    ci.commit({"app.py": BROKEN}, "the regression")
    ci.commit({"pyproject.toml": addopts(option), "notes.txt": "n\n"}, "harmless")
    status, report = review(pytester, ci, *xdist)
    regression_reviewed(status, report)
    assert proposed(report) == [option.removeprefix("--bounded-review-").partition("=")[0]]


@pytest.mark.slow
@pytest.mark.parametrize(
    "option",
    ["bounded_review_base = 'HEAD~1'", "bounded_review_shard = True", "bounded_review = False"],
)
@pytest.mark.parametrize("xdist", XDIST)
def test_review_options_the_change_s_code_sets_steer_nothing(
    pytester: pytest.Pytester, ci: GitRepo, option: str, xdist: list[str]
) -> None:
    """A conftest of the change sets the review's options as the session configures: the
    options as given hold."""
    ci.commit({"app.py": BROKEN}, "the regression")
    conftest = f"def pytest_configure(config):\n    config.option.{option}\n"
    ci.commit({"conftest.py": conftest}, "harmless")
    status, report = review(pytester, ci, *xdist)
    regression_reviewed(status, report)


@pytest.mark.slow
def test_review_options_the_base_s_addopts_gives_apply(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The harmless control: no remote, the base's addopts names the base; the change edits
    the same file elsewhere; its old failure stays pre-existing."""
    failing = TEST + "\n\ndef test_old():\n    assert add(1, 1) == 3\n"
    config = addopts("--bounded-review-base=main")
    project.commit({"pyproject.toml": config, "app.py": ADD, "test_app.py": failing}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"pyproject.toml": config.replace("no_lanes", "base_timeout = 600\nno_lanes")})
    status, report = review(pytester, project)
    assert report["target"]["base"] == "main"
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_app.py::test_old"]
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert proposed(report) == []


@pytest.mark.slow
@pytest.mark.parametrize("edit", ["-ra", "--bounded-review-risk=strict -ra"])
def test_review_options_an_edited_addopts_keeps_apply(
    pytester: pytest.Pytester, ci: GitRepo, edit: str
) -> None:
    """The harmless control: the change edits the base's addopts around its review options
    (another option, the same one again): those stay the base's, where the base puts them."""
    options = ("--bounded-review-report=out/review.json", "--bounded-review-risk=strict")
    ci.git("checkout", "--quiet", "main")
    ignores = PYTESTER_IGNORES + "out/\n"
    ci.commit({"pyproject.toml": addopts(*options), ".gitignore": ignores}, "addopts")
    ci.git("update-ref", "refs/remotes/origin/main", "main")
    ci.git("checkout", "--quiet", "-B", "feature")
    ci.commit({"pyproject.toml": addopts(edit, *options)}, "harmless")
    with ci.untouched():
        result = pytester.runpytest_subprocess("--bounded-review")
    report = json.loads((pytester.path / "out" / "review.json").read_text())
    assert (result.ret, report["gate"]["review_clean"], report["risk"]["tier"]) == (
        0,
        "yes",
        "strict",
    )
    assert proposed(report) == []


@pytest.mark.slow
def test_a_change_that_moves_the_outputs_and_state_writes_where_the_base_says(
    pytester: pytest.Pytester, ci: GitRepo
) -> None:
    moved = {"state_dir": ".moved", "report": "r.json", "markdown": "r.md", "sarif": "r.sarif"}
    ci.commit({"pyproject.toml": table(**moved), "app.py": BROKEN}, "change")
    status, report = review(pytester, ci)
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    assert proposed(report) == sorted(moved)
    for name in [*moved.values()]:
        assert not (pytester.path / name).exists(), name


@pytest.mark.slow
def test_a_change_that_removes_the_base_s_target_is_reviewed_as_the_base_says(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base reviews its pull requests as ``local-diff`` against HEAD: a branch whose
    last commit drops the key (making ``auto`` choose ``pr`` against the CI base, which
    finds nothing) is still reviewed against HEAD, with what it drops proposed."""
    project.commit({"pyproject.toml": table(), "app.py": ADD, "test_app.py": TEST}, "base")
    project.commit({"pyproject.toml": table(target="local-diff")}, "reviewed locally")
    project.git("update-ref", "refs/remotes/origin/main", "main")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    project.commit({"pyproject.toml": table(), "app.py": BROKEN}, "change")
    _, report = review(pytester, project)
    assert report["target"]["kind"] == "local-diff"
    assert report["target"]["base"] == "HEAD"
    assert report["target"]["empty"] is True


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_a_base_kept_from_the_base_applies(
    pytester: pytest.Pytester, project: GitRepo, xdist: list[str]
) -> None:
    """The harmless control: the base names its base (no remote here), the change keeps it
    and edits the configuration harmlessly; its old failure stays pre-existing."""
    failing = TEST + "\n\ndef test_old():\n    assert add(1, 1) == 3\n"
    project.commit({"pyproject.toml": table(), "app.py": ADD, "test_app.py": failing}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"pyproject.toml": table(base="main")}, "the base names itself")
    project.git("branch", "--force", "main", "feature")
    project.commit({"pyproject.toml": table(base="main", base_timeout=600)}, "harmless")
    status, report = review(pytester, project, *xdist)
    assert report["target"]["base"] == "main"
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == ["test_app.py::test_old"]
    assert report["tests"]["target_related"] == []
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert proposed(report) == []


@pytest.mark.slow
def test_options_choose_the_review_whatever_the_change_says(
    pytester: pytest.Pytester, ci: GitRepo
) -> None:
    ci.commit({"pyproject.toml": table(base="HEAD", target="staged"), "notes.txt": "n\n"}, "c")
    status, report = review(
        pytester, ci, "--bounded-review-base=main", "--bounded-review-target=pr"
    )
    assert (report["target"]["kind"], report["target"]["base"]) == ("pr", "main")
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert proposed(report) == []  # the options hold on both sides


@pytest.mark.slow
def test_a_harmless_change_adding_the_ci_base_is_clean(
    pytester: pytest.Pytester, ci: GitRepo
) -> None:
    ci.commit({"pyproject.toml": table(base="origin/main"), "notes.txt": "n\n"}, "c")
    status, report = review(pytester, ci)
    assert report["target"]["base"] == "origin/main"
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert proposed(report) == ["base"]  # advisory: the base names none yet


@pytest.mark.slow
def test_a_first_configuration_naming_a_base_without_a_remote_reviews_the_working_tree(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """No CI variable, upstream or origin/HEAD: an uncommitted ``base`` the committed
    configuration does not have is not taken; the working tree is reviewed against HEAD."""
    project.commit({"app.py": ADD, "test_app.py": TEST}, "base")
    project.commit({"notes.txt": "n\n"}, "more")
    project.write("pyproject.toml", table(base="HEAD~1"))
    project.write("app.py", BROKEN)
    status, report = review(pytester, project)
    assert (report["target"]["kind"], report["target"]["base"]) == ("local-diff", "HEAD")
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_app.py::test_add"]
    assert (status, report["gate"]["review_clean"]) == (1, "no")


@pytest.mark.slow
def test_the_state_dir_the_base_keeps_is_checked_as_the_change_s_is(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The base's folder must be a folder of the tool's own too: one the change makes a
    tracked file's home is a usage error, not written."""
    project.commit(
        {"pyproject.toml": table(state_dir=".state"), "test_app.py": TEST, "app.py": ADD}, "base"
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit(
        {"pyproject.toml": table(state_dir=".other"), ".state/kept.txt": "tracked\n"}, "c"
    )
    with project.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == 4
    assert ".state" in result.stderr.str()
    assert not Path(pytester.path, ".other").exists()
