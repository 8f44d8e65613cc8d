"""The controller side of a bounded-review session: freeze, classify, gate, report."""

from __future__ import annotations

import dataclasses
import functools
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import git, worktree
from .baseline import Classification
from .config import Settings, load_settings
from .errors import FatalError
from .gate import decide
from .models.finding import ReportFinding
from .models.report import CheckResult, Gate, GateAnswer, LaneReport, Report, RiskReason
from .outcomes import OutcomeCollector
from .render.terminal import lines
from .reporting import Evidence, assess_risk, build, write
from .risk import Tier, effective_budget
from .scans import scan
from .statefile import state_folder
from .target import Target, freeze

if TYPE_CHECKING:
    from .baseline import BaselineRun
    from .rounds import LoopRound, RoundResult

_PATH_KEYS = ("report", "markdown", "sarif")


def _overrides(config: pytest.Config, keys: list[str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for key in keys:
        value = config.getoption(f"bounded_review_{key}")
        if value is not None and key in _PATH_KEYS:
            value = str(Path(config.invocation_params.dir, value))
        values[key] = value
    return values


class BoundedReview:
    """The controller-side state of one bounded-review session."""

    def __init__(
        self, config: pytest.Config, settings: Settings, repo: git.Repo, target: Target
    ) -> None:
        self.config = config
        self.settings = settings
        self.repo = repo
        self.target = target
        self.collector = OutcomeCollector(repo.root)
        self.report: Report | None = None
        self._announced = False
        self.report_path = Path(settings.report) if settings.report else None

    @functools.cached_property
    def risk(self) -> tuple[Tier, list[RiskReason]]:
        """The change's risk tier and reasons, assessed once for lanes and report alike."""
        return assess_risk(self.settings, self.target)

    @classmethod
    def from_config(cls, config: pytest.Config, option_keys: list[str]) -> BoundedReview:
        try:
            repo = git.open_repo(Path(config.rootpath))
            worktree.sweep(repo)  # what a killed run left, whether or not this run needs a base
            settings, _ = load_settings(
                Path(config.rootpath), repo.root, _overrides(config, option_keys)
            )
            target = freeze(repo, settings.target, settings.base)
        except FatalError as exc:
            raise pytest.UsageError(f"bounded-review: {exc}") from None
        return cls(config, settings, repo, target)

    def pytest_report_header(self) -> list[str]:
        target = self.target
        base = target.base + (f" @ {target.base_commit[:12]}" if target.base_commit else "")
        count = len(target.files)
        what = f"{count} file{'' if count == 1 else 's'} changed" if count else "nothing to review"
        return [f"bounded-review: target {target.kind} (base {base}), {target.revision}, {what}"]

    def _progress(self, message: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if not self._announced:
            reporter.write_sep("-", "bounded review: classifying against the base")
            self._announced = True
        reporter.write_line(f"bounded-review: {message}")

    def _what_ran(self, session: pytest.Session) -> tuple[list[str], str | None]:
        """Limitations on what the session looked at, and why it stopped early, if it did."""
        limitations = []
        if self.collector.deselected:
            limitations.append(
                f"{self.collector.deselected} test(s) deselected (-k, -m, --lf or similar) "
                "did not run, so they were not reviewed"
            )
        if self.config.args_source == pytest.Config.ArgsSource.ARGS:
            given = " ".join(self.config.args)
            limitations.append(f"only the paths given on the command line ran: {given}")
        stopped = session.shouldfail or session.shouldstop
        if stopped:
            unrun = max(len(session.items) - len(self.collector.nodes), 0)
            stopped = f"the session stopped early ({stopped}): {unrun} test(s) did not run"
            limitations.append(stopped)
        return limitations, stopped or None

    def _classified(self, session: pytest.Session) -> Evidence:
        """Everything established about a completed session over a non-empty target."""
        settings, target = self.settings, self.target
        tests = self._baseline(session) if self.collector.failed else Classification()
        checks = []
        if settings.checks:
            from .checks import run_all

            checks = run_all(
                settings.checks, self.repo, target.base_commit, self._progress, target.scope
            )
        findings = scan(target, self.repo, settings.scans.model_dump())
        limitations, stopped = self._what_ran(session)
        limitations += tests.limitations
        limitations += [
            f"check {c.name!r} did not run: {c.detail}" for c in checks if c.status == "not-run"
        ]
        blocking = [f for f in findings if f.severity == "blocking"]
        settled = decide(tests, checks, blocking).review_clean == "yes" and not stopped
        lanes, loop = self._lanes(session, tests, settled)
        limitations += lanes.limitations
        triaged = lanes.triaged
        gate = decide(tests, checks, [*blocking, *triaged.blocking], lanes.problems)
        if stopped:  # what did not run was not looked at: never "yes"
            answer: GateAnswer = "no" if gate.review_clean == "no" else "indeterminate"
            gate = Gate(review_clean=answer, reasons=[*gate.reasons, stopped])
        if loop is not None:
            from .errors import LedgerError

            try:
                lanes = loop.record(lanes, gate)
            except LedgerError as exc:  # unrecorded is not reviewed: never "yes"
                answer = "no" if gate.review_clean == "no" else "indeterminate"
                why = f"the round could not be recorded: {exc}"
                gate = Gate(review_clean=answer, reasons=[*gate.reasons, why])
        findings += [*triaged.blocking, *triaged.advisory]
        evidence = self._evidence(gate, tests, checks, findings, limitations, lanes.rows)
        return dataclasses.replace(
            evidence,
            rejected=triaged.rejected,
            loop=lanes.loop,
            blockers_fixed=lanes.blockers_fixed,
        )

    def _baseline_run(self, session: pytest.Session) -> BaselineRun:
        """How to re-run tests as this session ran them, at head and at the base."""
        from .baseline import BaselineRun
        from .inprocess import head_rerunner
        from .rerun import child_env, replayable, rerun

        settings, rootdir = self.settings, Path(self.config.rootpath)
        args = replayable(
            self.config.invocation_params.args, self.config.args, self.config.invocation_params.dir
        )
        in_a_new_process = partial(
            rerun, rootdir=rootdir, args=args, env=child_env(), timeout=settings.base_timeout
        )
        return BaselineRun(
            repo=self.repo,
            rootdir=rootdir,
            base_commit=self.target.base_commit,
            args=args,
            reruns=settings.reruns,
            max_base_reruns=settings.max_base_reruns,
            timeout=settings.base_timeout,
            state=self._state(),
            rerun_at_head=head_rerunner(session.items, in_a_new_process),
        )

    def _baseline(self, session: pytest.Session) -> Classification:
        """The session's failures re-run at head and at the base, and classified."""
        from .baseline import classify

        return classify(self.collector.failed, self._baseline_run(session), self._progress)

    def _lanes(
        self, session: pytest.Session, tests: Classification, deterministic_clean: bool
    ) -> tuple[RoundResult, LoopRound | None]:
        """The reviewer lanes phase as one round of the loop, within the budget of the
        change's risk tier: run, reused (unchanged snapshot) or refused (loop stopped)."""
        from .errors import LedgerError
        from .lanes.phase import Carried, LanesOutcome, run_lanes
        from .rounds import LoopRound, RoundResult
        from .triage.reproduce import Reproducer

        settings = self.settings
        tier, reasons = self.risk
        budget = effective_budget(tier, settings.mode, settings.lowered_ceilings)

        def run(carried: Carried | None) -> LanesOutcome:
            return run_lanes(
                settings,
                self.repo,
                self.target,
                tier,
                budget,
                (tests.target_related, tests.pre_existing),
                list(self.config.pluginmanager.get_plugins()),
                self._progress,
                deterministic_clean,
                Reproducer(self._baseline_run(session), self.target.tree, self._progress),
                carried,
            )

        def plain(outcome: LanesOutcome, *problems: str) -> RoundResult:
            return RoundResult(
                rows=outcome.rows,
                triaged=outcome.triaged,
                problems=[*outcome.problems, *problems],
                limitations=outcome.limitations,
                lane_states=outcome.lane_states,
            )

        try:
            if settings.no_lanes:
                return plain(run(None)), None
            loop = LoopRound(
                self.repo,
                self.target,
                self._state(),
                budget.max_repair_loops,
                reset=settings.reset,
                full=settings.full,
                risk_reasons=[(r.path, r.rule) for r in reasons],
                tests_in_scope=settings.loop.tests_in_scope,
                systemic_share=settings.loop.systemic_share,
            )
            try:
                plan = loop.prepare()
            except LedgerError as exc:  # never overwritten: the lanes run, the gate stays open
                return plain(run(None), f"the loop state cannot be used: {exc}"), None
            for note in plan.notes:
                self._progress(note)
            if plan.action == "reuse":
                return loop.reused(), loop
            if plan.action == "stop":
                why = (
                    f"loop {plan.status}: {plan.stop_reason}; "
                    "--bounded-review-reset starts a new loop"
                )
                return RoundResult(
                    problems=[why], limitations=[f"no lane was dispatched: {why}"]
                ), loop
            carried = None
            if plan.previous is not None:
                previous = plan.previous
                found = previous.findings
                carried = Carried(
                    round=previous.number,
                    delta=loop.delta(),
                    redispatch=plan.redispatch,
                    rows={r.name: r for r in previous.rows if r.status in ("pass", "retained")},
                    open_findings={
                        row.name: [
                            f
                            for f in (found.blocking + found.advisory if found else [])
                            if row.name in f.lanes
                        ]
                        for row in previous.rows
                    },
                )
            outcome = run(carried)
            return plain(outcome), loop if outcome.ran else None
        except Exception as exc:  # the report must still be written: fail closed instead
            return RoundResult(problems=[f"the reviewer lanes could not run: {exc!r}"]), None

    def _evidence(
        self,
        gate: Gate,
        tests: Classification | None = None,
        checks: list[CheckResult] | None = None,
        findings: list[ReportFinding] | None = None,
        limitations: list[str] | None = None,
        lanes: list[LaneReport] | None = None,
    ) -> Evidence:
        return Evidence(
            target=self.target,
            settings=self.settings,
            passed=self.collector.passed_count,
            failed=len(self.collector.failed),
            tests=tests or Classification(),
            checks=checks or [],
            findings=findings or [],
            gate=gate,
            committed=self.target.committed,
            deselected=self.collector.deselected,
            limitations=limitations or [],
            lanes=lanes,
            risk=self.risk,
        )

    def _judge(self, session: pytest.Session, exitstatus: int) -> Evidence:
        def undecided(reason: str) -> Evidence:
            return self._evidence(Gate(review_clean="indeterminate", reasons=[reason]))

        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return undecided(f"the pytest session did not complete (exit {int(exitstatus)})")
        if self.config.option.collectonly:
            return undecided("--collect-only: no test ran")
        if self.target.empty:
            if self.collector.failed:
                return undecided("nothing to review; pytest's own status stands")
            return self._evidence(Gate(review_clean="yes"))
        return self._classified(session)

    def _state(self) -> Path:
        return state_folder(self.repo.root, self.settings.state_dir)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        interrupted = False
        try:
            try:
                evidence = self._judge(session, exitstatus)
            except KeyboardInterrupt:  # Ctrl-C during the re-runs: say so, keep pytest's status
                interrupted = True
                reason = "the review was interrupted before it finished"
                evidence = self._evidence(Gate(review_clean="indeterminate", reasons=[reason]))
            self.report = build(evidence)
            write(self.report, self.report_path or self._state() / "report.json")
            self._extra_outputs(self.report)
        except FatalError as exc:
            self._progress(f"error: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if interrupted:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        elif not self.target.empty and exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.TESTS_FAILED,
        ):
            clean = self.report.gate.review_clean == "yes"
            session.exitstatus = pytest.ExitCode.OK if clean else pytest.ExitCode.TESTS_FAILED

    def _extra_outputs(self, report: Report) -> None:
        """``--bounded-review-markdown`` and ``--bounded-review-sarif``, written atomically."""
        from .render.formats import render
        from .statefile import write_atomic

        for path, fmt in ((self.settings.markdown, "markdown"), (self.settings.sarif, "sarif")):
            if path:
                try:
                    write_atomic(Path(path), render(report, fmt).encode())
                except OSError as exc:
                    raise FatalError(f"cannot write the {fmt} report {path}: {exc}") from exc

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep("=", "bounded review")
        for line in lines(self.report):
            terminalreporter.write_line(line)
