from __future__ import annotations

import dataclasses

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.checks.scans import scan
from pytest_boundedreview.core.settings.tables import ScanConfig
from pytest_boundedreview.models.finding import ReportFinding

TESTS = "import pytest\n\n\ndef test_a():\n    assert True\n\n\ndef test_b():\n    assert True\n"


def scanned(repo: GitRepo, **levels: str) -> list[ReportFinding]:
    handle = git.open_repo(repo.path)
    with repo.untouched():
        target = freeze(handle, "local-diff")
        return scan(target, handle, dataclasses.asdict(ScanConfig(**levels)))  # type: ignore[arg-type]


def summary(findings: list[ReportFinding]) -> list[tuple[str, int, str, str | None]]:
    return [(f.path, f.line, f.severity, f.note) for f in findings]


@pytest.mark.parametrize(
    ("line", "note"),
    [
        ("key = 'AKIAIOSFODNN7EXAMPLE'", "scan: secrets"),
        ("-----BEGIN RSA PRIVATE KEY-----", "scan: secrets"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "scan: secrets"),
        ("token = 'ghp_" + "a" * 36 + "'", "scan: secrets"),
        ("slack = 'xoxb-1234567890-abcdef'", "scan: secrets"),
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "scan: secrets"),
        ("<<<<<<< HEAD", "scan: conflict_markers"),
        (">>>>>>> feature", "scan: conflict_markers"),
    ],
)
def test_blocking_line_scans(repo: GitRepo, line: str, note: str) -> None:
    repo.write("config.py", f"x = 1\n{line}\n")
    findings = scanned(repo)
    assert summary(findings) == [("config.py", 2, "blocking", note)]
    if note == "scan: secrets":
        assert findings[0].quote is None  # the secret is never copied into reports
        assert findings[0].category == "security"


@pytest.mark.parametrize(
    "line",
    [
        "breakpoint()",
        "breakpoint(header='x')",
        "import pdb; pdb.set_trace()",
        "import ipdb",
        "__import__('pdb').set_trace()",
    ],
)
def test_debugger_calls_are_advisory(repo: GitRepo, line: str) -> None:
    repo.write("app.py", f"x = 1\n{line}\n")
    assert summary(scanned(repo)) == [("app.py", 2, "advisory", "scan: debugger")]


def test_only_added_lines_are_scanned(repo: GitRepo) -> None:
    repo.commit({"old.txt": "<<<<<<< HEAD\nbreakpoint()\n"}, "markers already there")
    repo.write("old.txt", "<<<<<<< HEAD\nbreakpoint()\nfine\n")
    assert scanned(repo) == []


def test_levels_are_configurable(repo: GitRepo) -> None:
    repo.write("app.py", "breakpoint()\n<<<<<<< HEAD\n")
    findings = scanned(repo, debugger="blocking", conflict_markers="off")
    assert summary(findings) == [("app.py", 1, "blocking", "scan: debugger")]


def test_skip_added_to_an_existing_test(repo: GitRepo) -> None:
    repo.commit({"tests/test_x.py": TESTS}, "tests")
    repo.write(
        "tests/test_x.py",
        TESTS.replace("def test_a", "@pytest.mark.skip(reason='later')\ndef test_a")
        + "\n\n@pytest.mark.xfail\ndef test_new():\n    assert False\n",
    )
    findings = scanned(repo)
    assert summary(findings) == [("tests/test_x.py", 4, "advisory", "scan: skip_added")]
    assert "existing test test_a" in findings[0].failure_mode


def test_deleted_test_functions(repo: GitRepo) -> None:
    repo.commit({"tests/test_x.py": TESTS, "tests/test_gone.py": TESTS}, "tests")
    repo.write("tests/test_x.py", TESTS.split("\n\n\ndef test_b")[0] + "\n")
    (repo.path / "tests" / "test_gone.py").unlink()
    findings = scanned(repo)
    assert sorted((f.path, f.failure_mode) for f in findings) == [
        ("tests/test_gone.py", "test test_a was deleted"),
        ("tests/test_gone.py", "test test_b was deleted"),
        ("tests/test_x.py", "test test_b was deleted"),
    ]
    assert all(f.severity == "advisory" and f.verification == "deterministic" for f in findings)


def test_fingerprints_do_not_depend_on_line_numbers(repo: GitRepo) -> None:
    repo.write("a.py", "breakpoint()\n")
    first = scanned(repo)[0].fingerprint
    repo.write("a.py", "x = 1\n\nbreakpoint()\n")
    assert scanned(repo)[0].fingerprint == first


def test_a_heading_underline_is_not_a_conflict_marker(repo: GitRepo) -> None:
    repo.write("README.md", "hello\n\nInstall\n=======\n")
    assert scanned(repo) == []
    repo.write("notes.txt", "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n")
    assert [(f.path, f.line) for f in scanned(repo)] == [
        ("notes.txt", 1),
        ("notes.txt", 3),
        ("notes.txt", 5),
    ]


def test_a_method_named_breakpoint_is_not_a_debugger_call(repo: GitRepo) -> None:
    repo.write("app.py", "class A:\n    def breakpoint(self):\n        pass\n")
    assert scanned(repo) == []


def test_skip_forms_and_owners(repo: GitRepo) -> None:
    source = (
        "from pytest import mark\n\n\nclass TestK:\n    def test_m(self):\n        pass\n\n\n"
        "def test_f():\n    pass\n"
    )
    repo.commit({"tests/test_y.py": source}, "tests")
    repo.write(
        "tests/test_y.py",
        source.replace("class TestK", "@mark.skip\nclass TestK").replace(
            "def test_f", "@mark.xfail\ndef test_f"
        ),
    )
    modes = [f.failure_mode for f in scanned(repo)]
    assert modes == [
        "skip/xfail added to existing test TestK",
        "skip/xfail added to existing test test_f",
    ]
