"""The gate's lane rule: only verified blockers block; a ``revise`` that no verified blocker
of its own backs is a disagreement, noted on its row, and keeps nothing from ``yes``."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_boundedreview.baseline.classification import Classification
from pytest_boundedreview.gate import decide, disagreements
from pytest_boundedreview.models.finding import ReportFinding
from pytest_boundedreview.models.report import LaneReport


def row(name: str, status: str, role: str = "verdict") -> LaneReport:
    return LaneReport(name=name, lens="correctness", role=role, status=status, attempts=1)  # type: ignore[arg-type]


def blocker(*lanes: str) -> ReportFinding:
    return ReportFinding(
        path="app.py",
        line=1,
        severity="blocking",
        category="correctness",
        failure_mode="f",
        evidence="e",
        remediation="r",
        fingerprint="fp",
        lanes=list(lanes),
        verification="evidence",
    )


@pytest.mark.parametrize(
    ("rows", "verified", "unbacked"),
    [
        ([row("a", "revise")], [], ["a"]),  # its findings all rejected or demoted
        ([row("a", "revise")], [blocker("b")], ["a"]),  # another lane's blocker is not its own
        ([row("a", "revise")], [blocker("a")], []),
        ([row("a", "revise"), row("b", "revise")], [blocker("b", "a")], []),  # merged: both
        ([row("a", "pass"), row("b", "retained"), row("c", "unverified")], [], []),
        ([row("s", "scout", role="scout")], [], []),  # a scout casts no verdict
        ([row("a", "reused")], [], []),  # a reused round carries its recorded reasons instead
    ],
)
def test_a_revise_needs_a_verified_blocker_of_its_own(
    rows: list[LaneReport], verified: list[ReportFinding], unbacked: list[str]
) -> None:
    noted = disagreements(rows, verified)
    assert [r.name for r in noted if r.note and "a disagreement" in r.note] == unbacked
    assert [r.status for r in noted] == [r.status for r in rows]  # the revise stays reported


def test_an_unbacked_revise_keeps_nothing_from_yes_and_a_blocker_still_says_no() -> None:
    (noted,) = disagreements([dataclasses.replace(row("a", "revise"), note="retried")], [])
    assert noted.note == (
        "retried; revise not backed by a verified blocker: its findings were rejected or "
        "demoted (a disagreement, not a blocker)"
    )
    assert decide(Classification(), [], []).review_clean == "yes"
    with_blocker = decide(Classification(), [], [blocker("b")])
    assert with_blocker.review_clean == "no"
