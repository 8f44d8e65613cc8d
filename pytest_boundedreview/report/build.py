"""Assemble the §9 report from what the session established (``report/publish.py`` writes
it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import __version__
from ..baseline.classification import Classification
from ..change.freeze import Target
from ..change.trees.livetree import shown
from ..core.ceilings import Tier, effective_budget
from ..core.settings.config import Settings
from ..core.statefile import utc_now
from ..models.record import record
from ..models.report import (
    REPORT_SCHEMA,
    Budget,
    CheckResult,
    Findings,
    Gate,
    Invocation,
    LaneReport,
    LoopInfo,
    Reduction,
    Report,
    RiskInfo,
    RiskReason,
    ShardInfo,
    Statuses,
    SuiteInfo,
    TargetInfo,
    Tests,
    summed,
)
from ..risk import DOCS_PATHS, assess, rules_from

if TYPE_CHECKING:
    from ..models.finding import RejectedFinding, ReportFinding
    from ..models.waiver import WaivedFinding, WaiverNote

NO_LANES = "no reviewer lanes ran: this is the deterministic gate only (tests, checks, scans)"
LESS = (
    "less than the rules of this repository ask, so bounded-review gate and the agent's stop "
    "hook do not accept this review"
)


REVIEW_AGAIN = "pytest --bounded-review"  # what reviews the next revision, by default


@record(frozen=True)
class Evidence:
    """Everything one session established, before it is written down."""

    target: Target
    settings: Settings
    passed: int
    failed: int
    tests: Classification
    checks: Sequence[CheckResult]
    findings: Sequence[ReportFinding]
    gate: Gate
    committed: bool
    limitations: Sequence[str]
    deselected: int = 0
    lanes: Sequence[LaneReport] | None = None  # None: the lanes phase did not run
    risk: tuple[Tier, list[RiskReason]] | None = None  # None: assessed here
    rejected: Sequence[RejectedFinding] = ()
    loop: LoopInfo | None = None  # None: no loop round was recorded
    blockers_fixed: Sequence[str] = ()
    shard: ShardInfo | None = None
    again: str = REVIEW_AGAIN  # the command that reviews the next revision
    partial: str | None = None  # why only part of the suite ran
    suite: SuiteInfo | None = None  # what defined the suite, what a partial run left out
    unfinished: str | None = None  # why the session did not run its tests to the end
    waived: Sequence[WaivedFinding] = ()  # out of the gate by a waiver, still reported
    waiver_notes: Sequence[WaiverNote] = ()  # waivers that did not apply
    reduced: Sequence[Reduction] = ()  # options that made the review less than its rules ask


def _local_verification(ev: Evidence) -> str:
    if ev.passed == 0 and ev.failed == 0 and not ev.checks:
        return "not-run"
    required_failures = any(c.required and c.target_related for c in ev.checks)
    t = ev.tests
    classified = len(t.target_related) + len(t.pre_existing) + len(t.flaky) + len(t.unknown)
    if t.target_related or t.unknown or required_failures or ev.failed > classified:
        return "failed"  # (failures left unclassified, e.g. after Ctrl-C, count as failed)
    incomplete = ev.partial is not None or ev.unfinished is not None
    incomplete = incomplete or any(c.status == "not-run" for c in ev.checks)
    incomplete = incomplete or ev.deselected > 0
    if (
        ev.tests.pre_existing
        or ev.tests.flaky
        or incomplete
        or any(c.pre_existing for c in ev.checks)
    ):
        return "partial"
    return "passed"


def _listed(items: Sequence[str], limit: int = 5) -> str:
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f" and {more} more" if more > 0 else "")


def _next_action(ev: Evidence) -> str:
    """One concrete sentence: what to fix or establish, then run again."""
    plan = ev.target.kind == "plan"
    if ev.target.empty:
        return "nothing to review: the target has no changes"
    if ev.gate.review_clean == "yes":
        if plan:
            return (
                "carry the plan out, then review the change with pytest --bounded-review "
                "(this pass is about the plan only)"
            )
        return "none: no verified blocker for this revision"
    todo = []
    if ev.tests.target_related:
        names = [f.nodeid for f in ev.tests.target_related]
        todo.append(f"fix {len(names)} target-related test failure(s): {_listed(names)}")
    blockers = [
        f"{f.path}:{f.line} ({f.category})" for f in ev.findings if f.severity == "blocking"
    ]
    if blockers:
        todo.append(f"fix {len(blockers)} verified blocker(s): {_listed(blockers)}")
    for check in ev.checks:
        if check.required and check.target_related:
            todo.append(f"fix {len(check.target_related)} new finding(s) of check {check.name!r}")
    if not todo:
        first = ev.gate.reasons[0] if ev.gate.reasons else "see gate.reasons"
        todo.append(f"resolve what kept the gate from deciding ({first})")
    if ev.target.kind == "staged" and ev.again == REVIEW_AGAIN:  # a commit's review
        return "; ".join(todo) + "; then stage the fix (git add) and commit again"
    return "; ".join(todo) + f"; then re-run {ev.again}"


def assess_risk(settings: Settings, target: Target) -> tuple[Tier, list[RiskReason]]:
    """The configured tier, or the automatic one with every trigger behind it."""
    if settings.risk != "auto":
        return settings.risk, [RiskReason(path=None, rule=f"set to {settings.risk}")]
    rules = settings.risk_rules
    triggers, public_api = rules_from(
        {n: (t.paths, t.added, t.replace, t.enabled) for n, t in rules.triggers.items()}
    )
    tier, reasons = assess(
        target.scope,
        triggers,
        rules.docs_paths if rules.docs_paths is not None else DOCS_PATHS,
        rules.trivial_lines,
        public_api,
    )
    return tier, [RiskReason(path=r.path, rule=r.rule) for r in reasons]


def build(ev: Evidence) -> Report:
    tier, reasons = ev.risk or assess_risk(ev.settings, ev.target)
    budget = effective_budget(tier, ev.settings.mode, ev.settings.lowered_ceilings)
    blocking = [f for f in ev.findings if f.severity == "blocking"]
    advisory = [f for f in ev.findings if f.severity == "advisory"]
    return Report(
        schema=REPORT_SCHEMA,
        tool_version=__version__,
        generated_at=utc_now(),
        target=TargetInfo(
            kind=ev.target.kind,
            base=ev.target.base,
            head=ev.target.head,
            revision=ev.target.revision,
            files=[shown(f) for f in ev.target.files],
            empty=ev.target.empty,
            base_commit=ev.target.base_commit,
            reason=ev.target.reason or None,
        ),
        authorization=ev.settings.mode,
        risk=RiskInfo(tier=tier, reasons=reasons),
        budget=Budget(**budget._asdict()),
        loop=ev.loop
        or LoopInfo(
            loop_id=None,
            round=0,
            repair_loops_used=0,
            status="not-started",
            stop_reason="no reviewer lanes ran"
            if not ev.lanes
            else "single review: rounds and repair loops are not recorded yet",
        ),
        checks=list(ev.checks),
        tests=Tests(
            passed=ev.passed,
            failed=ev.failed,
            target_related=ev.tests.target_related,
            pre_existing=ev.tests.pre_existing,
            flaky=ev.tests.flaky,
            unknown=ev.tests.unknown,
        ),
        lanes=list(ev.lanes or []),
        # A retained or reused row carries no usage: its cost was counted in its own round.
        usage=summed([row.usage for row in ev.lanes or [] if row.usage]),
        findings=Findings(
            blocking=blocking,
            advisory=advisory,
            rejected=list(ev.rejected),
            waived=list(ev.waived),
        ),
        waivers=list(ev.waiver_notes),
        blockers_fixed=list(ev.blockers_fixed),
        gate=ev.gate,
        statuses=Statuses(
            local_verification=_local_verification(ev),  # type: ignore[arg-type]
            review_clean=ev.gate.review_clean,
            committed="not-applicable"
            if ev.target.kind == "plan"
            else ("yes" if ev.committed else "no"),
        ),
        limitations=[
            *ev.limitations,
            *(f"{r.described()}: {LESS}" for r in ev.reduced),
            *([NO_LANES] if ev.lanes is None else []),
        ],
        next_action=_next_action(ev),
        shard=ev.shard,
        suite=ev.suite,
        invocation=Invocation(state_dir=ev.settings.state_dir, reduced=list(ev.reduced)),
    )
