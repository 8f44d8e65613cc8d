"""The persisted state of one review loop (``.bounded-review/loops/<id>/state.json``)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Field

from .base import Model
from .report import Findings, Gate, LaneReport, provide_names

LOOP_STATE_SCHEMA: Final = "bounded-review/loop-state/v1"
LOOP_ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
# What a round reviews: a git tree or commit, or a plan file's digest.
REVISION_PATTERN = r"^(?:(?:tree|commit):(?:[0-9a-f]{40}|[0-9a-f]{64})|sha256:[0-9a-f]{64})$"
LoopId = Annotated[str, Field(pattern=LOOP_ID_PATTERN)]
LaneStatus = Literal["pass", "revise", "scout", "unverified", "retained", "reused", "skipped"]


class Attempt(Model):
    """One dispatch of one lane; failed attempts may be retried into a chain."""

    attempt_id: Annotated[str, Field(min_length=1)]
    revision: str
    status: Literal["admitted", "running", "complete", "failed"]
    failure_kind: Literal["error", "died", "limit"] | None = None
    retry_of: str | None = None
    verdict: Literal["pass", "revise"] | None = None
    detail: str | None = None


class Mark(Model):
    """A finding a lane raised in a round, as the loop keeps it: identity and class."""

    fingerprint: str
    category: str


class ModelReview(Model):
    """A model review the loop requires: ``lane`` raised ``category`` at new places in each
    of three rounds, so the next round must hear ``reviewer`` (an architecture lane) first."""

    lane: str
    category: str
    flagged_round: int = Field(ge=1)
    reviewer: str | None = None
    answered_round: int | None = Field(default=None, ge=1)

    @property
    def pending(self) -> bool:
        return self.answered_round is None


class LaneState(Model):
    name: str
    lens: str
    role: Literal["verdict", "scout"]
    status: LaneStatus | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    retained_from: int | None = Field(default=None, ge=1)
    findings: list[Mark] = Field(default_factory=list)  # what the lane raised in its round


class RoundState(Model):
    number: int = Field(ge=1)
    revision: str
    status: Literal["open", "complete"]
    # ``full``: every lane answers afresh; ``delta``: only ``affected`` does, the others are
    # retained from the round before.
    coverage: Literal["full", "delta"] = "full"
    affected: list[str] = Field(default_factory=list)
    lanes: list[LaneState] = Field(default_factory=list)
    blocking: list[str] = Field(default_factory=list)
    advisory: list[str] = Field(default_factory=list)
    gate: Gate | None = None
    rows: list[LaneReport] = Field(default_factory=list)  # the lane rows as reported
    findings: Findings | None = None  # the triaged findings as reported
    problems: list[str] = Field(default_factory=list)  # what kept the lanes from a clean answer
    scout_findings: list[str] = Field(default_factory=list)  # fingerprints verdict lanes answer
    reconciled: list[str] = Field(default_factory=list)  # fingerprints some verdict lane answered


class OperationReceipt(Model):
    """What an idempotent operation returned, keyed by its id and request digest."""

    operation_id: Annotated[str, Field(min_length=1, max_length=256)]
    request_digest: str
    receipt: dict[str, Any]


class LoopState(Model):
    """One loop of rounds for one target, with its ceilings and its history."""

    schema_: Literal["bounded-review/loop-state/v1"] = Field(alias="schema")
    loop_id: LoopId
    target_kind: Literal["pr", "local-diff", "staged", "plan"]
    base: str | None
    branch: str | None
    status: Literal["open", "converged", "deadlock", "drift", "closed"]
    created_at: str
    updated_at: str
    initial_scope: list[str] = Field(default_factory=list)
    max_repair_loops: int = Field(ge=0)
    repair_loops_used: int = Field(ge=0)
    rounds: list[RoundState] = Field(default_factory=list)
    operations: list[OperationReceipt] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    stop_reason: str | None = None
    require_assurances: bool = False  # verdicts without assurances are refused (plan targets)
    origin: str | None = None  # why this loop started (first review, reset, review-only, ...)
    pinned_objective: str | None = None  # a plan's objective at round 1: a change is drift
    model_review_lane: str | None = None  # who reviews the model on ``model-mismatch``
    lanes_fixed: bool = False  # the loop commands: every round has the lanes of round 1
    model_review: ModelReview | None = None  # the last model review the loop asked for


# The report's Findings hold pydantic findings by name only: name them, for when pydantic
# builds these models.
provide_names()
