"""The state folder is a folder of the tool's own (CONTRACT §2): inside the repository and not
its root, holding no file git tracks or shows, and not one pytest collects. Checked before
anything is created or written there: the tool gives the folder a ``.gitignore`` of ``*``,
which in a folder of the user's would hide their new files from ``git status``."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..core.errors import ConfigError
from ..core.pytestconfig.pytestini import Collection, from_files
from ..core.settings.config import Settings
from ..core.settings.statepath import DEFAULT_STATE_DIR, state_dir_error, state_dir_problem
from ..core.statefile import GITIGNORE
from . import git
from .outputs import check_outputs
from .trees.indexfile import tracked


def checked_state_dir(repo: git.Repo, configured: str, collection: Collection) -> Path:
    """The state folder ``configured`` names (relative to the repository root), not created;
    :class:`ConfigError` (exit 4) naming ``state_dir``, its value, why and the fix when it
    is not a folder of the tool's own."""
    why = _problem(repo, configured, collection)
    if why is not None:
        raise ConfigError(state_dir_error(configured, why))
    return repo.root / configured


def approver(repo: git.Repo, collection: Collection | None = None) -> Callable[[Settings], Path]:
    """The check ``load_settings`` runs on what it read, before anything is written: by the
    rules of ``collection`` (a pytest session's), else of the pytest configuration file found
    from the working folder up to the repository root. The output files (``report``,
    ``markdown``, ``sarif``) are checked too (``outputs.py``)."""

    def approve(settings: Settings) -> Path:
        rules = collection or from_files(Path.cwd(), repo.root)
        state = checked_state_dir(repo, settings.state_dir, rules)
        check_outputs(repo, settings, state)
        return state

    return approve


def _problem(repo: git.Repo, configured: str, collection: Collection) -> str | None:
    spelled = state_dir_problem(configured)
    if spelled is not None:
        return spelled
    root = repo.root.resolve()
    named = root / configured  # as pytest walks to it, through any symbolic link on the way
    real = named.resolve()  # where it is
    if real == root:
        return "is the repository root (through a symbolic link)"
    if not real.is_relative_to(root):
        return f"leads out of the repository through a symbolic link (to {real})"
    for git_folder in {repo.git_dir.resolve(), repo.common_dir.resolve()}:
        if real == git_folder or real.is_relative_to(git_folder):
            return "is inside .git, which belongs to git"
    if real.exists() and not real.is_dir():  # an ignored file (.env): no folder can go there
        where = "" if real == named else f" (through a symbolic link, at {real})"
        return f"is an existing file, not a folder{where}"
    relative = sorted({named.relative_to(root).as_posix(), real.relative_to(root).as_posix()})
    shown = _shown_files(repo, relative)
    if shown:
        return (
            f"holds files git tracks or shows ({shown}): the tool's .gitignore of * there would "
            "hide new files from git status and git add -A"
        )
    walked = [named, real]
    if Path(configured) == Path(DEFAULT_STATE_DIR):
        # The contract's own name, where pytest finds nothing to collect (JSON files only): a
        # project whose norecursedirs leaves out hidden folders keeps its default. Where a
        # symbolic link takes it still counts.
        walked = [real] if real != named else []
    for path in walked:
        if collection.collects(path):
            where = "" if path == named else f" (through a symbolic link, at {path})"
            return (
                f"is a folder pytest collects{where}, by the testpaths and norecursedirs of "
                f"{collection.source}: the tool's files would sit among the tests"
            )
    return None


def _shown_files(repo: git.Repo, paths: list[str]) -> str:
    """Up to three files under ``paths`` that git tracks, or would show as untracked."""
    if _none_shown(repo, paths):
        return ""
    spec = [f":(literal){path}" for path in paths]
    proc = git.run(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *spec],
        repo.root,
        check=False,
    )
    if proc.returncode != 0:  # git could not say: the folder is not known to be the tool's
        return "git ls-files failed: " + git.decode(proc.stderr).strip()[:200]
    files = sorted({name for name in git.decode(proc.stdout).split("\0") if name})
    return ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")


def _none_shown(repo: git.Repo, paths: list[str]) -> bool:
    """Whether git can show nothing under ``paths``, told without a git process: a folder the
    tool made (its ``.gitignore`` of ``*``, a regular file, hides everything in it from ``git
    status``; not a repository of its own) in which a small index tracks nothing (see
    indexfile.py). False when it cannot be told that way: git is asked."""
    if len(paths) != 1:  # a symbolic link on the way
        return False
    folder = repo.root / paths[0]
    ignore = folder / ".gitignore"
    try:
        # git reads neither a .gitignore that is a symbolic link nor one in a repository of
        # its own (the folder then shows as untracked, whatever it holds)
        if folder.is_symlink() or os.path.lexists(folder / ".git"):
            return False
        if not stat.S_ISREG(ignore.lstat().st_mode) or ignore.read_text("utf-8") != GITIGNORE:
            return False
    except (OSError, UnicodeDecodeError):
        return False
    known = tracked(repo.index)
    if known is None:
        return False
    # a file in the folder, or a submodule named as it
    return not any(name == paths[0] or name.startswith(f"{paths[0]}/") for name in known)
