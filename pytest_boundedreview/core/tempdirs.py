"""Temporary folders of the tool, named after the process that owns them.

A folder is ``bounded-review-<kind>-<pid>-<random>`` in the system temporary folder, so two
runs never share one and a later run can remove what a killed run left (owner gone) without
touching folders of a run still alive.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

KINDS = ("base", "rerun", "index", "plan", "lane", "agent", "snapshot")
_NAME = re.compile(r"bounded-review-(?P<kind>[a-z]+)-(?P<pid>\d+)-")


def make(kind: str) -> Path:
    """A new folder of ``kind`` owned by this process."""
    return Path(tempfile.mkdtemp(prefix=f"bounded-review-{kind}-{os.getpid()}-"))


def owner(folder: Path) -> int | None:
    """The pid in a folder name of ours, or ``None`` for any other folder."""
    match = _NAME.match(folder.name)
    return int(match["pid"]) if match and match["kind"] in KINDS else None


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
