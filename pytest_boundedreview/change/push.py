"""What a push carries: each pushed ref, the tree it sends and the base of the range it adds.

git's pre-push hook reads ``<local ref> <local sha> <remote ref> <remote sha>`` lines on stdin;
the pre-commit framework reads them itself and passes the first ref with something to push as
``PRE_COMMIT_*`` variables. The base of a pushed range is the merge-base of the pushed commit
with what the remote ref holds now, or, for a ref the remote does not have yet, with the
configured review base: a review of the same tree against that base is a review of the push.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..core.errors import GitError, UsageError
from ..models.record import record
from . import git

_ZERO = re.compile(r"0+")
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


@record(frozen=True)
class PushedRef:
    """One line of what git pushes; ``remote_sha`` is ``None`` for a ref the remote lacks."""

    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str | None


@record(frozen=True)
class PushRange:
    """A pushed ref with something new: the tree it sends and the base of its range, with the
    name a review passes as its base to review exactly this range."""

    ref: PushedRef
    tree: str
    base: str
    base_name: str


def parse(text: str) -> list[PushedRef]:
    """git's pre-push lines; a line that is not one is a :class:`UsageError` naming it."""
    pushed = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4 or not all(_SHA.fullmatch(p) for p in (parts[1], parts[3])):
            raise UsageError(
                f"--pushed-refs: {line!r} is not a git pre-push line "
                "(<local ref> <local sha> <remote ref> <remote sha>)"
            )
        local_ref, local_sha, remote_ref, remote_sha = parts
        new = _ZERO.fullmatch(remote_sha) is not None
        pushed.append(PushedRef(local_ref, local_sha, remote_ref, None if new else remote_sha))
    return pushed


def from_pre_commit(repo: git.Repo, env: Mapping[str, str]) -> list[PushedRef] | None:
    """The ref the pre-commit framework says is pushed, or ``None`` when it says nothing.

    pre-commit names the remote's commit as ``PRE_COMMIT_FROM_REF`` when the remote ref exists,
    and otherwise the parent of the first commit no remote has (or nothing, for a push of the
    whole history). Only a from-ref that is the remote-tracking ref's commit is taken as the
    remote's; any other push is of a new ref."""
    to_ref, local = env.get("PRE_COMMIT_TO_REF"), env.get("PRE_COMMIT_LOCAL_BRANCH")
    remote_ref = env.get("PRE_COMMIT_REMOTE_BRANCH") or ""
    if not (to_ref or local or env.get("PRE_COMMIT_REMOTE_NAME")):
        return None
    local_sha = repo.resolve(to_ref or local or "HEAD")
    if local_sha is None:
        raise GitError(f"the pushed commit {to_ref or local} is not in this repository")
    from_ref = env.get("PRE_COMMIT_FROM_REF")
    tracking = _tracking(repo, env.get("PRE_COMMIT_REMOTE_NAME"), remote_ref)
    remote_sha = repo.resolve(from_ref) if from_ref else None
    known = remote_sha is not None and tracking is not None and repo.resolve(tracking) == remote_sha
    return [
        PushedRef(local or to_ref or "HEAD", local_sha, remote_ref, remote_sha if known else None)
    ]


def _tracking(repo: git.Repo, remote: str | None, remote_ref: str) -> str | None:
    """The remote-tracking ref that mirrors ``remote_ref`` of ``remote``, if git keeps one."""
    if not remote or not remote_ref.startswith("refs/heads/"):
        return None
    name = f"{remote}/{remote_ref.removeprefix('refs/heads/')}"
    proc = git.run(
        ["rev-parse", "--verify", "--quiet", f"refs/remotes/{name}"], repo.root, check=False
    )
    return name if proc.returncode == 0 else None


def _is_ancestor(repo: git.Repo, older: str, newer: str) -> bool:
    proc = git.run(["merge-base", "--is-ancestor", older, newer], repo.root, check=False)
    return proc.returncode == 0


def _merge_base(repo: git.Repo, one: str, other: str, what: str) -> str:
    proc = git.run(["merge-base", one, other], repo.root, check=False)
    if proc.returncode != 0:
        raise GitError(f"{what} and the pushed commit {other[:12]} share no history")
    return git.decode(proc.stdout).strip()


def _new_on(repo: git.Repo, sha: str, remote: str | None) -> bool:
    """Whether ``sha`` holds a commit no ref of ``remote`` (of any remote, unnamed) has."""
    where = f"--remotes={remote}" if remote else "--remotes"
    proc = git.run(["rev-list", "--max-count=1", sha, "--not", where], repo.root)
    return bool(proc.stdout.strip())


def ranges(
    repo: git.Repo,
    pushed: list[PushedRef],
    remote: str | None,
    configured: Callable[[], tuple[str, str]],
) -> list[PushRange]:
    """The pushed refs that carry something new, each with its tree and the base of its range.
    ``configured`` gives the review base (name, commit) for a ref the remote does not have;
    it is asked only then."""
    found = []
    for ref in pushed:
        if _ZERO.fullmatch(ref.local_sha):
            continue  # a deletion sends no tree
        if ref.remote_sha is not None:
            if repo.resolve(ref.remote_sha) is None:
                fetch = f"git fetch {remote}" if remote else "git fetch"
                raise GitError(
                    f"{ref.remote_ref} on the remote is at {ref.remote_sha[:12]}, a commit this "
                    f"repository does not have: fetch it first ({fetch})"
                )
            if _is_ancestor(repo, ref.local_sha, ref.remote_sha):
                continue  # the remote has it all already
            base = _merge_base(repo, ref.remote_sha, ref.local_sha, ref.remote_ref)
            tracking = _tracking(repo, remote, ref.remote_ref)
            named = tracking if tracking and repo.resolve(tracking) == ref.remote_sha else None
            found.append(PushRange(ref, repo.tree_of(ref.local_sha), base, named or base))
            continue
        if not _new_on(repo, ref.local_sha, remote):
            continue  # a new ref to commits the remote already has (a tag, a branch)
        name, commit = configured()
        base = _merge_base(repo, commit, ref.local_sha, f"the review base {name}")
        found.append(PushRange(ref, repo.tree_of(ref.local_sha), base, name))
    return found
