"""``state_dir`` end to end, in both faces: a folder that is not the tool's own is a usage
error (exit 4) naming the key before anything is written; a folder of its own is used, and
the user's new files stay visible to git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import PYTESTER_FILES, GitRepo, bounded_review, every_file


def configure(project: GitRepo, state_dir: str, pytest_table: str = "") -> None:
    project.commit(
        {
            "pyproject.toml": pytest_table
            + f'[tool.bounded-review]\nbase = "main"\nstate_dir = "{state_dir}"\n',
            "tests/test_a.py": "def test_a():\n    pass\n",
            "app.py": "x = 1\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n"}, "change")


NO_BUILD = '[tool.pytest.ini_options]\nnorecursedirs = ["node_modules"]\n'


@pytest.mark.slow
@pytest.mark.parametrize(
    ("state_dir", "table", "why"),
    [
        ("tests", "", "holds files git tracks or shows (tests/test_a.py)"),
        (".", "", "is the repository root"),
        ("../elsewhere", "", "climbs out of the repository with '..'"),
        ("build/review", NO_BUILD, "is a folder pytest collects, by the testpaths and "),
    ],
)
def test_the_pytest_face_refuses_a_folder_not_its_own_and_writes_nothing(
    pytester: pytest.Pytester, project: GitRepo, state_dir: str, table: str, why: str
) -> None:
    configure(project, state_dir, table)
    before, files = project.user_state(), every_file(pytester.path, PYTESTER_FILES)
    for _ in range(2):  # a second run finds nothing the first one left
        result = pytester.runpytest_subprocess("--bounded-review")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        err = result.stderr.str()
        assert "pyproject.toml: [tool.bounded-review] is invalid:" in err
        assert f"state_dir {state_dir!r} {why}" in err or f"state_dir: {why}" in err
        assert "such as the default .bounded-review" in err
    assert (project.user_state(), every_file(pytester.path, PYTESTER_FILES)) == (before, files)
    assert not (pytester.path.parent / "elsewhere").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("state_dir", "table"),
    [("tests/.state", ""), ("build/review", ""), (".bounded-review", NO_BUILD)],
)
def test_a_folder_of_its_own_is_used_and_new_test_files_stay_visible(
    pytester: pytest.Pytester, project: GitRepo, state_dir: str, table: str
) -> None:
    """Hidden inside the collected tests, under a folder pytest's defaults skip, or the
    default name whatever norecursedirs says: the run uses it, and a test file added
    afterwards still shows in git status."""
    configure(project, state_dir, table)
    result = pytester.runpytest_subprocess("--bounded-review")
    assert result.ret == 0, result.stderr.str()
    folder = pytester.path / state_dir
    assert json.loads((folder / "report.json").read_text())["gate"]["review_clean"] == "yes"
    assert (folder / ".gitignore").read_text() == "*\n"
    assert project.git("status", "--porcelain", "--untracked-files=all") == ""
    (pytester.path / "tests" / "test_new.py").write_text("def test_new():\n    pass\n")
    shown = project.git("status", "--porcelain", "--untracked-files=all")
    assert shown.splitlines() == ["?? tests/test_new.py"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [("run", "--no-lanes"), ("status",), ("reset",), ("report",), ("gate",), ("lanes",)],
)
@pytest.mark.parametrize(("state_dir", "table"), [("tests", ""), ("build/review", NO_BUILD)])
def test_the_commands_refuse_a_folder_not_their_own_and_write_nothing(
    pytester: pytest.Pytester,
    project: GitRepo,
    argv: tuple[str, ...],
    state_dir: str,
    table: str,
) -> None:
    configure(project, state_dir, table)
    before, files = project.user_state(), every_file(pytester.path, PYTESTER_FILES)
    done = bounded_review(project, *argv)
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"state_dir {state_dir!r} " in done.stderr
    assert "pyproject.toml: [tool.bounded-review] is invalid:" in done.stderr
    assert (project.user_state(), every_file(pytester.path, PYTESTER_FILES)) == (before, files)


@pytest.mark.slow
def test_the_commands_read_and_write_the_configured_folder(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    configure(project, ".review")
    ran = bounded_review(project, "run", "--", "-p", "no:cacheprovider")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    folder = Path(project.git("rev-parse", "--show-toplevel").strip()) / ".review"
    assert (folder / "report.json").is_file()
    assert not (pytester.path / ".bounded-review").exists()
    shown = bounded_review(project, "report", "--format", "json")
    assert (
        json.loads(shown.stdout)["target"]["revision"]
        == json.loads((folder / "report.json").read_text())["target"]["revision"]
    )
    # the clean review of this tree against main is found (a push of HEAD as a new branch)
    assert bounded_review(project, "gate", "--stage", "pre-push").returncode == 0
    for argv in (("status",), ("reset",)):
        assert bounded_review(project, *argv).stdout == f"no review loop in {folder}\n"


@pytest.mark.slow
def test_a_state_dir_that_names_an_ignored_file_is_a_configuration_error(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    configure(project, ".env")
    (pytester.path / ".env").write_text("SECRET=1\n")
    (pytester.path / ".git" / "info" / "exclude").write_text(".env\n")
    before, files = project.user_state(), every_file(pytester.path, PYTESTER_FILES)
    result = pytester.runpytest_subprocess("--bounded-review")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "state_dir '.env' is an existing file, not a folder" in result.stderr.str()
    done = bounded_review(project, "run", "--no-lanes")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "state_dir '.env' is an existing file, not a folder" in done.stderr
    assert "such as the default .bounded-review" in done.stderr
    assert (project.user_state(), every_file(pytester.path, PYTESTER_FILES)) == (before, files)
    assert (pytester.path / ".env").read_text() == "SECRET=1\n"
