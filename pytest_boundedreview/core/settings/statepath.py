"""The spelling rules of ``state_dir``: what can be told from the value alone, before any
file is looked at (the file system and git are asked in ``change/statedir.py``)."""

from __future__ import annotations

from pathlib import Path

DEFAULT_STATE_DIR = ".bounded-review"
OWN_FOLDER_FIX = (
    "use a folder of the tool's own that pytest does not collect, such as the default "
    f"{DEFAULT_STATE_DIR}"
)


def state_dir_problem(configured: str) -> str | None:
    """Why ``configured`` cannot name the state folder by its spelling alone (absolute, the
    repository root, ``..``, inside ``.git``), or ``None``. What the file system and git say
    (symbolic links, tracked files, pytest's collection) is checked in ``change/statedir.py``
    before the folder is created."""
    path = Path(configured)
    if path.is_absolute():
        return "is an absolute path, not a folder inside the repository (relative to its root)"
    if ".." in path.parts:
        return "climbs out of the repository with '..'"
    if not path.parts:
        return "is the repository root, where the tool's .gitignore of * would hide every new file"
    if path.parts[0] == ".git":
        return "is inside .git, which belongs to git"
    return None


def state_dir_error(configured: str, why: str) -> str:
    """The message of a refused ``state_dir``: the key, its value, why, and the fix."""
    return f"state_dir {configured!r} {why}; {OWN_FOLDER_FIX}"
