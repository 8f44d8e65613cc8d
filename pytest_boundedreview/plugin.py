"""The pytest face: options, and the session object registered when ``--bounded-review`` is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import git
from .baseline import BaselineRun, Classification, classify
from .checks import run_all
from .config import Settings, load_settings
from .errors import FatalError
from .gate import decide
from .models.report import Gate, Report
from .outcomes import OutcomeCollector, SignatureStamp
from .render.terminal import lines
from .reporting import Evidence, build, write
from .rerun import replayable
from .scans import scan
from .statefile import state_folder
from .target import Target, freeze

# Options that are also config keys: (key, metavar or choices, help). Flags have no values.
_VALUE_OPTIONS: tuple[tuple[str, str | tuple[str, ...], str], ...] = (
    ("base", "REF", "base revision of the review (default: CI base branch, upstream, origin/HEAD)"),
    ("target", ("auto", "pr", "local-diff", "staged"), "what is reviewed (default: auto)"),
    ("mode", ("review-only", "review-and-fix"), "authorization (default: review-only)"),
    ("risk", ("auto", "economy", "standard", "strict"), "risk tier (default: auto)"),
    ("report", "PATH", "JSON report path (default: .bounded-review/report.json)"),
    ("markdown", "PATH", "also write a Markdown report"),
    ("sarif", "PATH", "also write a SARIF 2.1.0 log"),
)
_FLAG_OPTIONS: tuple[tuple[str, str], ...] = (
    ("no_lanes", "deterministic gate only: run no reviewer lanes"),
    ("full", "force a full re-review round"),
    ("reset", "close the open loop for this target and start a new one"),
    ("shard", "record this shard's outcomes only; the `bounded-review merge` step gates"),
)
_PATH_KEYS = ("report", "markdown", "sarif")
SESSION_KEY = pytest.StashKey["BoundedReview"]()


def _flag(key: str) -> str:
    return "--bounded-review-" + key.replace("_", "-")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bounded-review", "bounded review (a finite evidence gate)")
    group.addoption(
        "--bounded-review",
        action="store_true",
        default=False,
        help="gate the session on what the change under review caused",
    )
    for key, kind, text in _VALUE_OPTIONS:
        dest = f"bounded_review_{key}"
        if isinstance(kind, tuple):
            group.addoption(_flag(key), dest=dest, choices=kind, default=None, help=text)
        else:
            group.addoption(_flag(key), dest=dest, metavar=kind, default=None, help=text)
    for key, text in _FLAG_OPTIONS:
        group.addoption(
            _flag(key), dest=f"bounded_review_{key}", action="store_true", default=None, help=text
        )


def _overrides(config: pytest.Config) -> dict[str, object]:
    keys = [key for key, _, _ in _VALUE_OPTIONS] + [key for key, _ in _FLAG_OPTIONS]
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
    def from_config(cls, config: pytest.Config) -> BoundedReview:
        try:
            repo = git.open_repo(Path(config.rootpath))
            settings, _ = load_settings(Path(config.rootpath), repo.root, _overrides(config))
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

    def _evidence(self, exitstatus: int) -> Evidence:
        settings, target = self.settings, self.target
        failed = self.collector.failed
        tests, checks, findings, limitations = Classification(), [], [], []
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            gate = Gate(
                review_clean="indeterminate",
                reasons=[f"the pytest session did not complete (exit {int(exitstatus)})"],
            )
        elif target.empty:
            gate = Gate(
                review_clean="yes" if not failed else "indeterminate",
                reasons=[] if not failed else ["nothing to review; pytest's own status stands"],
            )
        else:
            rootdir = Path(self.config.rootpath)
            run = BaselineRun(
                repo=self.repo,
                rootdir=rootdir,
                base_commit=target.base_commit,
                args=replayable(self.config.invocation_params.args),
                reruns=settings.reruns,
                max_base_reruns=settings.max_base_reruns,
                timeout=settings.base_timeout,
                state=self._state(),
            )
            tests = classify(failed, run, self._progress)
            checks = run_all(settings.checks, self.repo, target.base_commit, self._progress)
            findings = scan(target, self.repo, settings.scans.model_dump())
            limitations = tests.limitations
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
            limitations=limitations,
        )

    def _state(self) -> Path:
        return state_folder(self.repo.root, self.settings.state_dir)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self.report = build(self._evidence(exitstatus))
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


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("bounded_review"):
        return
    if config.pluginmanager.has_plugin("pytest_boundedreview.recorder"):
        return  # a re-run started by a review: record, never review again
    # Signatures are taken where tests run: here, or on each xdist worker.
    config.pluginmanager.register(SignatureStamp(Path(config.rootpath)), "bounded-review-stamp")
    if hasattr(config, "workerinput"):
        return  # workers only run tests; the controller reviews and writes
    # A file that fails to import is a failure to classify, not a reason to stop the session.
    config.option.continue_on_collection_errors = True
    session = BoundedReview.from_config(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session.collector, "bounded-review-outcomes")
    config.pluginmanager.register(session, "bounded-review-session")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        config.pluginmanager.unregister(session.collector)
        config.pluginmanager.unregister(session)
        del config.stash[SESSION_KEY]
