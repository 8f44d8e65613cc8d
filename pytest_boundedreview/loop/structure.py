"""The structural rules every loop state keeps, checked on every load by the ledger (so by the
loop commands, ``loop validate`` and the pytest session alike): one attempt chain per lane,
engine-issued ids unique across the loop, revisions echoed, and rounds that match their
coverage. Each violation is named by its JSON path."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..models.loop import REVISION_PATTERN, LaneState, LoopState, RoundState
from .coverage import attempt_id, still_valid

MAX_RETRY_EDGES = 3


def violations(state: LoopState) -> Iterator[tuple[str, str]]:
    """Each broken rule as (JSON path, what is wrong), in document order."""
    first = state.rounds[0].lanes if state.rounds else []
    # `loop begin` fixes the lanes; its receipt (the admitted lanes) says so even if the flag
    # were edited away
    fixed = state.lanes_fixed or any("admitted" in op.receipt for op in state.operations)
    if fixed and state.rounds and all(lane.role != "verdict" for lane in first):
        yield "$.rounds[0].lanes", "a loop has at least one verdict lane"
    for i, round_ in enumerate(state.rounds):
        at = f"$.rounds[{i}]"
        if round_.number != i + 1:
            yield f"{at}.number", f"round {round_.number} stands at position {i + 1}"
        if round_.status == "open" and i != len(state.rounds) - 1:
            yield f"{at}.status", "only the last round may be open"
        if not re.fullmatch(REVISION_PATTERN, round_.revision):
            yield f"{at}.revision", f"{round_.revision!r} is not tree:, commit: or sha256: + hex"
        previous = state.rounds[i - 1] if i else None
        yield from _coverage(round_, previous, at)
        names = [lane.name for lane in round_.lanes]
        if fixed and i:
            shape = [(lane.name, lane.lens, lane.role) for lane in round_.lanes]
            if shape != [(lane.name, lane.lens, lane.role) for lane in first]:
                yield f"{at}.lanes", "every round has the lanes of round 1 (names, lenses, roles)"
        for j, lane in enumerate(round_.lanes):
            where = f"{at}.lanes[{j}]"
            if names.index(lane.name) != j:
                yield f"{where}.name", f"lane {lane.name!r} appears twice in the round"
            if lane.role == "scout" and lane.status in ("pass", "revise"):
                yield f"{where}.status", "a scout casts no verdict"
            if lane.status == "retained":
                yield from _retained(lane, previous, where)
                continue
            yield from _chain(lane, round_, where)
            yield from _status(lane, round_, where)


def _coverage(
    round_: RoundState, previous: RoundState | None, at: str
) -> Iterator[tuple[str, str]]:
    retained = {lane.name for lane in round_.lanes if lane.status == "retained"}
    fresh = {lane.name for lane in round_.lanes} - retained
    if round_.coverage == "full":
        if round_.affected:
            yield f"{at}.affected", "a full round names no affected lanes"
        if retained:
            yield f"{at}.coverage", f"a full round retains {', '.join(sorted(retained))}"
        return
    if previous is None:
        yield f"{at}.coverage", "the first round of a loop is a full round"
    if sorted(set(round_.affected)) != round_.affected or set(round_.affected) != fresh:
        yield f"{at}.affected", "a delta's affected lanes are exactly the lanes that answer anew"
    if all(lane.role != "verdict" for lane in round_.lanes if lane.name in fresh):
        yield f"{at}.affected", "a delta has a verdict lane among its affected lanes"
    if not retained:
        yield f"{at}.coverage", "a delta retains at least one lane (else it is a full round)"


def _retained(
    lane: LaneState, previous: RoundState | None, where: str
) -> Iterator[tuple[str, str]]:
    if lane.attempts:
        yield f"{where}.attempts", "a retained lane has no attempts"
    if previous is None or lane.retained_from != previous.number:
        yield f"{where}.retained_from", "a retained lane points at the round before"
        return
    before = next((old for old in previous.lanes if old.name == lane.name), None)
    why = "it was not in that round" if before is None else still_valid(before, previous)
    if why:
        yield f"{where}.status", f"lane {lane.name!r} cannot be retained: {why}"


def _chain(lane: LaneState, round_: RoundState, where: str) -> Iterator[tuple[str, str]]:
    """One root and one immediate-successor chain under the ids the engine issues; a retry
    follows only a failed attempt."""
    if lane.retained_from is not None:
        yield f"{where}.retained_from", "only a retained lane points at an earlier round"
    if not lane.attempts:
        yield f"{where}.attempts", "an admitted lane has its chain of attempts (one at least)"
    if len(lane.attempts) - 1 > MAX_RETRY_EDGES:
        yield f"{where}.attempts", f"more than {MAX_RETRY_EDGES} retry edges"
    for k, attempt in enumerate(lane.attempts):
        path = f"{where}.attempts[{k}]"
        issued = attempt_id(round_.number, lane.name, k + 1)
        if attempt.attempt_id != issued:
            yield (
                f"{path}.attempt_id",
                f"{attempt.attempt_id!r} is not the id issued here ({issued!r})",
            )
        expected = lane.attempts[k - 1].attempt_id if k else None
        if attempt.retry_of != expected:
            yield (
                f"{path}.retry_of",
                (
                    "the root of a chain retries nothing"
                    if k == 0
                    else f"must retry the attempt before it ({expected!r})"
                ),
            )
        if k < len(lane.attempts) - 1 and attempt.status != "failed":
            yield f"{path}.status", "only a failed attempt is followed by a retry"
        if attempt.revision != round_.revision:
            yield f"{path}.revision", f"{attempt.revision!r} is not the round's revision"
        if lane.role == "scout" and attempt.verdict is not None:
            yield f"{path}.verdict", "a scout casts no verdict"


def _status(lane: LaneState, round_: RoundState, where: str) -> Iterator[tuple[str, str]]:
    """A lane's status is what its last attempt says; a complete round has no open attempt."""
    last = lane.attempts[-1] if lane.attempts else None
    if last is None:
        return
    if round_.status == "complete" and last.status in ("admitted", "running"):
        yield f"{where}.attempts", "a complete round has no attempt still admitted or running"
    expected = {"complete": last.verdict or "scout", "failed": "unverified"}.get(last.status)
    waiting = last.status in ("admitted", "running") and lane.status in (None, "unverified")
    if lane.status != expected and not waiting:
        yield f"{where}.status", f"{lane.status!r} is not what its last attempt says ({expected!r})"
