"""Where the commands look for what a session wrote."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import GitError
from ..target import git


def default_state_folder() -> Path:
    """``.bounded-review`` at the root of the repository around the working directory (the
    working directory itself outside one)."""
    try:
        return git.open_repo(Path.cwd()).root / ".bounded-review"
    except GitError:
        return Path.cwd() / ".bounded-review"
