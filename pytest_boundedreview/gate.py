"""The pass gate: ``yes`` only when everything required ran and nothing verified blocks."""

from __future__ import annotations

import dataclasses
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


def disagreements(
    lanes: Sequence[LaneReport], verified: Sequence[ReportFinding]
) -> list[LaneReport]:
    """The lane rows, each verdict lane whose last answer is ``revise`` with none of its
    findings among the ``verified`` blockers (after triage; a blocker a waiver disposed of
    counts) noted as a disagreement. What it found did not hold, so it blocks nothing and
    keeps nothing from ``yes``: its findings are reported as advisory or rejected with their
    reasons, and no repair round is opened for them."""
    backed = {name for finding in verified for name in finding.lanes}
    note = (
        "revise not backed by a verified blocker: its findings were rejected or demoted "
        "(a disagreement, not a blocker)"
    )
    return [
        dataclasses.replace(lane, note=f"{lane.note}; {note}" if lane.note else note)
        if lane.role == "verdict" and lane.status == "revise" and lane.name not in backed
        else lane
        for lane in lanes
    ]
