"""The environment a reviewer lane runs with: an allowlist plus the names the lane asks for.

Everything else is scrubbed, so a reviewer never sees tokens or cloud keys it was not given.
Variables that steer git, GitHub Actions or the runner itself are never passed, even if named.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

ALLOWED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TZ",
    "TMPDIR",
    "PYTHONIOENCODING",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
)
_NEVER_PREFIXES = ("GIT_", "ACTIONS_")
_NEVER = {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"}


def forbidden(name: str) -> bool:
    """Whether ``name`` may never reach a reviewer, even when a lane names it."""
    return name.startswith(_NEVER_PREFIXES) or name in _NEVER


def lane_env(
    named: Iterable[str],
    extra: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted variables and those ``named`` by the lane, from ``environ``."""
    source = os.environ if environ is None else environ
    wanted = [*ALLOWED, *named]
    env = {k: source[k] for k in wanted if k in source and not forbidden(k)}
    env.update(extra or {})
    return env
