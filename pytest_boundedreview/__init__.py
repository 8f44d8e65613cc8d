"""pytest-boundedreview: a finite evidence gate for code review."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core.errors import ConfigError, FatalError, GitError, UsageError
from .hookspec import hookimpl

if TYPE_CHECKING:
    from .models import Finding, LaneResult, LoopState, Packet, Report

__version__ = "0.1.0"
_MODELS = ("Finding", "LaneResult", "LoopState", "Packet", "Report")


def __getattr__(name: str) -> Any:
    # The models pull in pydantic; importing them lazily keeps `import pytest_boundedreview`
    # (done by every pytest run, as the plugin is registered) cheap.
    if name in _MODELS:
        from . import models

        return getattr(models, name)
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
