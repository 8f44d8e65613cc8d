"""Temporary checkouts of the base revision, always removed.

Each checkout is a ``git worktree add --detach`` in a fresh temporary folder named after the
owning process, so concurrent runs never collide and a later run can tell leftovers of a killed
run (owner gone) from a checkout still in use. Hooks never run (see ``git.run``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from . import git

PREFIX = "bounded-review-base-"
_OWNER = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _listed(repo: git.Repo) -> list[Path]:
    out = git.text(["worktree", "list", "--porcelain"], repo.root)
    return [
        Path(line[len("worktree ") :]) for line in out.splitlines() if line.startswith("worktree ")
    ]


def _admin_dir(path: Path) -> Path | None:
    """The ``.git/worktrees/<id>`` folder of a linked checkout, from its ``.git`` file."""
    try:
        pointer = (path / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return Path(pointer.removeprefix("gitdir: ")) if pointer.startswith("gitdir: ") else None


def remove(repo: git.Repo, path: Path) -> None:
    """Remove one of our checkouts and its registration; never raises."""
    admin = _admin_dir(path)
    proc = git.run(["worktree", "remove", "--force", "--force", str(path)], repo.root, check=False)
    if proc.returncode != 0 and admin is not None and admin.parent.name == "worktrees":
        shutil.rmtree(admin, ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    if path.parent.name.startswith(PREFIX):
        shutil.rmtree(path.parent, ignore_errors=True)


def _owner(path: Path) -> int | None:
    match = _OWNER.match(path.parent.name)
    return int(match.group(1)) if match else None


def sweep(repo: git.Repo) -> list[Path]:
    """Remove checkouts of this repository left by runs that died; return what was removed."""
    removed = []
    for path in _listed(repo):
        owner = _owner(path)
        if owner is None or owner == os.getpid() or _alive(owner):
            continue
        if path.exists():
            remove(repo, path)
        else:  # the temporary folder is already gone: drop the registration only
            _drop_registration(repo, path)
        removed.append(path)
    # A run killed between creating its folder and adding the checkout leaves an empty folder.
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        owner = _owner(folder / "tree")
        if owner is not None and not _alive(owner) and not (folder / "tree").exists():
            shutil.rmtree(folder, ignore_errors=True)
    return removed


def _drop_registration(repo: git.Repo, path: Path) -> None:
    common = Path(git.text(["rev-parse", "--path-format=absolute", "--git-common-dir"], repo.root))
    for admin in (common / "worktrees").glob("*"):
        gitdir = admin / "gitdir"
        with contextlib.suppress(OSError):
            if Path(gitdir.read_text(encoding="utf-8").strip()).parent == path:
                shutil.rmtree(admin, ignore_errors=True)


@contextlib.contextmanager
def checkout(repo: git.Repo, commit: str) -> Iterator[Path]:
    """A detached checkout of ``commit`` outside the repository, removed on any exit."""
    sweep(repo)
    parent = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    path = parent / "tree"
    try:
        git.run(["worktree", "add", "--detach", "--quiet", str(path), commit], repo.root)
        yield path
    finally:
        remove(repo, path)
