"""Whether the lanes phase has anything to do, answered without importing its machinery."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.metadata
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.settings.config import Settings
from ..core.statefile import write_atomic
from ..hookspec import PROJECT

# The names of the installed entry points of the ``boundedreview`` group, and what they were
# read from (see _installed).
OFFERED = "cache/entry-points.json"


def phase_needed(settings: Settings, plugins: Sequence[object], state: Path) -> bool:
    """Whether a lane is configured, a plugin could offer one (an entry point of the
    ``boundedreview`` group not blocked, or a session plugin such as a conftest module with a
    hook), or a loop was ever recorded: its ledger is consulted even when no lane can run now,
    as it may hold blockers of an unchanged snapshot or a stopped loop."""
    if settings.lanes or any((state / "loops").glob("*")):
        return True
    return lanes_offered(settings, plugins, state)


def lanes_offered(settings: Settings, plugins: Sequence[object], state: Path) -> bool:
    """Whether a lane is configured or a plugin could offer one (see :func:`phase_needed`)."""
    if settings.lanes:
        return True
    if any(any(a.startswith("boundedreview_") for a in dir(p)) for p in plugins):
        return True
    blocked = set(settings.blocked_plugins)
    return any(name not in blocked for name in _offered(state / OFFERED))


def _offered(noted: Path) -> list[str]:
    """The entry point names of the group, noted in the state folder with the installed
    distributions' ``entry_points.txt`` files they came from: reading every distribution's
    metadata takes about 10 ms, looking at those files well under 1."""
    stamp = _installed()
    if stamp is not None:
        try:
            seen = json.loads(noted.read_bytes())
            if seen["installed"] == stamp:
                return list(seen["names"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    names = sorted({ep.name for ep in importlib.metadata.entry_points(group=PROJECT)})
    if stamp is not None:
        # A read-only state folder: the metadata is read again next time.
        with contextlib.suppress(OSError):
            write_atomic(noted, json.dumps({"installed": stamp, "names": names}).encode())
    return names


def _installed() -> list[Any] | None:
    """What ``importlib.metadata`` finds entry points in: each ``sys.path`` folder's
    distributions (``*.dist-info``, ``*.egg-info``) with their ``entry_points.txt`` size and
    time; a file on the path by its own. None when a finder other than the standard one lists
    distributions: what it offers cannot be stamped."""
    if any(
        hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder
        for finder in sys.meta_path
    ):
        return None
    stamp: list[Any] = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as found:
                metadata = sorted(
                    e.path for e in found if e.name.endswith((".dist-info", ".egg-info"))
                )
        except NotADirectoryError:
            stamp.append([entry, _stat(entry)])
            continue
        except OSError:
            stamp.append([entry, None])
            continue
        stamp.append([entry, [[m, _stat(os.path.join(m, "entry_points.txt"))] for m in metadata]])
    return stamp


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]


def none_ran(why: str) -> str:
    """The limitation of a review no lane took part in."""
    return f"no reviewer lanes ran ({why}): the gate is deterministic"
