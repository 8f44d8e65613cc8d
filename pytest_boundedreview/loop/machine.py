"""The bounded review loop as the pytest face drives it: what this session's round is (or why
there is none), and the loop's state after it.

Round 1 is the first review; each later round on a changed snapshot after a non-clean round is
one repair loop. An unchanged snapshot is never re-dispatched (its results are reused). Delta
rounds re-dispatch only the lanes that did not pass; the ceiling reached with blockers left is
a ``deadlock``, a repair outside the initial scope a ``drift``, a clean round ``converged``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import field
from typing import Literal

from ..models.finding import ReportFinding
from ..models.loop import LoopState, ModelReview, RoundState
from ..models.record import record
from .mismatch import NO_REVIEWER, why_required

SYSTEMIC_RULES = ("public-api", "migrations", "release")
ROUND_LIMIT = 1 + 3  # the first review and at most three repair loops (strict)


@record(frozen=True)
class Plan:
    """What this session does about the loop."""

    action: Literal["dispatch", "reuse", "stop"]
    round: int
    repair_loops_used: int
    new_loop: bool = False
    redispatch: frozenset[str] | None = None  # ``None``: every selected lane (a full round)
    previous: RoundState | None = None
    model_review: ModelReview | None = None  # heard first this round, with its history
    status: str = "open"
    stop_reason: str | None = None
    notes: list[str] = field(default_factory=list)


def loop_id_for(kind: str, base: str, branch: str | None) -> str:
    """``kind-base-branch``; when that needs folding (characters outside ``[A-Za-z0-9._-]``,
    over 128 characters), the folded form plus a digest of the original, so two targets never
    share a loop."""
    raw = f"{kind}-{base}-{branch or 'detached'}"
    if re.fullmatch(r"[A-Za-z0-9._-]{1,128}", raw):
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return re.sub(r"[^A-Za-z0-9._-]", "_", raw)[:115] + "-" + digest


def _is_test_of(path: str, scope: Collection[str]) -> bool:
    """Whether ``path`` is a test file of a module in ``scope`` (``test_x.py`` / ``x_test.py``
    for ``x.py`` anywhere)."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py"):
        return False
    stem = name[:-3]
    module = stem.removeprefix("test_") if stem.startswith("test_") else stem.removesuffix("_test")
    if module == stem:
        return False
    return any(p.rsplit("/", 1)[-1] == f"{module}.py" for p in scope)


def drifted(
    files: Sequence[str], initial: Collection[str], tests_allowed: bool = True
) -> list[str]:
    """Files of the target outside the initial frozen scope (tests of scoped files excepted)."""
    return [
        f for f in files if f not in initial and not (tests_allowed and _is_test_of(f, initial))
    ]


def _open_categories(rounds: Sequence[RoundState]) -> set[str]:
    return {f.category for r in rounds if r.findings for f in r.findings.blocking}


def plan(
    state: LoopState | None,
    revision: str,
    files: Sequence[str],
    max_repair_loops: int,
    *,
    reset: bool = False,
    full: bool = False,
    systemic: bool = False,
    tests_in_scope: bool = True,
    objective: str | None = None,
    model_reviewer: str | None = None,
) -> Plan:
    """This session's round, given the loop so far (``objective``: a plan's objective, ""
    while it has none; once pinned it must stay what it was)."""
    last = state.rounds[-1] if state and state.rounds else None
    if state is None or last is None or reset:
        notes = ["--bounded-review-reset: a new loop starts"] if reset and state else []
        return Plan("dispatch", 1, 0, new_loop=True, notes=notes)
    if last.revision == revision:
        why = f"the snapshot is unchanged since round {last.number}: its results are reused"
        return Plan(
            "reuse",
            last.number,
            state.repair_loops_used,
            previous=last,
            status=state.status,
            stop_reason=state.stop_reason,
            notes=[why],
        )
    if state.status in ("deadlock", "drift"):
        return Plan(
            "stop",
            last.number,
            state.repair_loops_used,
            status=state.status,
            stop_reason=state.stop_reason,
        )
    if state.status != "open" or (last.gate and last.gate.review_clean == "yes"):
        return Plan(
            "dispatch", 1, 0, new_loop=True, notes=["the previous loop ended: a new loop starts"]
        )
    if max_repair_loops == 0:
        why = "review-only allows no repair loop: the changed snapshot starts a new loop"
        return Plan("dispatch", 1, 0, new_loop=True, notes=[why])
    stop = _stop(state, last, files, max_repair_loops, tests_in_scope, objective)
    return stop or _next_round(state, last, full, systemic, model_reviewer)


def _stop(
    state: LoopState,
    last: RoundState,
    files: Sequence[str],
    max_repair_loops: int,
    tests_in_scope: bool,
    objective: str | None,
) -> Plan | None:
    """The loop's stop, when the change drifted (the plan's objective changed, files outside
    the initial scope) or the repair loops are spent; ``None`` when it goes on."""
    pinned = state.pinned_objective
    if objective is not None and pinned is not None and objective != pinned:
        now = "removed" if not objective else "changed"
        why = f"the plan's objective {now} since it was pinned (was: {pinned[:200]!r})"
        return Plan("stop", last.number, state.repair_loops_used, status="drift", stop_reason=why)
    outside = drifted(files, state.initial_scope, tests_in_scope)
    if outside:
        shown = ", ".join(outside[:10]) + (" ..." if len(outside) > 10 else "")
        why = f"the repair changed files outside the initial scope: {shown}"
        return Plan("stop", last.number, state.repair_loops_used, status="drift", stop_reason=why)
    if state.repair_loops_used >= max_repair_loops:
        why = (
            f"the ceiling of {max_repair_loops} repair loop(s) is reached with blockers left "
            f"(last round {last.number})"
        )
        return Plan(
            "stop", last.number, state.repair_loops_used, status="deadlock", stop_reason=why
        )
    return None


def _next_round(
    state: LoopState, last: RoundState, full: bool, systemic: bool, model_reviewer: str | None
) -> Plan:
    """The next repair round: the lanes that did not pass run again (every lane on a full
    round), the model review first when one is pending (a deadlock without a reviewer)."""
    review = state.model_review
    if review is not None and review.pending:
        if model_reviewer is None:
            return Plan(
                "stop",
                last.number,
                state.repair_loops_used,
                status="deadlock",
                stop_reason=f"{NO_REVIEWER} ({why_required(review)})",
            )
        review = review.model_copy(update={"reviewer": model_reviewer})
    else:
        review = None
    earlier = _open_categories(state.rounds[:-1])
    new_class = (
        bool(last.findings) and bool(_open_categories([last]) - earlier) and len(state.rounds) > 1
    )
    notes = []
    redispatch: frozenset[str] | None = frozenset(
        row.name for row in last.rows if row.status not in ("pass", "retained", "skipped")
    )
    for reason, applies in (
        ("--bounded-review-full", full),
        ("a systemic change", systemic),
        ("a new defect class in the last round", new_class),
    ):
        if applies:
            redispatch = None
            notes.append(f"a full round: {reason}")
            break
    return Plan(
        "dispatch",
        last.number + 1,
        state.repair_loops_used + 1,
        redispatch=redispatch,
        previous=last,
        model_review=review,
        notes=[*notes, *([f"a model review first: {why_required(review)}"] if review else [])],
    )


def flags_after(rounds: Sequence[RoundState], old: Sequence[str]) -> list[str]:
    """``stuck``: one fingerprint blocking in the last two rounds (``model-mismatch`` is raised
    with the model review it asks for, in ``loop/mismatch.py``)."""
    flags = list(old)
    blocking = [
        {f.fingerprint for f in r.findings.blocking} if r.findings else set() for r in rounds
    ]
    if len(blocking) >= 2 and blocking[-1] & blocking[-2] and "stuck" not in flags:
        flags.append("stuck")
    return flags


def blockers_fixed(
    previous: RoundState | None, blocking: Sequence[ReportFinding], statuses: Mapping[str, str]
) -> list[str]:
    """Fingerprints that blocked in the previous round and block no more, as judged by every
    lane that raised them answering again (``statuses``: this round's lane statuses) — a lane
    that failed this round has not said its blocker is gone."""
    if previous is None or previous.findings is None:
        return []
    now = {f.fingerprint for f in blocking}
    return sorted(
        {
            f.fingerprint
            for f in previous.findings.blocking
            if f.fingerprint not in now
            and all(statuses.get(lane) in ("pass", "revise") for lane in f.lanes)
        }
    )


def is_systemic(
    delta: Sequence[str], snapshot_files: int, reasons: Sequence[str], share: float = 0.5
) -> bool:
    """A repair that touches more than ``share`` of the snapshot's files, or trips a systemic
    risk rule."""
    if snapshot_files and len(delta) / snapshot_files > share:
        return True
    return any(reason.startswith(SYSTEMIC_RULES) for reason in reasons)
