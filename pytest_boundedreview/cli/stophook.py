"""``bounded-review hook stop|start --agent NAME``: the agent's hooks (CONTRACT §12).

The stop hook reads the agent's event on stdin, looks at the tree the agent leaves (the working
tree with its untracked files, written through a temporary index: the user's index is not
touched), and answers in the agent's own protocol (``agentprotocol``) without running tests or
reviewers:

- nothing to review (the tree is the one the turn started with, or the base's), or a clean
  report of exactly this tree: allow, silently;
- no report of this tree, or one that is not clean, while the loop may act: block, with the
  command to run or the verified blockers and the report's next action as the instruction;
- the loop deadlocked or drifted, its repair loops are used up, this (tree, report) was blocked
  once already without progress, or the ceiling + 1 blocks are spent in this agent session:
  allow, and tell the user the exact state;
- anything it cannot decide (a broken event, a corrupt report or state): block once with the
  error, then allow with the error shown. It never says clean for a tree the gate did not pass.

The start hook notes the tree a turn starts with. Both keep their state per agent session in
``<state>/agents/<agent>-<session>.json``, written atomically.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.statefile import write_atomic
from ..core.statepath import DEFAULT_STATE_DIR
from ..models.record import record
from . import reportview
from .agentprotocol import (
    AGENTS,
    PROTOCOLS,
    START_OUTPUT,
    continued,
    ended_by_user,
    repository,
)
from .hookstate import Counter, counter_path, held
from .reportview import ReportView

if TYPE_CHECKING:
    from ..core.config import Settings
    from ..target.git import Repo

REVIEW = "pytest --bounded-review"
MAX_EVENT = 4 * 1024 * 1024


def add_parser(sub: Any) -> None:
    hook = sub.add_parser(
        "hook",
        help="an agent's hooks: let the agent stop only on a tree the gate passed",
        description="Read the agent's event on stdin and answer in its protocol. `stop`: "
        "allow the stop on a tree with a clean report (or nothing to review), else block "
        "with what to do next, within the loop's ceiling. `start`: note the tree a turn "
        "starts with, so a turn that changes nothing may stop at once. Runs no tests and no "
        "reviewers.",
    )
    hooks = hook.add_subparsers(dest="hook", required=True, metavar="EVENT")
    for event, what in (
        ("stop", "the agent is about to end its turn"),
        ("start", "a turn starts (the user's prompt is submitted)"),
    ):
        parser = hooks.add_parser(event, help=what)
        parser.add_argument("--agent", required=True, choices=AGENTS, help="whose protocol")


@record(frozen=True)
class Answer:
    """Allow or block the stop; ``text`` is the instruction (block) or the message shown to
    the user (allow; empty: say nothing)."""

    block: bool
    text: str = ""

    def render(self, agent: str) -> tuple[str, str]:
        """What to print on stdout and on stderr, in ``agent``'s protocol."""
        protocol = PROTOCOLS[agent]
        if self.block:
            return json.dumps(protocol.block(self.text)), ""
        return protocol.allow(self.text)


def read_event(data: bytes) -> dict[str, Any]:
    """The event object on stdin (a UTF-8 byte-order mark allowed)."""
    if len(data) > MAX_EVENT:
        raise ValueError(f"the event is over {MAX_EVENT} bytes")
    text = data.decode("utf-8-sig")
    event = json.loads(text)
    if not isinstance(event, dict):
        raise ValueError("the event is not a JSON object")
    return event


@record(frozen=True)
class Where:
    """The repository the agent works in, its settings, state folder, and the tree it leaves
    (the working tree with its untracked files, written through a temporary index)."""

    repo: Repo
    settings: Settings
    state: Path
    tree: str


def _where(repo_dir: Path) -> Where:
    from ..core.config import load_settings
    from ..core.statefile import state_folder
    from ..target import git
    from ..target.freeze import tree_via_temp_index
    from ..target.statedir import approver

    repo = git.open_repo(repo_dir)
    settings, _ = load_settings(repo_dir, repo.root, {}, approver(repo))
    state = state_folder(repo.root, settings.state_dir)  # with its `.gitignore` of `*`
    return Where(repo, settings, state, tree_via_temp_index(repo, add_all=True))


def _base(where: Where, env: Mapping[str, str]) -> tuple[str, str] | None:
    """The configured base (commit, tree) a review started here would take, or ``None`` when
    there is no base to compare with."""
    from ..core.errors import FatalError
    from ..target import git
    from ..target.base import resolve_base

    try:
        _, base = resolve_base(where.repo, where.settings.base, env)
    except FatalError:
        return None
    return base, git.text(["rev-parse", f"{base}^{{tree}}"], where.repo.root)


def _review_command(settings: Settings) -> str:
    command = settings.review_command
    if settings.target not in ("auto", "local-diff"):
        command += " --bounded-review-target=local-diff"
    return command


@record(frozen=True)
class Seen:
    """The report of the tree the agent leaves (or why there is none to use) and the loop's
    ceiling."""

    tree: str
    report: ReportView | str
    digest: str
    ceiling: int
    review_only: bool
    review: str = REVIEW  # the command that reviews this tree
    base_commit: str | None = None  # the base a review of it must be against, when known
    state_dir: str = DEFAULT_STATE_DIR  # where a review of it keeps its loop


def _ceiling(settings: Settings) -> int:
    """The repair-loop ceiling when no report says it: the configured one, else the
    configured tier's, else the standard tier's."""
    from ..core.ceilings import TIER_CEILINGS

    if settings.mode == "review-only":
        return 0
    if settings.max_repair_loops is not None:
        return settings.max_repair_loops
    tier = settings.risk if settings.risk in TIER_CEILINGS else "standard"
    return TIER_CEILINGS[tier].max_repair_loops


def _look(where: Where, base_commit: str | None, untested: tuple[str, ...]) -> Seen:
    """What the hook sees of the review of ``where``'s tree (``untested``: what the tree
    cannot name, submodules with uncommitted files)."""
    settings = where.settings
    path = settings.report_file(where.state)
    report = reportview.read(path)
    raw = path.read_bytes() if isinstance(report, ReportView) else b""
    digest = hashlib.sha256(raw).hexdigest()[:16] if raw else "-"
    ceiling = report.max_repair_loops if isinstance(report, ReportView) else _ceiling(settings)
    if untested:  # the tree records a submodule's commit, not what its checkout holds
        report = f"{'; '.join(untested)}: commit there first, then review"
    review = _review_command(settings)
    review_only = settings.mode == "review-only"
    return Seen(
        where.tree, report, digest, ceiling, review_only, review, base_commit, settings.state_dir
    )


def _blockers(report: ReportView) -> str:
    """The report's verified blockers and its next action, as an instruction."""
    lines = [f"The review of this tree is not clean ({report.review_clean})."]
    for found in report.blockers:
        lines.append(f"- {found.path}:{found.line} {found.failure_mode} (fix: {found.remediation})")
    lines += [f"- test {nodeid}: {reason}" for nodeid, reason in report.target_related]
    lines += [f"- {reason}" for reason in report.reasons if not reason.startswith("blocking")]
    lines.append(f"Next: {report.next_action}")
    lines.append("Fix only these; do not widen the change. Then run the review again.")
    return "\n".join(lines)


def _state_of(report: ReportView) -> str:
    left = [f"{found.path}:{found.line} {found.failure_mode}" for found in report.blockers[:5]]
    left += [nodeid for nodeid, _ in report.target_related[:5]]
    used = f"{report.repair_loops_used} of {report.max_repair_loops} repair loop(s) used"
    state = f"review not clean ({report.review_clean}): loop {report.loop_status}, {used}"
    return state + (f"; unresolved: {'; '.join(left)}" if left else "")


def _of_this_tree(seen: Seen) -> tuple[ReportView | None, str]:
    """The report when it is a review of exactly this tree against the base a review started
    here would take; else why it is not."""
    found = seen.report
    if not isinstance(found, ReportView):
        return None, found
    if found.revision != f"tree:{seen.tree}":
        return None, "the last report is of another tree"
    if seen.base_commit is not None and found.base_commit != seen.base_commit:
        against = (found.base_commit or "no base")[:12]
        return (
            None,
            f"the last report reviewed against {against}, not the base {seen.base_commit[:12]}",
        )
    return found, ""


def _claimed_less(report: ReportView, seen: Seen) -> str | None:
    """Why a clean report of this tree is less than the review its rules ask, or ``None``
    (the commit gate's rule, ``gate.claimed_less``)."""
    if report.reduced is None or report.state_dir is None:
        return "the last report does not record what its review ran under (an earlier version)"
    if report.reduced:
        return (
            f"the last report ran with {'; '.join(report.reduced)}: less than the rules of this "
            "repository ask"
        )
    if Path(report.state_dir) != Path(seen.state_dir):
        return (
            f"the last report kept its loop in the state folder {report.state_dir!r}, not "
            f"{seen.state_dir!r}"
        )
    return None


def decide(seen: Seen, counter: Counter) -> Answer:
    """The answer for what the hook sees, given what it answered before in this session."""
    report, why = _of_this_tree(seen)
    less = None
    if report is not None and report.review_clean == "yes":
        less = _claimed_less(report, seen)
        if less is None:
            return Answer(False)
        report, why = None, less
    state = _state_of(report) if report is not None else "not reviewed"
    if report is not None and (
        report.loop_status in ("deadlock", "drift") or report.repair_loops_used >= seen.ceiling
    ):
        return Answer(False, state)
    if counter.blocks >= seen.ceiling + 1:
        return Answer(False, f"stop allowed: {counter.blocks} block(s) spent, the ceiling; {state}")
    pair = f"{seen.tree}:{seen.digest}"
    if counter.last == pair:
        return Answer(False, f"stop allowed: no progress since the last block; {state}")
    counter.blocks += 1
    counter.last = pair
    if seen.review_only:
        ask = f"Run `{seen.review}` and report its state to the user; do not edit."
        return Answer(
            True, f"The last review of this tree does not count ({less}). {ask}" if less else ask
        )
    if report is None:
        return Answer(
            True,
            f"No review of this tree ({why}). Run `{seen.review}`, then fix only its verified "
            "blockers.",
        )
    return Answer(True, _blockers(report))


def answer(data: bytes, env: Mapping[str, str], agent: str) -> Answer:
    """The stop hook's answer to the event ``data``; never a trap, never clean unverified."""
    try:
        event = read_event(data)
    except (ValueError, UnicodeDecodeError) as exc:  # no session to count blocks in
        return Answer(False, f"bounded-review stop hook: unreadable event ({exc}); not reviewed")
    if ended_by_user(event):
        return Answer(False)
    from ..target.livetree import dirty_submodules

    state: Path | None = None
    counter: Counter | None = None
    session = PROTOCOLS[agent].session(event)
    try:
        where = _where(Path(repository(event)))
        state = where.state
        with held(state, agent, session):  # two hooks of one session count one after another
            counter = Counter.load(counter_path(state, agent, session))
            base = _base(where, env)
            untested = dirty_submodules(where.repo)
            if not untested and where.tree in (counter.turn_tree, base[1] if base else None):
                result = Answer(False)  # this turn changed nothing the review would look at
            else:
                result = decide(_look(where, base[0] if base else None, untested), counter)
            counter.pending = result.block
            counter.save()
        return result
    except Exception as exc:  # block once with the error, then let the agent stop
        return _failed(
            f"bounded-review stop hook could not decide: {exc}", state, counter, event, agent
        )


def _failed(
    error: str, state: Path | None, counter: Counter | None, event: Mapping[str, Any], agent: str
) -> Answer:
    """Block once per agent session with ``error`` (never past a block the session already
    had: the error may be the hook's own), then let the agent stop with it shown."""
    let_go = Answer(False, error + "; not reviewed")
    if state is None or continued(event) or (counter is not None and counter.blocks > 0):
        return let_go
    marker = counter_path(state, agent, PROTOCOLS[agent].session(event), ".error")
    try:
        if marker.exists():
            return let_go
        marker.parent.mkdir(exist_ok=True)
        write_atomic(marker, error.encode())
    except OSError:
        return let_go
    return Answer(True, error + f". Fix it, or run `{REVIEW}` and report the state.")


def start(data: bytes, agent: str) -> str:
    """Note the tree a turn starts with; return what to tell the agent (nothing but a warning
    on stderr when it cannot: a turn-start hook never holds up a prompt). A prompt that follows
    a block (Gemini CLI starts its retry as a new turn) keeps the turn the block was given in."""
    try:
        event = read_event(data)
        where = _where(Path(repository(event)))
        session = PROTOCOLS[agent].session(event)
        with held(where.state, agent, session):
            counter = Counter.load(counter_path(where.state, agent, session))
            if not counter.pending:
                counter.turn_tree = where.tree
                counter.save()
    except Exception as exc:
        return f"bounded-review start hook: could not note the turn's tree ({exc})"
    return ""


def cmd_hook(args: argparse.Namespace) -> int:
    import os

    data = sys.stdin.buffer.read()
    if args.hook == "start":
        out, err = START_OUTPUT.get(args.agent, "{}"), start(data, args.agent)
    else:
        out, err = answer(data, os.environ, args.agent).render(args.agent)
    if out:
        print(out)
    if err:
        print(err, file=sys.stderr)
    return 0
