"""Configured checks with real tools: ruff's SARIF and mypy's GNU-style output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.checks.run import run_all
from pytest_boundedreview.core.settings.tables import CheckConfig
from pytest_boundedreview.models.report import CheckResult

RUFF = CheckConfig(
    name="ruff",
    command=["ruff", "check", "--no-cache", "--output-format=sarif", "--select=E711,F401", "."],
    format="sarif",
)
MYPY = CheckConfig(
    name="mypy",
    command=[sys.executable, "-m", "mypy", "--cache-dir=/dev/null", "--no-error-summary", "."],
    format="gnu",
)


def run(repo: GitRepo, *checks: CheckConfig, base: str | None = "main") -> list[CheckResult]:
    handle = git.open_repo(repo.path)
    commit = repo.git("rev-parse", base) if base else None
    with repo.untouched():
        scope = freeze(handle, "pr", base).scope if base else None
        return run_all(list(checks), handle, commit, lambda _: None, scope)


@pytest.fixture
def lint(repo: GitRepo) -> GitRepo:
    repo.commit(
        {"mod.py": "import json\nimport os\n\nif os.sep == None:\n    pass\n"}, "base with findings"
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    return repo


def test_moved_findings_stay_pre_existing_and_a_second_identical_one_is_new(lint: GitRepo) -> None:
    lint.commit(
        {
            "mod.py": "# moved down\n\nimport json\nimport os\nimport sys\n\n"
            "if os.sep == None:\n    pass\nif os.sep == None:\n    pass\n"
        },
        "move and add",
    )
    (result,) = run(lint, RUFF)
    assert result.status == "fail"
    assert sorted((f.rule, f.line) for f in result.pre_existing) == [("E711", 7), ("F401", 3)]
    assert sorted((f.rule, f.line) for f in result.target_related) == [("E711", 9), ("F401", 5)]
    assert all(f.path == "mod.py" for f in result.target_related)


def test_same_finding_at_base_and_head_is_pre_existing(lint: GitRepo) -> None:
    lint.commit({"other.py": "x = 1\n"}, "unrelated")
    (result,) = run(lint, RUFF)
    assert result.status == "fail"
    assert result.target_related == []
    assert {f.rule for f in result.pre_existing} == {"F401", "E711"}


@pytest.mark.slow
def test_mypy_gnu_output(repo: GitRepo) -> None:
    repo.commit({"typed.py": 'def f() -> int:\n    return "x"\n'}, "base type error")
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit(
        {"typed.py": '\n\ndef f() -> int:\n    return "x"\n\n\ndef g() -> str:\n    return 1\n'},
        "move and add",
    )
    (result,) = run(repo, MYPY)
    assert [(f.rule, f.line) for f in result.pre_existing] == [("return-value", 4)]
    assert [(f.rule, f.line) for f in result.target_related] == [("return-value", 8)]
    assert result.target_related[0].message.startswith("error: Incompatible return value type")


def test_clean_check_passes_without_a_base_run(repo: GitRepo) -> None:
    (result,) = run(repo, RUFF)
    assert result.status == "pass"
    assert (result.target_related, result.pre_existing) == ([], [])


@pytest.mark.parametrize(
    ("command", "timeout", "detail"),
    [
        (["no-such-program-anywhere"], 10.0, "could not start: no-such-program-anywhere"),
        ([sys.executable, "-c", "import time; time.sleep(30)"], 0.5, "timed out after 0.5s"),
        ([sys.executable, "-c", "print('not sarif')"], 10.0, "output is not SARIF JSON"),
    ],
)
def test_checks_that_cannot_run_are_not_run(
    repo: GitRepo, command: list[str], timeout: float, detail: str
) -> None:
    check = CheckConfig(name="c", command=command, format="sarif", timeout=timeout)
    (result,) = run(repo, check)
    assert result.status == "not-run"
    assert detail in result.detail


def test_exit_code_checks(repo: GitRepo) -> None:
    script = "import pathlib, sys; sys.exit(pathlib.Path('flag').exists())"
    check = CheckConfig(name="flag", command=[sys.executable, "-c", script])
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"flag": "x"}, "introduce the flag")
    (new,) = run(repo, check)
    assert new.status == "fail"
    assert [f.rule for f in new.target_related] == ["flag:exit"]
    repo.git("checkout", "--quiet", "main")
    repo.commit({"flag": "x"}, "flag on main too")
    repo.git("checkout", "--quiet", "-b", "later")
    repo.commit({"other": "y"}, "unrelated")
    (old,) = run(repo, check)
    assert old.status == "fail"
    assert (old.target_related, [f.rule for f in old.pre_existing]) == ([], ["flag:exit"])


def test_no_base_commit_makes_every_finding_new(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "fresh")
    repo.write("mod.py", "import os\n")
    (result,) = run(repo, RUFF, base=None)
    assert [f.rule for f in result.target_related] == ["F401"]


@pytest.mark.slow
def test_a_base_run_that_fails_makes_the_check_not_run(repo: GitRepo) -> None:
    # Prints the same finding at base and head, but hangs at the base.
    script = (
        "import pathlib, sys, time\n"
        "if not pathlib.Path('head-marker').exists():\n    time.sleep(30)\n"
        "print('app.py:1: error: same finding  [code]')\nsys.exit(1)\n"
    )
    check = CheckConfig(
        name="slow", command=[sys.executable, "-c", script], format="gnu", timeout=2
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"head-marker": "x"}, "head only")
    (result,) = run(repo, check)
    assert result.status == "not-run"
    assert "the base run failed (timed out after 2s)" in result.detail
    assert [f.rule for f in result.target_related] == ["code"]


def test_a_new_duplicate_is_reported_where_the_change_added_it(repo: GitRepo) -> None:
    old = "def old():\n    x = 1\n"
    repo.commit({"mod.py": old}, "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"mod.py": "def new():\n    x = 1\n\n\n" + old}, "add an identical function above")
    check = CheckConfig(
        name="ruff",
        command=["ruff", "check", "--no-cache", "--output-format=sarif", "--select=F841", "."],
        format="sarif",
    )
    (result,) = run(repo, check)
    assert [f.line for f in result.target_related] == [2]
    assert [f.line for f in result.pre_existing] == [6]
