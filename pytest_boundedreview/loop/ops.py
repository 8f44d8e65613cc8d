"""The loop operations external orchestrators drive (``bounded-review loop ...``) on a loop and
its rounds (``loop/attempts.py`` holds those on one attempt): each one a pure function from the
current state and a request to the next state and a receipt, refusing with a ``BR_<CODE>`` what
the protocol does not allow."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from ..core.errors import LedgerError
from ..core.statefile import utc_now
from ..models.loop import REVISION_PATTERN, Attempt, LaneState, LoopState, RoundState
from ..models.report import Gate
from .coverage import attempt_id, refusal
from .ledger import new_state
from .machine import ROUND_LIMIT
from .mismatch import NO_REVIEWER, after_round, why_required

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


def closed(state: LoopState) -> LedgerError:
    why = (
        f"loop {state.loop_id!r} is {state.status}: a closed loop never changes; review anew "
        f"under another loop id, or archive it with `bounded-review reset --loop-id "
        f"{state.loop_id}`"
    )
    return LedgerError("LOOP_CLOSED", why)


def checked_revision(revision: str) -> str:
    if not re.fullmatch(REVISION_PATTERN, revision):
        why = (
            f"revision {revision!r} is not tree: or commit: with 40 or 64 hex digits, or "
            "sha256: with 64"
        )
        raise LedgerError("INVALID", why)
    return revision


def admitted(number: int, lane: LaneState, revision: str) -> LaneState:
    """``lane`` opened for a fresh answer in round ``number``: its first attempt admitted."""
    first = Attempt(
        attempt_id=attempt_id(number, lane.name, 1), revision=revision, status="admitted"
    )
    return LaneState(name=lane.name, lens=lane.lens, role=lane.role, attempts=[first])


def _admissions(round_: RoundState) -> list[dict[str, str]]:
    return [
        {"lane": lane.name, "attempt_id": lane.attempts[0].attempt_id}
        for lane in round_.lanes
        if lane.status != "retained"
    ]


def open_round(state: LoopState | None) -> tuple[LoopState, RoundState]:
    if state is None:
        raise LedgerError("INVALID", "no such loop: run `bounded-review loop begin` first")
    if state.status != "open":
        raise closed(state)
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
    model_review_lane: str | None = None,
) -> tuple[LoopState, dict[str, Any]]:
    """A new loop with round 1 open for ``lanes`` (name, lens, role), each lane's first
    attempt admitted under an id the engine issues."""
    if state is not None and state.status == "open":
        raise LedgerError(
            "INVALID", f"loop {loop_id!r} is already open (round {len(state.rounds)})"
        )
    if state is not None:
        raise closed(state)
    names = [name for name, _, _ in lanes]
    if not names or len(set(names)) != len(names):
        raise LedgerError("INVALID", "give at least one lane, each name once")
    if all(role != "verdict" for _, _, role in lanes):
        raise LedgerError("INVALID", "a loop needs at least one verdict lane: scouts cast none")
    checked_revision(revision)
    verdicts = [name for name, _, role in lanes if role == "verdict"]
    if model_review_lane is not None and model_review_lane not in verdicts:
        why = f"--model-review-lane {model_review_lane!r} names no verdict lane"
        raise LedgerError("INVALID", why)
    architecture = next(
        (name for name, lens, role in lanes if lens == "architecture" and role == "verdict"), None
    )
    now = utc_now()
    first = RoundState(
        number=1,
        revision=revision,
        status="open",
        lanes=[
            admitted(1, LaneState(name=n, lens=lens, role=role), revision)  # type: ignore[arg-type]
            for n, lens, role in lanes
        ],
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
        operations=[],
        require_assurances=target_kind == "plan"
        if require_assurances is None
        else require_assurances,
        model_review_lane=model_review_lane or architecture,
        lanes_fixed=True,
    )
    return fresh, receipt(
        fresh, status="open", lanes=names, coverage="full", admitted=_admissions(first)
    )


def complete_round(
    state: LoopState | None, blocking: Sequence[str] = ()
) -> tuple[LoopState, dict[str, Any]]:
    """Close the open round; every lane must be complete (a failure must have been retried to
    an answer, else ``BR_UNRESOLVED_FAILURE``). ``blocking``: the verified blockers' fingerprints;
    a verdict lane's ``revise`` without one is a disagreement, which keeps nothing from ``yes``."""
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
    # a `revise` is a disagreement unless a verified blocker backs it (`blocking`: the
    # fingerprints the orchestrator's triage verified); only those block (CONTRACT §7)
    failing = [
        lane.name
        for lane in current.lanes
        if lane.role == "verdict" and lane.status not in ("pass", "retained", "revise")
    ]
    unanswered = sorted(set(current.scout_findings) - set(current.reconciled))
    fresh = [lane for lane in current.lanes if lane.role == "verdict" and lane.status != "retained"]
    reasons = [f"lane(s) not passing: {', '.join(failing)}"] if failing else []
    reasons += [] if fresh else [f"no verdict lane reviewed {current.revision}"]
    reasons += [f"{len(blocking)} blocking finding(s)"] if blocking else []
    reasons += [f"{len(unanswered)} scout finding(s) not reconciled"] if unanswered else []
    gate = Gate(review_clean="no" if reasons else "yes", reasons=reasons)
    done = current.model_copy(
        update={"status": "complete", "blocking": list(blocking), "gate": gate}
    )
    state = replace_round(state, done)
    state = after_round(state, state.rounds, state.model_review_lane)
    review = state.model_review
    if review is not None and review.pending and review.reviewer is None:
        why = f"{NO_REVIEWER} ({why_required(review)})"
        state = state.model_copy(update={"status": "deadlock", "stop_reason": why})
        return state, receipt(
            state,
            status="complete",
            review_clean=gate.review_clean,
            loop_status="deadlock",
            stop_reason=why,
        )
    return state, receipt(
        state, status="complete", review_clean=gate.review_clean, **_model_review(state)
    )


def _model_review(state: LoopState) -> dict[str, Any]:
    """The receipt's word on a model review the loop waits for."""
    review = state.model_review
    if review is None or not review.pending:
        return {}
    return {
        "model_review_required": True,
        "model_review": {
            "lane": review.lane,
            "category": review.category,
            "reviewer": review.reviewer,
            "flagged_round": review.flagged_round,
        },
    }


def next_round(
    state: LoopState | None, revision: str, affected: Sequence[str] | None = None
) -> tuple[LoopState, dict[str, Any]]:
    """Open the next round on a changed artifact: a full round (``affected`` is ``None``), or a
    delta where only ``affected`` answers again and every other lane is retained, allowed only
    while their results stay valid (``BR_COVERAGE``). Refused for an unchanged artifact or
    beyond the loop's ceiling."""
    if state is None:
        raise LedgerError("INVALID", "no such loop: run `bounded-review loop begin` first")
    if state.status != "open":
        raise closed(state)
    last = state.rounds[-1]
    if last.status != "complete":
        raise LedgerError("INVALID", f"round {last.number} is still open: complete it first")
    checked_revision(revision)
    if revision == last.revision:
        raise LedgerError("ARTIFACT_UNCHANGED", f"{revision} was reviewed in round {last.number}")
    if state.repair_loops_used >= state.max_repair_loops or last.number >= ROUND_LIMIT:
        why = f"round {last.number + 1} would exceed {state.max_repair_loops} repair loop(s)"
        raise LedgerError("ROUND_CAP", why)
    affected = None if affected is None else sorted(set(affected))
    refused = None if affected is None else refusal(last, affected)
    if refused:
        raise LedgerError("COVERAGE", refused)
    review = state.model_review
    if review is not None and review.pending and affected and review.reviewer not in affected:
        why = (
            f"a model review is required ({why_required(review)}): the round must admit "
            f"lane {review.reviewer!r}"
        )
        raise LedgerError("COVERAGE", why)
    number = last.number + 1
    lanes = [
        admitted(number, lane, revision)
        if affected is None or lane.name in affected
        else LaneState(
            name=lane.name,
            lens=lane.lens,
            role=lane.role,
            status="retained",
            retained_from=last.number,
        )
        for lane in last.lanes
    ]
    coverage: Literal["full", "delta"] = "full" if affected is None else "delta"
    new = RoundState(
        number=number,
        revision=revision,
        status="open",
        lanes=lanes,
        coverage=coverage,
        affected=sorted(affected or []),
    )
    state = state.model_copy(
        update={
            "rounds": [*state.rounds, new],
            "repair_loops_used": state.repair_loops_used + 1,
            "updated_at": utc_now(),
        }
    )
    return state, receipt(
        state,
        status="open",
        repair_loops_used=state.repair_loops_used,
        coverage=coverage,
        affected=new.affected,
        admitted=_admissions(new),
        retained=[lane.name for lane in lanes if lane.status == "retained"],
        **_model_review(state),
    )


def close(state: LoopState | None, outcome: str) -> tuple[LoopState, dict[str, Any]]:
    """Close the loop as ``converged`` (every verdict lane passed, scouts answered) or as
    ``drift`` / ``deadlock`` (a lane asked for revisions). A closed loop replays its close."""
    if state is None:
        raise LedgerError("INVALID", "no such loop")
    if state.status != "open":
        if state.status == outcome:
            return state, receipt(state, status=outcome, replayed=True)
        raise closed(state)
    last = state.rounds[-1]
    if last.status != "complete":
        raise LedgerError("INVALID", f"round {last.number} is still open: complete it first")
    statuses = [lane.status for lane in last.lanes if lane.role == "verdict"]
    if outcome == "converged" and (last.gate is None or last.gate.review_clean != "yes"):
        why = "; ".join(last.gate.reasons) if last.gate else "no gate"
        raise LedgerError("INVALID", f"converged requires a clean last round ({why})")
    if outcome in ("drift", "deadlock") and "revise" not in statuses:
        raise LedgerError("INVALID", f"{outcome} requires a lane that asked for revisions")
    state = state.model_copy(
        update={"status": outcome, "stop_reason": f"closed as {outcome}", "updated_at": utc_now()}
    )
    return state, receipt(state, status=outcome)
