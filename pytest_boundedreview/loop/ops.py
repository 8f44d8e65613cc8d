"""The loop operations external orchestrators drive (``bounded-review loop ...``): each one a
pure function from the current state and a request to the next state and a receipt, refusing
with a ``BR_<CODE>`` what the protocol does not allow."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import LedgerError
from ..core.fingerprint import finding_fingerprint
from ..core.statefile import utc_now
from ..models.lane import LaneResult
from ..models.loop import Attempt, LaneState, LoopState, RoundState
from ..models.report import Gate
from .ledger import new_state
from .machine import ROUND_LIMIT

MAX_RETRY_EDGES = 3
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


def _open(state: LoopState | None) -> tuple[LoopState, RoundState]:
    if state is None:
        raise LedgerError("INVALID", "no such loop: run `bounded-review loop begin` first")
    if state.status != "open":
        raise LedgerError("INVALID", f"the loop is {state.status}: a closed loop is immutable")
    last = state.rounds[-1]
    if last.status != "open":
        raise LedgerError("INVALID", f"round {last.number} is complete: start the next round")
    return state, last


def _replace_round(state: LoopState, new: RoundState) -> LoopState:
    return state.model_copy(update={"rounds": [*state.rounds[:-1], new], "updated_at": utc_now()})


def _lane(round_: RoundState, name: str) -> tuple[int, LaneState]:
    for index, lane in enumerate(round_.lanes):
        if lane.name == name:
            return index, lane
    known = ", ".join(lane.name for lane in round_.lanes)
    raise LedgerError("INVALID", f"no lane {name!r} in round {round_.number} (lanes: {known})")


def _with_lane(state: LoopState, round_: RoundState, index: int, lane: LaneState) -> LoopState:
    lanes = [*round_.lanes[:index], lane, *round_.lanes[index + 1 :]]
    return _replace_round(state, round_.model_copy(update={"lanes": lanes}))


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


def mark_running(
    state: LoopState | None, lane_name: str, attempt_id: str, revision: str
) -> tuple[LoopState, dict[str, Any]]:
    """Start an attempt: the lane's first, or one admitted as a retry."""
    state, current = _open(state)
    if revision != current.revision:
        why = f"attempt for {revision} but round {current.number} reviews {current.revision}"
        raise LedgerError("REVISION_MISMATCH", why)
    index, lane = _lane(current, lane_name)
    if any(a.status == "complete" for a in lane.attempts):
        raise LedgerError(
            "ATTEMPT_MISMATCH", f"lane {lane_name!r} is complete: it cannot run again"
        )
    if _attempt_anywhere(state, attempt_id) is not None and not _admitted(lane, attempt_id):
        raise LedgerError("ATTEMPT_MISMATCH", f"attempt id {attempt_id!r} is already used")
    if _admitted(lane, attempt_id):
        attempts = [
            a.model_copy(update={"status": "running"}) if a.attempt_id == attempt_id else a
            for a in lane.attempts
        ]
    elif lane.attempts:
        why = f"lane {lane_name!r} already has attempts: a new one must be admitted as a retry"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    else:
        attempts = [Attempt(attempt_id=attempt_id, revision=revision, status="running")]
    new = lane.model_copy(update={"attempts": attempts})
    state = _with_lane(state, current, index, new)
    return state, receipt(state, lane=lane_name, attempt_id=attempt_id, status="running")


def _admitted(lane: LaneState, attempt_id: str) -> bool:
    return any(a.attempt_id == attempt_id and a.status == "admitted" for a in lane.attempts)


def _attempt_anywhere(state: LoopState, attempt_id: str) -> tuple[str, Attempt] | None:
    for round_ in state.rounds:
        for lane in round_.lanes:
            for attempt in lane.attempts:
                if attempt.attempt_id == attempt_id:
                    return lane.name, attempt
    return None


def _running(current: RoundState, lane_name: str, attempt_id: str) -> tuple[int, LaneState]:
    index, lane = _lane(current, lane_name)
    for attempt in lane.attempts:
        if attempt.attempt_id == attempt_id:
            if attempt.status != "running":
                why = (
                    f"attempt {attempt_id!r} of lane {lane_name!r} is {attempt.status}, not running"
                )
                raise LedgerError("ATTEMPT_MISMATCH", why)
            return index, lane
    raise LedgerError("ATTEMPT_MISMATCH", f"lane {lane_name!r} has no attempt {attempt_id!r}")


def record_result(
    state: LoopState | None, lane_name: str, attempt_id: str, result: LaneResult
) -> tuple[LoopState, dict[str, Any]]:
    """A running attempt answered: the lane is complete with its verdict (or as a scout)."""
    state, current = _open(state)
    index, lane = _running(current, lane_name, attempt_id)
    if lane.role == "verdict" and result.verdict is None:
        raise LedgerError(
            "INVALID", f"lane {lane_name!r} is a verdict lane: its result needs a verdict"
        )
    if lane.role == "verdict" and state.require_assurances and result.assurances is None:
        why = f"lane {lane_name!r} answered without assurances, which this loop requires"
        raise LedgerError("INVALID", why)
    attempts = [
        a.model_copy(update={"status": "complete", "verdict": result.verdict})
        if a.attempt_id == attempt_id
        else a
        for a in lane.attempts
    ]
    status = result.verdict or "scout"
    new = lane.model_copy(update={"attempts": attempts, "status": status})
    state = _with_lane(state, current, index, new)
    current = state.rounds[-1]
    extra: dict[str, Any] = {}
    if lane.role == "scout":
        found = sorted(
            {scout_fingerprint(f) for f in result.findings} | set(current.scout_findings)
        )
        current = current.model_copy(update={"scout_findings": found})
        extra["scout_fingerprints"] = sorted(scout_fingerprint(f) for f in result.findings)
    else:
        answered = {r.fingerprint for r in result.reconciliation} | set(current.reconciled)
        current = current.model_copy(update={"reconciled": sorted(answered)})
    state = _replace_round(state, current)
    return state, receipt(state, lane=lane_name, attempt_id=attempt_id, status=status, **extra)


def scout_fingerprint(finding: Mapping[str, Any]) -> str:
    """A scout finding's identity in the loop commands (no snapshot at hand): its path,
    category and quote (or failure mode)."""
    text = finding.get("quote") or finding.get("failure_mode") or ""
    return finding_fingerprint(str(finding.get("path")), str(finding.get("category")), str(text))


def record_failure(
    state: LoopState | None, lane_name: str, attempt_id: str, kind: str, detail: str
) -> tuple[LoopState, dict[str, Any]]:
    """A running attempt failed (``error`` | ``died`` | ``limit``)."""
    state, current = _open(state)
    index, lane = _running(current, lane_name, attempt_id)
    attempts = [
        a.model_copy(update={"status": "failed", "failure_kind": kind, "detail": detail[:2000]})
        if a.attempt_id == attempt_id
        else a
        for a in lane.attempts
    ]
    new = lane.model_copy(update={"attempts": attempts, "status": "unverified"})
    state = _with_lane(state, current, index, new)
    return state, receipt(state, lane=lane_name, attempt_id=attempt_id, status="failed")


def admit_retry(
    state: LoopState | None, lane_name: str, attempt_id: str, retry_of: str
) -> tuple[LoopState, dict[str, Any]]:
    """Admit ``attempt_id`` as the retry of the failed attempt ``retry_of``: the chain only
    grows at its end (no branch, no cycle, never across lanes), at most 3 retry edges."""
    state, current = _open(state)
    owner = _attempt_anywhere(state, retry_of)
    if owner is None or owner[0] != lane_name:
        why = f"attempt {retry_of!r} is not an attempt of lane {lane_name!r} in this loop"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    index, lane = _lane(current, lane_name)
    if not lane.attempts or lane.attempts[-1].attempt_id != retry_of:
        raise LedgerError(
            "ATTEMPT_MISMATCH", f"{retry_of!r} is not the last attempt of {lane_name!r}"
        )
    if lane.attempts[-1].status != "failed":
        why = f"only a failed attempt may be retried; {retry_of!r} is {lane.attempts[-1].status}"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    if _attempt_anywhere(state, attempt_id) is not None:
        raise LedgerError("ATTEMPT_MISMATCH", f"attempt id {attempt_id!r} is already used")
    edges = sum(1 for a in lane.attempts if a.retry_of is not None)
    if edges >= MAX_RETRY_EDGES:
        raise LedgerError(
            "ATTEMPT_MISMATCH", f"lane {lane_name!r} used its {MAX_RETRY_EDGES} retries"
        )
    admitted = Attempt(
        attempt_id=attempt_id, revision=current.revision, status="admitted", retry_of=retry_of
    )
    new = lane.model_copy(update={"attempts": [*lane.attempts, admitted]})
    state = _with_lane(state, current, index, new)
    return state, receipt(state, lane=lane_name, attempt_id=attempt_id, retry_of=retry_of)


def complete_round(
    state: LoopState | None, blocking: Sequence[str] = ()
) -> tuple[LoopState, dict[str, Any]]:
    """Close the open round; every lane must be complete (a failure must have been retried to
    an answer, else ``BR_UNRESOLVED_FAILURE``)."""
    state, current = _open(state)
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
    state = _replace_round(state, done)
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
