"""The loop operations external orchestrators drive (``bounded-review loop ...``) on a loop and
its rounds (``loop/attempts.py`` holds those on one attempt): each one a pure function from the
current state and a request to the next state and a receipt, refusing with a ``BR_<CODE>`` what
the protocol does not allow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import LedgerError
from ..core.statefile import utc_now
from ..models.loop import LaneState, LoopState, RoundState
from ..models.report import Gate
from .ledger import new_state
from .machine import ROUND_LIMIT

EVENT = "BOUNDED_REVIEW_STATE_V1"


def receipt(state: LoopState, **fields: Any) -> dict[str, Any]:
    """The receipt line of an operation on ``state``."""
    last = state.rounds[-1] if state.rounds else None
    return {
        "event": EVENT,
        "loop_id": state.loop_id,
        "round": last.number if last else 0,
        "revision": last.revision if last else None,
        **fields,
    }


def open_round(state: LoopState | None) -> tuple[LoopState, RoundState]:
    if state is None:
        raise LedgerError("INVALID", "no such loop: run `bounded-review loop begin` first")
    if state.status != "open":
        raise LedgerError("INVALID", f"the loop is {state.status}: a closed loop is immutable")
    last = state.rounds[-1]
    if last.status != "open":
        raise LedgerError("INVALID", f"round {last.number} is complete: start the next round")
    return state, last


def replace_round(state: LoopState, new: RoundState) -> LoopState:
    return state.model_copy(update={"rounds": [*state.rounds[:-1], new], "updated_at": utc_now()})


def begin(
    state: LoopState | None,
    loop_id: str,
    target_kind: str,
    revision: str,
    lanes: Sequence[tuple[str, str, str]],
    max_repair_loops: int,
    scope: Sequence[str] = (),
    require_assurances: bool | None = None,
) -> tuple[LoopState, dict[str, Any]]:
    """A new loop with round 1 open for ``lanes`` (name, lens, role)."""
    if state is not None and state.status == "open":
        raise LedgerError(
            "INVALID", f"loop {loop_id!r} is already open (round {len(state.rounds)})"
        )
    names = [name for name, _, _ in lanes]
    if not names or len(set(names)) != len(names):
        raise LedgerError("INVALID", "give at least one lane, each name once")
    now = utc_now()
    first = RoundState(
        number=1,
        revision=revision,
        status="open",
        lanes=[LaneState(name=n, lens=lens, role=role) for n, lens, role in lanes],  # type: ignore[arg-type]
    )
    fresh = new_state(
        loop_id,
        target_kind=target_kind,
        base=None,
        branch=None,
        status="open",
        created_at=now,
        updated_at=now,
        initial_scope=list(scope),
        max_repair_loops=max_repair_loops,
        repair_loops_used=0,
        rounds=[first],
        operations=list(state.operations) if state else [],
        require_assurances=target_kind == "plan"
        if require_assurances is None
        else require_assurances,
    )
    return fresh, receipt(fresh, status="open", lanes=names)


def complete_round(
    state: LoopState | None, blocking: Sequence[str] = ()
) -> tuple[LoopState, dict[str, Any]]:
    """Close the open round; every lane must be complete (a failure must have been retried to
    an answer, else ``BR_UNRESOLVED_FAILURE``)."""
    state, current = open_round(state)
    for lane in current.lanes:
        last = lane.attempts[-1] if lane.attempts else None
        if lane.status == "retained":
            continue
        if last is None or last.status in ("running", "admitted"):
            raise LedgerError("ATTEMPT_MISMATCH", f"lane {lane.name!r} has not answered yet")
        if last.status == "failed":
            raise LedgerError(
                "UNRESOLVED_FAILURE", f"lane {lane.name!r} failed and was not retried to an answer"
            )
    failing = [
        lane.name
        for lane in current.lanes
        if lane.role == "verdict" and lane.status not in ("pass", "retained")
    ]
    reasons = [f"lane(s) not passing: {', '.join(failing)}"] if failing else []
    reasons += [f"{len(blocking)} blocking finding(s)"] if blocking else []
    gate = Gate(review_clean="no" if reasons else "yes", reasons=reasons)
    done = current.model_copy(
        update={"status": "complete", "blocking": list(blocking), "gate": gate}
    )
    state = replace_round(state, done)
    return state, receipt(state, status="complete", review_clean=gate.review_clean)


def next_round(state: LoopState | None, revision: str) -> tuple[LoopState, dict[str, Any]]:
    """Open the next round on a changed artifact: lanes that passed are retained, the others
    re-open; refused for an unchanged artifact or beyond the loop's ceiling."""
    if state is None or state.status != "open":
        raise LedgerError("INVALID", "no open loop")
    last = state.rounds[-1]
    if last.status != "complete":
        raise LedgerError("INVALID", f"round {last.number} is still open: complete it first")
    if revision == last.revision:
        raise LedgerError("ARTIFACT_UNCHANGED", f"{revision} was reviewed in round {last.number}")
    if state.repair_loops_used >= state.max_repair_loops or last.number >= ROUND_LIMIT:
        why = f"round {last.number + 1} would exceed {state.max_repair_loops} repair loop(s)"
        raise LedgerError("ROUND_CAP", why)
    lanes = []
    for lane in last.lanes:
        passed = lane.status in ("pass", "retained")
        lanes.append(
            LaneState(
                name=lane.name,
                lens=lane.lens,
                role=lane.role,
                status="retained" if passed else None,
                retained_from=last.number if passed else None,
            )
        )
    new = RoundState(number=last.number + 1, revision=revision, status="open", lanes=lanes)
    state = state.model_copy(
        update={
            "rounds": [*state.rounds, new],
            "repair_loops_used": state.repair_loops_used + 1,
            "updated_at": utc_now(),
        }
    )
    return state, receipt(state, status="open", repair_loops_used=state.repair_loops_used)


def close(state: LoopState | None, outcome: str) -> tuple[LoopState, dict[str, Any]]:
    """Close the loop as ``converged`` (every verdict lane passed, scouts answered) or as
    ``drift`` / ``deadlock`` (a lane asked for revisions). A closed loop replays its close."""
    if state is None:
        raise LedgerError("INVALID", "no such loop")
    if state.status != "open":
        if state.status == outcome:
            return state, receipt(state, status=outcome, replayed=True)
        raise LedgerError("INVALID", f"the loop is already closed as {state.status}")
    last = state.rounds[-1]
    if last.status != "complete":
        raise LedgerError("INVALID", f"round {last.number} is still open: complete it first")
    statuses = [lane.status for lane in last.lanes if lane.role == "verdict"]
    if outcome == "converged" and not all(s in ("pass", "retained") for s in statuses):
        raise LedgerError("INVALID", "converged requires every verdict lane to pass")
    if outcome == "converged" and last.blocking:
        raise LedgerError("INVALID", "converged requires no blocking finding in the last round")
    unanswered = sorted(set(last.scout_findings) - set(last.reconciled))
    if outcome == "converged" and unanswered:
        shown = ", ".join(unanswered[:10])
        why = f"converged requires every scout finding reconciled; unanswered: {shown}"
        raise LedgerError("INVALID", why)
    if outcome in ("drift", "deadlock") and "revise" not in statuses:
        raise LedgerError("INVALID", f"{outcome} requires a lane that asked for revisions")
    state = state.model_copy(
        update={"status": outcome, "stop_reason": f"closed as {outcome}", "updated_at": utc_now()}
    )
    return state, receipt(state, status=outcome)
