"""Whether the lanes phase has anything to do, answered without importing its machinery."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from pathlib import Path

from ..core.config import Settings
from ..hookspec import PROJECT


def phase_needed(settings: Settings, plugins: Sequence[object], state: Path) -> bool:
    """Whether a lane is configured, a plugin could offer one (an entry point of the
    ``boundedreview`` group not blocked, or a session plugin such as a conftest module with a
    hook), or a loop was ever recorded: its ledger is consulted even when no lane can run now,
    as it may hold blockers of an unchanged snapshot or a stopped loop."""
    if settings.lanes or any((state / "loops").glob("*")):
        return True
    if any(any(a.startswith("boundedreview_") for a in dir(p)) for p in plugins):
        return True
    blocked = set(settings.blocked_plugins)
    return any(ep.name not in blocked for ep in importlib.metadata.entry_points(group=PROJECT))


def none_ran(why: str) -> str:
    """The limitation of a review no lane took part in."""
    return f"no reviewer lanes ran ({why}): the gate is deterministic"
