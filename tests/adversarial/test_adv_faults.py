"""Faults beyond the ledger, in real sessions: the base checkout cannot be created, the disk
fills while the report is written, the state folder is read-only, the base cache is corrupt.
Each ends in a clear message or a fail-closed report, and nothing is half written."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

OLD_BUG = "def test_old_bug():\n    assert 1 == 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A change with a regression, next to a test that failed at the base too."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit(
        {
            ".gitignore": "__pycache__/\n.bounded-review/\n",
            "app.py": "def f():\n    return 1\n",
            "test_app.py": "from app import f\n\ndef test_f():\n    assert f() == 1\n\n" + OLD_BUG,
        },
        "base",
    )
    repo.git("branch", "base")
    repo.commit({"app.py": "def f():\n    return 2\n"}, "regression")
    return repo


def _review(repo: GitRepo, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        if limit is not None:  # a full disk: writes past `limit` bytes fail with EFBIG
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with repo.untouched():
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--bounded-review",
                "--bounded-review-no-lanes",
                "--bounded-review-base=base",
            ],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=clean_env(),
            preexec_fn=limited,
            timeout=300,
            check=False,
        )


def _report(repo: GitRepo) -> Any:
    return json.loads((repo.path / ".bounded-review" / "report.json").read_text())


def test_a_base_checkout_that_cannot_be_made_fails_closed(repo: GitRepo) -> None:
    blocker = repo.path / ".git" / "worktrees"
    blocker.write_text("not a folder\n")  # `git worktree add` cannot register a checkout
    ran = _review(repo)
    assert ran.returncode == 1, ran.stdout[-3000:]
    report = _report(repo)
    assert report["gate"]["review_clean"] != "yes"
    unknown = {t["nodeid"] for t in report["tests"]["unknown"]}
    assert unknown == {"test_app.py::test_f", "test_app.py::test_old_bug"}
    assert any("base" in lim for lim in report["limitations"])
    assert blocker.read_text() == "not a folder\n"


def test_a_full_disk_while_writing_the_report_keeps_the_old_one(repo: GitRepo) -> None:
    assert _review(repo).returncode == 1
    state = repo.path / ".bounded-review"
    before = (state / "report.json").read_bytes()
    assert len(before) > 1500
    ran = _review(repo, limit=1500)
    assert ran.returncode == 3, ran.stdout[-3000:]
    assert "cannot write" in ran.stdout + ran.stderr
    assert (state / "report.json").read_bytes() == before  # old or new, never torn
    assert not [p for p in state.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="running as root: file permissions do not stop root from writing",
)
def test_a_read_only_state_folder_is_a_clear_error(repo: GitRepo) -> None:
    state = repo.path / ".bounded-review"
    state.mkdir()
    state.chmod(0o555)
    try:
        ran = _review(repo)
    finally:
        state.chmod(0o755)
    assert ran.returncode == 3
    assert str(state) in ran.stdout + ran.stderr
    assert list(state.iterdir()) == []


CORRUPTIONS = {
    "empty": lambda text: "",
    "truncated": lambda text: text[: len(text) // 2],
    "binary": lambda text: "\x00\xff" * 10,
    "deep": lambda text: "[" * 100_000,
    # Edited, still valid JSON: the old bug "passes at base", which would make it look new.
    "edited": lambda text: text.replace('"kind": "failed"', '"kind": "passed"'),
}


def test_a_corrupt_base_cache_is_ignored_and_rebuilt(repo: GitRepo) -> None:
    assert _review(repo).returncode == 1
    first = _report(repo)["tests"]
    (cache,) = (repo.path / ".bounded-review" / "cache").glob("base-*.json")
    for name, corrupt in CORRUPTIONS.items():  # each on the cache the run before rebuilt
        cache.write_text(corrupt(cache.read_text()))
        assert _review(repo).returncode == 1, name
        again = _report(repo)["tests"]
        assert again["pre_existing"] == first["pre_existing"], name
        assert [t["nodeid"] for t in again["pre_existing"]] == ["test_app.py::test_old_bug"]
        assert [t["nodeid"] for t in again["target_related"]] == ["test_app.py::test_f"], name
        rebuilt = json.loads(cache.read_text())  # rewritten whole
        assert set(rebuilt) == {"digest", "entries"}, name
