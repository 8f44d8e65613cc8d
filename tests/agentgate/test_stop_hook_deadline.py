"""The stop hook answers within its own deadline (``BOUNDED_REVIEW_HOOK_DEADLINE``, 10 s by
default, under the 30 s ``init`` writes): past it, it blocks once saying why and what to do,
then lets the agent stop with the state; the git processes it started do not outlive it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from agenthooks import BROKEN, FIXED, Said, hook, make_repo, review
from gitrepo import GitRepo, clean_env

SLOW_GIT = """#!/bin/sh
# git, with `add` slowed past any deadline (a large file git does not ignore)
for arg in "$@"; do
  if [ "$arg" = add ]; then
    echo $$ >> "{pids}"
    exec sleep 60
  fi
done
exec "{git}" "$@"
"""


@pytest.fixture
def slow(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The hook's environment with a `git` first on PATH whose `add` hangs, and the file its
    hanging processes' ids are written to."""
    folder = tmp_path / "slowgit"
    folder.mkdir()
    pids = tmp_path / "pids"
    real = shutil.which("git")
    assert real is not None
    wrapper = folder / "git"
    wrapper.write_text(SLOW_GIT.format(git=real, pids=pids))
    wrapper.chmod(0o755)
    path = f"{folder}{os.pathsep}{os.environ['PATH']}"
    return {"PATH": path, "BOUNDED_REVIEW_HOOK_DEADLINE": "1"}, pids


def gone(pid: int) -> bool:
    """Whether the process ``pid`` has ended (a zombie no one reaped has ended too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def ignoring_sigterm(repo: GitRepo, env: dict[str, str]) -> Said:
    """The stop hook run by an agent that started it with SIGTERM ignored (inherited)."""
    event = json.dumps({"session_id": "s1", "cwd": str(repo.path), "stop_hook_active": False})
    argv = [sys.executable, "-m", "pytest_boundedreview", "hook", "stop", "--agent", "claude"]
    script = 'trap "" TERM; exec "$@"'
    done = subprocess.run(
        ["sh", "-c", script, "sh", *argv],
        input=event.encode(),
        capture_output=True,
        cwd=repo.path,
        env=clean_env(env),
        timeout=60,
        check=False,
    )
    return Said("claude", done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("started", ["as agents start it", "with SIGTERM ignored"])
def test_a_hook_past_its_deadline_blocks_once_then_lets_go(
    tmp_path: Path, slow: tuple[dict[str, str], Path], started: str
) -> None:
    env, pids = slow
    repo = make_repo(tmp_path / "repo")
    hook(repo, "claude", kind="start")
    repo.write("app.py", BROKEN)
    run = ignoring_sigterm if started == "with SIGTERM ignored" else partial(hook, agent="claude")
    first = run(repo, env=env)
    assert first.blocked
    assert "could not decide within 1 s" in first.instruction
    assert "reading the working tree" in first.instruction
    assert ".gitignore" in first.instruction  # the fix
    second = run(repo, env=env)
    assert not second.blocked
    assert "could not decide within 1 s" in second.message
    assert second.message.endswith("not reviewed")
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 2
    deadline = time.monotonic() + 30  # not a timing assertion: how long to wait for reaping
    while not all(gone(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(gone(pid) for pid in started), "a git child outlived the hook"


@pytest.mark.slow
def test_a_slow_turn_start_leaves_no_old_tree_to_pass(
    tmp_path: Path, slow: tuple[dict[str, str], Path]
) -> None:
    env, _ = slow
    repo = make_repo(tmp_path / "repo")
    repo.write("app.py", BROKEN)  # unreviewed, left by an earlier turn
    hook(repo, "claude", kind="start")  # recorded
    said = hook(repo, "claude", kind="start", env=env)  # the next turn's: too slow
    assert "could not record the turn's tree within 1 s" in said.err
    assert hook(repo, "claude").blocked  # the earlier turn's tree is not "unchanged"


def test_within_the_deadline_nothing_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# harmless\n")
    review(repo)
    said = hook(repo, "claude", env={"BOUNDED_REVIEW_HOOK_DEADLINE": "20"})
    assert (said.blocked, said.message) == (False, "")


def test_a_deadline_that_is_not_a_number_is_the_default(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("app.py", BROKEN)
    said = hook(repo, "claude", env={"BOUNDED_REVIEW_HOOK_DEADLINE": "soon"})
    assert said.blocked
    assert "No review of this tree" in said.instruction
