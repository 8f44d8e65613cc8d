"""The part of a report an agent's stop hook decides on, read from its JSON with each field's
type checked, without building the whole report model (that costs most of a second, and the hook
answers on every stop).

Anything missing, mistyped or of another schema makes the report unusable, never clean. The
commit and push gate still read the whole report strictly (``report.accept.read``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..models.record import record

SCHEMA = "bounded-review/report/v1"
MAX_BYTES = 64 * 1024 * 1024
GATE_VALUES = ("yes", "no", "indeterminate")


@record(frozen=True)
class Blocker:
    path: str
    line: int
    failure_mode: str
    remediation: str


@record(frozen=True)
class ReportView:
    """What the stop hook reads of a report."""

    revision: str
    base_commit: str | None
    review_clean: str
    reasons: tuple[str, ...]
    next_action: str
    loop_status: str
    repair_loops_used: int
    max_repair_loops: int
    blockers: tuple[Blocker, ...]
    target_related: tuple[tuple[str, str], ...]  # (node id, reason)
    # what the review ran under: None where the report does not say (an earlier version)
    state_dir: str | None = None
    reduced: tuple[str, ...] | None = None  # each option that made it less than its rules ask


class Unusable(ValueError):
    """The report cannot be used: why, naming the key."""


def _get(data: Any, dotted: str, kind: type) -> Any:
    value = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise Unusable(f"it has no `{dotted}`")
        value = value[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Unusable(f"`{dotted}` is not a {kind.__name__}")
    return value


def _strings(data: Any, dotted: str) -> tuple[str, ...]:
    values = _get(data, dotted, list)
    if not all(isinstance(value, str) for value in values):
        raise Unusable(f"`{dotted}` holds a value that is not a string")
    return tuple(values)


def parse(raw: bytes) -> ReportView:
    """The view of the report ``raw``; :class:`Unusable` when it is not one."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise Unusable(f"it is not JSON ({exc})") from None
    if _get(data, "schema", str) != SCHEMA:
        raise Unusable(f"its schema is not {SCHEMA}")
    clean = _get(data, "gate.review_clean", str)
    if clean not in GATE_VALUES:
        raise Unusable(f"`gate.review_clean` is {clean!r}")
    blockers = tuple(
        Blocker(
            _get(item, "path", str),
            _get(item, "line", int),
            _get(item, "failure_mode", str),
            _get(item, "remediation", str),
        )
        for item in _get(data, "findings.blocking", list)
    )
    related = tuple(
        (_get(item, "nodeid", str), _get(item, "reason", str))
        for item in _get(data, "tests.target_related", list)
    )
    state_dir, reduced = _invocation(data)
    base_commit = _get(data, "target", dict).get("base_commit")
    if base_commit is not None and not isinstance(base_commit, str):
        raise Unusable("`target.base_commit` is not a string")
    return ReportView(
        revision=_get(data, "target.revision", str),
        base_commit=base_commit,
        review_clean=clean,
        reasons=_strings(data, "gate.reasons"),
        next_action=_get(data, "next_action", str),
        loop_status=_get(data, "loop.status", str),
        repair_loops_used=_get(data, "loop.repair_loops_used", int),
        max_repair_loops=_get(data, "budget.max_repair_loops", int),
        blockers=blockers,
        target_related=related,
        state_dir=state_dir,
        reduced=reduced,
    )


def _invocation(data: Any) -> tuple[str | None, tuple[str, ...] | None]:
    """The state folder and the reducing options the report records, ``(None, None)`` when
    it records none (a report of an earlier version)."""
    if not isinstance(data, dict) or data.get("invocation") is None:
        return None, None
    reduced = tuple(
        f"{_get(item, 'option', str)}={_get(item, 'used', str)} where the rules give "
        f"{_get(item, 'configured', str)} ({_get(item, 'why', str)})"
        for item in _get(data, "invocation.reduced", list)
    )
    return _get(data, "invocation.state_dir", str), reduced


def read(path: Path) -> ReportView | str:
    """The view of the report at ``path``, or why there is none to use (the caller names the
    review that writes one)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return f"no report at {path}"
    except OSError as exc:
        return f"the report {path} is unreadable ({exc})"
    if len(raw) > MAX_BYTES:
        return f"the report {path} is over {MAX_BYTES} bytes"
    try:
        return parse(raw)
    except Unusable as exc:
        return f"{path} is not a usable bounded-review report ({exc})"
