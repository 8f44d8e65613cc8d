"""The stop hook's decision (CONTRACT §12): from what it sees of the tree the agent leaves and
its report, and what it answered before in this task, allow or block, and with which text.

Every text taken from a report (paths, failure modes, test ids, reasons, the next action) is
escaped here, one line each (``render/escape.terminal``), before it joins the instruction.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..core.settings.statepath import DEFAULT_STATE_DIR
from ..models.record import record
from ..render.escape import terminal
from .hookstate import Counter
from .reportview import ReportView

REVIEW = "pytest --bounded-review"
# The gate's reasons the instruction lists already, from the report's own fields.
_LISTED = ("blocking", "target-related test failure: ")


@record(frozen=True)
class Answer:
    """Allow or block the stop; ``text`` is the instruction (block) or the message shown to
    the user (allow; empty: say nothing)."""

    block: bool
    text: str = ""


@record(frozen=True)
class Seen:
    """The report of the tree the agent leaves (or why there is none to use) and the loop's
    ceiling."""

    tree: str
    report: ReportView | str
    ceiling: int
    review_only: bool
    review: str = REVIEW  # the command that reviews this tree as the hook asks
    base_commit: str | None = None  # the base a review of it must be against, when known
    state_dir: str = DEFAULT_STATE_DIR  # where a review of it keeps its loop


def ceiling_of(
    mode: str, max_repair_loops: int | None, risk: str, reported: int | None = None
) -> int:
    """The repair-loop ceiling the repository's rules give: the configured one, else the
    configured tier's, else the standard tier's. A report never lowers it (a review run with
    ``--bounded-review-mode=review-only`` or a lower tier records a smaller one); ``reported``,
    a report's own, raises it where the rules leave the tier to the change (a change classified
    strict), never past the highest tier's."""
    from ..core.ceilings import HARD_CEILINGS, TIER_CEILINGS

    if mode == "review-only":
        return 0
    if max_repair_loops is not None:
        return max_repair_loops
    ceiling = TIER_CEILINGS[risk if risk in TIER_CEILINGS else "standard"].max_repair_loops
    if reported is not None and risk not in TIER_CEILINGS:
        ceiling = max(ceiling, min(reported, HARD_CEILINGS.max_repair_loops))
    return ceiling


def _blockers(report: ReportView, review: str) -> str:
    """The report's verified blockers and its next action, as an instruction; each once."""
    lines = [f"The review of this tree is not clean ({report.review_clean})."]
    for found in report.blockers:
        where = f"{terminal(found.path)}:{found.line}"
        lines.append(
            f"- {where} {terminal(found.failure_mode)} (fix: {terminal(found.remediation)})"
        )
    lines += [f"- test {terminal(node)}: {terminal(why)}" for node, why in report.target_related]
    lines += [f"- {terminal(why)}" for why in report.reasons if not why.startswith(_LISTED)]
    lines.append(f"Next: {terminal(report.next_action)}")
    lines.append(f"Fix only these; do not widen the change. Then run `{review}` again.")
    return "\n".join(lines)


def state_of(report: ReportView, ceiling: int) -> str:
    """The state the agent is let go with, on one line (``ceiling``: the repair loops the
    hook holds it to, the rules', which a report's own may only raise)."""
    left = [
        f"{terminal(found.path)}:{found.line} {terminal(found.failure_mode)}"
        for found in report.blockers[:5]
    ]
    left += [terminal(nodeid) for nodeid, _ in report.target_related[:5]]
    used = f"{report.repair_loops_used} of {ceiling} repair loop(s) used"
    status = terminal(report.loop_status)
    state = f"review not clean ({report.review_clean}): loop {status}, {used}"
    return state + (f"; unresolved: {'; '.join(left)}" if left else "")


def _of_this_tree(seen: Seen) -> tuple[ReportView | None, str]:
    """The report when it is a review of exactly this tree against the base the hook judges
    the stop against; else why it is not."""
    found = seen.report
    if not isinstance(found, ReportView):
        return None, terminal(found)
    if found.revision != f"tree:{seen.tree}":
        return None, "the last report is of another tree"
    if seen.base_commit is not None and found.base_commit != seen.base_commit:
        against = terminal((found.base_commit or "no base")[:12])
        return (
            None,
            f"the last report reviewed against {against}, not the base {seen.base_commit[:12]}",
        )
    return found, ""


def _claimed_less(report: ReportView, seen: Seen) -> str | None:
    """Why a clean report of this tree is less than the review its rules ask, or ``None``
    (the commit gate's rule, ``report.accept.claimed_less``)."""
    if report.reduced is None or report.state_dir is None:
        return "the last report does not record what its review ran under (an earlier version)"
    if report.reduced:
        return (
            f"the last report ran with {terminal('; '.join(report.reduced))}: less than the "
            "rules of this repository ask"
        )
    if Path(report.state_dir) != Path(seen.state_dir):
        return (
            f"the last report kept its loop in the state folder {terminal(report.state_dir)!r}, "
            f"not {seen.state_dir!r}"
        )
    return None


def _spent(report: ReportView, seen: Seen) -> bool:
    """Whether the report's loop is over (deadlock, drift, or its repair loops used up) by
    the rules of this repository: a loop run under a lower ceiling than theirs (a review
    option: another mode or tier), in another state folder, or under an option that made the
    review less, has not spent the loop the rules give."""
    if report.max_repair_loops < seen.ceiling or _claimed_less(report, seen) is not None:
        return False
    return report.loop_status in ("deadlock", "drift") or report.repair_loops_used >= seen.ceiling


def progress_key(seen: Seen, report: ReportView | None, why: str) -> str:
    """What a block is given on: the tree and what the hook decides on (the gate's value, the
    base, the blockers and target-related tests, or why there is no usable report), never the
    report's bytes (a review run again on the same tree writes a new timestamp)."""
    if report is None:
        decided: object = ["no report", why.split(" (", 1)[0] if "is not a usable" in why else why]
    else:
        decided = [
            report.review_clean,
            report.base_commit,
            sorted([b.path, b.line, b.failure_mode] for b in report.blockers),
            sorted(report.target_related),
            sorted(r for r in report.reasons if not r.startswith(_LISTED)),
        ]
    digest = hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:16]
    return f"{seen.tree}:{digest}"


def decide(seen: Seen, counter: Counter) -> Answer:
    """The answer for what the hook sees, given what it answered before in this task; the
    counter is updated (a block counted, or the task ended by an allowed stop)."""
    report, why = _of_this_tree(seen)
    key = progress_key(seen, report, why)
    result = _decide(seen, counter, report, why, key)
    if result.block:
        counter.blocked(key)
    else:
        counter.end_task(key)
    return result


def _decide(seen: Seen, counter: Counter, report: ReportView | None, why: str, key: str) -> Answer:
    less = None
    if report is not None and report.review_clean == "yes":
        less = _claimed_less(report, seen)
        if less is None:
            return Answer(False)
        report, why = None, less
    state = state_of(report, seen.ceiling) if report is not None else "not reviewed"
    if report is not None and _spent(report, seen):
        return Answer(False, state)
    if counter.blocks >= seen.ceiling + 1:
        spent = f"{counter.blocks} block(s) spent on this task, the ceiling"
        return Answer(False, f"stop allowed: {spent}; {state}")
    if counter.last == key:
        return Answer(False, f"stop allowed: no progress since the last block; {state}")
    if not seen.review:  # no review can count: say so, name nothing to run
        return Answer(True, f"This tree cannot be reviewed here ({why}). Tell the user so.")
    if seen.review_only:
        ask = f"Run `{seen.review}` and report its state to the user; do not edit."
        if less:
            return Answer(True, f"The last review of this tree does not count ({less}). {ask}")
        return Answer(True, f"No review of this tree ({why}). {ask}" if report is None else ask)
    if report is None:
        return Answer(
            True,
            f"No review of this tree ({why}). Run `{seen.review}`, then fix only its verified "
            "blockers.",
        )
    return Answer(True, _blockers(report, seen.review))
