"""Whether any reviewer lane could run, answered without importing the lanes machinery."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence

from ..core.config import Settings
from ..hookspec import PROJECT


def lanes_possible(settings: Settings, plugins: Sequence[object]) -> bool:
    """Whether a lane is configured or a plugin could offer one: an entry point of the
    ``boundedreview`` group not blocked, or a session plugin (a conftest module) with a hook."""
    if settings.lanes:
        return True
    if any(any(a.startswith("boundedreview_") for a in dir(p)) for p in plugins):
        return True
    blocked = set(settings.blocked_plugins)
    return any(ep.name not in blocked for ep in importlib.metadata.entry_points(group=PROJECT))


def none_ran(why: str) -> str:
    """The limitation of a review no lane took part in."""
    return f"no reviewer lanes ran ({why}): the gate is deterministic"
