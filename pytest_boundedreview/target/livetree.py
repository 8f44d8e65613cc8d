"""The working tree as it is, by content, and what in it differs from a reviewed snapshot.

A session tests the files on disk. When the reviewed snapshot is another tree (the index for
``staged``, ``HEAD`` for ``pr``), a clean review of it would vouch for code no test ran: the
paths that differ are named, and the gate cannot be ``yes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from . import git


def unflag(repo: git.Repo, env: Mapping[str, str], pinned: Sequence[str] = ()) -> None:
    """Clear, in the temporary index ``env`` names, the bits that make ``git add`` trust the
    index over the file: assume-unchanged (``update-index --assume-unchanged``) and
    skip-worktree where the file is on disk (a sparse checkout's absent files stay as they
    are). The working tree is then read by content, whatever the bits hide. ``pinned``: the
    configuration every write of the temporary index runs with."""
    listed = git.run([*pinned, "ls-files", "-v", "-z"], repo.root, env=env).stdout
    assumed: list[bytes] = []
    skipped: list[bytes] = []
    for entry in listed.split(b"\0"):
        if len(entry) < 3:
            continue
        tag, path = entry[:1], entry[2:]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s") and (repo.root / git.decode(path)).exists():
            skipped.append(path)
    # One bit a call: update-index applies only the first of its marking options.
    for option, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            request = b"".join(p + b"\0" for p in paths)
            clear = [*pinned, "update-index", option, "-z", "--stdin"]
            git.run(clear, repo.root, env=env, input=request)


def _bytecode(path: str) -> bool:
    """Compiled files Python writes next to the sources when a project does not ignore them:
    never reviewed code, so never a difference between what was tested and what was reviewed."""
    parts = PurePosixPath(path)
    return "__pycache__" in parts.parts or parts.suffix in (".pyc", ".pyo")


def differences(repo: git.Repo, reviewed: str, live: str) -> tuple[str, ...]:
    """The paths whose content differs between the tree ``reviewed`` and the working tree
    ``live`` (both tree ids), each with what the working tree did to it; bytecode the working
    tree adds is left out."""
    if reviewed == live:
        return ()
    out = git.run(["diff", "--name-status", "--no-renames", "-z", reviewed, live], repo.root)
    fields = git.decode(out.stdout).split("\0")
    named = {"A": "not in the snapshot", "D": "deleted on disk", "M": "changed on disk"}
    found = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        if status == "A" and _bytecode(path):
            continue
        found.append(f"{path} ({named.get(status[:1], 'differs')})")
    return tuple(found)


_TO_MATCH = {
    "staged": "stage them, or set them aside (git stash push --keep-index --include-untracked)",
    "pr": "commit them, or set them aside (git stash push --include-untracked)",
}


def untested_reason(kind: str, paths: tuple[str, ...]) -> str:
    """Why a review of the ``kind`` snapshot does not vouch for what the session tested."""
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    fix = _TO_MATCH.get(kind, "make them match")
    return (
        f"the tree tested is not the tree reviewed: the working tree differs from the {kind} "
        f"snapshot in {shown}; {fix}, then run the review again"
    )
