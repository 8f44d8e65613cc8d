"""Temporary checkouts of the base revision, always removed.

Each checkout is a ``git worktree add --detach`` in a fresh temporary folder named after the
owning process (see ``tempdirs``), so concurrent runs never collide and a later run can tell
leftovers of a killed run (owner gone) from a checkout still in use. Hooks never run (see
``git.run``).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from ...core import tempdirs
from .. import git
from . import discard


def _listed(repo: git.Repo) -> list[Path]:
    if not (repo.common_dir / "worktrees").is_dir():
        return []  # no linked checkout at all: nothing for git to list
    out = git.text(["worktree", "list", "--porcelain"], repo.root)
    prefix = "worktree "
    return [Path(line[len(prefix) :]) for line in out.splitlines() if line.startswith(prefix)]


def admin_dir(path: Path) -> Path | None:
    """The ``.git/worktrees/<id>`` folder of a linked checkout, from its ``.git`` file."""
    try:
        pointer = (path / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return Path(pointer.removeprefix("gitdir: ")) if pointer.startswith("gitdir: ") else None


def remove(repo: git.Repo, path: Path) -> None:
    """Remove one of our checkouts and its registration; never raises. A large one is
    unregistered now and its files removed after the session (see discard.py)."""
    admin = admin_dir(path)
    worktrees = (repo.common_dir / "worktrees").resolve()
    ours = admin is not None and admin.parent.resolve() == worktrees
    if ours and tempdirs.owner(path.parent) is not None and discard.later(path.parent, admin):
        return
    proc = git.run(["worktree", "remove", "--force", "--force", str(path)], repo.root, check=False)
    if proc.returncode != 0 and admin is not None and admin.parent.name == "worktrees":
        shutil.rmtree(admin, ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    if tempdirs.owner(path.parent) is not None:
        shutil.rmtree(path.parent, ignore_errors=True)


def registered(repo: git.Repo) -> list[tuple[Path, Path]]:
    """``repo``'s linked checkouts, each with its ``.git/worktrees/<id>`` folder, read from
    those folders (no git process; a checkout whose folder is gone is still listed)."""
    found = []
    for admin in (repo.common_dir / "worktrees").glob("*"):
        with contextlib.suppress(OSError):
            path = Path((admin / "gitdir").read_text(encoding="utf-8").strip()).parent
            found.append((path, admin))
    return found


def _drop_registration(repo: git.Repo, path: Path) -> None:
    for checkout, admin in registered(repo):
        if checkout == path:
            shutil.rmtree(admin, ignore_errors=True)


def sweep(repo: git.Repo) -> list[Path]:
    """Remove what runs that died left behind: this repository's checkouts of ours, then
    abandoned temporary folders of ours. Return the checkouts removed."""
    removed = []
    for path in _listed(repo):
        if not tempdirs.abandoned(path.parent):
            continue
        if path.exists():
            remove(repo, path)
        else:  # the temporary folder is already gone: drop the registration only
            _drop_registration(repo, path)
        removed.append(path)
    # Abandoned folders of any repository go too; a checkout registered in another repository
    # then shows there as missing, and that repository's next sweep drops the registration.
    tempdirs.sweep()
    return removed


# Git writes the files of a checkout with as many workers as there are cores: a checkout of
# 30,000 small files took 2.5-5.6 s here instead of 14-35 s written one by one (the kernel time
# of writing them one at a time, not the CPU, dominates). Files a filter converts are still
# written in order by git itself; a git before 2.32 ignores the setting.
PARALLEL = ("-c", "checkout.workers=0")


def add_command(repo: git.Repo, commit: str) -> tuple[Path, list[str]]:
    """Where a detached checkout of ``commit`` outside the repository will be, and the git
    command that makes it, for a caller that runs it in the background (and removes the path
    with :func:`remove` on every exit, whether the command ran or not)."""
    path = tempdirs.make("base") / "tree"
    add = ["-C", str(repo.root), *PARALLEL, "worktree", "add", "--detach", "--quiet"]
    add += [str(path), commit]
    return path, git.command(add)


@contextlib.contextmanager
def checkout(repo: git.Repo, commit: str) -> Iterator[Path]:
    """A detached checkout of ``commit`` outside the repository, removed on any exit."""
    path = tempdirs.make("base") / "tree"
    try:
        add = [*PARALLEL, "worktree", "add", "--detach", "--quiet", str(path), commit]
        git.run(add, repo.root)
        yield path
    finally:
        remove(repo, path)
