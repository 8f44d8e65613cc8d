"""The loop's decisions as plain functions: drift, systemic repairs, the plan of a round."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.core.errors import LedgerError
from pytest_boundedreview.loop.ledger import Ledger, new_state
from pytest_boundedreview.loop.machine import (
    blockers_fixed,
    drifted,
    is_systemic,
    loop_id_for,
    plan,
)
from pytest_boundedreview.loop.result import RoundResult
from pytest_boundedreview.loop.rounds import LoopRound
from pytest_boundedreview.models.finding import ReportFinding
from pytest_boundedreview.models.loop import LoopState, RoundState
from pytest_boundedreview.models.report import Findings, Gate, LaneReport


def state(
    status: str = "open",
    used: int = 0,
    clean: bool = False,
    rows: tuple[tuple[str, str], ...] = (("rev", "revise"), ("sec", "pass")),
) -> LoopState:
    gate = Gate(review_clean="yes" if clean else "no")
    row = [LaneReport(name=n, lens=n, role="verdict", status=s, attempts=1) for n, s in rows]  # type: ignore[arg-type]
    last = RoundState(number=used + 1, revision="tree:a", status="complete", gate=gate, rows=row)
    return new_state(
        "L",
        target_kind="pr",
        base="main",
        branch="f",
        status=status,
        created_at="t",
        updated_at="t",
        initial_scope=["src/app.py"],
        max_repair_loops=2,
        repair_loops_used=used,
        rounds=[last],
        stop_reason="why" if status != "open" else None,
    )


@pytest.mark.parametrize(
    ("files", "tests_in_scope", "outside"),
    [
        (["src/app.py", "tests/test_app.py"], True, []),
        (["src/app.py", "tests/test_app.py"], False, ["tests/test_app.py"]),
        (["src/app_test.py"], True, []),
        (["src/other.py", "tests/test_other.py"], True, ["src/other.py", "tests/test_other.py"]),
        (["test_.py", "README"], True, ["test_.py", "README"]),
    ],
)
def test_drift(files: list[str], tests_in_scope: bool, outside: list[str]) -> None:
    assert drifted(files, ["src/app.py"], tests_in_scope) == outside


@pytest.mark.parametrize(
    ("delta", "total", "reasons", "share", "expected"),
    [
        (["a"], 10, [], 0.5, False),
        (["a"] * 6, 10, [], 0.5, True),
        (["a"] * 3, 10, [], 0.25, True),
        (["a"], 10, ["public-api: removes or renames `f`"], 0.5, True),
        (["a"], 10, ["migrations: path matches x"], 0.5, True),
        (["a"], 10, ["authentication: path matches y"], 0.5, False),
    ],
)
def test_systemic(
    delta: list[str], total: int, reasons: list[str], share: float, expected: bool
) -> None:
    assert is_systemic(delta, total, reasons, share) is expected


def test_plans() -> None:
    assert plan(None, "tree:a", [], 2).action == "dispatch"
    reuse = plan(state(), "tree:a", [], 2)
    assert (reuse.action, reuse.round) == ("reuse", 1)
    delta = plan(state(), "tree:b", ["src/app.py"], 2)
    assert (delta.action, delta.round, delta.repair_loops_used, delta.redispatch) == (
        "dispatch",
        2,
        1,
        frozenset({"rev"}),
    )
    assert plan(state(), "tree:b", ["src/app.py"], 2, systemic=True).redispatch is None
    assert plan(state(), "tree:b", ["src/app.py"], 2, full=True).notes == [
        "a full round: --bounded-review-full"
    ]
    assert plan(state(used=2), "tree:b", ["src/app.py"], 2).status == "deadlock"
    assert plan(state(), "tree:b", ["src/app.py"], 0).new_loop is True  # review-only
    assert plan(state(clean=True, status="converged"), "tree:b", [], 2).new_loop is True
    stopped = plan(state(status="drift"), "tree:b", [], 2)
    assert (stopped.action, stopped.stop_reason) == ("stop", "why")
    assert plan(state(status="drift"), "tree:b", [], 2, reset=True).new_loop is True


def test_loop_ids_are_safe_and_never_shared() -> None:
    assert loop_id_for("staged", "HEAD", None) == "staged-HEAD-detached"
    assert loop_id_for("pr", "main", "feature_x") == "pr-main-feature_x"
    slashed = loop_id_for("pr", "main", "feature/x")
    assert slashed.startswith("pr-main-feature_x-")
    assert slashed != loop_id_for("pr", "main", "feature_x")
    long = loop_id_for("pr", "main", "b" * 300)
    assert len(long) <= 128
    assert long != loop_id_for("pr", "main", "b" * 301)


def test_blockers_of_a_lane_that_failed_are_not_fixed() -> None:
    finding = ReportFinding(
        path="a.py",
        line=1,
        severity="blocking",
        category="correctness",
        failure_mode="f",
        evidence="e",
        remediation="r",
        fingerprint="fp",
        lanes=["rev"],
        verification="evidence",
    )
    previous = RoundState(
        number=1, revision="tree:a", status="complete", findings=Findings(blocking=[finding])
    )
    assert blockers_fixed(previous, [], {"rev": "pass"}) == ["fp"]
    assert blockers_fixed(previous, [], {"rev": "unverified"}) == []
    assert blockers_fixed(previous, [finding], {"rev": "revise"}) == []


def test_two_sessions_never_record_the_same_round_twice(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit({"app.py": "x = 3\n"}, "change")
    handle = git.open_repo(repo.path)
    target = freeze(handle, "local-diff", "HEAD~1")
    first, second = (LoopRound(handle, target, tmp_path, 2) for _ in range(2))
    assert first.prepare().action == second.prepare().action == "dispatch"
    second.record(RoundResult(), Gate(review_clean="no"))
    with pytest.raises(LedgerError) as caught:
        first.record(RoundResult(), Gate(review_clean="no"))
    assert caught.value.code == "LOCKED"
    state = Ledger(tmp_path, first.loop_id).read()
    assert state is not None
    assert [r.number for r in state.rounds] == [1]
