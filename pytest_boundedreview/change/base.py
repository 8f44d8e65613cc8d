"""The review base: its name (given, named by a CI variable, or the branch's upstream, in the
order of CONTRACT §3), its commit, and a pull request's merge base with HEAD; each failure an
error that names where the base came from and the fix."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import BaseRefError
from . import git

# CI variables naming the branch a pull/merge request targets (CONTRACT §3), in order.
CI_BASE_VARIABLES = (
    "GITHUB_BASE_REF",
    "CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
    "BUILDKITE_PULL_REQUEST_BASE_BRANCH",
)
_SHALLOW_HINT = (
    "this is a shallow clone: fetch the history with `git fetch --unshallow` "
    "(in GitHub Actions, set `fetch-depth: 0` on actions/checkout)"
)
_DEEPEN_HINT = (
    "fetch more history (`git fetch --deepen=100`, or all of it: `git fetch --unshallow`; "
    "in GitHub Actions, set `fetch-depth: 0` on actions/checkout)"
)
# Both faces take the base: pytest as an option, the bounded-review commands as --base.
REQUESTED = "the base option or the `base` setting"
_NAME_A_BASE = "pass --bounded-review-base=REF (bounded-review commands: --base REF)"


def resolve_base(
    repo: git.Repo, explicit: str | None, env: Mapping[str, str], origin: str = REQUESTED
) -> tuple[str, str]:
    """The review base as (name, commit), in the order of CONTRACT §3 (``origin``: where an
    explicit base came from, for the error that names it)."""
    name, named_by = _base_ref(repo, explicit, env, origin)
    return name, require(repo, name, named_by)


def _base_ref(
    repo: git.Repo, explicit: str | None, env: Mapping[str, str], origin: str
) -> tuple[str, str | None]:
    """The review base's name, in the order of CONTRACT §3, and what named it (``None`` for
    ``origin/HEAD``, the last resort: when it is missing, no base could be determined)."""
    named = named_base(explicit, env, origin)
    if named:
        return named
    upstream = _upstream(repo)
    if upstream:
        return upstream, "the branch's upstream"
    return "origin/HEAD", None


def named_base(explicit: str | None, env: Mapping[str, str], origin: str) -> tuple[str, str] | None:
    """The review base's name and what named it, when named without asking git: explicitly,
    or by a CI variable."""
    if explicit:
        return explicit, origin
    for variable in CI_BASE_VARIABLES:
        if env.get(variable):
            return f"origin/{env[variable]}", f"{variable}={env[variable]}"
    return None


def pr_base(
    repo: git.Repo, explicit: str | None, env: Mapping[str, str], origin: str, head: str
) -> tuple[str, str]:
    """The review base's name and its merge base with ``head``."""
    name, named_by = _base_ref(repo, explicit, env, origin)
    return name, named_merge_base(repo, name, named_by, head)


def named_merge_base(repo: git.Repo, name: str, origin: str | None, head: str | None) -> str:
    """``merge-base(name, head)``: what a named base means for every target kind (CONTRACT
    §3), so that what the base gained after the branch point is not blamed on the change. One
    git process when both resolve; otherwise an error naming the base, where it came from
    (``origin``) and the fix, never the base's tip instead."""
    if head is None:
        raise BaseRefError(
            f"base {name!r} (from {origin or 'origin/HEAD'}) has no merge base with this "
            "branch: it has no commit yet; commit first, or name no base to review the "
            "working tree as a whole"
        )
    if not name.startswith("-"):
        proc = git.run(["merge-base", f"{name}^{{commit}}", head], repo.root, check=False)
        if proc.returncode == 0:
            return git.decode(proc.stdout).strip()
    return merge_base_of(repo, require(repo, name, origin), head, name)


def unconfigured_base(repo: git.Repo, env: Mapping[str, str], head: str) -> str | None:
    """The merge base of ``head`` with the base named without any configuration (a CI
    variable, the branch's upstream, ``origin/HEAD``), else with every remote-tracking branch
    (the newest of its commits that is published), or ``None`` when there is none: a commit
    the change under review cannot move."""
    named = named_base(None, env, REQUESTED)
    try:
        name = named[0] if named else _upstream(repo) or "origin/HEAD"
    except BaseRefError:  # an upstream that is gone
        name = "origin/HEAD"
    found = _merge_base(repo, head, [f"{name}^{{commit}}"]) if not name.startswith("-") else None
    if found is not None:
        return found
    published = git.run(["for-each-ref", "--format=%(objectname)", "refs/remotes"], repo.root)
    tips = git.decode(published.stdout).split()
    return _merge_base(repo, head, tips) if tips else None


def _merge_base(repo: git.Repo, head: str, others: list[str]) -> str | None:
    proc = git.run(["merge-base", head, *others], repo.root, check=False)
    return (git.decode(proc.stdout).strip() or None) if proc.returncode == 0 else None


def _upstream(repo: git.Repo) -> str | None:
    """The current branch's configured upstream, if any (even when its ref is gone)."""
    branch = repo.branch()
    if branch is None:
        return None
    proc = git.run(
        ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], repo.root, check=False
    )
    if proc.returncode == 0:
        return git.decode(proc.stdout).strip()
    merge = git.run(["config", "--get", f"branch.{branch}.merge"], repo.root, check=False)
    if merge.returncode == 0:  # configured, but its ref is gone: never fall back silently
        remote = git.run(["config", "--get", f"branch.{branch}.remote"], repo.root, check=False)
        name = git.decode(merge.stdout).strip().removeprefix("refs/heads/")
        where = git.decode(remote.stdout).strip() or "origin"
        raise BaseRefError(
            f"the upstream of {branch!r} ({where}/{name}) is gone: fetch it (git fetch {where}), "
            f"set another (git branch --set-upstream-to=REF) or {_NAME_A_BASE}"
        )
    return None


def require(repo: git.Repo, ref: str, origin: str | None) -> str:
    commit = repo.resolve(ref)
    if commit is not None:
        return commit
    if origin is None:  # origin/HEAD, the last resort, is missing too
        hint = f"; {_SHALLOW_HINT}" if repo.shallow else ""
        raise BaseRefError(
            "could not determine the review base: no upstream branch and no origin/HEAD; "
            f"{_NAME_A_BASE} or set `base` in [tool.bounded-review]{hint}"
        )
    if repo.shallow:
        raise BaseRefError(
            f"base {ref!r} (from {origin}) is not in this repository; {_SHALLOW_HINT}"
        )
    raise BaseRefError(
        f"base ref {ref!r} (from {origin}) is unknown: fetch it (git fetch origin) or "
        f"{_NAME_A_BASE} naming an existing branch, tag or commit"
    )


def merge_base_of(repo: git.Repo, base_commit: str, head: str, name: str = "") -> str:
    """The merge base of ``base_commit`` (named ``name``) and ``head``; an error naming the
    fix when they share no history here (a shallow clone, unrelated histories)."""
    proc = git.run(["merge-base", base_commit, head], repo.root, check=False)
    if proc.returncode == 0:
        return git.decode(proc.stdout).strip()
    shown = f"{name!r} ({base_commit[:12]})" if name else base_commit[:12]
    if repo.shallow:
        raise BaseRefError(
            f"the base {shown} and HEAD share no history in this shallow clone, so their "
            f"merge base is unknown; {_DEEPEN_HINT}"
        )
    raise BaseRefError(
        f"the base {shown} and HEAD have no common ancestor (unrelated histories), so there "
        "is no merge base to review against: name a base this branch grew from "
        f"({_NAME_A_BASE}), or name none to review the working tree against HEAD"
    )
