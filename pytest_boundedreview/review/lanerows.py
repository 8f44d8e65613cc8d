"""What the report and the ledger keep of each lane: its row in the report, and its chain of
attempts as the loop ledger records it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..core.settings.tables import LaneConfig
from ..lanes.dispatch import LaneRun
from ..models.loop import Attempt as LoopAttempt
from ..models.loop import LaneState
from ..models.report import LaneReport, summed


def _status(run: LaneRun) -> str:
    last = run.attempts[-1] if run.attempts else None
    if last is None or last.result is None:
        return "unverified"
    return "scout" if run.lane.role == "scout" else (last.result.verdict or "unverified")


def unrun_row(lane: LaneConfig, status: str, note: str) -> LaneReport:
    """The row of a lane that was not dispatched."""
    return LaneReport(
        name=lane.name,
        lens=lane.lens,
        role=lane.role,
        model=lane.model,
        reasoning=lane.reasoning,
        status=status,  # type: ignore[arg-type]
        attempts=0,
        note=note,
    )


def _failures(run: LaneRun) -> list[str]:
    """Each distinct failure of the lane's attempts once, with how often it happened, and
    whether it was left unretried because no retry could change it."""
    counts = Counter(a.detail for a in run.attempts if not a.ok)
    shown = []
    for detail, times in counts.items():
        how = f"{times} attempts failed" if times > 1 else "attempt failed"
        shown.append(f"{how}: {detail}")
    if run.attempts and run.attempts[-1].final:
        shown.append("not retried: no retry can change this failure")
    return shown


def lane_row(run: LaneRun, note: str | None) -> LaneReport:
    last = run.attempts[-1] if run.attempts else None
    remarks = [a.detail for a in run.attempts if a.ok and a.detail]  # e.g. a fallback taken
    notes = [n for n in (note, *_failures(run), *remarks) if n]
    return LaneReport(
        name=run.lane.name,
        lens=run.lane.lens,
        role=run.lane.role,
        model=last.model if last else run.lane.model,
        reasoning=run.lane.reasoning,
        status=_status(run),  # type: ignore[arg-type]
        attempts=len(run.attempts),
        rationale=last.result.rationale if last and last.result else None,
        note="; ".join(notes) or None,
        tool=last.tool if last else None,
        tool_version=last.tool_version if last else None,
        usage=summed([a.usage for a in run.attempts if a.usage is not None]),
    )


def lane_states(runs: Sequence[LaneRun], revision: str) -> list[LaneState]:
    """Each dispatched lane's attempt chain as the ledger keeps it (A → B → C)."""
    states = []
    for run in runs:
        attempts: list[LoopAttempt] = []
        for number, attempt in enumerate(run.attempts, 1):
            attempts.append(
                LoopAttempt(
                    attempt_id=f"{run.lane.name}#{number}",
                    revision=revision,
                    status="complete" if attempt.ok else "failed",
                    failure_kind=attempt.failure,
                    retry_of=attempts[-1].attempt_id if attempts else None,
                    verdict=attempt.result.verdict
                    if attempt.result and run.lane.role == "verdict"
                    else None,  # a scout casts none, whatever it answered
                    detail=attempt.detail[:2000] or None,
                )
            )
        states.append(
            LaneState(
                name=run.lane.name,
                lens=run.lane.lens,
                role=run.lane.role,
                status=_status(run),  # type: ignore[arg-type]
                attempts=attempts,
            )
        )
    return states
