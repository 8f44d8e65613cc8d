"""The loop's decisions as plain functions: drift, systemic repairs, the plan of a round."""

from __future__ import annotations

import pytest

from pytest_boundedreview.ledger import new_state
from pytest_boundedreview.loop import drifted, is_systemic, loop_id_for, plan
from pytest_boundedreview.models.loop import LoopState, RoundState
from pytest_boundedreview.models.report import Gate, LaneReport


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


def test_loop_ids_are_safe() -> None:
    assert loop_id_for("pr", "origin/main", "feature/x y") == "pr-origin_main-feature_x_y"
    assert loop_id_for("staged", "HEAD", None) == "staged-HEAD-detached"
