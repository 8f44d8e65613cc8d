"""The working tree as it is, by content, and what in it differs from a reviewed snapshot.

A session tests the files on disk. When the reviewed snapshot is another tree (the index for
``staged``, ``HEAD`` for ``pr``), a clean review of it would vouch for code no test ran: the
paths that differ are named, and the gate cannot be ``yes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import git
from .byproducts import bytecode
from .indexfile import flagged


def unflag(repo: git.Repo, env: Mapping[str, str], pinned: Sequence[str] = ()) -> None:
    """Clear, in the temporary index ``env`` names, the bits that make ``git add`` trust the
    index over the file: assume-unchanged (``update-index --assume-unchanged``) and
    skip-worktree where the file is on disk (a sparse checkout's absent files stay as they
    are). The working tree is then read by content, whatever the bits hide. ``pinned``: the
    configuration every write of the temporary index runs with."""
    index = env.get("GIT_INDEX_FILE")
    if index is not None and flagged(Path(index)) is False:
        return  # the index marks nothing (read from its bytes, without git)
    listed = git.run([*pinned, "ls-files", "-v", "-z"], repo.root, env=env).stdout
    assumed: list[bytes] = []
    skipped: list[bytes] = []
    absent: list[bytes] = []
    for entry in listed.split(b"\0"):
        if len(entry) < 3:
            continue
        tag, path = entry[:1], entry[2:]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s"):
            on_disk = (repo.root / git.decode(path)).exists()
            (skipped if on_disk else absent).append(path)
    # An absent skip-worktree file is a deletion the bit hides, unless a sparse checkout
    # left it out on purpose (its files stay in every tree it writes).
    if absent and not _sparse(repo):
        skipped += absent
    # One bit a call: update-index applies only the first of its marking options.
    for option, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            request = b"".join(p + b"\0" for p in paths)
            clear = [*pinned, "update-index", option, "-z", "--stdin"]
            git.run(clear, repo.root, env=env, input=request)


def _sparse(repo: git.Repo) -> bool:
    proc = git.run(["config", "--bool", "core.sparseCheckout"], repo.root, check=False)
    return git.decode(proc.stdout).strip() == "true"


def shown(path: str) -> str:
    """A path as text a report can hold: bytes that are not UTF-8 as escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def dirty_submodules(repo: git.Repo) -> tuple[str, ...]:
    """Submodules whose checkout has uncommitted or untracked files: the tests run them, while
    every tree records only the submodule's commit."""
    if not (repo.root / ".gitmodules").exists():
        return ()
    staged = git.decode(git.run(["ls-files", "-s", "-z"], repo.root).stdout)
    links = [e.split("\t", 1)[1] for e in staged.split("\0") if e.startswith("160000 ")]
    if not links:
        return ()
    status = ["status", "--porcelain=v2", "-z", "--ignore-submodules=none", "--", *links]
    found = []
    for entry in git.decode(git.run(status, repo.root).stdout).split("\0"):
        fields = entry.split(" ", 8)  # "1 XY S<c><m><u> modes... hashes... path"
        state = fields[2] if entry.startswith("1 ") and len(fields) == 9 else ""
        if state and _dirty(repo, state, fields[8]):
            found.append(f"{shown(fields[8])} (submodule with uncommitted files)")
    return tuple(found)


def unrecorded_edits(repo: git.Repo, live: str) -> tuple[str, ...]:
    """Nested repositories whose uncommitted files no tree records (the tree ``live``, of the
    working tree, records only a nested repository's commit): submodules, with or without a
    ``.gitmodules`` entry, whose checkout has uncommitted or untracked files, and embedded
    repositories (an untracked folder with its own ``.git``) with any. One ``git ls-tree``
    finds them; only where there are any, one ``git status`` of them, and one more per
    embedded repository."""
    listing = git.run(["ls-tree", "-r", "-z", live], repo.root).stdout
    if b"160000 commit " not in listing:  # the common case, without decoding the listing
        return ()
    links = [
        git.decode(e.split(b"\t", 1)[1]) for e in listing.split(b"\0") if e.startswith(b"160000 ")
    ]
    status = ["--literal-pathspecs", "status", "--porcelain=v2", "-z", "--ignore-submodules=none"]
    entries = iter(git.decode(git.run([*status, "--", *links], repo.root).stdout).split("\0"))
    found = []
    for entry in entries:
        if entry.startswith("2 "):
            next(entries, None)  # a rename's original path follows as its own field
        fields = entry.split(" ", 9 if entry.startswith("2 ") else 8)
        if entry.startswith(("1 ", "2 ")) and len(fields) >= 9:
            if _dirty(repo, fields[2], fields[-1]):
                found.append(f"{shown(fields[-1])} (submodule with uncommitted files)")
        elif entry.startswith("? ") and entry.endswith("/") and _embedded(repo, entry[2:]):
            found.append(f"{shown(entry[2:-1])} (embedded repository with uncommitted files)")
    return tuple(found)


def _embedded(repo: git.Repo, folder: str) -> bool:
    """Whether the untracked ``folder`` is a repository of its own with uncommitted or
    untracked files (one whose state git cannot read counts as such)."""
    path = repo.root / folder
    if not (path / ".git").exists():
        return False
    return _uncommitted(path)


def _dirty(repo: git.Repo, state: str, path: str) -> bool:
    """Whether the submodule at ``path``, of ``git status --porcelain=v2`` state ``state``
    (``S<c><m><u>``), has uncommitted or untracked files beyond the bytecode the tests leave."""
    if not state.startswith("S"):
        return False
    if "M" in state[2:]:
        return True  # a tracked file changed: no need to look further
    return "U" in state[2:] and _uncommitted(repo.root / path)


def _uncommitted(path: Path) -> bool:
    """Whether the repository at ``path`` has uncommitted or untracked files other than the
    bytecode Python writes for its sources (``byproducts.bytecode``, the rule every snapshot
    of the working tree applies): a repository whose own rules do not ignore ``__pycache__``
    is not dirty for the bytecode a review's tests left in it. One whose state git cannot read
    counts as dirty."""
    command = ["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=none"]
    proc = git.run(command, path, check=False)
    if proc.returncode != 0:
        return True
    for entry in git.decode(proc.stdout).split("\0"):
        if not entry:
            continue
        if not entry.startswith("?? ") or not bytecode(path, entry[3:]):
            return True  # a change, or an untracked file that is not a byproduct
    return False


def differences(repo: git.Repo, reviewed: str, live: str) -> tuple[str, ...]:
    """The paths whose content differs between the tree ``reviewed`` and the working tree
    ``live`` (both tree ids), each with what the working tree did to it; bytecode Python
    checks against its source is left out (byproducts.py), tracked or not."""
    if reviewed == live:
        return ()
    out = git.run(["diff", "--name-status", "--no-renames", "-z", reviewed, live], repo.root)
    fields = git.decode(out.stdout).split("\0")
    named = {"A": "not in the snapshot", "D": "deleted on disk", "M": "changed on disk"}
    found = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        if bytecode(repo.root, path):
            continue
        found.append(f"{shown(path)} ({named.get(status[:1], 'differs')})")
    return tuple(found)


_TO_MATCH = {
    "staged": "stage them, or set them aside (git stash push --keep-index --include-untracked)",
    "pr": "commit them, or set them aside (git stash push --include-untracked)",
}
# A file git converts as it records it (recorded.py), and what makes its bytes the recorded ones.
CONVERTED = "recorded with other bytes than on disk"
_UNCONVERT = (
    "a file recorded with other bytes than on disk is converted by git as it records it "
    "(git check-attr filter ident working-tree-encoding -- PATH says by which attribute, and "
    "git config --get-regexp '^filter[.]' by which filter): take the attribute off that file "
    "(in .gitattributes, .git/info/attributes or core.attributesFile), or write the file as "
    "git records it"
)


def untested_reason(kind: str, paths: tuple[str, ...]) -> str:
    """Why a review of the ``kind`` snapshot does not vouch for what the session tested."""
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    converted = any(path.endswith(f"({CONVERTED})") for path in paths)
    moved = not all(path.endswith(f"({CONVERTED})") for path in paths)
    fixes = [_TO_MATCH.get(kind, "make them match")] if moved else []
    fixes += [_UNCONVERT] if converted else []
    return (
        f"the tree tested is not the tree reviewed: the working tree differs from the {kind} "
        f"snapshot in {shown}; {'; '.join(fixes)}, then run the review again"
    )
