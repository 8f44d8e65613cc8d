"""The output files (``report``, ``markdown``, ``sarif``) end to end, from the configuration
file, from pytest's options and from ``bounded-review run``: a path outside the working tree,
inside ``.git``, on a tracked file (in any case) or on a file the tool did not write is a usage
error (exit 4) naming the key, and nothing is written; the default paths, an ignored path and a
new path in a new folder are written, and the review comes out ``yes``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from gitrepo import (
    PYTESTER_FILES,
    PYTESTER_IGNORES,
    GitRepo,
    bounded_review,
    every_file,
)

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

USER_NOTES = "my notes, not yet added\n"
SECRET = "TOKEN=mine\n"


@pytest.fixture
def change(pytester: pytest.Pytester, project: GitRepo) -> GitRepo:
    """A feature branch whose change passes, beside a user's untracked notes, an ignored
    ``.env``, a folder outside the repository and symbolic links leading out of it and into
    ``.git``."""
    project.commit(
        {
            ".gitignore": PYTESTER_IGNORES + "out/\n.env\nlinkout\nlinkgit\n",
            "pyproject.toml": '[tool.bounded-review]\nbase = "main"\n',
            "tests/test_a.py": "def test_a():\n    pass\n",
            "app.py": "x = 1\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n"}, "change")
    (pytester.path / "notes.txt").write_text(USER_NOTES)
    (pytester.path / ".env").write_text(SECRET)
    outside = pytester.path.parent / "outside"
    outside.mkdir(exist_ok=True)
    (pytester.path / "linkout").symlink_to(outside, target_is_directory=True)
    (pytester.path / "linkgit").symlink_to(pytester.path / ".git" / "hooks")
    return project


def commit_only(project: GitRepo, name: str, content: str) -> None:
    """Commit ``name`` alone: the user's untracked notes stay untracked."""
    project.write(name, content)
    project.git("add", name)
    project.git("commit", "--quiet", "-m", f"change {name}")


def outside(pytester: pytest.Pytester) -> Path:
    return pytester.path.parent / "outside"


# (key, value as written, what the error says); ``{outside}`` is the folder beside the repository
BAD = [
    ("sarif", ".git/hooks/pre-commit", "is inside .git"),
    ("sarif", ".GIT/hooks/pre-push", "is inside"),
    ("sarif", "linkgit/pre-commit", "is inside .git"),
    ("report", "app.py", "is a file git tracks (app.py)"),
    ("markdown", "APP.PY", "is a file git tracks (app.py)"),
    ("report", "tests", "is a file git tracks (tests/test_a.py)"),
    ("sarif", "../outside/review.sarif", "is outside the repository's working tree"),
    ("report", "{outside}/report.json", "is outside the repository's working tree"),
    ("markdown", "linkout/review.md", "is outside the repository's working tree"),
    ("markdown", "notes.txt", "is an existing file the tool did not write"),
    ("report", ".env", "is an existing file the tool did not write"),
]


def spelled(pytester: pytest.Pytester, value: str) -> str:
    return value.format(outside=outside(pytester))


def untouched(pytester: pytest.Pytester, project: GitRepo):  # type: ignore[no-untyped-def]
    """What must stay as it was: git's view, every file in and beside the repository."""
    return (
        project.user_state(),
        every_file(pytester.path, PYTESTER_FILES),
        every_file(outside(pytester)),
        (pytester.path / "notes.txt").read_text(),
        (pytester.path / ".env").read_text(),
        (pytester.path / "app.py").read_text(),
    )


def _refused(err: str, key: str, why: str) -> None:
    assert f"{key} (--bounded-review-{key}) " in err, err
    assert why in err, err
    assert "leave the key unset" in err, err


@pytest.mark.parametrize(("key", "value", "why"), BAD)
@pytest.mark.parametrize("face", ["config", "option", "run"])
def test_a_path_not_the_tools_own_is_refused_and_nothing_is_written(
    pytester: pytest.Pytester, change: GitRepo, face: str, key: str, value: str, why: str
) -> None:
    value = spelled(pytester, value)
    if face == "config":  # the change's own configuration: the adversary's
        table = f'[tool.bounded-review]\nbase = "main"\n{key} = {json.dumps(value)}\n'
        commit_only(change, "pyproject.toml", table)
    before = untouched(pytester, change)
    if face == "run":
        done = bounded_review(change, "run", f"--{key}", value, "--", "-p", "no:cacheprovider")
        status, err = done.returncode, done.stderr
    else:
        option = [f"--bounded-review-{key}={value}"] if face == "option" else []
        result = pytester.runpytest_subprocess("--bounded-review", *option)
        status, err = result.ret, result.stderr.str()
    assert status == 4, err
    _refused(err, key, why)
    assert untouched(pytester, change) == before
    assert not (pytester.path / ".git" / "hooks" / "pre-commit").exists()
    assert not (pytester.path / ".bounded-review").exists()  # refused before anything


def test_the_default_paths_an_ignored_path_and_a_new_folder_are_written(
    pytester: pytest.Pytester, change: GitRepo
) -> None:
    """A clean tree (reviewed as ``pr``): the new folder shows as untracked afterwards, and
    nothing else changed; a second run replaces what the first one wrote."""
    (pytester.path / "notes.txt").unlink()
    index = (pytester.path / ".git" / "index").read_bytes()
    options = ["--bounded-review-sarif=out/review.sarif", "--bounded-review-markdown=new/r/r.md"]
    for _ in range(2):
        result = pytester.runpytest_subprocess("--bounded-review", *options)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
        assert report["gate"]["review_clean"] == "yes"
        assert json.loads((pytester.path / "out" / "review.sarif").read_text())["runs"]
        assert (pytester.path / "new" / "r" / "r.md").read_text().startswith("<!-- bounded")
    # (an untracked file beside a pr snapshot keeps the next review from "yes": set aside)
    shutil.rmtree(pytester.path / "new")
    ran = bounded_review(
        change, "run", "--target", "pr", "--markdown", "new/r/r.md", "--report", "out/r.json"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads((pytester.path / "out" / "r.json").read_text())["gate"]["review_clean"]
    assert change.git("status", "--porcelain") == "?? new/"
    assert (pytester.path / ".git" / "index").read_bytes() == index
    assert (pytester.path / ".env").read_text() == SECRET


def test_an_ignored_path_from_the_configuration_is_written(
    pytester: pytest.Pytester, change: GitRepo
) -> None:
    (pytester.path / "notes.txt").unlink()
    table = '[tool.bounded-review]\nbase = "main"\nreport = "out/report.json"\n'
    # the user's own configuration, at the base: where reports go is never the change's
    change.git("checkout", "--quiet", "main")
    commit_only(change, "pyproject.toml", table)
    change.git("checkout", "--quiet", "feature")
    change.git("merge", "--quiet", "--no-edit", "main")
    with change.untouched():
        result = pytester.runpytest_subprocess("--bounded-review")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes"
    assert (pytester.path / ".env").read_text() == SECRET
