"""The operations on one attempt of a lane (``bounded-review loop mark-running``,
``record-result``, ``record-failure``, ``admit-retry``): pure functions from the current state
and a request to the next state and a receipt, refusing with a ``BR_<CODE>`` what the protocol
does not allow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import LedgerError
from ..core.fingerprint import finding_fingerprint
from ..models.lane import LaneResult
from ..models.loop import Attempt, LaneState, LoopState, Mark, RoundState
from .coverage import attempt_id as issue_id
from .mismatch import answered as review_answered
from .ops import open_round, receipt, replace_round
from .structure import MAX_RETRY_EDGES


def _lane(round_: RoundState, name: str) -> tuple[int, LaneState]:
    """The lane ``name`` of the open round, which must not be retained: a retained lane is
    never launched and never answers."""
    for index, lane in enumerate(round_.lanes):
        if lane.name == name:
            if lane.status == "retained":
                why = (
                    f"lane {name!r} is retained from round {lane.retained_from} in round "
                    f"{round_.number}: it is not launched and does not answer"
                )
                raise LedgerError("LANE_RETAINED", why)
            return index, lane
    known = ", ".join(lane.name for lane in round_.lanes)
    raise LedgerError("INVALID", f"no lane {name!r} in round {round_.number} (lanes: {known})")


def _with_lane(state: LoopState, round_: RoundState, index: int, lane: LaneState) -> LoopState:
    lanes = [*round_.lanes[:index], lane, *round_.lanes[index + 1 :]]
    return replace_round(state, round_.model_copy(update={"lanes": lanes}))


def _echoed(current: RoundState, revision: str) -> None:
    """The orchestrator's revision must be the round's: an answer about another snapshot
    counts for nothing."""
    if revision != current.revision:
        why = f"the attempt is for {revision} but round {current.number} reviews {current.revision}"
        raise LedgerError("REVISION_MISMATCH", why)


def mark_running(
    state: LoopState | None, lane_name: str, attempt: str, revision: str
) -> tuple[LoopState, dict[str, Any]]:
    """Start the lane's admitted attempt (its first, or a retry), by the id the engine issued."""
    state, current = open_round(state)
    index, lane = _lane(current, lane_name)
    _echoed(current, revision)
    last = lane.attempts[-1] if lane.attempts else None
    if last is None or last.attempt_id != attempt or last.status != "admitted":
        issued = (
            f"; its admitted attempt is {last.attempt_id!r}"
            if last and last.status == "admitted"
            else ""
        )
        why = f"{attempt!r} is not an admitted attempt of lane {lane_name!r}{issued}"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    attempts = [*lane.attempts[:-1], last.model_copy(update={"status": "running"})]
    new = lane.model_copy(update={"attempts": attempts})
    state = _with_lane(state, current, index, new)
    return state, receipt(state, lane=lane_name, attempt_id=attempt, status="running")


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
    state: LoopState | None, lane_name: str, attempt_id: str, revision: str, result: LaneResult
) -> tuple[LoopState, dict[str, Any]]:
    """A running attempt answered: the lane is complete with its verdict (or as a scout)."""
    state, current = open_round(state)
    _lane(current, lane_name)  # a retained lane is refused before anything else
    _echoed(current, revision)
    index, lane = _running(current, lane_name, attempt_id)
    if lane.role == "scout" and result.verdict is not None:
        why = f"lane {lane_name!r} is a scout: it casts no verdict (got {result.verdict!r})"
        raise LedgerError("SCOUT_VERDICT", why)
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
    raised = sorted({(scout_fingerprint(f), str(f.get("category"))) for f in result.findings})
    marks = [Mark(fingerprint=fingerprint, category=category) for fingerprint, category in raised]
    mine = sorted({mark.fingerprint for mark in marks})
    new = lane.model_copy(update={"attempts": attempts, "status": status, "findings": marks})
    state = _with_lane(state, current, index, new)
    current = state.rounds[-1]
    extra: dict[str, Any] = {}
    if lane.role == "scout":
        found = sorted(set(mine) | set(current.scout_findings))
        current = current.model_copy(update={"scout_findings": found})
        extra["scout_fingerprints"] = mine
    else:
        answered = {r.fingerprint for r in result.reconciliation} | set(current.reconciled)
        current = current.model_copy(update={"reconciled": sorted(answered)})
    state = review_answered(replace_round(state, current), current.number, lane_name)
    return state, receipt(state, lane=lane_name, attempt_id=attempt_id, status=status, **extra)


def scout_fingerprint(finding: Mapping[str, Any]) -> str:
    """A scout finding's identity in the loop commands (no snapshot at hand): its path,
    category and quote (or failure mode)."""
    text = finding.get("quote") or finding.get("failure_mode") or ""
    return finding_fingerprint(str(finding.get("path")), str(finding.get("category")), str(text))


def record_failure(
    state: LoopState | None,
    lane_name: str,
    attempt_id: str,
    revision: str,
    kind: str,
    detail: str,
) -> tuple[LoopState, dict[str, Any]]:
    """A running attempt failed (``error`` | ``died`` | ``limit``)."""
    state, current = open_round(state)
    _lane(current, lane_name)  # a retained lane is refused before anything else
    _echoed(current, revision)
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
    state: LoopState | None, lane_name: str, retry_of: str
) -> tuple[LoopState, dict[str, Any]]:
    """Admit the retry of the failed attempt ``retry_of`` under an id the engine issues: the
    chain only grows at its end (no branch, no cycle, never across lanes), at most 3 retry
    edges."""
    state, current = open_round(state)
    index, lane = _lane(current, lane_name)
    owner = _attempt_anywhere(state, retry_of)
    if owner is None or owner[0] != lane_name:
        why = f"attempt {retry_of!r} is not an attempt of lane {lane_name!r} in this loop"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    if not lane.attempts or lane.attempts[-1].attempt_id != retry_of:
        raise LedgerError(
            "ATTEMPT_MISMATCH", f"{retry_of!r} is not the last attempt of {lane_name!r}"
        )
    if lane.attempts[-1].status != "failed":
        why = f"only a failed attempt may be retried; {retry_of!r} is {lane.attempts[-1].status}"
        raise LedgerError("ATTEMPT_MISMATCH", why)
    if len(lane.attempts) - 1 >= MAX_RETRY_EDGES:
        raise LedgerError(
            "ATTEMPT_MISMATCH", f"lane {lane_name!r} used its {MAX_RETRY_EDGES} retries"
        )
    issued = issue_id(current.number, lane_name, len(lane.attempts) + 1)
    retry = Attempt(
        attempt_id=issued, revision=current.revision, status="admitted", retry_of=retry_of
    )
    new = lane.model_copy(update={"attempts": [*lane.attempts, retry]})
    state = _with_lane(state, current, index, new)
    return state, receipt(state, lane=lane_name, attempt_id=issued, retry_of=retry_of)
