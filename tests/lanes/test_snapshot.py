"""Lanes work in a copy of the snapshot; a change to the live repository is caught and named."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.command import run_once
from pytest_boundedreview.lanes.snapshot import live_fingerprint, mutated, snapshot_copy

RESULT = json.dumps(
    {"schema": "bounded-review/lane-result/v1", "verdict": "pass", "rationale": "ok"}
)


def reviewer(tmp_path: Path, body: str) -> LaneConfig:
    script = tmp_path / "reviewer.py"
    script.write_text(body + f"\nprint({RESULT!r})\n")
    return LaneConfig(name="r", lens="correctness", command=[sys.executable, str(script)])


def test_the_copy_holds_the_snapshot_not_the_live_tree(repo: GitRepo) -> None:
    repo.write(".gitattributes", "secret.txt export-ignore\n")
    repo.write("secret.txt", "kept\n")
    repo.write("app.py", "x = 'dirty'\n")
    handle = git.open_repo(repo.path)
    with repo.untouched():
        target = freeze(handle, "local-diff")
        repo.write("app.py", "x = 'changed after the freeze'\n")
        with snapshot_copy(handle, target.tree) as copy:
            assert (copy / "app.py").read_text() == "x = 'dirty'\n"
            assert (copy / "secret.txt").read_text() == "kept\n"
            assert not (copy / ".git").exists()
            assert not copy.is_relative_to(repo.path)
        assert not copy.exists()
        repo.write("app.py", "x = 'dirty'\n")


def test_a_lane_writing_its_copy_is_fine_and_one_writing_the_live_repo_is_caught(
    repo: GitRepo, tmp_path: Path
) -> None:
    handle = git.open_repo(repo.path)
    repo.write("notes.txt", "untracked before\n")
    target = freeze(handle, "local-diff")
    packet = b"{}"
    with snapshot_copy(handle, target.tree) as copy:
        before = live_fingerprint(handle)
        polite = reviewer(tmp_path, "open('scratch.txt', 'w').write('mine')\n")
        assert run_once(polite, packet, copy).ok
        assert (copy / "scratch.txt").exists()
        assert mutated(before, live_fingerprint(handle)) == []

        hook = repo.path / ".git" / "hooks" / "pre-commit"
        rude = reviewer(
            tmp_path,
            f"open({str(repo.path / 'app.py')!r}, 'a').write('# edited\\n')\n"
            f"open({str(repo.path / 'notes.txt')!r}, 'a').write('more\\n')\n"
            f"open({str(repo.path / 'new.py')!r}, 'w').write('x')\n",
        )
        assert run_once(rude, packet, copy).ok
        assert mutated(before, live_fingerprint(handle)) == ["app.py", "new.py", "notes.txt"]
        assert not hook.exists()


def test_bytecode_python_writes_is_no_change_and_bytecode_it_runs_unchecked_is(
    repo: GitRepo,
) -> None:
    handle = git.open_repo(repo.path)
    before = live_fingerprint(handle)
    header = importlib.util.MAGIC_NUMBER + bytes(12)
    repo.write("__pycache__/app.cpython-311.pyc", header)  # a re-run imported app.py
    assert mutated(before, live_fingerprint(handle)) == []
    unchecked = importlib.util.MAGIC_NUMBER + b"\x01" + bytes(11)
    repo.write("__pycache__/app.cpython-311.pyc", unchecked)
    assert mutated(before, live_fingerprint(handle)) == ["__pycache__/app.cpython-311.pyc"]


def test_index_and_head_changes_are_caught(repo: GitRepo) -> None:
    handle = git.open_repo(repo.path)
    before = live_fingerprint(handle)
    repo.write("staged.py", "s = 1\n")
    repo.git("add", "staged.py")
    assert mutated(before, live_fingerprint(handle)) == ["(index)", "staged.py"]
    repo.git("commit", "--quiet", "-m", "moved HEAD")
    assert "(HEAD)" in mutated(before, live_fingerprint(handle))


def test_ignored_files_such_as_env_never_reach_the_copy(repo: GitRepo) -> None:
    repo.write(".gitignore", ".env\nsecrets/\n")
    repo.write(".env", "API_KEY=do-not-share\n")
    repo.write("secrets/token", "t0k3n\n")
    repo.write("app.py", "x = 'dirty'\n")
    handle = git.open_repo(repo.path)
    with repo.untouched():
        target = freeze(handle, "local-diff")
        with snapshot_copy(handle, target.tree) as copy:
            assert (copy / "app.py").read_text() == "x = 'dirty'\n"
            assert not (copy / ".env").exists()
            assert not (copy / "secrets").exists()
            held = b"".join(p.read_bytes() for p in copy.rglob("*") if p.is_file())
            assert b"do-not-share" not in held
