"""`bounded-review run` on code: a real pytest session in a new process, exit by the report's
gate, options and pytest arguments passed through, pytest's own failures mapped."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import warmstart
from gitrepo import GitRepo, clean_env


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    repo.commit(
        {
            ".gitignore": "__pycache__/\n.pytest_cache/\n.bounded-review/\n",
            "app.py": "def double(x):\n    return 2 * x\n",
            "test_app.py": "from app import double\n\n"
            "def test_double():\n    assert double(2) == 4\n\n"
            "def test_fine():\n    assert True\n",
        },
        "base",
    )
    repo.git("branch", "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    return repo


def _run(
    repo: GitRepo, *argv: str, extra: dict[str, str] | None = None, own_writes: bool = False
) -> subprocess.CompletedProcess[str]:
    """``bounded-review run`` in ``repo``, which it leaves as it was (unless the project's own
    tests write into it: ``own_writes``)."""
    env = clean_env(extra)
    with contextlib.nullcontext() if own_writes else repo.untouched():
        return warmstart.run(
            [sys.executable, "-m", "pytest_boundedreview", "run", *argv],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )


@pytest.mark.slow
def test_run_exits_by_the_gate(repo: GitRepo) -> None:
    repo.commit({"app.py": "def double(x):\n    return 3 * x\n"}, "regression")
    md = repo.path / ".bounded-review" / "out.md"  # outputs stay inside the repository
    ran = _run(repo, "--no-lanes", "--base", "base", f"--markdown={md}")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "review_clean: no" in ran.stdout  # pytest's own output, with the summary
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == ["test_app.py::test_double"]
    assert "test_app.py::test_double" in md.read_text()

    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "fix")
    own = repo.path / ".bounded-review" / "mine.json"
    ran = _run(repo, "--no-lanes", "--base", "base", "--report", str(own))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(own.read_text())["gate"]["review_clean"] == "yes"


@pytest.mark.slow
def test_pytest_arguments_follow_a_double_dash(repo: GitRepo) -> None:
    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "same behaviour")
    ran = _run(repo, "--no-lanes", "--base", "base", "--", "-k", "fine")
    assert ran.returncode == 2, ran.stdout + ran.stderr  # a partial run is never clean
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["reasons"][-1].startswith("a partial run: 1 test(s) deselected")
    assert report["tests"]["passed"] == 1
    assert any("deselected" in lim for lim in report["limitations"])
    assert report["statuses"]["local_verification"] == "partial"


@pytest.mark.slow
def test_pytest_usage_errors_and_bad_options_are_usage_errors(repo: GitRepo) -> None:
    assert _run(repo, "--", "--no-such-pytest-option").returncode == 4
    bad = _run(repo, "--risk", "extreme")
    assert bad.returncode == 4
    assert "invalid choice" in bad.stderr
    unknown_base = _run(repo, "--base", "no-such-ref")
    assert unknown_base.returncode == 4
    assert "no-such-ref" in unknown_base.stdout + unknown_base.stderr


@pytest.mark.slow
def test_inside_github_actions_it_annotates_and_writes_the_step_summary(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit({"app.py": "def double(x):\n    return 3 * x\n"}, "regression")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    ran = _run(repo, "--no-lanes", "--base", "base", extra=actions)
    assert ran.returncode == 1
    errors = [line for line in ran.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1
    assert "test_app.py::test_double" in errors[0]
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, never replaced
    assert "test_app.py::test_double" in text
    # Outside Actions: no workflow command, no summary.
    quiet = _run(repo, "--no-lanes", "--base", "base")
    assert not [line for line in quiet.stdout.splitlines() if line.startswith("::")]


@pytest.mark.slow
def test_an_unwritable_step_summary_is_a_warning_not_a_failure(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "same behaviour")
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "dir")}
    ran = _run(repo, "--no-lanes", "--base", "base", extra=actions)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    warnings = [line for line in ran.stdout.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 1
    assert "cannot append the summary" in warnings[0]


def test_progress_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_boundedreview.report.publish import progress

    progress("plan a\n::error::pwn\x1b]0;t\x07.md")
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "\x1b" not in err
    assert not any(line.startswith("::") for line in err.splitlines())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "status", "said"),
    [
        pytest.param(
            {"conftest.py": "import os\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n"},
            2,
            "without writing a report",
            id="os._exit(0)-before-the-report",
        ),
        pytest.param(
            {
                "test_exit.py": "import pytest\n\ndef test_exit():\n"
                "    pytest.exit('x', returncode=0)\n"
            },
            2,
            "review_clean: indeterminate",
            id="pytest.exit(returncode=0)",
        ),
        pytest.param(
            {"test_exit.py": "import pytest\n\ndef test_exit():\n    pytest.exit('x')\n"},
            130,
            "pytest.exit() ended the session",
            id="pytest.exit()",
        ),
        pytest.param(  # a test that leaves a file git does not ignore: not the tree reviewed
            {"test_writes.py": "def test_writes():\n    open('left.txt', 'w').write('x')\n"},
            2,
            "the tree changed during the run (left.txt (not in the snapshot))",
            id="the-tree-changed",
        ),
    ],
)
def test_run_exits_non_zero_without_a_finished_report_of_the_tree(
    repo: GitRepo, files: dict[str, str], status: int, said: str
) -> None:
    repo.commit(files, "change")
    own_writes = "test_writes.py" in files
    ran = _run(
        repo, "--no-lanes", "--base", "base", "--target", "local-diff", own_writes=own_writes
    )
    assert ran.returncode == status, ran.stdout + ran.stderr
    assert said in ran.stdout + ran.stderr


@pytest.mark.slow
def test_a_file_the_tests_write_that_git_ignores_changes_nothing(repo: GitRepo) -> None:
    writes = "def test_writes():\n    open('left.txt', 'w').write('x')\n"
    repo.commit({"test_writes.py": writes, ".gitignore": "left.txt\n.bounded-review/\n"}, "w")
    ran = _run(repo, "--no-lanes", "--base", "base", "--target", "local-diff", own_writes=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
