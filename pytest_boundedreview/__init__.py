"""pytest-boundedreview: a finite evidence gate for code review."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.errors import ConfigError, FatalError, GitError, UsageError
    from .hookspec import hookimpl
    from .models import Finding, LaneResult, LoopState, Packet, Report

__version__ = "0.1.0"
_WHERE = {
    **dict.fromkeys(("ConfigError", "FatalError", "GitError", "UsageError"), "core.errors"),
    "hookimpl": "hookspec",
    **dict.fromkeys(("Finding", "LaneResult", "LoopState", "Packet", "Report"), "models"),
}


def __getattr__(name: str) -> Any:
    # Every pytest run imports this package, as the plugin is registered: it imports nothing
    # until a name is asked for (the models pull in pydantic), and pytest has assertion-
    # rewritten only this file and the plugin module by then (see plugin.py).
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ConfigError",
    "FatalError",
    "Finding",
    "GitError",
    "LaneResult",
    "LoopState",
    "Packet",
    "Report",
    "UsageError",
    "__version__",
    "hookimpl",
]
