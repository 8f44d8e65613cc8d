"""``bounded-review hook stop --agent claude|codex``: the agent's stop-time hook (CONTRACT §12).

It reads the agent's event on stdin, looks at the tree the agent leaves (the working tree with
its untracked files, written through a temporary index: the user's index is not touched), and
answers in the agent's own protocol without running tests or reviewers:

- nothing to review (the tree is the base's), or a clean report of exactly this tree: allow;
- no report of this tree, or one that is not clean, while the loop may act: block, with the
  command to run or the verified blockers and the report's next action as the instruction;
- the loop deadlocked or drifted, its repair loops are used up, this (tree, report) was blocked
  once already without progress, or the ceiling + 1 blocks are spent in this agent session:
  allow, and tell the user the exact state;
- anything it cannot decide (a broken event, a corrupt report or state): block once with the
  error, then allow with the error shown. It never says clean for a tree the gate did not pass.

Claude Code and Codex share the answer's shape: ``{"decision": "block", "reason": ...}`` on
stdout with exit 0 (no other keys: Codex's schema allows none beyond its own), and
``{"systemMessage": ...}`` for what the user should read when the stop is allowed. The block
counter is kept per agent session in ``<state>/agents/<agent>-<session>.json``, written
atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.statefile import write_atomic

if TYPE_CHECKING:
    from ..models.report import Report

AGENTS = ("claude", "codex")
REVIEW = "pytest --bounded-review"
REASON_CAP = 16000  # below Claude Code's cap on a hook's text (about 16384 characters)
MAX_EVENT = 4 * 1024 * 1024


def add_parser(sub: Any) -> None:
    hook = sub.add_parser(
        "hook",
        help="an agent's stop-time hook: let the agent stop only on a tree the gate passed",
        description="Read the agent's stop event on stdin and answer in its protocol: allow "
        "the stop on a tree with a clean report (or nothing to review), else block with what "
        "to do next, within the loop's ceiling. Runs no tests and no reviewers.",
    )
    hooks = hook.add_subparsers(dest="hook", required=True, metavar="EVENT")
    stop = hooks.add_parser("stop", help="the agent is about to end its turn")
    stop.add_argument("--agent", required=True, choices=AGENTS, help="whose protocol to speak")


@dataclass(frozen=True)
class Answer:
    """Allow or block the stop; ``text`` is the instruction (block) or the message shown to
    the user (allow; empty: say nothing)."""

    block: bool
    text: str = ""

    def render(self, agent: str) -> str:
        if self.block:
            return json.dumps({"decision": "block", "reason": _capped(self.text)})
        if self.text:
            return json.dumps({"systemMessage": _capped(self.text)})
        return "{}" if agent == "codex" else ""


def _capped(text: str) -> str:
    if len(text) <= REASON_CAP:
        return text
    return text[: REASON_CAP - 60] + "\n… (cut; the full text is in the report)"


def read_event(data: bytes) -> dict[str, Any]:
    """The event object on stdin (a UTF-8 byte-order mark allowed)."""
    if len(data) > MAX_EVENT:
        raise ValueError(f"the event is over {MAX_EVENT} bytes")
    text = data.decode("utf-8-sig")
    event = json.loads(text)
    if not isinstance(event, dict):
        raise ValueError("the event is not a JSON object")
    return event


@dataclass
class Counter:
    """The blocks this hook gave in one agent session, and the last (tree, report) blocked."""

    path: Path
    blocks: int = 0
    last: str = ""

    @classmethod
    def load(cls, path: Path) -> Counter:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(path, int(data["blocks"]), str(data["last"]))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"the hook's state {path} is unreadable ({exc})") from None

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"blocks": self.blocks, "last": self.last}
        write_atomic(self.path, json.dumps(data).encode())


def counter_path(state: Path, agent: str, session: str, suffix: str = ".json") -> Path:
    """Where the hook keeps its count for one agent session (CONTRACT §12)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:80] or "unknown"
    if name != session:  # keep sessions whose ids differ only in odd characters apart
        name += "-" + hashlib.sha256(session.encode()).hexdigest()[:12]
    return state / "agents" / f"{agent}-{name}{suffix}"


@dataclass(frozen=True)
class Seen:
    """What the hook sees: the tree the agent leaves, the base's tree, the report (or why
    there is none to use) and the loop's ceiling."""

    tree: str
    base_tree: str | None
    report: Report | str
    digest: str
    ceiling: int
    review_only: bool


def _look(repo_dir: Path, env: Mapping[str, str]) -> tuple[Seen, Path]:
    """What the hook sees in the repository at ``repo_dir``, and its state folder."""
    from ..core.ceilings import TIER_CEILINGS
    from ..core.config import load_settings
    from ..core.errors import FatalError
    from ..models.report import Report
    from ..target import git
    from ..target.freeze import resolve_base, tree_via_temp_index
    from ..target.statedir import approver
    from .gate import read

    repo = git.open_repo(repo_dir)
    settings, _ = load_settings(repo_dir, repo.root, {}, approver(repo))
    state = repo.root / settings.state_dir
    tree = tree_via_temp_index(repo, add_all=True)
    base_tree: str | None = None  # none to compare with: the report decides
    with contextlib.suppress(FatalError):
        _, base = resolve_base(repo, settings.base, env)
        base_tree = git.run(["rev-parse", f"{base}^{{tree}}"], repo.root).stdout.decode().strip()
    path = settings.report_file(state)
    found = read(path)
    report: Report | str = found if isinstance(found, Report) else found[1]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "-"
    if isinstance(report, Report):
        ceiling = report.budget.max_repair_loops
    elif settings.mode == "review-only":
        ceiling = 0
    else:
        ceiling = settings.max_repair_loops or TIER_CEILINGS["standard"].max_repair_loops
    seen = Seen(tree, base_tree, report, digest, ceiling, settings.mode == "review-only")
    return seen, state


def _blockers(report: Report) -> str:
    """The report's verified blockers and its next action, as an instruction."""
    lines = [f"The review of this tree is not clean ({report.gate.review_clean})."]
    for finding in report.findings.blocking:
        lines.append(
            f"- {finding.path}:{finding.line} {finding.failure_mode} (fix: {finding.remediation})"
        )
    for test in report.tests.target_related:
        lines.append(f"- test {test.nodeid}: {test.reason}")
    lines += [f"- {reason}" for reason in report.gate.reasons if not reason.startswith("blocking")]
    lines.append(f"Next: {report.next_action}")
    lines.append("Fix only these; do not widen the change. Then run the review again.")
    return "\n".join(lines)


def _state_of(report: Report) -> str:
    loop = report.loop
    left = [f"{f.path}:{f.line} {f.failure_mode}" for f in report.findings.blocking[:5]]
    left += [t.nodeid for t in report.tests.target_related[:5]]
    state = f"review not clean: {loop.status} after {loop.repair_loops_used} repair loop(s)"
    return state + (f"; unresolved: {'; '.join(left)}" if left else "")


def decide(seen: Seen, counter: Counter) -> Answer:
    """The answer for what the hook sees, given what it answered before in this session."""
    from ..models.report import Report

    if seen.base_tree is not None and seen.tree == seen.base_tree:
        return Answer(False)  # nothing the review would look at
    found = seen.report
    report = found if isinstance(found, Report) else None
    if report is not None and report.target.revision != f"tree:{seen.tree}":
        report = None  # a report of another tree says nothing of this one
    if report is not None and report.gate.review_clean == "yes":
        return Answer(False)
    state = _state_of(report) if report is not None else "not reviewed"
    if report is not None and (
        report.loop.status in ("deadlock", "drift") or report.loop.repair_loops_used >= seen.ceiling
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
        return Answer(True, f"Run `{REVIEW}` and report its state to the user; do not edit.")
    if report is None:
        why = found if isinstance(found, str) else "the last report is of another tree"
        return Answer(
            True,
            f"No review of this tree ({why}). Run `{REVIEW}`, then fix only its verified blockers.",
        )
    return Answer(True, _blockers(report))


def answer(data: bytes, env: Mapping[str, str], agent: str) -> Answer:
    """The hook's answer to the event ``data``; never a trap, never clean unverified."""
    try:
        event = read_event(data)
    except (ValueError, UnicodeDecodeError) as exc:  # no session to count blocks in
        return Answer(False, f"bounded-review stop hook: unreadable event ({exc}); not reviewed")
    state: Path | None = None
    session = str(event.get("session_id") or "unknown")
    try:
        seen, state = _look(Path(str(event.get("cwd") or ".")), env)
        counter = Counter.load(counter_path(state, agent, session))
        result = decide(seen, counter)
        counter.save()
        return result
    except Exception as exc:  # block once with the error, then let the agent stop
        error = f"bounded-review stop hook could not decide: {exc}"
        if state is None or event.get("stop_hook_active") is True:
            return Answer(False, error + "; not reviewed")
        marker = counter_path(state, agent, session, ".error")
        try:
            if marker.exists():
                return Answer(False, error + "; not reviewed")
            marker.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(marker, error.encode())
        except OSError:
            return Answer(False, error + "; not reviewed")
        return Answer(True, error + f". Fix it, or run `{REVIEW}` and report the state.")


def cmd_hook(args: argparse.Namespace) -> int:
    import os

    result = answer(sys.stdin.buffer.read(), os.environ, args.agent)
    out = result.render(args.agent)
    if out:
        print(out)
    return 0
