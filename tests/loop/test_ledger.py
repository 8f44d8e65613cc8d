"""The loop ledger's storage promises, with real processes: exclusive locking, replayable
operations, validation before and after every write, containment, crashes and faults."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_boundedreview.core.errors import LedgerError
from pytest_boundedreview.loop import ledger as ledger_module
from pytest_boundedreview.loop.ledger import Ledger, new_state
from pytest_boundedreview.models.loop import LoopState

LOOP = "pr-main-feature"


def fresh() -> LoopState:
    return new_state(
        LOOP,
        target_kind="pr",
        base="main",
        branch="feature",
        status="open",
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
        max_repair_loops=2,
        repair_loops_used=0,
    )


def bump(current: LoopState | None) -> tuple[LoopState, dict[str, Any]]:
    state = current or fresh()
    count = len(state.flags)
    return state.model_copy(update={"flags": [*state.flags, f"op{count}"]}), {"count": count + 1}


def state_bytes(folder: Path) -> bytes:
    return (folder / "loops" / LOOP / "state.json").read_bytes()


def test_operations_replay_and_conflict(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    assert book.mutate("a", {"x": 1}, bump) == {"count": 1}
    assert book.mutate("b", {"x": 2}, bump) == {"count": 2}
    before = state_bytes(tmp_path)
    assert book.mutate("a", {"x": 1}, bump) == {"count": 1, "replayed": True}
    with pytest.raises(LedgerError) as caught:
        book.mutate("a", {"x": 99}, bump)
    assert caught.value.code == "OPERATION_CONFLICT"
    assert state_bytes(tmp_path) == before
    state = book.read()
    assert state is not None
    assert [op.operation_id for op in state.operations] == ["a", "b"]


def test_the_ledger_itself_never_changes_a_closed_loop_and_archives_on_replace(
    tmp_path: Path,
) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("a", {}, lambda s: (fresh().model_copy(update={"status": "converged"}), {}))
    closed = state_bytes(tmp_path)
    with pytest.raises(LedgerError) as caught:  # whatever an operation would do to it
        book.mutate("b", {}, bump)
    assert caught.value.code == "LOOP_CLOSED"
    assert state_bytes(tmp_path) == closed
    assert book.mutate("c", {}, lambda s: (fresh(), {"new": True}), replace=True) == {"new": True}
    assert (tmp_path / "loops" / LOOP / "archive" / "0001.json").read_bytes() == closed
    assert json.loads(state_bytes(tmp_path))["status"] == "open"


@pytest.mark.parametrize("loop_id", ["", "a/b", ".", "..", "x" * 129, "a b", "é", "a\nb", "abc\n"])
def test_bad_loop_ids_are_refused(tmp_path: Path, loop_id: str) -> None:
    with pytest.raises(LedgerError) as caught:
        Ledger(tmp_path, loop_id)
    assert caught.value.code == "INVALID"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "does not validate"),
        (b'{"schema": "bounded-review/loop-state/v2"}', "newer version"),
        (b'{"schema": "bounded-review/loop-state/v1", "loop_id": "x"}', "does not validate"),
    ],
)
def test_a_bad_state_is_never_overwritten(tmp_path: Path, content: bytes, why: str) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("a", {}, bump)
    path = tmp_path / "loops" / LOOP / "state.json"
    path.write_bytes(content)
    with pytest.raises(LedgerError) as caught:
        book.mutate("b", {}, bump)
    assert caught.value.code == "RECOVERY_REQUIRED"
    assert why in str(caught.value)
    assert path.read_bytes() == content


def test_duplicate_keys_are_refused_and_kept(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("a", {}, bump)
    path = tmp_path / "loops" / LOOP / "state.json"
    text = path.read_text().replace(
        '"status": "open"', '"status": "open", "status": "converged"', 1
    )
    path.write_text(text)
    with pytest.raises(LedgerError, match="duplicate key 'status'") as caught:
        book.mutate("b", {}, bump)
    assert caught.value.code == "RECOVERY_REQUIRED"
    assert path.read_text() == text


def test_an_operation_that_would_write_an_invalid_state_writes_nothing(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("a", {}, bump)
    before = state_bytes(tmp_path)

    def broken(current: LoopState | None) -> tuple[LoopState, dict[str, Any]]:
        assert current is not None
        return current.model_copy(update={"status": "bogus", "repair_loops_used": -1}), {}

    with pytest.raises(LedgerError) as caught:
        book.mutate("b", {}, broken)
    assert caught.value.code == "INVALID"
    assert state_bytes(tmp_path) == before
    assert book.mutate("c", {}, bump) == {"count": 2}  # the loop is not stuck


def test_a_hard_linked_lock_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("precious data\n")
    folder = tmp_path / "state" / "loops" / LOOP
    folder.mkdir(parents=True)
    os.link(outside, folder / "lock")
    with pytest.raises(LedgerError) as caught:
        Ledger(tmp_path / "state", LOOP).mutate("a", {}, bump)
    assert caught.value.code == "PATH_ESCAPE"
    assert outside.read_text() == "precious data\n"


def test_unknown_fields_are_refused(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("a", {}, bump)
    path = tmp_path / "loops" / LOOP / "state.json"
    document = json.loads(path.read_text())
    document["surprise"] = 1
    path.write_text(json.dumps(document))
    with pytest.raises(LedgerError, match="surprise: unknown key"):
        book.read()


@pytest.mark.parametrize("link", ["state_dir", "loops", "loop", "state.json", "lock"])
def test_symlinks_never_lead_outside(tmp_path: Path, link: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    state_dir = tmp_path / "state"
    folder = state_dir / "loops" / LOOP
    if link == "state_dir":
        state_dir.symlink_to(outside)
    elif link == "loops":
        state_dir.mkdir()
        (state_dir / "loops").symlink_to(outside)
    elif link == "loop":
        (state_dir / "loops").mkdir(parents=True)
        folder.symlink_to(outside)
    else:
        folder.mkdir(parents=True)
        (folder / link).symlink_to(outside / link)
    with pytest.raises(LedgerError) as caught:
        Ledger(state_dir, LOOP).mutate("a", {}, bump)
    assert caught.value.code == "PATH_ESCAPE"
    assert list(outside.iterdir()) == []


WORKER = """
import sys
from pytest_boundedreview.loop.ledger import Ledger
sys.path.insert(0, {tests!r})
from test_ledger import bump
book = Ledger(__import__("pathlib").Path(sys.argv[1]), {loop!r}, wait=120)
for n in range(int(sys.argv[3])):
    book.mutate(f"{{sys.argv[2]}}-{{n}}", {{"n": n}}, bump)
"""


def run_worker(folder: Path, name: str, count: int) -> subprocess.Popen[bytes]:
    code = WORKER.format(tests=str(Path(__file__).parent), loop=LOOP)
    return subprocess.Popen([sys.executable, "-c", code, str(folder), name, str(count)])


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    # four writers interleaving on two cores: every write rewrites the whole state, so the
    # work grows with the square of the operations; 400 are enough for the writers to collide
    workers = [run_worker(tmp_path, f"w{i}", 100) for i in range(4)]
    assert [w.wait(timeout=600) for w in workers] == [0] * 4
    state = Ledger(tmp_path, LOOP).read()
    assert state is not None
    assert len(state.operations) == 400
    assert len({op.operation_id for op in state.operations}) == 400
    assert state.flags == [f"op{n}" for n in range(400)]  # every apply saw the last write


def test_a_live_holder_blocks_with_its_pid_and_a_killed_one_does_not(tmp_path: Path) -> None:
    Ledger(tmp_path, LOOP).mutate("a", {}, bump)
    lock = tmp_path / "loops" / LOOP / "lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from pathlib import Path
                from pytest_boundedreview.loop.lock import exclusive
                with exclusive(Path({str(lock)!r})):
                    print("held", flush=True)
                    time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    with pytest.raises(LedgerError) as caught:
        Ledger(tmp_path, LOOP, wait=0.3).mutate("b", {}, bump)
    assert caught.value.code == "LOCKED"
    assert f"pid {holder.pid}" in str(caught.value)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    assert Ledger(tmp_path, LOOP, wait=5).mutate("b", {}, bump) == {"count": 2}


CRASHER = """
import os, signal, sys
from pathlib import Path
from pytest_boundedreview.loop import ledger
sys.path.insert(0, {tests!r})
from test_ledger import bump
step = sys.argv[2]
real = {{name: getattr(ledger.fs, name) for name in ("write", "fsync", "replace", "open")}}
calls = {{"fsync": 0}}

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def write(fd, data):
    n = real["write"](fd, data)
    if step == "temp-written":
        die()
    return n

def fsync(fd):
    real["fsync"](fd)
    calls["fsync"] += 1
    if step == "temp-fsynced" and calls["fsync"] == 1:
        die()

def replace(a, b):
    if step == "before-replace":
        die()
    real["replace"](a, b)
    if step == "before-folder-fsync":
        die()

ledger.fs.write, ledger.fs.fsync, ledger.fs.replace = write, fsync, replace
ledger.Ledger(Path(sys.argv[1]), {loop!r}).mutate("crash", {{}}, bump)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "step", ["temp-written", "temp-fsynced", "before-replace", "before-folder-fsync"]
)
def test_a_writer_killed_at_any_step_never_tears_the_state(tmp_path: Path, step: str) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("first", {}, bump)
    old = state_bytes(tmp_path)
    code = CRASHER.format(tests=str(Path(__file__).parent), loop=LOOP)
    crashed = subprocess.run([sys.executable, "-c", code, str(tmp_path), step], check=False)
    assert crashed.returncode == -signal.SIGKILL
    state = book.read()  # old or new, never torn
    assert state is not None
    assert [op.operation_id for op in state.operations] in (["first"], ["first", "crash"])
    if step != "before-folder-fsync":
        assert state_bytes(tmp_path) == old
    assert book.mutate("next", {}, bump)["count"] == len(state.flags) + 1
    leftovers = [p.name for p in (tmp_path / "loops" / LOOP).iterdir() if p.suffix == ".tmp"]
    assert leftovers == []  # the dead writer's temp file was swept


class Faults:
    """Makes the ``failing``-th file-system call of the ledger raise ``OSError``."""

    NAMES = ("open", "write", "fsync", "close", "replace", "unlink", "mkdir", "listdir")

    def __init__(self, monkeypatch: pytest.MonkeyPatch, failing: int) -> None:
        self.calls = 0
        self.failing = failing
        self.originals = {name: getattr(ledger_module.fs, name) for name in self.NAMES}
        for name in self.NAMES:
            monkeypatch.setattr(ledger_module.fs, name, self._wrapped(name))

    def _wrapped(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.failing:
                raise OSError(5, f"injected fault in {name}")
            return self.originals[name](*args, **kwargs)

        return call


def test_a_fault_at_every_file_system_call(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("first", {}, bump)
    for failing in range(1, 100):
        before = state_bytes(tmp_path)
        with pytest.MonkeyPatch.context() as patch:
            faults = Faults(patch, failing)
            try:
                book.mutate(f"op{failing}", {}, bump)
                error = None
            except LedgerError as exc:
                error = exc
        if error is None:
            if faults.calls < failing:  # no call was left to fault: the sweep is complete
                break
            continue  # the faulted call was a best-effort one (the temp-file sweep)
        assert "injected fault" in str(error)
        after = book.read()
        assert after is not None
        if error.code == "COMMIT_UNCERTAIN":  # replaced, then the sync or read-back failed
            assert after.operations[-1].operation_id == f"op{failing}"
        else:
            assert state_bytes(tmp_path) == before
    else:
        pytest.fail("the operation never succeeded")
    assert failing > 5  # every call before the last one was faulted once


def test_a_full_disk_is_a_clear_error_and_the_old_state_stays(tmp_path: Path) -> None:
    book = Ledger(tmp_path, LOOP)
    book.mutate("first", {}, bump)
    old = state_bytes(tmp_path)
    code = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_ledger import bump
        from pytest_boundedreview.core.errors import LedgerError
        from pytest_boundedreview.loop.ledger import Ledger
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        try:
            Ledger(Path({str(tmp_path)!r}), {LOOP!r}).mutate("big", {{}}, bump)
        except LedgerError as exc:
            print(exc)
            sys.exit(7)
        """
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert ran.returncode == 7, ran.stderr
    assert "previous state is intact" in ran.stdout
    assert state_bytes(tmp_path) == old


def test_the_lock_file_names_its_last_holder(tmp_path: Path) -> None:
    Ledger(tmp_path, LOOP).mutate("a", {}, bump)
    assert (tmp_path / "loops" / LOOP / "lock").read_text().strip() == str(os.getpid())
