"""Temporary folders of the tool, named after the process that owns them.

A folder is ``bounded-review-<kind>-<pid>n<namespace>-<random>`` in the system temporary folder,
so two runs never share one and a later run can remove what a killed run left (owner gone)
without touching folders of a run still alive. The process-id namespace is part of the name: a
run inside a sandbox with its own process ids (Codex's, a container sharing `/tmp`) cannot see
the owners outside it, nor they its owner, so neither takes the other's folders for abandoned.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

KINDS = ("base", "rerun", "index", "plan", "lane", "agent", "snapshot", "tested")
_NAME = re.compile(r"bounded-review-(?P<kind>[a-z]+)-(?P<pid>\d+)(?:n(?P<ns>\d+))?-")


def _namespace() -> str:
    """This process's process-id namespace (its inode), or "" where there is none to read."""
    try:
        return re.sub(r"\D", "", os.readlink("/proc/self/ns/pid"))
    except OSError:
        return ""


def make(kind: str) -> Path:
    """A new folder of ``kind`` owned by this process."""
    space = _namespace()
    tag = f"{os.getpid()}n{space}" if space else str(os.getpid())
    return Path(tempfile.mkdtemp(prefix=f"bounded-review-{kind}-{tag}-"))


def owner(folder: Path) -> int | None:
    """The pid in a folder name of ours whose owner this process can see (its namespace, or
    none recorded), or ``None`` for any other folder."""
    match = _NAME.match(folder.name)
    if not match or match["kind"] not in KINDS:
        return None
    if match["ns"] is not None and match["ns"] != _namespace():
        return None  # another namespace's process ids: its owner cannot be told from here
    return int(match["pid"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def abandoned(folder: Path) -> bool:
    """A folder of ours whose owner is gone."""
    pid = owner(folder)
    return pid is not None and pid != os.getpid() and not alive(pid)


def sweep() -> list[Path]:
    """Remove abandoned folders of ours; return what was removed."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob("bounded-review-*"):
        if abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
