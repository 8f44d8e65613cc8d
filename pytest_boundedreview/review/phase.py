"""What follows the tests of a non-empty target: checks, diff scans, the reviewer lanes as one
round of the loop, and the gate. Shared by the pytest session and ``bounded-review merge``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..baseline.classification import Classification
from ..change import git
from ..change.baseconfig import Ruled
from ..change.freeze import Target
from ..change.trees.livetree import untested_reason
from ..checks.scans import scan
from ..core.ceilings import Tier, effective_budget
from ..core.settings.config import Settings
from ..gate import decide, disagreements
from ..models.record import record
from ..models.report import CheckResult, Gate, GateAnswer, LaneReport, Reduction, RiskReason
from ..report.build import Evidence
from ..triage.waivers import Disposed, code_revision, dispose

if TYPE_CHECKING:
    from ..baseline.reruns.runspec import BaselineRun
    from ..loop.machine import Plan
    from ..loop.result import RoundResult
    from ..loop.rounds import LoopRound
    from ..models.finding import ReportFinding
    from ..models.waiver import Waiver
    from .lanes import Carried


@record(frozen=True)
class Counts:
    """How many tests ran, and how many the selection left out."""

    passed: int = 0
    failed: int = 0
    deselected: int = 0


NO_COUNTS = Counts()


@contextlib.contextmanager
def started(environ: Mapping[str, str] | None) -> Iterator[None]:
    """The process's environment set to ``environ`` (the session's as it started) for the
    block: reviewer lanes, their model routing and the reproductions of their findings look
    up commands on that ``PATH`` and read their keys there, whatever the change's code (its
    conftest, its modules) set while the tests ran. ``None`` leaves it as it is."""
    if environ is None:
        yield
        return
    now = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(now)


def undecided(gate: Gate, why: str) -> Gate:
    """``gate`` with ``why`` added, and never ``yes``: what was not established is not clean."""
    answer: GateAnswer = "no" if gate.review_clean == "no" else "indeterminate"
    return Gate(review_clean=answer, reasons=[*gate.reasons, why])


@record(frozen=True)
class Review:
    """The frozen change and how to review it beyond its tests."""

    settings: Settings
    repo: git.Repo
    target: Target
    risk: tuple[Tier, list[RiskReason]]
    state: Path
    progress: Callable[[str], None]
    baseline_run: Callable[[], BaselineRun]
    plugins: Sequence[object] = ()
    objective: str | None = None  # a plan's objective ("" while it has none); None: code
    waivers: Sequence[Waiver] = ()  # from the reviewed snapshot's waivers file
    added_waivers: Sequence[Waiver] = ()  # those of them the change itself adds
    reset_hint: str = "--bounded-review-reset"  # how the user starts a new loop
    rules: Ruled | None = None  # what the change proposes for its own rules, if it does
    environ: Mapping[str, str] | None = None  # the session's as it started (else the process's)

    def evidence(
        self,
        gate: Gate,
        counts: Counts = NO_COUNTS,
        tests: Classification | None = None,
        limitations: Sequence[str] = (),
        lanes: Sequence[LaneReport] | None = None,
    ) -> Evidence:
        return Evidence(
            target=self.target,
            settings=self.settings,
            passed=counts.passed,
            failed=counts.failed,
            tests=tests or Classification(),
            checks=[],
            findings=[],
            gate=gate,
            committed=self.target.committed,
            deselected=counts.deselected,
            limitations=[*(self.rules.limitations if self.rules else ()), *limitations],
            lanes=lanes,
            risk=self.risk,
            reduced=self._reduced(),
        )

    def _reduced(self) -> list[Reduction]:
        """The options that made this review less than its rules ask, where lanes are
        configured (asked only when such an option was given)."""
        if self.rules is None or not self.rules.configured:
            return []
        from ..report.claims import reductions
        from .possible import lanes_offered

        if not lanes_offered(self.settings, self.plugins, self.state):
            return []
        return reductions(self.rules.configured, self.settings, self.target, self.risk[0])

    def judge(
        self,
        counts: Counts,
        tests: Classification,
        limitations: Sequence[str],
        stopped: str | None,
        deterministic: Sequence[ReportFinding] = (),
        partial: str | None = None,
        unsettled: Sequence[str] = (),
    ) -> Evidence:
        """Everything established about the change, given its classified tests (and findings
        established by construction, such as a plan's checks); ``unsettled`` names what the
        session could not establish, each keeping the gate from ``yes``."""
        settings, target = self.settings, self.target
        held = [stopped] if stopped else []  # what keeps the gate from "yes", in order
        held += unsettled
        if target.untested:  # the session ran other code than the snapshot holds
            held.insert(0, untested_reason(target.kind, target.untested))
        if partial and settings.allow_partial:  # accepted, and still said
            limitations = [*limitations, f"a partial run, accepted (allow_partial): {partial}"]
        if partial and not settings.allow_partial:  # the clean gate needs the whole suite
            held.append(f"a partial run: {partial} (allow_partial = true accepts one)")
        checks: list[CheckResult] = []
        if settings.checks:
            from ..checks.run import run_all

            checks = run_all(
                settings.checks,
                self.repo,
                target.base_commit,
                self.progress,
                target.scope,
                reuse=settings.reuse_base_checkout,
                environ=self.environ,
            )
        findings = [*deterministic, *scan(target, self.repo, dataclasses.asdict(settings.scans))]
        findings += self.rules.findings() if self.rules else []
        limitations = [*limitations, *tests.limitations]
        limitations += [
            f"check {c.name!r} did not run: {c.detail}" for c in checks if c.status == "not-run"
        ]
        early = self._disposed(findings, checks)
        blocking = [f for f in early.findings if f.severity == "blocking"]
        settled = decide(tests, early.checks, blocking).review_clean == "yes" and not held
        with started(self.environ):  # what the change's code set reaches no reviewer
            lanes, loop = self._lanes(tests, settled)
        limitations += lanes.limitations
        triaged = lanes.triaged
        disposed = self._disposed([*findings, *triaged.blocking, *triaged.advisory], checks)
        counted = [f for f in disposed.findings if f.severity == "blocking"]
        # A revise with no verified blocker of its own (a waived one is answered by its
        # waiver) is a disagreement: noted on its row, it keeps nothing from "yes".
        verified = [*counted, *(f for f in disposed.waived if f.severity == "blocking")]
        lanes.rows = disagreements(lanes.rows, verified)
        gate = decide(tests, disposed.checks, counted, lanes.problems)
        for why in held:  # what did not run was not looked at: never "yes"
            gate = undecided(gate, why)
        if loop is not None:
            from ..core.errors import LedgerError

            try:
                lanes = loop.record(lanes, gate)
            except LedgerError as exc:  # unrecorded is not reviewed: never "yes"
                gate = undecided(gate, f"the round could not be recorded: {exc}")
        return dataclasses.replace(
            self.evidence(gate, counts, tests, limitations, lanes.rows),
            checks=disposed.checks,
            findings=disposed.findings,
            waived=disposed.waived,
            waiver_notes=disposed.notes,
            partial=partial,
            unfinished=stopped,
            rejected=triaged.rejected,
            loop=lanes.loop,
            blockers_fixed=lanes.blockers_fixed,
        )

    def _disposed(
        self, findings: Sequence[ReportFinding], checks: Sequence[CheckResult]
    ) -> Disposed:
        """The findings and checks after the waivers of the reviewed snapshot."""
        if not self.waivers:
            return Disposed(findings=list(findings), checks=list(checks))
        revision = code_revision(self.repo, self.target.revision, self.settings.waivers_file)
        return dispose(
            self.waivers, findings, checks, revision, self.settings, added=self.added_waivers
        )

    def _lanes(
        self, tests: Classification, deterministic_clean: bool
    ) -> tuple[RoundResult, LoopRound | None]:
        """The reviewer lanes phase as one round of the loop, within the budget of the
        change's risk tier: run, reused (unchanged snapshot) or refused (loop stopped)."""
        from ..loop.result import RoundResult
        from .possible import none_ran, phase_needed

        settings = self.settings
        if not (settings.no_lanes or phase_needed(settings, self.plugins, self.state)):
            why = none_ran("no reviewer lanes configured")
            return RoundResult(limitations=[why]), None  # the lanes machinery stays unloaded

        from ..core.errors import LedgerError
        from ..loop.rounds import LoopRound
        from ..triage.reproduce import Reproducer
        from .lanes import LaneRound, LanesOutcome, run_lanes

        tier, reasons = self.risk
        budget = effective_budget(tier, settings.mode, settings.lowered_ceilings)

        def run(carried: Carried | None) -> LanesOutcome:
            return run_lanes(
                LaneRound(
                    settings,
                    self.repo,
                    self.target,
                    tier,
                    budget,
                    (tests.target_related, tests.pre_existing),
                    self.plugins,
                    self.progress,
                    deterministic_clean,
                    Reproducer(self.baseline_run(), self.target.tree, self.progress),
                    carried,
                )
            )

        try:
            if settings.no_lanes:
                return run(None), None
            loop = LoopRound.configured(
                self.repo,
                self.target,
                self.state,
                settings,
                budget.max_repair_loops,
                [(r.path, r.rule) for r in reasons],
                self.objective,
            )
            try:
                plan = loop.prepare()
            except LedgerError as exc:  # never overwritten: the lanes run, the gate stays open
                outcome = run(None)
                outcome.problems.append(f"the loop state cannot be used: {exc}")
                return outcome, None
            for note in plan.notes:
                self.progress(note)
            if plan.action == "reuse":
                return loop.reused(), loop
            if plan.action == "stop":
                why = f"loop {plan.status}: {plan.stop_reason}; {self.reset_hint} starts a new loop"
                return RoundResult(
                    problems=[why], limitations=[f"no lane was dispatched: {why}"]
                ), loop
            outcome = run(_carried(loop, plan))
            return outcome, loop if outcome.ran else None
        except Exception as exc:  # the report must still be written: fail closed instead
            return RoundResult(problems=[f"the reviewer lanes could not run: {exc!r}"]), None


def _carried(loop: LoopRound, plan: Plan) -> Carried | None:
    """What a delta round carries over from the previous round: the lanes whose result stays
    valid (the engine's rule), the delta, the model review, the findings each lane left open."""
    from ..loop.coverage import still_valid as retainable
    from .lanes import Carried

    previous = plan.previous
    if previous is None:
        return None
    found = previous.findings
    still_valid = {lane.name for lane in previous.lanes if retainable(lane, previous) is None}
    open_findings = found.blocking + found.advisory if found else []
    return Carried(
        round=previous.number,
        delta=loop.delta(),
        redispatch=plan.redispatch,
        rows={r.name: r for r in previous.rows if r.name in still_valid},
        reviewer=plan.model_review.reviewer if plan.model_review else None,
        model_review=loop.model_review(),
        open_findings={
            row.name: [f for f in open_findings if row.name in f.lanes] for row in previous.rows
        },
    )
