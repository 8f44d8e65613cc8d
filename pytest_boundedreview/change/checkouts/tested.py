"""The tested tree is the reviewed tree: a checkout of the snapshot for a session to test.

``staged`` reviews the index and ``pr`` reviews ``HEAD``; a working tree with unstaged edits or
untracked files is neither, and tests run on it say nothing about the snapshot. ``bounded-review
run`` then runs the session in a checkout of the snapshot of its own: a linked worktree in a
temporary folder of ours (see ``tempdirs``), on the same branch (its upstream and the loop's
name are the user's), its index and files the snapshot's. The user's working tree, index and
stash are never read into it nor written. :data:`ENV` tells the session there which repository
it stands for: the state folder, the ledger and the report stay the user's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from ...core import tempdirs
from ...core.errors import GitError
from ...core.settings.config import PATH_KEYS, Settings
from ...models.record import record
from .. import git
from ..current import live_tree
from ..freeze import tree_via_temp_index
from ..trees.livetree import differences
from . import worktree

ENV = "BOUNDED_REVIEW_TESTED_CHECKOUT"
KINDS = ("staged", "pr")  # the snapshots the working tree may differ from by its edits alone


@record(frozen=True)
class Checkout:
    """A session's run in a checkout of the snapshot: the user's repository (``live``), the
    checkout (``copy``), the folder its imports of the working tree are reported in, and what
    the checkout could not be given that the working tree's run has (``unfilled``: a
    submodule commit missing locally, build artefacts of sources the snapshot does not hold)."""

    live: Path
    copy: Path
    record: Path
    unfilled: tuple[str, ...] = ()

    def announced(self) -> str:
        """The value of :data:`ENV` that tells the session in ``copy`` what it stands for."""
        data: dict[str, object] = {
            "live": str(self.live),
            "copy": str(self.copy),
            "record": str(self.record),
        }
        if self.unfilled:
            data["unfilled"] = list(self.unfilled)
        return json.dumps(data)


def differing(repo: git.Repo, kind: str, env: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """The tree the ``kind`` snapshot names now and the paths whose content in the working
    tree differs from it (``()`` when none does, or when ``kind`` is not one a checkout
    serves: a local diff is the working tree; a branch without a commit has no checkout)."""
    if kind not in KINDS or repo.head() is None:
        return "", ()
    tree = live_tree(repo, kind, env)
    return tree, differences(repo, tree, tree_via_temp_index(repo, add_all=True))


@contextlib.contextmanager
def checkout(repo: git.Repo, tree: str) -> Iterator[Path]:
    """A checkout of ``tree`` on the current branch (detached when there is none), outside
    the repository, removed on any exit. Git writes only its registration, as for a base
    checkout; hooks never run (see ``git.run``)."""
    path = tempdirs.make("tested") / "tree"
    branch = repo.branch()
    # --force: the branch is checked out in the user's working tree; this checkout only reads it
    where = ["--force", str(path), branch] if branch else ["--detach", str(path), "HEAD"]
    try:
        git.run(["worktree", "add", "--quiet", "--no-checkout", *where], repo.root)
        git.run(["read-tree", "--reset", "-u", tree], path)  # its own index, then its files
        yield path
    finally:
        worktree.remove(repo, path)


def checkout_of(repo: git.Repo, environ: Mapping[str, str]) -> Checkout | None:
    """The run in a checkout that ``environ`` (the session's, as it started) announces for
    ``repo``, when ``repo`` is that checkout of the same repository; ``None`` otherwise."""
    text = environ.get(ENV)
    if not text:
        return None
    try:
        data = json.loads(text)
        live, copy, folder = (Path(data[key]) for key in ("live", "copy", "record"))
        unfilled = data.get("unfilled", [])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not isinstance(unfilled, list) or not all(isinstance(r, str) for r in unfilled):
        return None
    if copy.resolve() != repo.root.resolve():
        return None
    try:
        user = git.open_repo(live)
    except GitError:
        return None
    if user.root.resolve() != live.resolve() or user.common_dir.resolve() != (
        repo.common_dir.resolve()
    ):
        return None  # not the repository this checkout was made from
    return Checkout(live=user.root, copy=repo.root, record=folder, unfilled=tuple(unfilled))


# How livetree.differences names a path whose content alone differs; a file git converts as
# it records it, or a nested repository's uncommitted files, differ in a checkout too.
_BY_CONTENT = ("(not in the snapshot)", "(deleted on disk)", "(changed on disk)")
# The options of `bounded-review run` that a session's own options become, by option key.
_RUN_VALUES = ("base", "mode", "risk", "report", "markdown", "sarif")
_RUN_FLAGS = ("no_lanes", "full", "reset")
_PYTEST_VALUES = ("target", *_RUN_VALUES)


def served(kind: str, untested: tuple[str, ...]) -> bool:
    """Whether a checkout of the ``kind`` snapshot tests exactly what is reviewed, where the
    working tree differs from it in ``untested`` (see livetree.differences)."""
    return kind in KINDS and bool(untested) and all(p.endswith(_BY_CONTENT) for p in untested)


def run_command(kind: str, args: tuple[str, ...]) -> str:
    """The ``bounded-review run`` command that reviews the ``kind`` snapshot as the pytest
    command line ``args`` asks, in a checkout of its own: the review's options as its own,
    the rest after ``--`` for pytest."""
    own: list[str] = ["--target", kind]
    rest: list[str] = []
    words = iter(args)
    for word in words:
        name, equals, value = word.partition("=")
        key = name.removeprefix("--bounded-review-").replace("-", "_")
        if name == "--bounded-review":
            continue
        if not name.startswith("--bounded-review-") or key not in (*_PYTEST_VALUES, *_RUN_FLAGS):
            rest.append(word)
            continue
        if key in _RUN_FLAGS:
            own.append("--" + key.replace("_", "-"))
            continue
        if not equals:
            value = next(words, "")
        if key != "target":
            own += [f"--{key}", value]
    return shlex.join(["bounded-review", "run", *own, *(["--", *rest] if rest else [])])


def refusal(kind: str, untested: tuple[str, ...], args: tuple[str, ...]) -> str | None:
    """Why a session must not run its tests at all, deciding before them: the working tree
    differs from the ``kind`` snapshot by edits a checkout of the snapshot leaves out, so no
    test it runs would be of the tree reviewed; the reason names the command that works."""
    if not served(kind, untested):
        return None
    shown = ", ".join(untested[:5]) + (
        f" and {len(untested) - 5} more" if len(untested) > 5 else ""
    )
    return (
        f"the tree tested is not the tree reviewed: the working tree differs from the "
        f"{kind} snapshot in {shown}, so no test ran; run `{run_command(kind, args)}`, which "
        "tests the snapshot in a checkout of its own and leaves the working tree, the index "
        "and the stash as they are"
    )


def ran_outside(kind: str, live: tuple[str, ...] | None) -> list[str]:
    """Why a session in a checkout of the ``kind`` snapshot did not test the snapshot alone:
    it ran modules ``live`` from the working tree, or (``None``) its imports were not turned
    to the checkout at all."""
    if live is None:
        return [
            f"the session ran in a checkout of the {kind} snapshot without the import redirect "
            "that keeps it from the working tree's code (its sitecustomize did not run: "
            "python -S, or PYTHONPATH replaced): run `bounded-review run` without removing it"
        ]
    if not live:
        return []
    shown = ", ".join(live[:3]) + (" ..." if len(live) > 3 else "")
    return [
        f"the session in a checkout of the {kind} snapshot ran code from the working tree, "
        f"not the snapshot: {shown}; load the project's modules by import, not from a path "
        "of the working tree, or stage or set aside what differs and run the review again"
    ]


def ran_without(kind: str, unfilled: tuple[str, ...], tried: tuple[str, ...]) -> list[str]:
    """Why a session in a checkout of the ``kind`` snapshot did not run as the working tree
    runs: what the checkout was not given (``unfilled``), and the compiled modules it was not
    given (their sources in the working tree are not the snapshot's) that tests imported in
    vain (``tried``)."""
    reasons = [
        f"the checkout of the {kind} snapshot lacks what the tests use: {r}" for r in unfilled
    ]
    if tried:
        shown = ", ".join(tried[:3]) + (" ..." if len(tried) > 3 else "")
        reasons.append(
            f"the session in a checkout of the {kind} snapshot imported compiled modules it was "
            f"not given, as the working tree's sources they are built from are not the "
            f"snapshot's: {shown}; stage or set aside the source edits and build again, then "
            "run the review again"
        )
    return reasons


def outputs_home(settings: Settings, checkout: Checkout | None) -> Settings:
    """``settings`` with the output files (``report``, ``markdown``, ``sarif``) that a session
    in ``checkout`` would write inside it (a relative value is taken from the working folder)
    moved to the same place in the user's tree: the outputs are the user's, the checkout goes."""
    if checkout is None:
        return settings
    copy = Path(os.path.realpath(checkout.copy))
    for key in PATH_KEYS:
        value = getattr(settings, key)
        path = Path(os.path.realpath(value)) if value is not None else None
        if path is not None and path.is_relative_to(copy):
            moved = str(checkout.live / path.relative_to(copy))
            settings = dataclasses.replace(settings, **{key: moved})  # type: ignore[arg-type]
    return settings
