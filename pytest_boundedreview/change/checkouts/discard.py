"""A large base checkout's files removed after the session, by a process of their own.

Deleting a checkout costs about as much as making it: for a repository of 100,000 tracked files,
seconds of unlinking that the session would otherwise wait for at its very end, when nothing
reads the checkout any more. A checkout whose index lists more than :data:`DETACH_ENTRIES`
files is therefore unregistered at once (its ``.git/worktrees/<id>`` folder dropped, which is all
``git worktree remove`` changes in the repository: ``git worktree list`` no longer shows it) and
its temporary folder handed to a detached ``rm``-like process. Smaller ones go in place, in
milliseconds, so that nothing of them outlives the session.

The folder keeps its owner's name (see ``tempdirs``): if the remover dies, the next run's sweep
removes it as abandoned once the session has ended, as it does for a killed session's.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

# About 1,000 files unlink in a few milliseconds; a process of its own costs more than that.
DETACH_ENTRIES = 5000
_REMOVER = "import shutil, sys\nfor p in sys.argv[1:]: shutil.rmtree(p, ignore_errors=True)"
# The shell starts the remover in the background and exits at once: the remover is nobody's
# child to wait for, and the session's own exit does not wait for it.
_DETACH = '"$@" < /dev/null > /dev/null 2>&1 &'


def entries(admin: Path) -> int:
    """How many files the checkout's index (``admin/index``) lists; 0 when unreadable."""
    try:
        with open(admin / "index", "rb") as index:
            header = index.read(12)
    except OSError:
        return 0
    if len(header) < 12 or header[:4] != b"DIRC":
        return 0
    return int(struct.unpack(">I", header[8:12])[0])


def later(folder: Path, admin: Path | None) -> bool:
    """Unregister the checkout of ``admin`` (a ``.git/worktrees/<id>`` folder) and remove its
    temporary ``folder`` in a detached process, when the checkout is large; return whether it
    was (else the caller removes it in place)."""
    if admin is None or entries(admin) <= DETACH_ENTRIES:
        return False
    remover = [sys.executable, "-I", "-S", "-c", _REMOVER, str(folder)]
    try:
        started = subprocess.run(
            ["sh", "-c", _DETACH, "sh", *remover],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of the session's process group: its Ctrl-C
            check=False,
        )
    except OSError:
        return False
    if started.returncode != 0:
        return False
    shutil.rmtree(admin, ignore_errors=True)
    return True
