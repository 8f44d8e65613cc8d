"""A time limit for re-runs inside a pytest process (see inprocess.py), as a child re-run has
one: a test that failed by hanging (stopped by pytest-timeout, whose timer a re-run without
its protocol hooks does not start) must not hang the session when it runs again.

The limit is SIGALRM's, where it is free: the main thread of a POSIX process, with no timer
set and no handler of its own installed. Elsewhere the re-run runs unlimited, as before.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class OutOfTime(BaseException):
    """Raised into a re-run that outlived its time: a BaseException, so a test's own
    ``except Exception`` does not swallow it, and pytest reports it as the test failing."""


def _free() -> bool:
    main = threading.current_thread() is threading.main_thread()
    if not main or not hasattr(signal, "setitimer"):
        return False
    unset = signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
    return unset and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@contextlib.contextmanager
def limited(seconds: float) -> Iterator[None]:
    """Raise :class:`OutOfTime` into what runs inside after ``seconds``, and every second
    after that (a teardown may hang too), until it is left."""
    if seconds <= 0 or not _free():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise OutOfTime(f"the re-run outlived its {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        while True:  # the signal may land here too: disarm until it is done
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except OutOfTime:
                continue
