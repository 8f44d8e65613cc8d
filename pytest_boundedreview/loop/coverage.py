"""Which lanes a round reviews with: every lane afresh (``full``), or a ``delta`` where only the
affected lanes answer again and every other lane keeps a result of the round before that is
still valid. One rule for both faces: the loop commands and the pytest session."""

from __future__ import annotations

from collections.abc import Collection

from ..models.loop import LaneState, RoundState


def attempt_id(round_number: int, lane: str, number: int) -> str:
    """The id the engine issues for a lane's ``number``-th attempt in a round: unique across
    the loop (the round and the position are numbers, the lane name sits between them)."""
    return f"r{round_number}-{lane}-{number}"


def still_valid(lane: LaneState, previous: RoundState) -> str | None:
    """Why ``lane``'s result in ``previous`` cannot be retained, or ``None`` when it can: a
    verdict lane must have passed, a scout must have had every finding reconciled."""
    if lane.status == "retained":
        return None
    if lane.role == "verdict":
        if lane.status == "pass":
            return None
        return f"its verdict in round {previous.number} is {lane.status or 'missing'}, not pass"
    if lane.status != "scout":
        return f"it did not answer in round {previous.number}"
    unanswered = sorted({mark.fingerprint for mark in lane.findings} - set(previous.reconciled))
    if unanswered:
        return f"{len(unanswered)} of its finding(s) in round {previous.number} are not reconciled"
    return None


def refusal(previous: RoundState, affected: Collection[str]) -> str | None:
    """Why a delta round after ``previous`` that admits only ``affected`` is not allowed, or
    ``None``: the set must be a non-empty strict subset of the lanes, and every lane left out
    must keep a valid result."""
    names = [lane.name for lane in previous.lanes]
    if not affected or not all(affected):
        return "a delta needs at least one affected lane (or give a full round)"
    unknown = sorted(set(affected) - set(names))
    if unknown:
        return f"no lane {', '.join(map(repr, unknown))} in round {previous.number}"
    if set(names) <= set(affected):
        return "every lane is affected: that is a full round (--full-review)"
    if all(lane.role != "verdict" for lane in previous.lanes if lane.name in affected):
        return "a delta needs a verdict lane among the affected lanes: scouts cast no verdict"
    for lane in previous.lanes:
        why = None if lane.name in affected else still_valid(lane, previous)
        if why:
            return f"lane {lane.name!r} cannot be retained: {why}"
    return None
