"""An exclusive kernel lock on a stable lock file (``fcntl.flock``).

The kernel releases it when the holder's process dies, so a killed writer never leaves the
lock behind; a live holder makes a caller wait a bounded time, then fail naming its pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import EXIT_INDETERMINATE, EXIT_INTERNAL, LedgerError

DEFAULT_WAIT = 10.0


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        os.lseek(fd, 0, os.SEEK_SET)
        pid = int(os.read(fd, 32).decode().strip() or "0")
        if pid:
            return f"pid {pid}"
    return "another process"


@contextlib.contextmanager
def exclusive(path: Path, wait: float = DEFAULT_WAIT) -> Iterator[None]:
    """Hold the exclusive lock on ``path`` (never a symlink) for the block."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise LedgerError(
            "PATH_ESCAPE", f"cannot open the lock file {path}: {exc}", EXIT_INTERNAL
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:  # a hard link leads elsewhere
            why = f"{path} is not a plain file of its own (links: {info.st_nlink}); refusing it"
            raise LedgerError("PATH_ESCAPE", why, EXIT_INTERNAL)
        deadline = time.monotonic() + wait
        pause = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    why = f"{path} is held by {_holder(fd)} (waited {wait:g}s)"
                    raise LedgerError("LOCKED", why, EXIT_INDETERMINATE) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
