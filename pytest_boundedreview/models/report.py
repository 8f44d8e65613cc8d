"""The report ``bounded-review/report/v1`` (CONTRACT §9)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from .base import Model
from .finding import CheckFinding, RejectedFinding, ReportFinding
from .waiver import WaivedCheckFinding, WaivedFinding, WaiverNote

REPORT_SCHEMA: Final = "bounded-review/report/v1"
GateAnswer = Literal["yes", "no", "indeterminate"]
Observed = Literal["not-checked", "yes", "no"]


class TargetInfo(Model):
    kind: Literal["pr", "local-diff", "staged", "plan"]
    base: str | None
    head: str | None
    revision: str
    files: list[str]
    empty: bool


class RiskReason(Model):
    path: str | None
    rule: str


class RiskInfo(Model):
    tier: Literal["economy", "standard", "strict"]
    reasons: list[RiskReason] = Field(default_factory=list)


class Budget(Model):
    max_lanes: int = Field(ge=0)
    max_concurrent: int = Field(ge=0)
    max_repair_loops: int = Field(ge=0)


class LoopInfo(Model):
    loop_id: str | None
    round: int = Field(ge=0)
    repair_loops_used: int = Field(ge=0)
    status: Literal["not-started", "open", "converged", "deadlock", "drift", "closed"]
    stop_reason: str | None = None
    flags: list[str] = Field(default_factory=list)


class CheckResult(Model):
    name: str
    required: bool
    status: Literal["pass", "fail", "not-run"]
    target_related: list[CheckFinding] = Field(default_factory=list)
    pre_existing: list[CheckFinding] = Field(default_factory=list)
    waived: list[WaivedCheckFinding] = Field(default_factory=list)  # out of the gate, kept
    detail: str = ""


class TestFailure(Model):
    nodeid: str
    signature: str
    base_signature: str | None = None
    reason: str | None = None


class Tests(Model):
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    target_related: list[TestFailure] = Field(default_factory=list)
    pre_existing: list[TestFailure] = Field(default_factory=list)
    flaky: list[TestFailure] = Field(default_factory=list)
    unknown: list[TestFailure] = Field(default_factory=list)


class Usage(Model):
    """What reviewer attempts cost, as far as their tools reported it; a field no attempt
    reported stays ``None``, never ``0``."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    turns: int | None = Field(default=None, ge=0)


def summed(usages: list[Usage]) -> Usage | None:
    """The field-by-field sum of ``usages``; ``None`` when none reported anything."""
    if not usages:
        return None
    totals: dict[str, float] = {}
    for usage in usages:
        for key, value in usage.model_dump(exclude_none=True).items():
            totals[key] = totals.get(key, 0) + value
    if not totals:
        return None
    if "cost_usd" in totals:
        totals["cost_usd"] = round(totals["cost_usd"], 6)
    return Usage.model_validate(totals)


class LaneReport(Model):
    name: str
    lens: str
    role: Literal["verdict", "scout"]
    model: str | None = None
    reasoning: str | None = None
    status: Literal["pass", "revise", "scout", "unverified", "retained", "reused", "skipped"]
    attempts: int = Field(ge=0)
    rationale: str | None = None
    note: str | None = None
    # Agent lanes: the program that reviewed, its version, and what its attempts cost.
    tool: str | None = None
    tool_version: str | None = None
    usage: Usage | None = None


class Findings(Model):
    blocking: list[ReportFinding] = Field(default_factory=list)
    advisory: list[ReportFinding] = Field(default_factory=list)
    rejected: list[RejectedFinding] = Field(default_factory=list)
    waived: list[WaivedFinding] = Field(default_factory=list)  # out of the gate, never gone


class Gate(Model):
    review_clean: GateAnswer
    reasons: list[str] = Field(default_factory=list)


class Statuses(Model):
    local_verification: Literal["passed", "failed", "partial", "not-run"]
    review_clean: GateAnswer
    pr_ci: Literal["not-checked", "passed", "failed", "pending"] = "not-checked"
    committed: Literal["yes", "no", "not-applicable"]
    merged: Observed = "not-checked"
    deployed: Observed = "not-checked"
    production_verified: Observed = "not-checked"


class ShardInfo(Model):
    """How one CI shard ran, for ``bounded-review merge``."""

    rootdir: str  # pytest's rootdir, relative to the repository's top
    args: list[str]  # the options a re-run of its tests repeats
    deselected: int = Field(ge=0)
    complete: bool  # it ran to its end: not interrupted, stopped early or collect-only
    nodeids: list[str] = Field(default_factory=list)  # every test it ran, so no two overlap
    deselected_ids: list[str] = Field(default_factory=list)  # collected, then deselected
    files: list[str] = Field(default_factory=list)  # the test files it collected
    suite_files: list[str] = Field(default_factory=list)  # the suite's test files, all shards'
    narrowed: str | None = None  # what else kept tests from running (--lf, --ignore, xdist -k)


class Report(Model):
    """Everything one review established, and what it did not look at."""

    schema_: Literal["bounded-review/report/v1"] = Field(alias="schema")
    tool_version: str
    generated_at: str
    target: TargetInfo
    authorization: Literal["review-only", "review-and-fix"]
    risk: RiskInfo
    budget: Budget
    loop: LoopInfo
    checks: list[CheckResult] = Field(default_factory=list)
    tests: Tests
    lanes: list[LaneReport] = Field(default_factory=list)
    findings: Findings = Field(default_factory=Findings)
    blockers_fixed: list[str] = Field(default_factory=list)
    gate: Gate
    statuses: Statuses
    limitations: list[str] = Field(default_factory=list)
    next_action: str
    usage: Usage | None = None  # summed over the lane attempts that reported it
    waivers: list[WaiverNote] = Field(default_factory=list)  # waivers that did not apply
    shard: ShardInfo | None = None  # set on a shard's report only
