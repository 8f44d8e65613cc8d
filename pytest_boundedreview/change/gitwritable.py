"""The review writes into the repository's git directory: the snapshot's objects (``git add``
and ``git write-tree`` through a temporary index) and the registration of each base checkout
(``git worktree add``). A sandbox can make that directory read-only while the working tree
stays writable: Codex's ``workspace-write`` does. Checked before the first write, so the
review stops with what to allow instead of failing halfway (or at the base checkout only).

``os.access`` sees a read-only mount (``EROFS``) whoever runs, so the check holds for root as
well; it costs two system calls.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import UsageError
from . import git


def unwritable(repo: git.Repo) -> Path | None:
    """The first folder of the git directory the review writes into that cannot be written."""
    common = repo.common_dir
    folders = [
        common / "objects",
        common / "worktrees" if (common / "worktrees").is_dir() else common,
    ]
    return next((path for path in folders if not os.access(path, os.W_OK)), None)


def codex_roots(repo: git.Repo) -> str:
    """The ``writable_roots`` entry that lets Codex's ``workspace-write`` sandbox write the git
    directory, as written in the repository's ``.codex/config.toml`` (Codex resolves a relative
    entry there against ``.codex/``)."""
    common = repo.common_dir.resolve()
    if common == (repo.root / ".git").resolve():
        return "../.git"
    return str(common)


def require_writable(repo: git.Repo) -> None:
    """Raise :class:`UsageError` naming the folder and what to allow when the review cannot
    write the git directory."""
    path = unwritable(repo)
    if path is None:
        return
    common = repo.common_dir.resolve()
    raise UsageError(
        f"the git directory cannot be written here ({path} is read-only): the review writes its "
        "snapshot's objects and a checkout of the base there. A sandbox makes it read-only "
        "(Codex's `workspace-write` does): allow it, for Codex with `[sandbox_workspace_write]` "
        f'`writable_roots = ["{codex_roots(repo)}"]` in {repo.root / ".codex" / "config.toml"} '
        "(Codex reads it in a trusted project; `bounded-review init --agent codex` prints it) "
        f'or `writable_roots = ["{common}"]` in ~/.codex/config.toml, then start the '
        "agent again; or run the review outside the sandbox. Nothing was reviewed"
    )
