"""The state folder and crash-safe file writes inside it."""

from __future__ import annotations

import contextlib
import datetime
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import FatalError

GITIGNORE = "*\n"


def default_mode() -> int:
    """The mode a new file gets under the current umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def state_folder(root: Path, configured: str) -> Path:
    """``configured`` (relative to the repository root) created with a ``.gitignore`` of ``*``,
    so nothing in it ever shows up in ``git status``."""
    folder = root / configured
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            write_atomic(ignore, GITIGNORE.encode())
    except OSError as exc:
        raise FatalError(f"cannot create the state folder {folder}: {exc.strerror}") from exc
    for action in _when_made.pop(folder, ()):
        action()
    return folder


# What this process leaves in a state folder once it is made (see when_made).
_when_made: dict[Path, list[Callable[[], None]]] = {}


def when_made(folder: Path, action: Callable[[], None]) -> None:
    """Do ``action`` once this process makes the state folder ``folder`` (see state_folder):
    what a run learnt before the folder was there is kept by the run that makes it."""
    _when_made.setdefault(folder, []).append(action)


def utc_now() -> str:
    """The time stamp of reports and loop states: UTC, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never half.

    A ``path`` that is a device or a pipe (``/dev/null``, ``/dev/stdout``, a FIFO) is written
    through, never replaced: run as root, a rename would put a regular file in its place."""
    if path.exists() and not path.is_file():
        with open(path, "wb") as handle:
            handle.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)
