"""The report ``bounded-review/report/v1`` (CONTRACT §9)."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Final, Literal

from .plain import Limits, plain

if TYPE_CHECKING:  # pydantic models: the report holds them, given to pydantic by plain.py
    from .finding import CheckFinding, RejectedFinding, ReportFinding
    from .waiver import WaivedCheckFinding, WaivedFinding, WaiverNote


def provide_names() -> None:
    """Give this module the pydantic models its dataclasses hold, which it imports for the
    type checker only: pydantic needs them to validate a report or give its schema."""
    from . import finding, waiver

    names = globals()
    names.update(
        CheckFinding=finding.CheckFinding,
        RejectedFinding=finding.RejectedFinding,
        ReportFinding=finding.ReportFinding,
        WaivedCheckFinding=waiver.WaivedCheckFinding,
        WaivedFinding=waiver.WaivedFinding,
        WaiverNote=waiver.WaiverNote,
    )


REPORT_SCHEMA: Final = "bounded-review/report/v1"
Count = Annotated[int, Limits(ge=0)]
GateAnswer = Literal["yes", "no", "indeterminate"]
Observed = Literal["not-checked", "yes", "no"]


@plain
class TargetInfo:
    kind: Literal["pr", "local-diff", "staged", "plan"]
    base: str | None
    head: str | None
    revision: str
    files: list[str]
    empty: bool
    # the commit ``base`` named when reviewed (for ``pr``, its merge-base with HEAD): what the
    # pre-push gate matches with the pushed range; absent from reports of earlier versions
    base_commit: str | None = None
    # which kind was chosen and why, against what ("uncommitted changes: reviewing the working
    # tree against merge-base(main, HEAD)"); absent from reports of earlier versions
    reason: str | None = None


@plain
class RiskReason:
    path: str | None
    rule: str


@plain
class RiskInfo:
    tier: Literal["economy", "standard", "strict"]
    reasons: list[RiskReason] = field(default_factory=list)


@plain
class Budget:
    max_lanes: Count
    max_concurrent: Count
    max_repair_loops: Count


@plain
class LoopInfo:
    loop_id: str | None
    round: Count
    repair_loops_used: Count
    status: Literal["not-started", "open", "converged", "deadlock", "drift", "closed"]
    stop_reason: str | None = None
    flags: list[str] = field(default_factory=list)


@plain
class CheckResult:
    name: str
    required: bool
    status: Literal["pass", "fail", "not-run"]
    target_related: list[CheckFinding] = field(default_factory=list)
    pre_existing: list[CheckFinding] = field(default_factory=list)
    waived: list[WaivedCheckFinding] = field(default_factory=list)  # out of the gate, kept
    detail: str = ""


@plain
class TestFailure:
    nodeid: str
    signature: str
    base_signature: str | None = None
    reason: str | None = None


@plain
class Tests:
    passed: Count
    failed: Count
    target_related: list[TestFailure] = field(default_factory=list)
    pre_existing: list[TestFailure] = field(default_factory=list)
    flaky: list[TestFailure] = field(default_factory=list)
    unknown: list[TestFailure] = field(default_factory=list)


@plain
class Usage:
    """What reviewer attempts cost, as far as their tools reported it; a field no attempt
    reported stays ``None``, never ``0``."""

    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cost_usd: Annotated[float, Limits(ge=0)] | None = None
    turns: Count | None = None


def summed(usages: list[Usage]) -> Usage | None:
    """The field-by-field sum of ``usages``; ``None`` when none reported anything."""
    if not usages:
        return None
    totals: dict[str, float] = {}
    for usage in usages:
        for key, value in dataclasses.asdict(usage).items():
            if value is not None:
                totals[key] = totals.get(key, 0) + value
    if not totals:
        return None
    if "cost_usd" in totals:
        totals["cost_usd"] = round(totals["cost_usd"], 6)
    return Usage(**totals)  # type: ignore[arg-type]


@plain
class LaneReport:
    name: str
    lens: str
    role: Literal["verdict", "scout"]
    model: str | None = None
    reasoning: str | None = None
    status: Literal["pass", "revise", "scout", "unverified", "retained", "reused", "skipped"]
    attempts: Count
    rationale: str | None = None
    note: str | None = None
    # Agent lanes: the program that reviewed, its version, and what its attempts cost.
    tool: str | None = None
    tool_version: str | None = None
    usage: Usage | None = None


@plain
class Findings:
    blocking: list[ReportFinding] = field(default_factory=list)
    advisory: list[ReportFinding] = field(default_factory=list)
    rejected: list[RejectedFinding] = field(default_factory=list)
    waived: list[WaivedFinding] = field(default_factory=list)  # out of the gate, never gone


@plain
class Gate:
    review_clean: GateAnswer
    reasons: list[str] = field(default_factory=list)


@plain
class Statuses:
    local_verification: Literal["passed", "failed", "partial", "not-run"]
    review_clean: GateAnswer
    pr_ci: Literal["not-checked", "passed", "failed", "pending"] = "not-checked"
    committed: Literal["yes", "no", "not-applicable"]
    merged: Observed = "not-checked"
    deployed: Observed = "not-checked"
    production_verified: Observed = "not-checked"


@plain
class SuiteInfo:
    """What defined the suite the session was judged against, and what a partial run left
    out."""

    defined_by: list[str] = field(default_factory=list)  # testpaths, addopts -m, declared
    left_out: list[str] = field(default_factory=list)  # files or tests, the first 20
    left_out_total: Count = 0  # how many were left out in all


@plain
class ShardInfo:
    """How one CI shard ran, for ``bounded-review merge``."""

    rootdir: str  # pytest's rootdir, relative to the repository's top
    args: list[str]  # the options a re-run of its tests repeats
    deselected: Count
    complete: bool  # it ran to its end: not interrupted, stopped early or collect-only
    nodeids: list[str] = field(default_factory=list)  # every test it ran, so no two overlap
    deselected_ids: list[str] = field(default_factory=list)  # collected, then deselected
    files: list[str] = field(default_factory=list)  # the test files it collected
    suite_files: list[str] = field(default_factory=list)  # the suite's test files, all shards'
    narrowed: str | None = None  # what it could not see (--lf, deselection no worker reported)
    project_deselected: list[str] = field(default_factory=list)  # by the project's own


@plain
class Reduction:
    """An option of the invocation that made the review less than the rules of the repository
    ask, where they configure lanes: the key, its option, the value the rules give, the one
    used, and what it left out."""

    key: str  # "no_lanes", "risk", "mode"
    option: str  # "--bounded-review-no-lanes"
    configured: str
    used: str
    why: str

    def described(self) -> str:
        """The option, for people: what was used, what the rules give, and what it left out."""
        return f"{self.option}={self.used} where the rules give {self.configured} ({self.why})"


@plain
class Invocation:
    """What a review ran under that its settings do not show: the state folder its loop was
    kept in, and each option that made it less than its rules ask (none: the whole review)."""

    state_dir: str
    reduced: list[Reduction] = field(default_factory=list)


@plain
class Report:
    """Everything one review established, and what it did not look at."""

    schema: Literal["bounded-review/report/v1"]
    tool_version: str
    generated_at: str
    target: TargetInfo
    authorization: Literal["review-only", "review-and-fix"]
    risk: RiskInfo
    budget: Budget
    loop: LoopInfo
    checks: list[CheckResult] = field(default_factory=list)
    tests: Tests
    lanes: list[LaneReport] = field(default_factory=list)
    findings: Findings = field(default_factory=Findings)
    blockers_fixed: list[str] = field(default_factory=list)
    gate: Gate
    statuses: Statuses
    limitations: list[str] = field(default_factory=list)
    next_action: str
    usage: Usage | None = None  # summed over the lane attempts that reported it
    waivers: list[WaiverNote] = field(default_factory=list)  # waivers that did not apply
    shard: ShardInfo | None = None  # set on a shard's report only
    suite: SuiteInfo | None = None  # what defined the suite (a session's report)
    # None: a report of an earlier version, which the gate and the stop hook do not accept
    invocation: Invocation | None = None
