"""Resolve what is reviewed and freeze it: snapshot identity, raw diff and scope.

The snapshot tree of a working tree or of the index is written through a temporary index file
seeded with a copy of the user's index, so the user's index is never written (``git add`` and
``git write-tree`` both rewrite the index they work on).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from ..core import tempdirs
from ..core.errors import UsageError
from ..models.record import record
from . import git
from .base import REQUESTED, named_base, named_merge_base, pr_base
from .gitwritable import require_writable
from .scope import Scope, parse_scope
from .trees.byproducts import leave_out
from .trees.livetree import differences, dirty_submodules, unflag
from .trees.recorded import Converted

TargetKind = Literal["pr", "local-diff", "staged", "plan"]
RequestedKind = Literal["auto", "pr", "local-diff", "staged"]

# Options that pin the diff's shape whatever the user's diff configuration says.
DIFF_OPTIONS = (
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "-M",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
    "--ignore-submodules=none",
)


def diff_of(repo: git.Repo, old: str, new: str) -> tuple[str, str]:
    """The diff from ``old`` to ``new`` as raw records (``--raw -z``: exact paths) and as a
    unified diff (line numbers), from one git process."""
    return _split_diff(git.run(_diff_args(old, new), repo.root).stdout)


def _diff_args(old: str, new: str) -> list[str]:
    return ["diff", "--raw", "-z", "--patch", *DIFF_OPTIONS, old, new]


def _split_diff(out: bytes) -> tuple[str, str]:
    """Asked for both, git writes the raw records, one NUL (the record terminator as a
    separator), then the patch."""
    raw, separator, patch = out.partition(b"\0\0")  # no path is empty: only the separator
    if not separator:  # nothing changed, or records without a patch
        return git.decode(out), ""
    return git.decode(raw + b"\0"), git.decode(patch)


@record(frozen=True)
class Target:
    """A frozen review target. ``revision`` is ``tree:<id>`` of the reviewed content."""

    kind: TargetKind
    base: str
    base_commit: str | None
    head: str | None
    tree: str
    diff: str
    scope: Scope
    committed: bool = False  # the reviewed tree is HEAD's and the working tree is clean
    identity: str | None = None  # a plan's ``sha256:<hex>``; code targets are their tree
    # Paths whose content on disk, which the session tests, differs from the reviewed tree.
    untested: tuple[str, ...] = ()
    # Which kind was chosen and why, and what it is reviewed against (the report's header).
    reason: str = ""

    @property
    def revision(self) -> str:
        return self.identity or f"tree:{self.tree}"

    @property
    def empty(self) -> bool:
        return len(self.scope) == 0

    @property
    def files(self) -> list[str]:
        return list(self.scope.paths)


# The blobs a caller reads once the target is frozen, named by its base commit and tree.
BlobNames = Callable[[str, str], Sequence[str]]


class _PrAhead:
    """A ``pr`` target's merge base and diff, asked before the target's kind is known: the
    merge base beside the snapshot's ``git add``, the diff from it to HEAD's tree (and the
    caller's ``blobs``) beside its ``git write-tree``. Only for a base named without asking
    git; stopped when the snapshot turns out to be a local diff."""

    def __init__(
        self, repo: git.Repo, name: str, head: str, head_tree: str, blobs: BlobNames | None
    ) -> None:
        self.repo, self.name, self.head_tree, self._blobs = repo, name, head_tree, blobs
        self.merge_base: str | None = None
        self._settled = False
        self._diff: git.Started | None = None
        self._batch: git.Batch | None = None
        self._merge = git.Started(["merge-base", f"{name}^{{commit}}", head], repo.root)

    def advance(self) -> None:
        """Once the merge base is known, start the diff from it; a merge base still being
        worked out is not waited for (the snapshot may be a local diff, which needs none)."""
        if not self._merge.running():
            self._settle()

    def _settle(self) -> None:
        if self._settled:
            return
        self._settled = True
        proc = self._merge.result(check=False)
        if proc.returncode == 0:  # else the usual path asks again, for its error
            self.merge_base = git.decode(proc.stdout).strip()
            args = _diff_args(self.merge_base, self.head_tree)
            self._diff = git.Started(args, self.repo.root)
            if self._blobs is not None:
                names = self._blobs(self.merge_base, self.head_tree)
                self._batch = git.Batch(self.repo.root, names)

    def merge_base_now(self) -> str | None:
        """The merge base, waited for; ``None`` when git found none (asked again for its
        error)."""
        self._settle()
        return self.merge_base

    def pr(self) -> tuple[str, str, tuple[str, str]] | None:
        """The base's name, its merge base and the diff from it (the blobs read too,
        remembered for the caller's reads); ``None`` when the merge base was not found."""
        self._settle()
        if self.merge_base is None or self._diff is None:
            return None
        diff = _split_diff(self._diff.result().stdout)
        if self._batch is not None:
            self._batch.result()
        return self.name, self.merge_base, diff

    def cancel(self) -> None:
        for process in (self._merge, self._diff, self._batch):
            if process is not None:
                process.cancel()


def _ahead(
    repo: git.Repo,
    requested: RequestedKind,
    named: tuple[str, str] | None,
    at_head: tuple[str | None, str],
    blobs: BlobNames | None,
) -> _PrAhead | None:
    head, head_tree = at_head
    if requested not in ("auto", "pr") or head is None or named is None:
        return None
    if named[0].startswith("-"):
        return None
    return _PrAhead(repo, named[0], head, head_tree, blobs)


def _diff_beside(
    repo: git.Repo, base_commit: str | None, tree: str, blobs: BlobNames | None
) -> tuple[str, str]:
    """The diff from ``base_commit`` to ``tree``, the caller's ``blobs`` read beside it."""
    batch = None
    if blobs is not None and base_commit is not None:
        batch = git.Batch(repo.root, blobs(base_commit, tree))
    try:
        diff = diff_of(repo, base_commit or repo.empty_tree(), tree)
        if batch is not None:
            batch.result()
        return diff
    finally:
        if batch is not None:
            batch.cancel()


def tree_via_temp_index(
    repo: git.Repo,
    *,
    add_all: bool,
    source: Path | None = None,
    between: Callable[[], None] | None = None,
) -> str:
    """Write the tree of an index (``add_all``: of the working tree, by content, whatever
    assume-unchanged or skip-worktree bits hide, without the bytecode running the tests leaves
    in it, see byproducts.py) without touching it (``between``: called once the working tree
    is added, before its tree is written)."""
    folder = tempdirs.make("index")
    try:
        temp_index = folder / "index"
        user_index = source or repo.index
        if user_index.exists():
            # A copy keeps the stat cache, so `git add -A` only rehashes changed files, and keeps
            # the timestamp, so git still re-checks entries written in the same second ("racy").
            shutil.copy2(user_index, temp_index)
        env = {"GIT_INDEX_FILE": str(temp_index)}
        pinned = ["-c", "core.splitIndex=false", "-c", "core.fsmonitor=false"]
        if add_all:
            unflag(repo, env, pinned)
            added = git.run([*pinned, "add", "--all", "--verbose", "--", ":/"], repo.root, env=env)
            leave_out(repo, env, pinned, added.stdout, user_index)
        if between is not None:
            between()
        return git.text([*pinned, "write-tree"], repo.root, env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tree_with(
    repo: git.Repo, base: str | None, path: str, blob: str | None, kind: str = "index"
) -> str:
    """The tree of ``base`` (a commit or tree; empty when ``None``) with ``path`` set to
    ``blob``, or removed when ``blob`` is ``None``, written through a temporary index."""
    folder = tempdirs.make(kind)
    try:
        env = {"GIT_INDEX_FILE": str(folder / "index")}
        if base is not None:
            git.run(["read-tree", base], repo.root, env=env)
        git.run(["update-index", "--force-remove", "--", path], repo.root, env=env)
        if blob is not None:
            info = f"100644,{blob},{path}"
            git.run(["update-index", "--add", "--cacheinfo", info], repo.root, env=env)
        return git.text(["write-tree"], repo.root, env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def hook_index(repo: git.Repo, env: Mapping[str, str]) -> Path | None:
    """The index a running ``git commit`` is about to record, when called from its hook.

    ``git commit -a`` and ``git commit <paths>`` build the commit in a temporary index named
    by ``GIT_INDEX_FILE`` (relative paths are relative to the work tree's top, where hooks run);
    that file, not ``.git/index``, is what is staged.
    """
    value = env.get("GIT_INDEX_FILE")
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else repo.root / path


def freeze(
    repo: git.Repo,
    requested: RequestedKind,
    base: str | None = None,
    env: Mapping[str, str] | None = None,
    base_origin: str = REQUESTED,
    at_head: tuple[str, str] | None = None,
    blobs: BlobNames | None = None,
) -> Target:
    """Resolve ``requested`` to a concrete target and freeze its snapshot and scope
    (``at_head``: HEAD's commit and tree, when already read; ``blobs``: those the caller reads
    next at the base commit and in the reviewed tree, read beside the diff, for
    :func:`git.read_objects` to answer from memory)."""
    env = os.environ if env is None else env
    require_writable(repo)  # before the first object is written, and before any base checkout
    head, head_tree = at_head or repo.head_and_tree()
    head_tree = head_tree or repo.empty_tree()
    kind: TargetKind
    diff: tuple[str, str] | None = None
    named = named_base(base, env, base_origin)
    ahead = _ahead(repo, requested, named, (head, head_tree), blobs)
    converted = None
    try:
        advance = None if ahead is None else ahead.advance
        live_tree = tree = tree_via_temp_index(repo, add_all=True, between=advance)
        converted = Converted(repo, live_tree)  # asked beside the rest
        if requested == "staged":
            kind, tree = (
                "staged",
                tree_via_temp_index(repo, add_all=False, source=hook_index(repo, env)),
            )
            base_name, base_commit = _against(repo, base, base_origin, head, ahead)
        elif requested == "local-diff" or (requested == "auto" and tree != head_tree):
            kind = "local-diff"
            base_name, base_commit = _against(repo, base, base_origin, head, ahead)
        else:
            kind, tree = "pr", head_tree
            if head is None:
                raise UsageError("target `pr` needs at least one commit; this branch has none")
            found = None if ahead is None else ahead.pr()
            if found is not None:
                base_name, base_commit, diff = found
            else:
                base_name, base_commit = pr_base(repo, base, env, base_origin, head)
        raw, patch = diff or _diff_beside(repo, base_commit, tree, blobs)
        # what git records of a file may not be its bytes on disk (a clean filter, ...)
        untested = differences(repo, tree, live_tree) + converted.unlike()
    finally:
        for started in (ahead, converted):
            if started is not None:
                started.cancel()
    untested += dirty_submodules(repo)
    return Target(
        kind=kind,
        base=base_name,
        base_commit=base_commit,
        head=head,
        tree=tree,
        diff=patch,
        scope=parse_scope(raw, patch),
        committed=head is not None and tree == head_tree and not untested,
        untested=untested,
        reason=why(requested, kind, base_name, base_commit),
    )


def _against(
    repo: git.Repo, base: str | None, origin: str, head: str | None, ahead: _PrAhead | None
) -> tuple[str, str | None]:
    """What a working tree or staged tree is reviewed against: ``HEAD`` when no base is named,
    else the named base's merge base with HEAD (asked already when the snapshot could have
    been a ``pr``), never its tip: what the base gained after the branch point is not the
    change's."""
    if not base:
        return "HEAD", head
    if ahead is not None and ahead.name == base:
        found = ahead.merge_base_now()
        if found is not None:
            return base, found
    return base, named_merge_base(repo, base, origin, head)


_WHAT = {
    "local-diff": "the working tree against",
    "staged": "the staged tree against",
    "pr": "the commits since",
}


def why(requested: RequestedKind, kind: TargetKind, base: str, commit: str | None) -> str:
    """The header's line on the target: which kind, why, and against what."""
    against = "HEAD" if base == "HEAD" else f"merge-base({base}, HEAD)"
    if commit is not None and base != "HEAD":
        against += f" = {commit[:12]}"
    what = f"{_WHAT[kind]} {against}"
    if requested != "auto":
        return f"{kind} as asked: reviewing {what}"
    if kind == "pr":
        return f"no uncommitted changes: reviewing {what}"
    return f"uncommitted changes: reviewing {what}"
