"""Where the stop hook looks (the repository, its settings and state folder, the tree the agent
leaves) and what it judges the stop against: the base, and the one review command whose report
it accepts for that base (CONTRACT §12).

The base includes what the turn did however it did it. The turn-start hook records the commit
the turn started at; the stop is judged against the merge base of that commit and the base a
review would resolve (the configured base, else the branch's upstream, else ``origin/HEAD``), so
commits, resets and pushes made during the turn (a push moves the upstream) stay part of the
change. Without a start record (the hook not installed for the turn's start event) the stop is
judged against the merge base of the resolved base and ``HEAD``, else ``HEAD``: commits made
during the turn then escape a repository with no base to resolve.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..change import git
from ..core.errors import FatalError
from ..core.settings.config import Settings
from ..models.record import record

if TYPE_CHECKING:
    from ..change.git import Repo


@record(frozen=True)
class Place:
    """The repository the agent works in, its settings and its state folder."""

    repo: Repo
    settings: Settings
    state: Path
    folder: Path  # the folder the agent works in (where the review would start)


def locate(folder: Path, repo: Repo | None = None) -> Place:
    """The repository at ``folder`` (``repo``, when opened already), its settings and state
    folder (created with its ``.gitignore`` of ``*``)."""
    from ..change.statedir import approver
    from ..core.settings.config import load_settings
    from ..core.statefile import state_folder

    repo = repo or git.open_repo(folder)
    settings, _ = load_settings(folder, repo.root, {}, approver(repo))
    return Place(repo, settings, state_folder(repo.root, settings.state_dir), folder)


def live_tree(place: Place) -> str:
    """The tree the agent leaves: the working tree with its untracked files, written through a
    temporary index (the user's index is not touched)."""
    from ..change.freeze import tree_via_temp_index

    return tree_via_temp_index(place.repo, add_all=True)


UNBORN = "unborn"  # the turn started on a branch with no commit yet
_COMMIT = re.compile("[0-9a-f]{40}|[0-9a-f]{64}")


@record(frozen=True)
class Judged:
    """The base commit the stop is judged against (``None``: no commit to judge against), its
    tree, the review command whose report of the tree counts, and why no review can count
    (``unreviewable``), when none can."""

    commit: str | None
    tree: str | None
    review: str
    unreviewable: str = ""


def _resolved(place: Place, env: Mapping[str, str]) -> str | None:
    from ..change.base import resolve_base

    try:
        return resolve_base(place.repo, place.settings.base, env, "the `base` setting")[1]
    except FatalError:
        return None


def turn_base(place: Place, env: Mapping[str, str], head: str | None) -> str:
    """The base a turn that starts at ``head`` is judged against, recorded when it starts: the
    merge base of ``head`` and the base a review would resolve (``head`` itself when there is
    none). Recorded, not resolved again at the stop: moving the upstream or a local branch
    during the turn must not move what the turn is judged against."""
    if head is None:
        return ""
    resolved = _resolved(place, env)
    if resolved is None or resolved == head:
        return head
    return _merge_base(place.repo, resolved, head) or head


def judged(
    place: Place, env: Mapping[str, str], turn_commit: str, live: str, recorded: str = ""
) -> Judged:
    """The base the stop of a turn is judged against, for the tree ``live``, and the command
    that reviews exactly that: the turn's ``recorded`` base when its start was recorded (the
    turn's own commits, resets and pushes are part of the change), else the merge base of the
    resolved base and ``HEAD``. ``turn_commit``: the commit the turn started at, ``UNBORN``,
    or "" when not recorded."""
    repo, settings = place.repo, place.settings
    head, head_tree = repo.head_and_tree()
    # The working tree's `base` and `target`: a review takes the base commit's (baseconfig),
    # which differ only where the change edits them; the turn's own changes are judged either
    # way (the base is anchored on what the turn started at).
    name, target = settings.base, settings.target
    resolved = _resolved(place, env)
    # commit ids, never options: the state file is in the agent's reach
    if _COMMIT.fullmatch(recorded):
        commit: str | None = recorded
        if not _exists(repo, recorded):
            why = (
                f"the commit the turn is judged against ({recorded[:12]}) is gone from the "
                "repository (pruned or never fetched), so the turn's change cannot be told"
            )
            return Judged(None, None, review_command(place, []), why)
    elif turn_commit == UNBORN and head is not None:
        why = (
            "this turn started on a branch with no commit and committed since: no review "
            "can take a base before the first commit, so the turn's commits cannot be "
            "reviewed as its change"
        )
        return Judged(None, None, review_command(place, []), why)
    else:
        anchor = turn_commit if _COMMIT.fullmatch(turn_commit) else head
        commit = anchor
        if resolved is not None and anchor is not None and resolved != anchor:
            commit = _merge_base(repo, resolved, anchor) or anchor
        elif anchor is None:
            commit = resolved
    if commit not in (None, head) and head and _merge_base(repo, commit, head) != commit:
        # a review takes a named base's merge base with HEAD (CONTRACT §3): none can be
        # judged against a commit HEAD was moved back behind (the commits undone unseen)
        why = (
            f"HEAD ({head[:12]}) no longer descends from the commit the turn is judged against "
            f"({commit[:12]}): a review against any named base takes its merge base with HEAD, "
            "so none can see the commits the turn moved HEAD back past"
        )
        return Judged(None, None, review_command(place, []), why)
    tree = head_tree if commit == head else repo.tree_of(commit) if commit else None
    # What the review command takes with no base named: the configured base's merge base with
    # HEAD (a local diff, or a committed tree), or HEAD (a local diff, no base configured).
    if (target == "auto" and live == head_tree) or name is not None:
        bare = _merge_base(repo, resolved, head) if resolved and head else None
    else:
        bare = head
    extra = []
    if commit is not None and commit != bare:
        extra.append(f"--bounded-review-base={commit}")
    if target not in ("auto", "local-diff") or (extra and target == "auto"):
        extra.append("--bounded-review-target=local-diff")
    return Judged(commit, tree, review_command(place, extra))


def _exists(repo: Repo, commit: str) -> bool:
    proc = git.run(["cat-file", "-e", f"{commit}^{{commit}}"], repo.root, check=False)
    return proc.returncode == 0


def _merge_base(repo: Repo, one: str, other: str) -> str | None:
    proc = git.run(["merge-base", one, other], repo.root, check=False)
    return git.decode(proc.stdout).strip() or None if proc.returncode == 0 else None


def review_command(place: Place, extra: list[str]) -> str:
    """The configured ``review_command``, else pytest run by the interpreter this hook runs
    under (by its absolute path: the agent's shell may not have this environment on its
    ``PATH``), with ``extra`` options; started at the repository's top when the agent works
    in a folder below it (a review started there would collect only that folder's tests)."""
    command = place.settings.review_command
    if command == Settings.review_command:
        command = f"{_quoted(sys.executable)} -m pytest --bounded-review"
    command = " ".join([command, *extra])
    if place.folder.resolve() != place.repo.root.resolve():
        command = f"cd {_quoted(str(place.repo.root))} && {command}"
    return command


def _quoted(path: str) -> str:
    if sys.platform == "win32":
        return subprocess.list2cmdline([path])
    return shlex.quote(path)
