"""The pass gate: ``yes`` only when everything required ran and nothing verified blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .baseline.classification import Classification
from .models.report import CheckResult, Gate, LaneReport

if TYPE_CHECKING:
    from .models.finding import ReportFinding


def decide(
    tests: Classification,
    checks: Sequence[CheckResult],
    blocking: Sequence[ReportFinding],
    lane_problems: Sequence[str] = (),
) -> Gate:
    """``no`` when something verified blocks; else ``indeterminate`` when something required
    could not be established; else ``yes``. Every reason is listed."""
    blockers: list[str] = []
    undetermined: list[str] = []
    for failure in tests.target_related:
        blockers.append(f"target-related test failure: {failure.nodeid} ({failure.reason})")
    for failure in tests.unknown:
        undetermined.append(
            f"unclassified test failure (fail closed): {failure.nodeid} ({failure.reason})"
        )
    for check in checks:
        if not check.required:
            continue
        if check.status == "not-run":
            undetermined.append(f"required check {check.name!r} did not run: {check.detail}")
        elif check.target_related:
            blockers.append(
                f"required check {check.name!r}: {len(check.target_related)} new finding(s)"
            )
    undetermined += lane_problems
    for finding in blocking:
        blockers.append(f"blocking finding: {finding.path}:{finding.line} {finding.failure_mode}")
    if blockers:
        return Gate(review_clean="no", reasons=blockers + undetermined)
    if undetermined:
        return Gate(review_clean="indeterminate", reasons=undetermined)
    return Gate(review_clean="yes", reasons=[])


def unbacked_revisions(lanes: Sequence[LaneReport], verified: Sequence[ReportFinding]) -> list[str]:
    """Why the gate cannot be ``yes`` for each verdict lane whose last answer is ``revise``
    when none of its findings is among the ``verified`` blockers (after triage; a blocker a
    waiver disposed of counts, its waiver being the answer to it). Such a revise is no
    blocker either, since what it found did not hold: ``indeterminate``, never ``no``."""
    backed = {name for finding in verified for name in finding.lanes}
    return [
        f"lane {lane.name!r} answered revise, but no verified blocker backs it: its findings "
        "were rejected or demoted (the gate needs every verdict lane's last answer to be pass)"
        for lane in lanes
        if lane.role == "verdict" and lane.status == "revise" and lane.name not in backed
    ]
