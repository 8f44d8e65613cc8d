"""``bounded-review gate``: is there a clean review of exactly what is committed or pushed? The
cheap check for commit and push hooks — no test runs, a few git calls.

A commit (``pre-commit``, ``manual``) needs a clean report of the staged tree whose base commit
is the HEAD commit it goes on. A push (``pre-push``) needs, for every pushed ref that carries
something new, a clean report of the tree it sends whose base commit is the base of the pushed
range (``change/push.py``): a review of the same tree against another base (a local diff against
HEAD after unreviewed commits) is not a review of the push. ``working-tree`` (what a headless
agent left: the working tree with its untracked files) needs a clean report of that tree
against the base the agent's stop hook judges a turn with no start record against.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..change import git
from ..change.freeze import hook_index, tree_via_temp_index
from ..change.push import PushedRef, PushRange, from_pre_commit, ranges
from ..core.errors import EXIT_CLEAN, EXIT_INDETERMINATE, EXIT_NOT_CLEAN
from ..report.accept import Verdict, claimed_less, read

if TYPE_CHECKING:
    from ..models.report import Report

STAGES = ("auto", "pre-commit", "pre-push", "manual", "working-tree")
PUSH_SIGNS = ("PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_URL")
# against HEAD whatever base is configured: a staged review against a named base takes its
# merge base with HEAD, which is not a review of what this commit adds
REVIEW_STAGED = "pytest --bounded-review --bounded-review-target=staged --bounded-review-base=HEAD"
REVIEW_PR = "pytest --bounded-review --bounded-review-target=pr"


def stage_of(requested: str, env: Mapping[str, str], pushed: bool = False) -> str:
    """``auto``: pre-push when git's pushed refs were given or pre-commit says a push is running
    (it names the remote even for a first push, where it sets no refs), else pre-commit."""
    if requested != "auto":
        return requested
    return "pre-push" if pushed or any(env.get(name) for name in PUSH_SIGNS) else "pre-commit"


def staged_tree(repo: git.Repo, env: Mapping[str, str]) -> str:
    """The tree a commit would record: the index (the one a running ``git commit`` names)."""
    return tree_via_temp_index(repo, add_all=False, source=hook_index(repo, env))


def accepted(path: Path, report: Report, what: str) -> str:
    """The line that says which review let the commit or push through."""
    target = report.target
    base = target.base or "-"
    base += f" @ {target.base_commit[:12]}" if target.base_commit else ""
    return (
        f"accepted the clean review {path} for {what}: {target.kind} against {base}, "
        f"{target.revision}, written {report.generated_at}, loop {report.loop.loop_id or '-'}"
    )


def verdict(path: Path, report: Report, what: str, fix: str, state_dir: str | None) -> Verdict:
    """The report's own gate, for a report already shown to be of ``what``; a ``yes`` only
    for the whole review its rules ask (``fix``: the command that gives one)."""
    gate, revision = report.gate.review_clean, report.target.revision
    if gate == "yes":
        less = claimed_less(path, report, what, state_dir)
        if less is not None:
            return EXIT_INDETERMINATE, f"{less}; {fix}"
        return EXIT_CLEAN, accepted(path, report, what)
    status = EXIT_NOT_CLEAN if gate == "no" else EXIT_INDETERMINATE
    word = "not clean" if gate == "no" else "indeterminate"
    return status, f"the review of {revision} ({path}) is {word}: {report.next_action}"


def check_commit(
    repo: git.Repo,
    path: Path,
    report: Report,
    env: Mapping[str, str],
    state_dir: str | None = None,
) -> Verdict:
    """A commit: the report must be of the staged tree, reviewed against the HEAD commit the
    commit goes on (none on an unborn branch), or against the merge base of HEAD and the
    configured base (what `bounded-review run --target staged` reviews where `base` is set: the
    branch with this commit, as its pull request will be); a review of the same tree against
    another base (an older commit of one's choosing, a stash) is not a review of this commit."""
    target, head = report.target, repo.head()
    revision = f"tree:{staged_tree(repo, env)}"
    if target.revision != revision:
        why = (
            f"the last report ({path}) reviewed {target.revision}, not this pre-commit "
            f"snapshot {revision}: run {REVIEW_STAGED}"
        )
        return EXIT_INDETERMINATE, why
    what = f"the staged tree {revision}"
    # On an unborn branch a review against nothing records base HEAD, no base commit and no head.
    against_nothing = head is None and target.head is None and target.base == "HEAD"
    if target.base_commit is None and not against_nothing:
        why = (
            f"the report {path} does not record the commit it was reviewed against (written by "
            f"an earlier version), so it cannot be matched with {what}: run {REVIEW_STAGED}"
        )
        return EXIT_INDETERMINATE, why
    if target.base_commit != head and target.base_commit != _branch_base(repo, env, head):
        against = f"{target.base} ({target.base_commit[:12] if target.base_commit else 'none'})"
        on = f"HEAD ({head[:12]})" if head else "an unborn branch (no commit yet)"
        why = (
            f"the report {path} reviewed {target.kind} against {against}, but {what} is "
            f"committed on {on}: a review against another base is not a review of this commit; "
            f"run {REVIEW_STAGED}"
        )
        return EXIT_INDETERMINATE, why
    return verdict(path, report, what, f"run {REVIEW_STAGED}", state_dir)


def _branch_base(repo: git.Repo, env: Mapping[str, str], head: str | None) -> str | None:
    """The merge base of ``head`` and the base a review resolves from the configuration and
    the environment (``None`` when there is none but ``head`` itself)."""
    from ..agentgate import hookbase

    found = hookbase.turn_base(hookbase.locate(repo.root, repo), env, head)
    return found if found and found != head else None


def check_working_tree(
    repo: git.Repo, path: Path, report: Report, env: Mapping[str, str], state_dir: str | None
) -> Verdict:
    """What an agent left: the report must be of the working tree with its untracked files
    (the tool's byproducts left out), against the base the stop hook judges it with: the one
    recorded at the start of the last agent turn that left HEAD where it is, else the merge
    base of the resolved base and HEAD."""
    from ..agentgate import hookbase, hookstate

    place = hookbase.locate(repo.root)
    live = hookbase.live_tree(place)
    try:
        kept = hookstate.records(place.state)
    except ValueError as exc:
        return EXIT_INDETERMINATE, str(exc)
    # the last agent turn that left HEAD where it is (an older task's record, or one the user
    # committed on since, is not this tree's)
    head = repo.head() or hookbase.UNBORN
    turn = next((c for c in kept if (c.stop_head or c.turn_commit) == head), None)
    commit, recorded = (turn.turn_commit, turn.turn_base) if turn else ("", "")
    judged = hookbase.judged(place, env, commit, live, recorded)
    if judged.unreviewable:
        assert turn is not None
        return EXIT_INDETERMINATE, (
            f"{judged.unreviewable} (the last agent turn, recorded in {turn.path}): review "
            "the commits yourself; once you have, delete that file and run the gate again"
        )
    target, revision = report.target, f"tree:{live}"
    if target.revision != revision:
        why = (
            f"the last report ({path}) reviewed {target.revision}, not the working tree "
            f"{revision}: run {judged.review}"
        )
        return EXIT_INDETERMINATE, why
    what = f"the working tree {revision}"
    if judged.commit is not None and target.base_commit != judged.commit:
        against = (target.base_commit or "no base")[:12]
        why = (
            f"the report {path} reviewed {what} against {against}, not {judged.commit[:12]}: "
            f"run {judged.review}"
        )
        return EXIT_INDETERMINATE, why
    return verdict(path, report, what, f"run {judged.review}", state_dir)


def review_command(repo: git.Repo, pushed: PushRange) -> str:
    """The review that would cover ``pushed``: its tree, against its range's base."""
    command = f"{REVIEW_PR} --bounded-review-base={pushed.base_name}"
    if repo.head() != pushed.ref.local_sha:
        return f"check out {pushed.ref.local_ref} ({pushed.ref.local_sha[:12]}) and run {command}"
    return f"run {command}"


def check_range(
    repo: git.Repo, path: Path, report: Report, pushed: PushRange, state_dir: str | None = None
) -> Verdict:
    """One pushed ref: the report must be of the tree it sends, against its range's base."""
    target, ref = report.target, pushed.ref
    revision, fix = f"tree:{pushed.tree}", review_command(repo, pushed)
    what = f"the push of {ref.local_ref} ({ref.local_sha[:12]}, {revision})"
    if target.kind == "plan" or target.revision != revision:
        return (
            EXIT_INDETERMINATE,
            f"the last report ({path}) reviewed {target.revision}, not {what}: {fix}",
        )
    if target.base_commit is None:
        why = (
            f"the report {path} does not record the commit it was reviewed against (written by "
            f"an earlier version), so it cannot be matched with {what}: {fix}"
        )
        return EXIT_INDETERMINATE, why
    if target.base_commit != pushed.base:
        why = (
            f"the report {path} reviewed {target.kind} against {target.base} "
            f"({target.base_commit[:12]}), but {what} adds the commits after {pushed.base_name} "
            f"({pushed.base[:12]}): a review against another base is not a review of this push; "
            f"{fix}"
        )
        return EXIT_INDETERMINATE, why
    return verdict(path, report, what, fix, state_dir)


def check_push(
    repo: git.Repo,
    path: Path,
    report: Report,
    pushed: Sequence[PushRange],
    state_dir: str | None = None,
) -> Verdict:
    """A push: every pushed ref with something new must be covered by the report."""
    lines = []
    for one in pushed:
        status, why = check_range(repo, path, report, one, state_dir)
        if status != EXIT_CLEAN:
            return status, why
        lines.append(why)
    return EXIT_CLEAN, "\n".join(lines)


def check(
    repo: git.Repo,
    report: Path,
    stage: str,
    env: Mapping[str, str] | None = None,
    pushed: list[PushedRef] | None = None,
    remote: str | None = None,
    configured: Callable[[], tuple[str, str]] | None = None,
    state_dir: str | None = None,
) -> Verdict:
    """The exit status and what to say: why not, or which review was accepted. ``pushed``:
    git's pre-push lines, when given; ``configured``: the review base (name, commit) for a
    ref the remote does not have yet; ``state_dir``: the state folder a clean review must
    have kept its loop in (``None``: not compared)."""
    env = os.environ if env is None else env
    stage = stage_of(stage, env, pushed is not None)
    if stage != "pre-push":
        found = read(report)
        if isinstance(found, tuple):
            return found
        if stage == "working-tree":
            return check_working_tree(repo, report, found, env, state_dir)
        return check_commit(repo, report, found, env, state_dir)
    note = None
    if pushed is None:
        pushed = from_pre_commit(repo, env)
        remote = remote or env.get("PRE_COMMIT_REMOTE_NAME")
        if pushed is not None:
            note = only_named(pushed[0])
    if pushed is None:  # by hand: HEAD, as if pushed to a new ref
        pushed = [PushedRef("HEAD", repo.head() or "0" * 40, "", None)]
    carried = ranges(repo, pushed, remote, configured or _no_base)
    if not carried:
        status, why = EXIT_CLEAN, "the push carries no commit the remote lacks: nothing to review"
    elif isinstance(found := read(report), tuple):
        status, why = found
    else:
        status, why = check_push(repo, report, found, carried, state_dir)
    return (status, f"{why}\n{note}") if status == EXIT_CLEAN and note else (status, why)


def only_named(ref: PushedRef) -> str:
    """What a clean answer from pre-commit's variables does not cover: pre-commit names one
    pushed ref (the first with something to push), so the others were not checked."""
    return (
        f"only {ref.local_ref}, the ref pre-commit named, was checked: pre-commit passes one "
        "pushed ref, so other refs pushed at once were not; hooks/pre-push (git's own pre-push "
        "hook, which passes every pushed ref) checks each"
    )


def _no_base() -> tuple[str, str]:
    from ..core.errors import UsageError

    raise UsageError("no review base to compare the push with")
