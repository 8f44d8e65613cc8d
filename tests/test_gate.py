"""The gate's lane rule: a verdict lane's last answer must be ``pass``; a ``revise`` that no
verified blocker of its own backs keeps the gate ``indeterminate``."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.classification import Classification
from pytest_boundedreview.gate import decide, unbacked_revisions
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
    reasons = unbacked_revisions(rows, verified)
    assert [r.split("'")[1] for r in reasons] == unbacked


def test_an_unbacked_revise_is_indeterminate_and_a_blocker_still_says_no() -> None:
    (why,) = unbacked_revisions([row("a", "revise")], [])
    assert "lane 'a' answered revise, but no verified blocker backs it" in why
    alone = decide(Classification(), [], [], [why])
    assert (alone.review_clean, alone.reasons) == ("indeterminate", [why])
    with_blocker = decide(Classification(), [], [blocker("b")], [why])
    assert with_blocker.review_clean == "no"
    assert why in with_blocker.reasons
