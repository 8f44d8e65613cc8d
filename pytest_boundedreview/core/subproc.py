"""The one way the tool starts other programs (checks, test re-runs, reviewer lanes).

Every child gets an argv list (no shell), its own process group, a timeout after which the
whole group gets SIGTERM and, after a grace period, SIGKILL, and bounded output capture. When
it ends, whatever it left running goes too: its group, and on Linux every process that still
carries the run's token in its environment (a daemon that left the group with ``setsid``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from ..models.record import record

DEFAULT_CAP = 1024 * 1024
GRACE_SECONDS = 3.0
JOB_VARIABLE = "BOUNDED_REVIEW_JOB"


@record(frozen=True)
class Outcome:
    """How a child ended. ``returncode`` is ``None`` when it never started or timed out."""

    returncode: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False
    start_error: str | None = None
    # Ended by the caller once its work was there (see Started.finish): not its own exit.
    done_early: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class _Capped:
    """Drain a pipe in a thread, keeping at most ``cap`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self.data = bytearray()
        self.truncated = False
        self._cap = cap
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            for chunk in iter(lambda: stream.read(65536), b""):
                room = self._cap - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    self.truncated = True

    def result(self) -> bytes:
        self._thread.join(timeout=GRACE_SECONDS)
        return bytes(self.data)


@functools.cache
def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a hook that makes the child get SIGKILL when this process dies, so a killed
    run does not leave its re-runs and checks working on (elsewhere: nothing)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, once: most runs start no child, and it takes a few ms to import

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    pr_set_pdeathsig = 1

    def hook() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)

    return hook


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_strays(token: str) -> None:
    """SIGKILL every process whose environment carries ``token`` (Linux ``/proc``; elsewhere
    nothing): descendants that left the child's process group."""
    needle = f"{JOB_VARIABLE}={token}".encode()
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(os.path.join(entry.path, "environ"), "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)


DONE_POLL_SECONDS = 0.005  # how often a wait with a ``done`` check looks


def _wait(
    proc: subprocess.Popen[bytes], timeout: float | None, done: Callable[[], bool] | None = None
) -> bool:
    """``proc.wait(timeout)``, woken by the kernel the moment the child exits (a pidfd on
    Linux) rather than by ``Popen.wait``'s polling, which notices an exit up to 50 ms late.
    With ``done``, also return (``True``) as soon as it says the child's work is there."""
    end = None if timeout is None else time.monotonic() + timeout
    try:
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or the child is already reaped
        handle = None
    try:
        poller = select.poll()  # not select.select: it refuses descriptors past 1023
        if handle is not None:
            poller.register(handle, select.POLLIN)
        while True:
            left = None if end is None else max(end - time.monotonic(), 0)
            if done is None and handle is not None:
                step = left  # the kernel wakes this wait at the exit
            else:  # look again every few ms
                step = DONE_POLL_SECONDS if left is None else min(DONE_POLL_SECONDS, left)
            if handle is not None:
                if poller.poll(None if step is None else step * 1000):
                    break
            elif proc.poll() is not None:
                break
            else:
                time.sleep(step or 0)
            if done is not None and done():
                return True
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(proc.args, timeout or 0)
    finally:
        if handle is not None:
            os.close(handle)
    proc.wait()
    return False


class Started:
    """A child started by :func:`start`: :meth:`finish` waits for it (and, on any exit,
    ends what it left running); :meth:`stop` ends it at once."""

    def __init__(self, proc: subprocess.Popen[bytes], token: str, timeout: float, cap: int) -> None:
        assert proc.stdout is not None
        assert proc.stderr is not None
        self._proc, self._token = proc, token
        self._deadline = time.monotonic() + timeout
        self._timeout = timeout
        self._out, self._err = _Capped(proc.stdout, cap), _Capped(proc.stderr, cap)
        self._done = False

    def running(self) -> bool:
        return not self._done and self._proc.poll() is None

    def restart_clock(self) -> None:
        """Count the child's time from now: it was waiting for its work until now."""
        self._deadline = time.monotonic() + self._timeout

    def finish(self, done: Callable[[], bool] | None = None) -> Outcome:
        """Wait until the child exits or its time is up (counted from its start, or from the
        last :meth:`restart_clock`); with ``done``, only until it says the child's work is
        there: what the child still does after that (its exit) is not waited for."""
        proc, timed_out, early = self._proc, False, False
        try:
            early = _wait(proc, max(self._deadline - time.monotonic(), 0), done)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                _wait(proc, GRACE_SECONDS)
        finally:
            self.stop()  # on every exit, Ctrl-C included: the child and what it left running
        return Outcome(
            returncode=None if timed_out or early else proc.returncode,
            stdout=self._out.result(),
            stderr=self._err.result(),
            timed_out=timed_out,
            truncated=self._out.truncated,  # stderr is diagnostics: cut quietly, never a failure
            done_early=early,
        )

    def stop(self) -> None:
        """End the child, its group and any stray that left it; idempotent."""
        if self._done:
            return
        self._done = True
        _kill_group(self._proc.pid, signal.SIGKILL)
        _kill_strays(self._token)
        self._proc.wait()


def start(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdin: bytes | None = None,
    cap: int = DEFAULT_CAP,
) -> Started | Outcome:
    """Start ``argv``; an :class:`Outcome` with ``start_error`` when it cannot start."""
    token = uuid.uuid4().hex
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**env, JOB_VARIABLE: token},
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent(),  # only calls prctl(2): safe between fork and exec
        )
    except OSError as exc:
        return Outcome(returncode=None, start_error=f"{argv[0]}: {exc.strerror or exc}")
    started = Started(proc, token, timeout, cap)
    if stdin is not None and proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    return started


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdin: bytes | None = None,
    cap: int = DEFAULT_CAP,
) -> Outcome:
    """Run ``argv`` to completion or until ``timeout`` seconds; never raises for the child's
    own failures (a missing program is reported in ``start_error``)."""
    child = start(argv, cwd=cwd, env=env, timeout=timeout, stdin=stdin, cap=cap)
    return child if isinstance(child, Outcome) else child.finish()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        with pipe:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the child closed its stdin early; its exit status tells the rest
