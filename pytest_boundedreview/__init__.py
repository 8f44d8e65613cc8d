"""pytest-boundedreview: a finite evidence gate for code review."""

from __future__ import annotations

from .errors import ConfigError, FatalError, GitError, UsageError
from .hookspec import hookimpl
from .models import Finding, LaneResult, LoopState, Packet, Report

__version__ = "0.1.0"

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
