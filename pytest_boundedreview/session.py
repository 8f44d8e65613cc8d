"""The controller side of a bounded-review session: freeze, classify, gate, report."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .baseline.athead.witness import Witness
from .baseline.athead.witnessed import Witnessed
from .baseline.failures.outcomes import COMPLETED, OutcomeCollector
from .baseline.sessionreruns import SessionReruns
from .baseline.suite.deselection import Deselections
from .baseline.suite.wholeness import Project, Wholeness, judge
from .baseline.suite.wholeness import Session as SessionView
from .change import imported
from .change.checkouts import tested
from .change.trees.livetree import untested_reason
from .core.ceilings import Tier
from .core.errors import FatalError
from .core.pytestconfig.argv import table_of
from .core.pytestconfig.pytestini import words
from .core.pytestconfig.selecting import Selection, paths
from .core.redaction import Redact, Redactor
from .core.statefile import state_folder
from .models.report import Gate, Report, RiskReason, ShardInfo, SuiteInfo
from .prepared import Prepared

if TYPE_CHECKING:  # what only the session's end needs is imported there: until then, every
    # full garbage collection of the tests' run would walk its functions and classes
    from .baseline.suite.toxsuite import ToxSuite
    from .checks.diverged import Verdict
    from .report.build import Evidence
    from .review.phase import Counts, Review

SHARD_GATE = "a shard report: `bounded-review merge` gates the combined shards"


class BoundedReview:
    """The controller-side state of one bounded-review session."""

    def __init__(
        self,
        config: pytest.Config,
        prepared: Prepared,
        witness: Witness,
        environ: Mapping[str, str] | None = None,
        redact: Redact | None = None,
        exit_as_run: bool = False,
    ) -> None:
        self.config = config
        # Started by `bounded-review run`: the verdict names the status that command exits with
        self.exit_as_run = exit_as_run
        # The environment the session started with, before the project's code ran (see
        # plugin.py): what the processes the review starts are given.
        self.environ = dict(os.environ) if environ is None else environ
        self.settings = settings = prepared.settings
        self.repo = repo = prepared.repo
        self.target = target = prepared.target
        self.waivers = prepared.waivers
        self.rules = prepared.rules
        self.checkout, self.home = prepared.checkout, prepared.home
        self._args = args = tuple(map(str, config.invocation_params.args))
        # Decided before the tests: none of them would be of the snapshot (see tested.py).
        self._refused = None
        if not (target.empty or settings.shard):
            self._refused = tested.refusal(target.kind, target.untested, args)
        # The stamp's redactor (plugin.py): failures scrubbed of the started environment's secrets.
        self.collector = OutcomeCollector(repo.root, redact or Redactor(self.environ))
        self.witnessed = Witnessed(witness, repo.root)
        self.deselections = Deselections(repo.root)
        self._env_addopts = self.environ.get("PYTEST_ADDOPTS", "")  # as pytest read it
        self.report: Report | None = None
        self._announced = False
        self._block_shown = False  # pytest skips the summaries on an internal error
        self._workflow: list[str] = []
        self._worker_modules: set[str] = set()  # files of modules xdist workers loaded
        self._ended: str | None = None  # how pytest.exit() or Ctrl-C ended the session
        self._session: pytest.Session | None = None  # the finished session, for its exit status
        self.reruns = SessionReruns(
            config,
            settings,
            repo,
            target,
            self.collector,
            lambda: self._project,
            self._state(),
            self._progress,
            self.environ,
        )

    @functools.cached_property
    def risk(self) -> tuple[Tier, list[RiskReason]]:
        """The change's risk tier and reasons, assessed once for lanes and report alike."""
        from .report.build import assess_risk

        return assess_risk(self.settings, self.target)

    def pytest_report_header(self) -> list[str]:
        target = self.target
        base = target.base + (f" @ {target.base_commit[:12]}" if target.base_commit else "")
        count = len(target.files)
        what = f"{count} file{'' if count == 1 else 's'} changed" if count else "nothing to review"
        header = f"bounded-review: target {target.kind} (base {base}), {target.revision}, {what}"
        if self.checkout is None:
            return [header]
        moved = f"bounded-review: tested in a checkout of the {target.kind} snapshot, "
        return [header, moved + f"for the working tree {self.home}, which is left as it is"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self) -> None:
        if self._refused:  # before xdist's workers are given any test
            pytest.exit(self._refused, returncode=pytest.ExitCode.TESTS_FAILED)

    def _progress(self, message: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if not self._announced:
            reporter.write_sep("-", "bounded review: classifying against the base")
            self._announced = True
        from .render.escape import terminal  # a lane's failure carries a server's words

        reporter.write_line(f"bounded-review: {terminal(message)}")
        reporter.flush()  # a CI log is a pipe: show the line while the work it announces runs

    @functools.cached_property
    def _project(self) -> Project:
        """The project's own pytest configuration, as the base has it when the change
        touches it (see projectconfig.py)."""
        from .baseline.suite.projectconfig import project_of

        config, target = self.config, self.target
        inipath = Path(config.inipath) if config.inipath else None
        changed = frozenset(target.files)
        return project_of(self.repo, Path(config.rootpath), inipath, target.base_commit, changed)

    @functools.cached_property
    def _whole(self) -> Wholeness:
        """What defined the suite and whether this session ran all of it (asked once the
        session has collected, on its workers too)."""
        config, settings, target = self.config, self.settings, self.target
        changed = frozenset(target.files)
        project = self._project
        selection = Selection.of(
            words(project.options.get("addopts", ())),
            self._env_addopts,
            [str(a) for a in config.invocation_params.args],
            settings.suite,
            table_of(config),
        )
        workers = bool(getattr(config.option, "numprocesses", None)) and (
            config.pluginmanager.hasplugin("xdist")
        )
        view = SessionView(
            config,
            selection,
            settings.suite,
            self.deselections,
            workers,
            project,
            self.repo.root,
            changed,
            listed=settings.shard,
            base_commit=target.base_commit,
            tox=self._tox(project, settings.suite, changed),
        )
        return judge(view)

    def _tox(
        self, project: Project, declared: list[str], changed: frozenset[str]
    ) -> ToxSuite | None:
        """The project's tox suite, where neither ``testpaths`` nor a declared suite names
        the paths and this session was given some (see toxsuite.py)."""
        from .baseline.suite.toxsuite import tox_suite  # only for a session given paths

        config = self.config
        if paths(declared) or words(project.options.get("testpaths", ())):
            return None
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return None
        start = config.invocation_params.dir
        given = [Path(start, a) for a in config.args if "::" not in str(a)]
        base = self.target.base_commit
        return tox_suite(self.repo, project.rootdir, base, changed, given, table_of(config))

    def _last_failed(self) -> list[str]:
        """--lf with failures on record runs only those: files without one are not even
        collected, so no deselection names them."""
        lastfailed = self.config.pluginmanager.get_plugin("lfplugin")
        # pytest keeps the count of failures it re-ran, whatever passes now (no public API)
        if getattr(self.config.option, "lf", False) and getattr(
            lastfailed, "_previously_failed_count", 0
        ):
            return ["--lf ran only the tests that failed last time"]
        return []

    def _partial(self) -> str | None:
        """Why this session ran only part of the suite, if it did."""
        return "; ".join([*self._whole.reasons, *self._last_failed()]) or None

    def _suite(self) -> SuiteInfo:
        whole = self._whole
        shown = whole.left_out[:20]
        return SuiteInfo(
            defined_by=whole.defined_by, left_out=shown, left_out_total=len(whole.left_out)
        )

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest calls this for pytest.exit() too, whatever return code it was given
        exited = excinfo.value
        if isinstance(exited, pytest.exit.Exception):
            self._ended = (
                f"pytest.exit() ended the session ({exited.msg!r}, return code {exited.returncode})"
            )
        else:
            self._ended = "the session was interrupted"

    def _unfinished(self, session: pytest.Session, exitstatus: int) -> str | None:
        """Why the session is not a finished run of its tests, if it is not: it was ended early
        (-x, pytest.exit(), Ctrl-C), collected tests never reported, or no test ran."""
        return self._stopped(session) or self._ran_nothing(exitstatus)

    def _stopped(self, session: pytest.Session) -> str | None:
        """Why the session did not run its tests to the end, if it did not: it was ended early,
        collected tests never reported, or it only set fixtures up."""
        collector = self.collector
        unreported = collector.unreported
        never = f"{len(unreported)} collected test(s) did not run to the end"
        never += f" ({', '.join(unreported[:3])}{', ...' if len(unreported) > 3 else ''})"
        why = self._ended or session.shouldfail or session.shouldstop
        if why:
            return f"the session stopped early ({why})" + (f": {never}" if unreported else "")
        if unreported:
            return f"the session did not finish: {never}"
        if self.config.getoption("setuponly", False):  # --setup-plan sets it too
            return "--setup-only or --setup-plan: no test ran"
        return None

    def _ran_nothing(self, exitstatus: int) -> str | None:
        """Why a session that ran to its end is no run of tests: every test it collected was
        skipped before its call."""
        collector = self.collector
        if not collector.ran and exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
            # (a shard given no test says so with pytest's own status: that is its whole part)
            collected = len(collector.collected)
            return f"no test ran: {collected} collected, every one skipped before its call"
        return None

    def _what_ran(self, session: pytest.Session, exitstatus: int) -> tuple[list[str], str | None]:
        """Limitations on what the session looked at, and why it did not finish, if it did not."""
        whole = self._whole
        limitations = [*whole.project_notes]
        limitations += [f"{why}: not reviewed" for why in whole.reasons]
        stopped = self._unfinished(session, exitstatus)
        if stopped:
            limitations.append(stopped)
        return limitations, stopped

    @functools.cached_property
    def review(self) -> Review:
        from .review.phase import Review
        from .triage.waivers import added as added_waivers

        return Review(
            settings=self.settings,
            repo=self.repo,
            target=self.target,
            risk=self.risk,
            state=self._state(),
            progress=self._progress,
            baseline_run=self.reruns.baseline_run,
            plugins=list(self.config.pluginmanager.get_plugins()),
            waivers=self.waivers,
            added_waivers=added_waivers(
                self.repo, self.target.base_commit, self.settings, self.waivers
            ),
            rules=self.rules,
            environ=self.environ,
        )

    def _counts(self) -> Counts:
        from .review.phase import Counts

        collector = self.collector
        deselected = len(self._whole.run_deselected)
        return Counts(len(collector.passed), len(collector.failed), deselected)

    @functools.cached_property
    def _observed(self) -> Verdict:
        """Tests reported otherwise than their calls went, and whose code did it."""
        from .checks.diverged import observed

        collector, witnessed = self.collector, self.witnessed
        diverged = witnessed.diverged(collector.passed, collector.skipped, collector.failing)
        return observed(diverged, lambda: witnessed.suspects(self.config), self.repo, self.target)

    def _classified(self, session: pytest.Session, exitstatus: int) -> Evidence:
        """Everything established about a completed session over a non-empty target."""
        from .checks.skipped import newly_skipped

        collector, asking = self.collector, self.reruns.asking
        tests = self.reruns.classification()
        limitations, stopped = self._what_ran(session, exitstatus)
        limitations += self._ignored_code()
        narrowed, removed = asking.narrowed(tests, collector, self.deselections)
        limitations += removed
        observed = self._observed
        limitations += observed.limitations
        if self.settings.shard:  # no checks, scans or lanes: the merge step runs them once
            held = [*self._untested(), *([stopped] if stopped else []), *self._shard_held()]
            gate = Gate(review_clean="indeterminate", reasons=held)
            evidence = self.review.evidence(
                gate, self._counts(), tests, [*limitations, *tests.limitations]
            )
            return dataclasses.replace(evidence, unfinished=stopped)
        partial = "; ".join(filter(None, [self._partial(), narrowed])) or None
        found = newly_skipped(tests.newly_skipped, self.settings.scans.skip_added, asking.change)
        return self.review.judge(
            self._counts(),
            tests,
            limitations,
            stopped,
            deterministic=[*found, *observed.findings],
            partial=partial,
            unsettled=[*self._outside, *observed.undecided],
        )

    def _shard_held(self) -> list[str]:
        """What a shard's tests show that its merge cannot see again (see diverged.py)."""
        return [] if self.target.empty else self._observed.held()

    def _judge(self, session: pytest.Session, exitstatus: int) -> Evidence:
        def undecided(reason: str) -> Evidence:
            gate = Gate(review_clean="indeterminate", reasons=[reason])
            # what kept the gate from deciding also kept the tests from running to the end
            return dataclasses.replace(
                self.review.evidence(gate, self._counts()), unfinished=reason
            )

        if self._refused:  # the next run is the command the reason names
            again = tested.run_command(self.target.kind, self._args)
            return dataclasses.replace(undecided(self._refused), again=again)
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            how = f": {self._ended}" if self._ended else ""
            return undecided(f"the pytest session did not complete (exit {int(exitstatus)}){how}")
        if self.config.option.collectonly:
            return undecided("--collect-only: no test ran")
        if self.target.empty:
            if self.collector.failed:
                return undecided("nothing to review; pytest's own status stands")
            if unfinished := self._unfinished(session, exitstatus):
                return undecided(unfinished)
            if untested := self._untested():
                return undecided(untested[0])
            return self.review.evidence(Gate(review_clean="yes"), self._counts())
        return self._classified(session, exitstatus)

    def _as_shard(
        self, session: pytest.Session, evidence: Evidence, exitstatus: int, interrupted: bool
    ) -> Evidence:
        """A shard's report: its tests classified, no gate of its own, and how to re-run."""
        ran = exitstatus in (*COMPLETED, pytest.ExitCode.NO_TESTS_COLLECTED)
        whole = self._whole
        left_out = self._what_ran(session, exitstatus)[0] if ran else []
        # A shard that ran to its end is complete even if every test it was given was skipped:
        # whether any shard ran a test is the merge's question, asked across all of them.
        stopped = self._stopped(session) if ran else None
        complete = ran and not (interrupted or stopped or self.config.option.collectonly)
        complete = complete and not self.target.untested
        complete = complete and not (ran and self._shard_held())
        shard = ShardInfo(
            rootdir=Path(self.config.rootpath).relative_to(self.repo.root).as_posix(),
            args=self.reruns.replayable(),
            deselected=len(whole.run_deselected),
            complete=complete,
            nodeids=sorted(self.collector.seen),
            deselected_ids=sorted(whole.run_deselected),
            files=sorted(
                {n.split("::", 1)[0] for n in [*self.collector.seen, *self.deselections.ids]}
                | self.collector.skipped_modules
                | set(whole.covered)
            ),
            suite_files=whole.suite,
            narrowed="; ".join([*whole.blind, *self._last_failed()]) or None,
            project_deselected=sorted(whole.project_deselected),
        )
        gate = Gate(review_clean="indeterminate", reasons=[SHARD_GATE, *evidence.gate.reasons])
        limitations = list(evidence.limitations)
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:  # say what the selection left out
            limitations += left_out
        return dataclasses.replace(evidence, gate=gate, shard=shard, limitations=limitations)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """An xdist worker ended: keep the files of the modules it loaded."""
        output = getattr(node, "workeroutput", None)
        if isinstance(output, dict):
            self._worker_modules.update(output.get(imported.WORKER_KEY, ()))

    def _ignored_code(self) -> list[str]:
        """A note on modules the tests imported from files git ignores, if there were any."""
        files = {*imported.module_files(self.repo.root), *self._worker_modules}
        names = imported.ignored(self.repo, files)
        return [imported.limitation(names)] if names else []

    def _untested(self) -> list[str]:
        """Why the snapshot reviewed is not what the session tested, if it is not."""
        target = self.target
        reasons = [untested_reason(target.kind, target.untested)] if target.untested else []
        return reasons + self._outside

    @functools.cached_property
    def _outside(self) -> list[str]:
        """Why a session in a checkout of the snapshot did not test it alone, if it did not."""
        if self.checkout is None:
            return []
        from .baseline.checkout.basefirst import ran_live, tried

        kind, folder = self.target.kind, self.checkout.record
        outside = tested.ran_outside(kind, ran_live(folder))
        return outside + tested.ran_without(kind, self.checkout.unfilled, tried(folder))

    def _state(self) -> Path:
        return state_folder(self.home, self.settings.state_dir)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self._finish(session, exitstatus)
        finally:
            self.reruns.close()  # on every exit: the early base child ends, its checkout goes

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        from .report.build import build
        from .report.publish import publish

        self._session = session
        interrupted = False
        try:
            try:
                evidence = self._judge(session, exitstatus)
            except KeyboardInterrupt:  # Ctrl-C during the re-runs: say so, keep pytest's status
                interrupted = True
                reason = "the review was interrupted before it finished"
                gate = Gate(review_clean="indeterminate", reasons=[reason])
                evidence = self.review.evidence(gate, self._counts())
            if exitstatus in (*COMPLETED, pytest.ExitCode.NO_TESTS_COLLECTED):
                evidence = dataclasses.replace(evidence, suite=self._suite())
            if self.settings.shard:
                evidence = self._as_shard(session, evidence, exitstatus, interrupted)
            self.report = build(evidence)
            path = self.settings.report_file(self._state())
            settings = self.settings
            self._workflow = publish(
                self.report, path, settings.markdown, settings.sarif, self.environ
            )
        except FatalError as exc:
            self._progress(f"error: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if interrupted:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        elif self.settings.shard:  # the merge step gates
            if exitstatus in (*COMPLETED, pytest.ExitCode.NO_TESTS_COLLECTED):
                session.exitstatus = pytest.ExitCode.OK
        elif not self.target.empty and exitstatus in COMPLETED:
            clean = self.report.gate.review_clean == "yes"
            session.exitstatus = pytest.ExitCode.OK if clean else pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        from .render.terminal import lines

        if self.report is None or self._session is None:
            return
        terminalreporter.write_sep("=", "bounded review")
        self._block_shown = True
        shown = list(lines(self.report, self.exit_shown(), verbose=self._verbose()))
        for line in shown[:-1]:
            terminalreporter.write_line(line)
        for line in self._workflow:  # inside GitHub Actions: annotations
            terminalreporter.write_line(line)
        # The verdict last, in its colour where pytest colours (--color, NO_COLOR, a terminal)
        self._write_verdict(terminalreporter, shown[-1])

    def _verbose(self) -> bool:
        return self.config.get_verbosity() > 0

    def exit_shown(self) -> int:
        """The exit status the verdict names: pytest's, or the one ``bounded-review run``
        gives for it when that command started this session (it exits by its own rules)."""
        from .render.verdict import run_exit

        assert self._session is not None
        assert self.report is not None
        status = int(self._session.exitstatus)
        if self.exit_as_run:
            return run_exit(status, self.report.gate.review_clean)
        return status

    def _write_verdict(self, reporter: pytest.TerminalReporter, line: str) -> None:
        from .render.verdict import painted

        assert self.report is not None
        reporter.write_line(painted(line, self.report) if reporter.hasmarkup else line)

    def closing(self) -> None:
        """The verdict again, in one line below pytest's own count of failures (which it prints
        after every summary), at any verbosity: called as pytest unconfigures."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.report is None or self._session is None or reporter is None:
            return
        from .render.verdict import closing

        line = closing(self.report, self.exit_shown(), self._block_shown)
        self._write_verdict(reporter, line)
        reporter.flush()
