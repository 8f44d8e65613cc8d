"""The structural rules every loop state keeps, checked on every load by the ledger (so by the
loop commands, ``loop validate`` and the pytest session alike): one attempt chain per lane,
engine-issued ids unique across the loop, revisions echoed, and rounds that match their
coverage. Each violation is named by its JSON path."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..models.loop import REVISION_PATTERN, LaneState, LoopState, RoundState
from .coverage import still_valid

MAX_RETRY_EDGES = 3


def violations(state: LoopState) -> Iterator[tuple[str, str]]:
    """Each broken rule as (JSON path, what is wrong), in document order."""
    seen: dict[str, str] = {}
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
        for j, lane in enumerate(round_.lanes):
            where = f"{at}.lanes[{j}]"
            if names.index(lane.name) != j:
                yield f"{where}.name", f"lane {lane.name!r} appears twice in the round"
            if lane.role == "scout" and lane.status in ("pass", "revise"):
                yield f"{where}.status", "a scout casts no verdict"
            if lane.status == "retained":
                yield from _retained(lane, previous, where)
                continue
            yield from _chain(lane, round_, where, seen)


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
    if set(round_.affected) != fresh or not fresh:
        yield f"{at}.affected", "a delta's affected lanes are exactly the lanes that answer anew"
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


def _chain(
    lane: LaneState, round_: RoundState, where: str, seen: dict[str, str]
) -> Iterator[tuple[str, str]]:
    """One root and one immediate-successor chain; a retry follows only a failed attempt."""
    if lane.retained_from is not None:
        yield f"{where}.retained_from", "only a retained lane points at an earlier round"
    if not lane.attempts:
        yield f"{where}.attempts", "an admitted lane has its chain of attempts (one at least)"
    if len(lane.attempts) - 1 > MAX_RETRY_EDGES:
        yield f"{where}.attempts", f"more than {MAX_RETRY_EDGES} retry edges"
    for k, attempt in enumerate(lane.attempts):
        path = f"{where}.attempts[{k}]"
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
        if attempt.attempt_id in seen:
            yield (
                f"{path}.attempt_id",
                f"{attempt.attempt_id!r} is already used at {seen[attempt.attempt_id]}",
            )
        seen.setdefault(attempt.attempt_id, path)
        if lane.role == "scout" and attempt.verdict is not None:
            yield f"{path}.verdict", "a scout casts no verdict"
