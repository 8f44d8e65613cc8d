"""The controller side of a bounded-review session: freeze, classify, gate, report."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from . import git
from .baseline import BaselineRun, Classification, classify
from .checks import run_all
from .config import Settings, load_settings
from .errors import FatalError
from .gate import decide
from .inprocess import head_rerunner
from .models.report import Gate, Report
from .outcomes import OutcomeCollector
from .render.terminal import lines
from .reporting import Evidence, build, write
from .rerun import child_env, replayable, rerun
from .scans import scan
from .statefile import state_folder
from .target import Target, freeze

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
        self.collector = OutcomeCollector(Path(config.rootpath))
        self.report: Report | None = None
        self._announced = False
        self.report_path = Path(settings.report) if settings.report else None

    @classmethod
    def from_config(cls, config: pytest.Config, option_keys: list[str]) -> BoundedReview:
        try:
            repo = git.open_repo(Path(config.rootpath))
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

    def _evidence(self, exitstatus: int, items: list[pytest.Item]) -> Evidence:
        settings, target = self.settings, self.target
        failed = self.collector.failed
        tests, checks, findings, limitations = Classification(), [], [], []
        if self.collector.deselected:
            limitations.append(
                f"{self.collector.deselected} test(s) deselected (-k, -m, --lf or similar) "
                "did not run, so they were not reviewed"
            )
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            gate = Gate(
                review_clean="indeterminate",
                reasons=[f"the pytest session did not complete (exit {int(exitstatus)})"],
            )
        elif self.config.option.collectonly:
            gate = Gate(review_clean="indeterminate", reasons=["--collect-only: no test ran"])
        elif target.empty:
            gate = Gate(
                review_clean="yes" if not failed else "indeterminate",
                reasons=[] if not failed else ["nothing to review; pytest's own status stands"],
            )
        else:
            rootdir = Path(self.config.rootpath)
            args = replayable(self.config.invocation_params.args)
            in_a_new_process = partial(
                rerun, rootdir=rootdir, args=args, env=child_env(), timeout=settings.base_timeout
            )
            run = BaselineRun(
                repo=self.repo,
                rootdir=rootdir,
                base_commit=target.base_commit,
                args=args,
                reruns=settings.reruns,
                max_base_reruns=settings.max_base_reruns,
                timeout=settings.base_timeout,
                state=self._state(),
                rerun_at_head=head_rerunner(items, in_a_new_process),
            )
            tests = classify(failed, run, self._progress)
            checks = run_all(settings.checks, self.repo, target.base_commit, self._progress)
            findings = scan(target, self.repo, settings.scans.model_dump())
            limitations += tests.limitations
            limitations += [
                f"check {c.name!r} did not run: {c.detail}" for c in checks if c.status == "not-run"
            ]
            gate = decide(tests, checks, [f for f in findings if f.severity == "blocking"])
        return Evidence(
            target=target,
            settings=settings,
            passed=self.collector.passed_count,
            failed=len(failed),
            tests=tests,
            checks=checks,
            findings=findings,
            gate=gate,
            committed=target.committed,
            deselected=self.collector.deselected,
            limitations=limitations,
        )

    def _state(self) -> Path:
        return state_folder(self.repo.root, self.settings.state_dir)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self.report = build(self._evidence(exitstatus, session.items))
            path = self.report_path or self._state() / "report.json"
            write(self.report, path)
        except FatalError as exc:
            self._progress(f"error: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if self.target.empty or exitstatus not in (
            pytest.ExitCode.OK,
            pytest.ExitCode.TESTS_FAILED,
        ):
            return  # pytest's own status stands
        clean = self.report.gate.review_clean == "yes"
        session.exitstatus = pytest.ExitCode.OK if clean else pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep("=", "bounded review")
        for line in lines(self.report):
            terminalreporter.write_line(line)
