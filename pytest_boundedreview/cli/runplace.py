"""Where ``bounded-review run`` runs pytest: in the working tree, or, when the working tree
differs from the ``staged`` or ``pr`` snapshot under review (unstaged edits, untracked files),
in a checkout of the snapshot of its own (``change/checkouts/tested.py``), importing the
checkout's code wherever the environment points into the working tree (an editable install), as
a base re-run does (``baseline/checkout/basefirst.py``). The checkout is given what a base
checkout is given, by the same plan (``baseline/checkout/artefacts.py``, ``basecontent.py``):
submodules at the snapshot's commits, the Hypothesis example database, and build artefacts whose
sources the working tree holds as the snapshot does. The user's tree, index and stash are left as
they are."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..baseline.checkout import artefacts, basefirst, copyin, fillin
from ..baseline.reruns.childenv import child_env, moved
from ..change import git
from ..change.checkouts import tested
from ..models.record import record


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
        here = Path.cwd().resolve().relative_to(repo.root.resolve())
        # planned for where the session starts, as a base checkout is for where its re-run does
        given = artefacts.plan(repo, tree, repo.root / here, None, whose=f"the {kind} snapshot")
        unfilled = _fill(given, repo.root, copy)
        checkout = tested.Checkout(live=repo.root, copy=copy, record=folder, unfilled=unfilled)
        # PYTHONPATH entries in the working tree become the checkout's, GIT_* (a hook's
        # GIT_INDEX_FILE) are dropped: the checkout's index is the snapshot; an import of a
        # compiled module withheld from it is noted (see tested.ran_without)
        start = child_env((), (repo.root, copy))
        env = basefirst.prepare(folder, repo.root, copy, start, given.withheld)
        env[tested.ENV] = checkout.announced()
        yield Place(cwd=copy / here, env=env, checkout=checkout)


def _fill(given: artefacts.Preparation, live: Path, copy: Path) -> tuple[str, ...]:
    """Give ``copy`` what ``given`` plans, as a base checkout's child does (submodules first:
    compiled modules may be copied into them); what it could not give, said for the report.
    Its set-up command is left out: the snapshot is tested as the working tree is."""
    unfilled = list(given.uncertain)
    if given.held.needed:
        try:
            fillin.fill(str(copy), json.loads(given.held.spec()))
        except SystemExit as exc:  # fillin's way of naming what failed
            unfilled.append(str(exc.code))
    copyin.copy_in(str(live), str(copy), given.copies)
    return tuple(unfilled)
