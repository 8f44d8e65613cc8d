"""Base checkouts kept between runs, for ``reuse_base_checkout = true``.

Each repository gets a folder in the user's cache folder
(``$XDG_CACHE_HOME/bounded-review/checkouts/<key>``, by default under ``~/.cache``) holding at
most :data:`KEEP` checkouts, one per base commit and named after it, so a later cold run skips
``git worktree add`` and finds the base's bytecode and pytest's rewritten modules in place.

A kept checkout is used only for its own commit, and only by the run that holds the folder's
lock. Before each use it is checked out afresh at its commit (detached, whatever branch someone
switched it to, which stays as it was) and cleaned of every untracked or ignored file except
``__pycache__`` folders inside the commit's own folders, so what a previous run changed or left
there never reaches this one. A run that finds the lock taken, or no home folder to keep them
in, uses a temporary checkout. With the setting off, the next run removes the repository's kept
checkouts.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from .. import git
from . import worktree

KEEP = 3
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def cache_root() -> Path | None:
    """Where kept checkouts of every repository live; ``None`` without a home folder."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    try:
        home = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no HOME and no passwd entry for this user
        return None
    return home / "bounded-review" / "checkouts"


def folder(repo: git.Repo) -> Path | None:
    """The folder of ``repo``'s kept checkouts, keyed by its git folder."""
    root = cache_root()
    if root is None:
        return None
    return root / hashlib.sha256(os.fsencode(repo.common_dir.resolve())).hexdigest()[:16]


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[bool]:
    """Try to take ``home``'s lock without waiting; yield whether this run holds it."""
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)  # releases the lock


def _kept(home: Path) -> list[Path]:
    """The kept checkouts in ``home``, most recently used first."""
    paths = [p for p in home.iterdir() if _COMMIT.fullmatch(p.name) and p.is_dir()]
    return sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)


def _ours(repo: git.Repo, path: Path) -> bool:
    """Whether ``path`` is a checkout registered in ``repo``."""
    admin = worktree.admin_dir(path)
    return (
        admin is not None
        and admin.is_dir()
        and admin.resolve().parent == (repo.common_dir / "worktrees").resolve()
    )


def _ready(repo: git.Repo, path: Path, commit: str) -> bool:
    """Whether ``path`` is a checkout of ``repo`` that was brought back to ``commit``,
    exactly as committed (bar ``__pycache__`` folders)."""
    if not _ours(repo, path):
        return False
    steps = (
        ["checkout", "--quiet", "--force", "--detach", commit],  # never moves a branch
        ["clean", "-ffdxq", "-e", "__pycache__"],
    )
    if not all(git.run(step, path, check=False).returncode == 0 for step in steps):
        return False
    _drop_bytecode_only_folders(path)
    return True


def _drop_bytecode_only_folders(path: Path) -> None:
    """Remove the folders the clean kept for their ``__pycache__`` alone: folders the commit
    does not have, which would otherwise import as namespace packages."""
    for top, folders, files in os.walk(path, topdown=False):
        here = Path(top)
        if here == path or ".git" in here.relative_to(path).parts:
            continue
        if not files and all(
            name == "__pycache__" or not (here / name).exists() for name in folders
        ):
            shutil.rmtree(here, ignore_errors=True)


@contextlib.contextmanager
def checkout(repo: git.Repo, commit: str) -> Iterator[Path]:
    """A checkout of ``commit`` kept for later runs; a temporary one (removed on exit) when
    another run holds the kept ones."""
    home = folder(repo)
    if home is None:
        with worktree.checkout(repo, commit) as path:
            yield path
        return
    with _locked(home) as held:
        if not held:
            with worktree.checkout(repo, commit) as path:
                yield path
            return
        path = home / commit
        if not _ready(repo, path, commit):
            if _ours(repo, path):
                worktree.remove(repo, path)
            shutil.rmtree(path, ignore_errors=True)
            _drop_missing(repo)  # a registration left without its folder blocks the add
            add = [*worktree.PARALLEL, "worktree", "add", "--detach", "--quiet", str(path), commit]
            git.run(add, repo.root)
        os.utime(path)  # most recently used
        for old in _kept(home)[KEEP:]:
            worktree.remove(repo, old)
        yield path


def _drop_missing(repo: git.Repo) -> list[Path]:
    """Drop ``repo``'s registrations of kept checkouts whose folder is gone (a cleared
    cache); return their paths."""
    ours = cache_root()
    if ours is None:
        return []
    gone = [
        (path, admin)
        for path, admin in worktree.registered(repo)
        if path.is_relative_to(ours) and not path.exists()
    ]
    for _, admin in gone:
        shutil.rmtree(admin, ignore_errors=True)
    return [path for path, _ in gone]


def sweep(repo: git.Repo, keep: bool) -> list[Path]:
    """Drop the registrations of kept checkouts whose folder is gone and, unless ``keep``,
    remove every kept checkout of ``repo``. Return the checkouts dropped."""
    dropped = _drop_missing(repo)
    home = folder(repo)
    if not keep and home is not None and home.is_dir():
        with _locked(home) as held:
            for path in _kept(home) if held else []:
                worktree.remove(repo, path)
                dropped.append(path)
    return dropped
