from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from pytest_boundedreview.core.subproc import Outcome, run

ENV = dict(os.environ)


def py(code: str, timeout: float, stdin: bytes | None = None, cap: int = 1 << 20) -> Outcome:
    argv = [sys.executable, "-c", code]
    return run(argv, cwd=Path.cwd(), env=ENV, timeout=timeout, stdin=stdin, cap=cap)


def test_output_and_status() -> None:
    out = py("import sys; print('hi'); sys.stderr.write('err'); sys.exit(3)", timeout=30)
    assert (out.returncode, out.stdout, out.stderr) == (3, b"hi\n", b"err")
    assert not out.ok


def test_stdin_is_fed() -> None:
    out = py("import sys; print(sys.stdin.read().upper())", timeout=30, stdin=b"packet")
    assert out.stdout == b"PACKET\n"


def test_output_is_capped() -> None:
    out = py("print('x' * 100000)", timeout=30, cap=1000)
    assert len(out.stdout) == 1000
    assert out.truncated


@pytest.mark.slow
def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    out = py(code, timeout=1)
    assert out.timed_out
    assert out.returncode is None
    assert time.monotonic() - started < 30
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the grandchild survived the timeout")


def test_a_missing_program_is_a_start_error() -> None:
    out = run(["no-such-program-here"], cwd=Path.cwd(), env=ENV, timeout=5)
    assert out.returncode is None
    assert out.start_error is not None
    assert "no-such-program-here" in out.start_error


def test_a_child_is_waited_for_with_more_than_1024_descriptors_open(tmp_path: Path) -> None:
    """The wait uses poll(2): select(2) refuses a descriptor numbered past 1023."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        pytest.skip(f"the descriptor limit ({soft}) is below what the test opens")
    pipes = [os.pipe() for _ in range(550)]
    try:
        out = run(
            [sys.executable, "-c", "print('ran')"], cwd=tmp_path, env=dict(os.environ), timeout=30
        )
    finally:
        for read, write in pipes:
            os.close(read)
            os.close(write)
    assert out.returncode == 0
    assert out.stdout.strip() == b"ran"


def test_without_pidfd_an_exit_is_seen_when_it_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``os.pidfd_open`` is missing (macOS, older Linux), the wait looks again every few
    milliseconds: a child that exits long before its timeout is not reported as timed out."""
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    out = run(
        [sys.executable, "-c", "import time; time.sleep(0.2)"],
        cwd=Path.cwd(),
        env=dict(os.environ),
        timeout=60,
    )
    assert (out.returncode, out.timed_out) == (0, False)
