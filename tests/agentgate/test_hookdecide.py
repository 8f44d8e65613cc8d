"""The stop hook's let-go rule on a report whose loop is over: it counts only a loop run under
the ceiling the repository's rules give, in its own state folder, by the whole review."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.agentgate.hookdecide import Answer, Seen, ceiling_of, decide
from pytest_boundedreview.agentgate.hookstate import Counter
from pytest_boundedreview.agentgate.reportview import ReportView

TREE = "a" * 40


def report(status: str, used: int, ceiling: int, **more: object) -> ReportView:
    fields: dict[str, object] = dict(
        revision=f"tree:{TREE}",
        base_commit="b" * 40,
        review_clean="no",
        reasons=("target-related test failure: t::x",),
        next_action="fix t::x",
        loop_status=status,
        repair_loops_used=used,
        max_repair_loops=ceiling,
        blockers=(),
        target_related=(("t::x", "passes at base"),),
        state_dir=".bounded-review",
        reduced=(),
    )
    return ReportView(**(fields | more))  # type: ignore[arg-type]


def stop(found: ReportView, ceiling: int = 2) -> Answer:
    seen = Seen(TREE, found, ceiling, False, base_commit="b" * 40)
    return decide(seen, Counter(Path("never-saved.json")))  # a fresh task


@pytest.mark.parametrize(
    "found",
    [
        pytest.param(report("deadlock", 1, 1), id="deadlock under a lower ceiling"),
        pytest.param(report("open", 0, 0), id="no loop allowed (review-only)"),
        pytest.param(report("drift", 0, 2, state_dir="elsewhere"), id="another state folder"),
        pytest.param(
            report("deadlock", 2, 2, reduced=("--bounded-review-risk=economy ...",)),
            id="a reduced review",
        ),
        pytest.param(report("deadlock", 2, 2, reduced=None, state_dir=None), id="an old report"),
    ],
)
def test_a_loop_spent_under_less_than_the_rules_is_not_spent(found: ReportView) -> None:
    assert stop(found).block


@pytest.mark.parametrize("status", ["deadlock", "drift", "open"])
def test_a_loop_spent_under_the_rules_lets_go_with_its_state(status: str) -> None:
    said = stop(report(status, 2, 2))
    assert not said.block
    assert f"loop {status}, 2 of 2 repair loop(s) used" in said.text


def test_the_ceiling_is_the_rules_and_a_report_only_raises_an_auto_tier() -> None:
    assert ceiling_of("review-and-fix", None, "auto", reported=0) == 2
    assert ceiling_of("review-and-fix", None, "auto", reported=3) == 3
    assert ceiling_of("review-and-fix", None, "auto", reported=99) == 3
    assert ceiling_of("review-and-fix", None, "economy", reported=3) == 1
    assert ceiling_of("review-and-fix", 1, "auto", reported=3) == 1
    assert ceiling_of("review-only", None, "auto", reported=3) == 0
