"""The agent hooks' own deadline (CONTRACT §12): the hook's work runs in a thread, and the hook
answers by the deadline whatever the work is doing, well under the timeout ``init`` writes (an
agent that kills a hook lets the stop through unchecked).

Past the deadline the work is cancelled before it records anything, and every git process it
started is ended: the hook runs in a process group of its own (unless it shares a terminal),
and at the deadline it signals that group, itself excepted (it handles the signal; the git
processes it started have their default handling, which ends them).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

DEADLINE_VARIABLE = "BOUNDED_REVIEW_HOOK_DEADLINE"
DEFAULT_DEADLINE = 10.0  # seconds; `init` writes a timeout of 30
T = TypeVar("T")


def deadline(env: Mapping[str, str]) -> float:
    """The deadline in seconds: ``BOUNDED_REVIEW_HOOK_DEADLINE`` when it is a positive number,
    else 10."""
    try:
        value = float(env.get(DEADLINE_VARIABLE, ""))
    except ValueError:
        return DEFAULT_DEADLINE
    return value if 0 < value < 3600 else DEFAULT_DEADLINE


class Cancelled(Exception):
    """The deadline passed: the work records nothing."""


class Work(Generic[T]):
    """The hook's work as the thread does it: what it is doing (for the message when it is
    late), the state folder once known, and its answer, set only while not cancelled."""

    def __init__(self) -> None:
        self.phase = "opening the repository and its settings"
        self.state: Path | None = None
        self.root: Path | None = None  # the repository's top folder, once known
        self.answer: T | None = None
        self.error: Exception | None = None  # what the work raised, raised again by the hook
        self.cancelled = False
        self.lock = threading.RLock()

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Held while the work records its state and answer: the deadline waits for it, or it
        never starts (:class:`Cancelled`)."""
        with self.lock:
            if self.cancelled:
                raise Cancelled
            yield

    def finish(self, answer: T) -> None:
        with self.committing():
            self.answer = answer


def within(seconds: float, job: Callable[[Work[T]], T]) -> tuple[T | None, Work[T]]:
    """Run ``job`` for at most ``seconds``: its answer, or ``None`` when it was late (the
    work cancelled, the git processes it started ended); what it raised is raised here."""
    work: Work[T] = Work()
    killable = _own_group()
    if killable and signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        # an ignored signal is inherited: the git processes started next must end on it
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def run() -> None:
        try:
            answer = job(work)
        except Cancelled:
            return
        except Exception as exc:
            with work.lock:
                work.error = exc
            return
        try:
            work.finish(answer)
        except Cancelled:
            return

    thread = threading.Thread(target=run, name="bounded-review-hook", daemon=True)
    thread.start()
    thread.join(seconds)
    with work.lock:
        if work.error is not None:
            raise work.error
        if work.answer is not None:
            return work.answer, work
        work.cancelled = True
    if killable:
        _end_children()
        thread.join(2)  # its git process ended, the work unwinds (and releases its locks)
        _end_children()  # one it may have started meanwhile
    return None, work


def _own_group() -> bool:
    """Put the hook in a process group of its own, so its children can be ended together;
    ``False`` where it cannot (no process groups, or a terminal it shares with a shell)."""
    if not hasattr(os, "setpgid") or any(_tty(stream) for stream in (0, 1, 2)):
        return False
    try:
        if os.getpgid(0) != os.getpid():
            os.setpgid(0, 0)
    except OSError:
        return False
    return os.getpgid(0) == os.getpid()


def _tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _end_children() -> None:
    """Signal the hook's process group, the hook itself excepted: a Python handler (not an
    ignored signal, which a child would inherit) lets it go on."""
    if sys.platform == "win32":  # pragma: no cover - no process groups to signal
        return
    signal.signal(signal.SIGTERM, _carry_on)
    try:
        os.killpg(os.getpid(), signal.SIGTERM)
    except OSError:
        return


def _carry_on(signum: int, frame: object) -> None:
    """The hook's own handling of the signal it sends its children: nothing."""
