"""Whose code a test reported otherwise than it ran is laid at: a file the change touches (a
blocking finding there), the base's unchanged code (a limitation), or nothing the project
tracks (the gate cannot say: indeterminate)."""

from __future__ import annotations

import os

from gitrepo import GitRepo

from pytest_boundedreview.change.git import open_repo
from pytest_boundedreview.checks.diverged import judged

DIVERGED = {"tests/test_a.py::test_ok": "reported passed, but it raised AssertionError"}


def at(repo: GitRepo, path: str) -> str:
    return os.path.realpath(repo.path / path)


def test_nothing_diverged_is_nothing_to_say(repo: GitRepo) -> None:
    verdict = judged({}, [(at(repo, "app.py"), 1, "x")], open_repo(repo.path), ["app.py"], None)
    assert (verdict.findings, verdict.limitations, verdict.undecided) == ((), (), ())


def test_code_in_a_changed_file_is_a_blocking_finding_there(repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD")
    suspects = [
        (at(repo, "conftest.py"), 1, "registers pytest_runtest_makereport (_f)"),
        (at(repo, "conftest.py"), 4, "implements pytest_runtest_makereport (_f)"),
        (at(repo, "app.py"), 2, "implements pytest_runtest_logreport (g)"),  # not changed
        ("/elsewhere/plugin.py", 3, "implements pytest_runtest_call (h)"),  # outside the repo
    ]
    verdict = judged(DIVERGED, suspects, open_repo(repo.path), ["conftest.py"], base)
    [finding] = verdict.findings
    assert (finding.path, finding.line, finding.severity) == ("conftest.py", 4, "blocking")
    assert "tests/test_a.py::test_ok (reported passed, but it raised AssertionError)" in (
        finding.evidence
    )
    assert "line 4: implements pytest_runtest_makereport (_f)" in finding.evidence
    assert verdict.undecided == ()


def test_the_bases_unchanged_code_is_no_finding_of_the_change(repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD")
    suspects = [(at(repo, "app.py"), 2, "implements pytest_runtest_logreport (g)")]
    verdict = judged(DIVERGED, suspects, open_repo(repo.path), ["README.md"], base)
    assert verdict.findings == ()
    assert verdict.undecided == ()
    [said] = verdict.limitations
    assert "by code the change does not touch (app.py): not a finding of this change" in said


def test_code_the_base_does_not_hold_or_no_code_at_all_is_undecided(repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("ignored_plugin.py", "x = 1\n")
    suspects = [(at(repo, "ignored_plugin.py"), 1, "implements pytest_pyfunc_call (f)")]
    verdict = judged(DIVERGED, suspects, open_repo(repo.path), ["README.md"], base)
    [why] = verdict.undecided
    assert "lies in files the base does not hold (ignored_plugin.py)" in why
    verdict = judged(DIVERGED, [], open_repo(repo.path), ["README.md"], base)
    [why] = verdict.undecided
    assert "no code of the project's that runs or reports tests explains it" in why
    assert verdict.findings == ()
    assert verdict.limitations == ()


def test_an_unchanged_definition_in_a_changed_file_is_no_finding(repo: GitRepo) -> None:
    hook = "def pytest_runtest_logreport(report):\n    pass\n"
    base = repo.commit({"conftest.py": hook}, "hook")
    repo.write("conftest.py", hook + "\n\ndef helper():\n    return 1\n")
    suspects = [(at(repo, "conftest.py"), 1, "implements pytest_runtest_logreport (f)")]
    verdict = judged(DIVERGED, suspects, open_repo(repo.path), ["conftest.py"], base)
    assert verdict.findings == ()
    [said] = verdict.limitations
    assert "by code the change does not touch (conftest.py)" in said
    repo.write("conftest.py", hook.replace("pass", "report.outcome = 'passed'"))
    verdict = judged(DIVERGED, suspects, open_repo(repo.path), ["conftest.py"], base)
    [finding] = verdict.findings
    assert (finding.path, finding.line) == ("conftest.py", 1)
