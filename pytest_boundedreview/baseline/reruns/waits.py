"""What a wait on a re-run child watches besides the child: the folders it runs in, and the
session's patience.

A re-run child works in folders of ours (its record folder, the base checkout) that another
process may remove while it runs (a temporary-folder cleaner): the child then waits for a
file that never comes, or answers from a tree that is no longer there. Each wait on a child
looks at its folders about every tenth of a second and ends as soon as one is gone, saying
which (the caller re-runs once in a new checkout, or answers ``unknown`` with the reason).
Every :data:`INTERVAL_VARIABLE` seconds (5 by default) it tells the session what it still
waits for, through the listener the session set with :func:`told`; none is set outside a
session's classification, and a wait that ends sooner says nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

INTERVAL_VARIABLE = "BOUNDED_REVIEW_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 5.0
LOOK_SECONDS = 0.1  # how often the folders are looked at: a stat each, every 100 ms

_listener: list[Callable[[str], None]] = []


@contextlib.contextmanager
def told(progress: Callable[[str], None]) -> Iterator[None]:
    """Within the block, waits on a child tell ``progress`` what they wait for."""
    _listener.append(progress)
    try:
        yield
    finally:
        _listener.remove(progress)


def interval() -> float:
    """Seconds between two progress lines of one wait (:data:`INTERVAL_VARIABLE`, a positive
    number; anything else is the default)."""
    try:
        seconds = float(os.environ.get(INTERVAL_VARIABLE, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return seconds if seconds > 0 else DEFAULT_INTERVAL


class Watch:
    """One wait on a child that works in ``folders``, for ``what`` (the progress line's
    words: "the base re-run of 3 test(s) at abc1234"). Call :meth:`look` as the wait polls;
    :attr:`vanished` then says why the wait ended early, if it did."""

    def __init__(self, what: str, folders: Sequence[tuple[str, Path]]) -> None:
        self.what = what
        self._folders = list(folders)  # (what the folder is, for the reason; the folder)
        self._start = time.monotonic()
        self._interval = interval()
        self._next_say = self._start + self._interval
        self._next_look = self._start  # the first look at once
        self.vanished: str | None = None

    def gone(self) -> bool:
        """Whether one of the folders is gone now (see :attr:`vanished`)."""
        for name, folder in self._folders:
            if not folder.is_dir():
                self.vanished = f"{name} {folder} vanished during the run"
                return True
        return False

    def look(self) -> bool:
        """Whether the wait should end now: one of the folders is gone (see
        :attr:`vanished`). Says what it waits for when the interval has passed."""
        now = time.monotonic()
        if now >= self._next_look:
            self._next_look = now + LOOK_SECONDS
            if self.gone():
                return True
        if now >= self._next_say:
            self._next_say = now + self._interval
            if _listener:
                _listener[-1](f"waiting for {self.what} ({now - self._start:.0f} s)")
        return False
