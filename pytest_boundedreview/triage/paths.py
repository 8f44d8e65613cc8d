"""Whether a path a reviewer cites may be looked up in the snapshot at all.

Checked on the text alone, before anything is read: a path that fails here is never opened.
"""

from __future__ import annotations

import functools
import re

MAX_PATH = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[/\\]")


def path_problem(path: object) -> str | None:
    """Why ``path`` is not a repository-relative path, or ``None`` when it is one."""
    if not isinstance(path, str):
        return f"path must be a string, not {type(path).__name__}"
    return _problem(path)


@functools.lru_cache(maxsize=4096)
def _problem(path: str) -> str | None:
    if not path:
        return "path is empty"
    if len(path) > MAX_PATH:
        return f"path is longer than {MAX_PATH} characters"
    if "\0" in path:
        return "path contains a NUL byte"
    if path.startswith(("/", "\\")):
        return "path is absolute (UNC or rooted); give it relative to the repository root"
    if _DRIVE.match(path):
        return "path has a Windows drive; give it relative to the repository root"
    parts = _SEPARATORS.split(path)
    if ".." in parts:
        return "path leaves the repository (`..`)"
    if any(part.lower() == ".git" for part in parts):
        return "path is inside `.git/`"
    return None


@functools.lru_cache(maxsize=4096)
def normalised(path: str) -> str:
    """A checked path without ``./`` parts or repeated slashes (``./a//b.py`` → ``a/b.py``)."""
    return "/".join(part for part in path.split("/") if part not in ("", "."))
