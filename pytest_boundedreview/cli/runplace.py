"""Where ``bounded-review run`` runs pytest: in the working tree, or, when the working tree
differs from the ``staged`` or ``pr`` snapshot under review (unstaged edits, untracked files),
in a checkout of the snapshot of its own (``target/tested.py``), importing the checkout's code
wherever the environment points into the working tree (an editable install), as a base re-run
does (``baseline/basefirst.py``). The user's tree, index and stash are left as they are."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..baseline import basefirst
from ..baseline.childenv import child_env, moved
from ..models.record import record
from ..target import git, tested


@record(frozen=True)
class Place:
    """Where pytest runs: its working folder, its environment, and how the paths of its
    arguments are moved there (the identity in the working tree itself)."""

    cwd: Path | None = None
    env: dict[str, str] | None = None
    checkout: tested.Checkout | None = None

    def args(self, args: Sequence[str]) -> list[str]:
        """``args`` with the paths inside the user's repository moved into the checkout."""
        if self.checkout is None:
            return list(args)
        return moved(args, self.checkout.live, self.checkout.copy)


@contextlib.contextmanager
def place(kind: str) -> Iterator[Place]:
    """Where a review of the ``kind`` snapshot runs its session (see the module's text); a
    checkout made here is removed on any exit."""
    repo = git.open_repo(Path.cwd())
    tree, paths = tested.differing(repo, kind, os.environ)
    if not paths:
        yield Place()
        return
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    print(
        f"bounded-review: the working tree differs from the {kind} snapshot in {shown}: "
        "testing the snapshot in a checkout of its own",
        file=sys.stderr,
        flush=True,
    )
    with tested.checkout(repo, tree) as copy:
        folder = copy.parent / "record"
        folder.mkdir()
        checkout = tested.Checkout(live=repo.root, copy=copy, record=folder)
        # PYTHONPATH entries in the working tree become the checkout's, GIT_* (a hook's
        # GIT_INDEX_FILE) are dropped: the checkout's index is the snapshot
        env = basefirst.prepare(folder, repo.root, copy, child_env((), (repo.root, copy)))
        env[tested.ENV] = checkout.announced()
        here = Path.cwd().resolve().relative_to(repo.root.resolve())
        yield Place(cwd=copy / here, env=env, checkout=checkout)
